"""The GPU to itself for a measurement, and to share for everything else, through one lock file per GPU of the
host (flock): a process runs GPU work (a check, the sanitizer, a measurement's preparation: context, uploads,
compilation) holding the lock shared, and a measurement's window (its warm-up and its timed or profiled calls)
holding it exclusively. Snakemake then gives a measurement job one GPU slot like a check, and its process start,
imports, preparation and the profiler's start and export overlap other jobs; only the windows take turns, and no
other process touches the GPU inside one. A window that waits goes before the shared holds asked for after it.

The lock is the GPU's, not the checkout's: two checkouts measuring on one GPU take turns too, and jobs on
different GPUs of a host (CUDA_VISIBLE_DEVICES, as Slurm sets it) do not wait for each other.
"""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from .progress import WAIT, phase


def path() -> Path:
    """FIELDNOTE_GPU_LOCK, else one file in the temporary directory per GPU (its UUID: under Slurm every job may see
    its GPU as device 0)."""
    if os.environ.get("FIELDNOTE_GPU_LOCK"):
        return Path(os.environ["FIELDNOTE_GPU_LOCK"])
    return Path(tempfile.gettempdir()) / f"fieldnote-gpu-{_device()}.lock"


def _device() -> str:
    import torch

    from .gpu import uuid

    return (uuid() if torch.cuda.is_available() else None) or "none"


# Each hold as it ends, a JSON line appended to FIELDNOTE_GPU_TRACE where that is set (tools/device_pipeline.sh
# sets it): the job, shared or alone, and when it was asked for, taken and let go (time.time()), so that
# tools/job_times.py can say how long the GPU was held alone, and who held it while a window waited.
_holds: dict[int, tuple[int, float, float]] = {}  # fd: (mode, asked, taken)


def release(fd: int) -> None:
    """Let the hold on `fd` go, and trace it (the time read before it goes, the taking time after the lock came:
    two traced holds that the lock kept apart never overlap in the trace)."""
    released = time.time()
    fcntl.flock(fd, fcntl.LOCK_UN)
    held = _holds.pop(fd, None)
    trace = os.environ.get("FIELDNOTE_GPU_TRACE")
    if held and trace:
        mode, asked, taken = held
        line = json.dumps({"job": os.environ.get("FIELDNOTE_JOB", f"pid {os.getpid()}"),
                           "mode": "alone" if mode == fcntl.LOCK_EX else "shared",
                           "asked": asked, "taken": taken, "released": released})
        out = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(out, (line + "\n").encode())  # one write of a short line: whole, among other processes'
        finally:
            os.close(out)


