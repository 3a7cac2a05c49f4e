"""The GPU to itself for a measurement, and to share for everything else, through one lock file per GPU of the host
(flock): a process runs GPU work (a check, the sanitizer, a measurement's preparation: context, uploads, first calls)
holding the lock shared, none while inductor compiles on the CPU, and a measurement's window (its warm-up and its timed
or profiled calls) holding it exclusively. Snakemake then gives a measurement job one GPU slot like a check, and its
process start, imports, preparation and the profiler's start and export overlap other jobs; only the windows take turns,
and no other process touches the GPU inside one. A window that waits goes before the shared holds asked for after it.

The lock is the GPU's, not the checkout's: two checkouts measuring on one GPU take turns too, and jobs on
different GPUs of a host (CUDA_VISIBLE_DEVICES, as Slurm sets it) do not wait for each other.
"""
from __future__ import annotations

import fcntl
import functools
import json
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..core.progress import WAIT, phase


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
    """The lock GPU work of an implementation holds (a check's case, a measurement's preparation and first call):
    shared; for torch.compile's, none while inductor compiles and its autotuning timings alone where `alone` says so,
    shared elsewhere (`autotuning`); none on the CPU."""
    from contextlib import nullcontext

    if device != "cuda":
        return nullcontext()
    return autotuning(alone(implementation, device, measured)) if implementation == "compiled" else shared()


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
# waits were most of the compiled checks' time (docs/pipeline-time.md). Optional: a torch without one keeps the
# per-timing turns.
BATCHES = (("torch._inductor.select_algorithm", "AlgorithmSelectorCache", "benchmark_choices"),
           ("torch._inductor.select_algorithm", "AlgorithmSelectorCache", "benchmark_in_current_process"),
           ("torch._inductor.runtime.triton_heuristics", "CachingAutotuner", "benchmark_all_configs"))

# Where inductor compiles one graph (lowering, codegen, Triton's compiles: seconds of CPU), in which the GPU sees this
# process only through the timings above (alone at a measured shape, shared at a small case's), and the example inputs
# max-autotune draws for a matrix product's candidates (`benchmark_in_current_process`, which draws them, then times
# them, in the same hold). The shared hold is given up meanwhile: held, a compile kept the other compiled checks'
# turns alone waiting for seconds at a time (docs/pipeline-time.md). Only where every one of those is reached
# (`_compile_unheld`); a GPU test checks that every kernel, copy and fill of a compiled check falls inside one of its
# holds (tests/test_gpu.py).
COMPILE = ("torch._inductor.compile_fx", "_compile_fx_inner")

# Where inductor has Triton compile one kernel (LLVM and ptxas: CPU only), from wherever it is called: inside a set of
# candidates' timings too. There the lock is given up for the compile even while the set is timed, and taken again
# (alone where the set times alone) before the next timing. With inductor's worker pool (given up unless the user
# sets TORCHINDUCTOR_COMPILE_THREADS: implementations.compiled) max-autotune compiles each candidate of a matrix
# product again as it times it (20 compiles of about a second each at 70x132x36, tools/compile_twice.py), and the
# set's hold lasted 22 to 35 s, every window and every other check waiting behind it.
KERNEL_COMPILE = ("triton", "compile")
compiled_unheld = 0  # this process's kernel compiles that held nothing: a GPU test sees that inductor's went through


def _inductor_benchmarker():
    """Inductor's benchmarker where every autotuning timing of this process goes through it, else None."""
    try:
        from torch._inductor import config
        from torch._inductor.runtime.benchmarking import benchmarker
    except ImportError:
        return None
    if getattr(config, "autotune_in_subproc", False) or getattr(config, "pipeline_max_autotune_gemm", False):
        return None  # timed in a child process, out of this one's reach
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


def _compile_unheld(batches: list[tuple[type, str]]):
    """Inductor's module and function of COMPILE, where this torch has it and every set of candidates is reached
    (without the example inputs' drawing in a turn alone, they would be drawn with no hold); else None."""
    import importlib

    if len(batches) < len(BATCHES):
        return None
    try:
        module = importlib.import_module(COMPILE[0])
    except ImportError:
        return None
    return (module, COMPILE[1]) if callable(vars(module).get(COMPILE[1])) else None


def _kernel_compile():
    """Triton's module and compile function of KERNEL_COMPILE, where it has one; else None."""
    import importlib

    try:
        module = importlib.import_module(KERNEL_COMPILE[0])
    except ImportError:
        return None
    return (module, KERNEL_COMPILE[1]) if callable(vars(module).get(KERNEL_COMPILE[1])) else None


