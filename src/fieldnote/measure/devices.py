"""The host's GPUs, and which of them each GPU job runs on.

Snakemake holds GPU slots per device, the resources `gpu_share_0`, `gpu_share_1`, ... (profiles/default: twelve
each). A GPU job asks for a slot of one device (more on a GPU with less memory than the twelve were sized on:
`weight`), chosen when the workflow is read (`of`: an op's jobs spread over the devices, so that its timing and its
captures fall on different GPUs), and pins itself to that device through CUDA_VISIBLE_DEVICES (`pin`, from
script.entry) before CUDA starts. The GPU lock (gpulock.py) is per GPU: a measurement's window is alone on its GPU
while jobs on the other GPUs go on. Under Slurm the scheduler pins the GPU it granted, and `pin` leaves it.
"""
from __future__ import annotations

import functools
import os
import zlib

from ..core.errors import PipelineError

MAX = 8  # the devices profiles/default declares slots for
SLOT = "gpu_share_"
# The GPU memory profiles/default's twelve slots a GPU were sized on (an H200, 141 GB): on a GPU with less, each job
# takes more slots, so fewer run at once. An H100 run with one slot a job ran out of its 80 GB (2026-12-07: ten jobs
# held 79 GB).
SIZED_ON_BYTES = 120 << 30


def visible() -> list[str]:
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES names them: its list where it is set, else NVML's
    indices; none without NVML or a driver."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip()]
    return [str(i) for i in range(_nvml_count())]


@functools.cache
def _nvml_count() -> int:
    """The host's GPUs as NVML counts them, asked once a process (the workflow asks twice as it is read); none
    without a driver or the library: the GPU jobs then stop at gpu_probe, with one line."""
    from .gpu import nvml

    n = nvml()
    return n.nvmlDeviceGetCount() if n else 0


def count(config: dict) -> int:
    """The GPUs the GPU jobs spread over: `gpus` from the configuration (`--config gpus=N`, or `config:` in a
    profile) where given, else the GPUs visible; at least 1 (without a GPU the jobs stop at gpu_probe), at most
    MAX."""
    wanted = config.get("gpus") or len(visible()) or 1
    return min(int(wanted), MAX)


def of(gpus: int, op: str, rank: int, name: str = "") -> int:
    """The device of a GPU job: its op's place in the registry, plus a rank per kind of job (so one op's jobs
    fall on different devices), plus a stable hash of the subject or variant it is for (its checks spread too)."""
    from ..registry.ops import OPS

    return (list(OPS).index(op) + rank + (zlib.crc32(name.encode()) if name else 0)) % gpus


def slots(gpus: int, rank: int, name_of=None) -> dict:
    """A rule's `resources`: `weight()` slots of the device `of` gives each of its jobs, none of the others."""
    taken = weight()

    def held(device: int):
        return lambda w: taken * int(of(gpus, w.op, rank, name_of(w) if name_of else "") == device)

    return {f"{SLOT}{d}": held(d) for d in range(gpus)}


@functools.cache
def weight() -> int:
    """The slots a GPU job takes: one where the host's smallest GPU has SIZED_ON_BYTES or more (or NVML cannot
    say), else as many more as its memory falls short."""
    from .gpu import nvml

    n = nvml()
    sizes = [n.nvmlDeviceGetMemoryInfo(n.nvmlDeviceGetHandleByIndex(i)).total
             for i in range(n.nvmlDeviceGetCount())] if n else []
    return max(1, -(-SIZED_ON_BYTES // min(sizes))) if sizes else 1


def pin(resources) -> str | None:
    """CUDA_VISIBLE_DEVICES set to the one GPU whose slot the job holds, before CUDA starts; the device it names,
    or None where the job holds no slot, runs under Slurm (which pinned its GPU) or sees no GPU."""
    held = [int(k.removeprefix(SLOT)) for k, v in resources.items() if k.startswith(SLOT) and v]
    if not held or "SLURM_JOB_ID" in os.environ:
        return None
    devices = visible()
    if not devices:
        return None
    if held[0] >= len(devices):
        raise PipelineError(f"the job holds a slot of GPU {held[0]}, and this host shows {len(devices)} "
                            f"({', '.join(devices)}): `--config gpus=` names more GPUs than there are")
    os.environ["CUDA_VISIBLE_DEVICES"] = devices[held[0]]
    return devices[held[0]]