def take(fd: int, mode: int) -> None:
    """Take the lock on `fd` (not held by it), a window before any shared hold asked for after it. flock alone
    prefers no one: a window waiting for the holders of the moment would also wait for every check that starts
    meanwhile. So a request passes a turnstile first (the lock file's `.turn`), which a window holds, closed to
    new shared requests, until it has the lock; a shared request only passes through it."""
    asked = time.time()
    turnstile = os.open(f"{path()}.turn", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        with phase(WAIT):
            fcntl.flock(turnstile, fcntl.LOCK_EX if mode == fcntl.LOCK_EX else fcntl.LOCK_SH)
            fcntl.flock(fd, mode)
            _holds[fd] = (mode, asked, time.time())
    finally:
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        os.close(turnstile)


@contextmanager
def _held(mode: int):
    fd = os.open(path(), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        take(fd, mode)
        yield
    finally:
        release(fd)
        os.close(fd)


def shared():
    """GPU work that may run beside other such work, never inside a measurement window."""
    return _held(fcntl.LOCK_SH)


def exclusive():
    """A measurement window: no other process runs GPU work meanwhile."""
    return _held(fcntl.LOCK_EX)


def alone(implementation: str, device: str = "cuda", measured: bool = True) -> bool:
    """Whether a check's timings have the GPU to themselves: where torch.compile autotunes at a shape that is
    measured (max-autotune times its candidate kernels, and the one it picks, from inductor's cache, is what the
    timing and the captures run: under another process's load it may pick a slower one). At the small and edge
    cases' shapes (check.Case.measured) nothing it picks is timed, and their turns alone, each waiting for every
    check then holding the GPU, were 150 s of the layer norm's 248 s compiled check in an h200-001 copy's run."""
    return device == "cuda" and implementation == "compiled" and measured


def for_check(implementation: str, device: str = "cuda", measured: bool = True):
    """The lock a check holds: shared, with torch.compile's autotuning timings alone where `alone` says so; none on
    the CPU."""
    from contextlib import nullcontext

    if device != "cuda":
        return nullcontext()
    return autotuning_alone() if alone(implementation, device, measured) else shared()


def per_case(implementation: str, device: str = "cuda"):
    """The hold check.run_checks takes around each case: for_check at the case's shape (check.Case.measured)."""
    return lambda case: for_check(implementation, device, case.measured)


# Inductor's one benchmarker (torch/_inductor/runtime/benchmarking.py), through which max-autotune, the coordinate
# descent and the Triton heuristics time every candidate: its methods, each of which may call another. Every torch
# in range has the first two (max-autotune's entry and the heuristics'); the cuda-graph timing came after 2.11.
TIMINGS = ("benchmark", "benchmark_gpu", "benchmark_gpu_with_cuda_graph")
REQUIRED = TIMINGS[:2]
timed_alone = 0  # this process's timings taken alone so far: a GPU test sees that inductor's went through them

# Where inductor times a whole set of candidates, one after another: max-autotune's choices for one matrix product
# (17 at 1000^3 on the H200) and a Triton kernel's configs. Alone once for the set, not once per candidate: each
# turn alone waits for every check then holding the GPU (a compile holds it for seconds), and per candidate those
# waits were most of the compiled checks' time (the matmul's 194 s of 294 on 2026-12-02). Optional: a torch
# without one keeps the per-timing turns.
BATCHES = (("torch._inductor.select_algorithm", "AlgorithmSelectorCache", "benchmark_choices"),
           ("torch._inductor.runtime.triton_heuristics", "CachingAutotuner", "benchmark_all_configs"))


def _inductor_benchmarker():
    """Inductor's benchmarker where every autotuning timing of this process goes through it, else None."""
    try:
        from torch._inductor import config
        from torch._inductor.runtime.benchmarking import benchmarker
    except ImportError:
        return None
    if getattr(config, "autotune_in_subproc", False):  # timed in a child process, out of this one's reach
        return None
    return benchmarker if all(hasattr(benchmarker, name) for name in REQUIRED) else None


def _timings(benchmarker) -> list[str]:
    return [name for name in TIMINGS if hasattr(benchmarker, name)]


def _batches() -> list[tuple[type, str]]:
    """The classes and methods of BATCHES this torch has, each defined on its class (so that it can be put back)."""
    import importlib

    found = []
    for module, cls, name in BATCHES:
        try:
            owner = getattr(importlib.import_module(module), cls)
        except (ImportError, AttributeError):
            continue
        if name in vars(owner):
            found.append((owner, name))
    return found


def _wrapped(raw, wrap):
    """A method as defined on its class (plain function or classmethod), its function passed through `wrap`."""
    return classmethod(wrap(raw.__func__)) if isinstance(raw, classmethod) else wrap(raw)


@contextmanager
def autotuning_alone():
    """torch.compile's check: the lock shared while it compiles (CPU work, most of its time, which other checks may
    overlap; a measurement window waits, as for any check), and alone for each timing of a candidate kernel or set
    of candidates (BATCHES), the shared hold converted and back. While one compile waits for its turn to time, its
    shared hold is given up, so two compiles never wait for each other. With an inductor whose timings cannot be
    reached, or with FIELDNOTE_AUTOTUNE_ALONE=compile (where a GPU test found a timing that went around the
    benchmarker), alone throughout."""
    benchmarker = _inductor_benchmarker()
    if benchmarker is None or os.environ.get("FIELDNOTE_AUTOTUNE_ALONE") == "compile":
        with exclusive():
            yield
        return
    fd = os.open(path(), os.O_RDWR | os.O_CREAT, 0o666)
    turn = threading.RLock()  # the timings of this process, from whatever thread, one at a time
    depth = 0

    def convert(mode: int) -> None:
        release(fd)  # the old hold first: held while waiting at the turnstile, it would block
        take(fd, mode)  # the window that holds the turnstile, and wait for it

    def alone_while(method):
        def timed(*args, **kwargs):
            global timed_alone
            nonlocal depth
            with turn:
                if depth == 0:
                    convert(fcntl.LOCK_EX)
                    timed_alone += 1
                depth += 1
                try:
                    return method(*args, **kwargs)
                finally:
                    depth -= 1
                    if depth == 0:
                        convert(fcntl.LOCK_SH)
        return timed

    batches = {(owner, name): vars(owner)[name] for owner, name in _batches()}
    try:
        convert(fcntl.LOCK_SH)
        for name in _timings(benchmarker):  # on the instance: every module that imported it sees the wrappers
            setattr(benchmarker, name, alone_while(getattr(benchmarker, name)))
        for (owner, name), raw in batches.items():
            setattr(owner, name, _wrapped(raw, alone_while))
        yield
    finally:
        for name in _timings(benchmarker):
            benchmarker.__dict__.pop(name, None)
        for (owner, name), raw in batches.items():
            setattr(owner, name, raw)
        release(fd)
        os.close(fd)