def _wrapped(raw, wrap):
    """A method as defined on its class (plain function or classmethod), its function passed through `wrap`."""
    return classmethod(wrap(raw.__func__)) if isinstance(raw, classmethod) else wrap(raw)


@contextmanager
def autotuning(timings_alone: bool = True):
    """torch.compile's GPU work: the lock shared while it runs on the GPU, none while inductor compiles a graph on
    the CPU (COMPILE) nor while Triton compiles a kernel (KERNEL_COMPILE, even inside a set's timings), and for each
    timing of a candidate kernel or set of candidates (BATCHES) alone where `timings_alone`, else shared, the hold
    converted and back. While one compile waits for its turn to time, it holds nothing, so two compiles never wait
    for each other; nor does a window wait for a compile at a shape that is not measured (docs/pipeline-time.md, the
    twenty-second session). With an inductor whose timings
    cannot be reached, or with FIELDNOTE_AUTOTUNE_ALONE=compile (where a GPU test found a timing that went around the
    benchmarker), alone throughout where `timings_alone`, else shared."""
    benchmarker = _inductor_benchmarker()
    if benchmarker is None or os.environ.get("FIELDNOTE_AUTOTUNE_ALONE") == "compile":
        with exclusive() if timings_alone else shared():
            yield
        return
    fd = os.open(path(), os.O_RDWR | os.O_CREAT, 0o666)
    turn = threading.RLock()  # the timings of this process, from whatever thread, one at a time
    state = {"timing": 0, "compiling": 0}
    mine = threading.local()  # the timings this thread is inside (a kernel compile in them suspends them)

    def wanted():
        if state["timing"]:
            return fcntl.LOCK_EX if timings_alone else fcntl.LOCK_SH
        return None if state["compiling"] else fcntl.LOCK_SH

    def counted(**steps: int) -> None:
        """More or fewer timings or compiles under way, the hold converted where that changes the mode it wants
        (the old hold let go first: held while waiting at the turnstile, it would block)."""
        global timed_alone
        before = wanted()
        for key, step in steps.items():
            state[key] += step
        after = wanted()
        if after != before:
            release(fd)
            if after is not None:
                take(fd, after)  # behind the window that holds the turnstile, if one does
            timed_alone += after == fcntl.LOCK_EX

    def as_timing(method):
        @functools.wraps(method)
        def timed(*args, **kwargs):
            with turn:
                counted(timing=1)
                mine.timings = getattr(mine, "timings", 0) + 1
                try:
                    return method(*args, **kwargs)
                finally:
                    mine.timings -= 1
                    counted(timing=-1)
        return timed

    def unheld(method, inside_timings: bool = False):
        """Nothing held while `method` compiles (its timings may come from other threads); `inside_timings`: not even
        inside this thread's timings (a kernel compile), which are taken again after it."""
        @functools.wraps(method)
        def compiling(*args, **kwargs):
            global compiled_unheld
            with turn:
                suspended = getattr(mine, "timings", 0) if inside_timings else 0
                counted(timing=-suspended, compiling=1)
                compiled_unheld += inside_timings
            try:
                return method(*args, **kwargs)
            finally:
                with turn:
                    counted(timing=suspended, compiling=-1)
        return compiling

    batches = {(owner, name): vars(owner)[name] for owner, name in _batches()}
    compile_entry = _compile_unheld(list(batches))
    compile_raw = vars(compile_entry[0])[compile_entry[1]] if compile_entry else None
    kernel_entry = _kernel_compile()
    kernel_raw = vars(kernel_entry[0])[kernel_entry[1]] if kernel_entry else None
    try:
        take(fd, fcntl.LOCK_SH)
        for name in _timings(benchmarker):  # on the instance: every module that imported it sees the wrappers
            setattr(benchmarker, name, as_timing(getattr(benchmarker, name)))
        for (owner, name), raw in batches.items():
            setattr(owner, name, _wrapped(raw, as_timing))
        if compile_entry:
            setattr(*compile_entry, unheld(compile_raw))
        if kernel_entry:
            setattr(*kernel_entry, unheld(kernel_raw, inside_timings=True))
        yield
    finally:
        for name in _timings(benchmarker):
            benchmarker.__dict__.pop(name, None)
        for (owner, name), raw in batches.items():
            setattr(owner, name, raw)
        if compile_entry:
            setattr(*compile_entry, compile_raw)
        if kernel_entry:
            setattr(*kernel_entry, kernel_raw)
        release(fd)
        os.close(fd)
