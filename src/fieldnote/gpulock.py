"""The GPU to itself for a measurement, and to share for everything else, through one lock file per GPU of the
host (flock): a process runs GPU work (a check, the sanitizer, a measurement's preparation: context, uploads,
compilation) holding the lock shared, and a measurement's window (its warm-up and its timed or profiled calls)
holding it exclusively. Snakemake then gives a measurement job one GPU slot like a check, and its process start,
imports, preparation and the profiler's start and export overlap other jobs; only the windows take turns, and no
other process touches the GPU inside one.

The lock is the GPU's, not the checkout's: two checkouts measuring on one GPU take turns too, and jobs on
different GPUs of a host (CUDA_VISIBLE_DEVICES, as Slurm sets it) do not wait for each other.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
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


@contextmanager
def _held(mode: int):
    lock = path()
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        with phase(WAIT):
            fcntl.flock(fd, mode)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def shared():
    """GPU work that may run beside other such work, never inside a measurement window."""
    return _held(fcntl.LOCK_SH)


def exclusive():
    """A measurement window: no other process runs GPU work meanwhile."""
    return _held(fcntl.LOCK_EX)


def alone(implementation: str, device: str = "cuda") -> bool:
    """Whether a check has the GPU to itself: where torch.compile autotunes (max-autotune times its candidate
    kernels, and the one it picks is what the timing and the captures run: under another process's load it may
    pick a slower one)."""
    return device == "cuda" and implementation == "compiled"


def for_check(implementation: str, device: str = "cuda"):
    """The lock a check holds: alone where `alone` says so, else shared with other checks; none on the CPU."""
    from contextlib import nullcontext

    if device != "cuda":
        return nullcontext()
    return exclusive() if alone(implementation, device) else shared()
