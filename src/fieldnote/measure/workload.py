"""One (op, implementation) ready to call on the GPU: the namespace's inputs resident, the output allocated.

The timing and capture stages measure exactly this call, so both instruments see the same work.
"""
from __future__ import annotations

import functools
from pathlib import Path

from ..registry.ops import OPS
from . import inputs
from .check import full_fp32
from .implementations import runner
from .verified import Measured


def prepare(op: str, implementation: str, npz: str, shape: dict, variant: str | None = None,
            cubin: str | None = None, tolerance: dict | None = None, what: str = "") -> Measured:
    """`tolerance`: verify every timed call at it (verified.py); `what` names the subject in its errors."""
    return _ready(op, implementation, inputs.read(npz), shape, variant, cubin, tolerance, what)


def prepare_drawn(op: str, implementation: str, shape: dict, seed: int, variant: str | None = None,
                  cubin: str | None = None, tolerance: dict | None = None, what: str = "") -> Measured:
    """The same, on inputs drawn from `seed` at `shape` (a sweep point has no input file); drawn once per
    process for all the implementations that share the point (`drawn`)."""
    return _ready(op, implementation, drawn(op, shape, seed), shape, variant, cubin, tolerance, what)


def drawn(op: str, shape: dict, seed: int) -> dict:
    """A sweep point's inputs, drawn from `seed` once per process (seconds of CPU at the largest points: a
    measurement draws them before it holds the GPU, not inside a hold a waiting window would wait for)."""
    return _drawn(op, OPS[op].label(shape), seed)


def first_calls(calls) -> None:
    """Each call once, untimed, before its warm-up: what compiles, autotunes or JITs does so here, outside the
    measurement window (gpulock)."""
    import torch

    from ..core.progress import FIRST, phase

    with phase(FIRST):
        for call in calls:
            call()
        torch.cuda.synchronize()


def prepared_each(makers: dict, implementations: dict, first: bool = True) -> dict:
    """Each maker's call made (inputs uploaded, kernels loaded) and, where `first`, called once (first_calls), in
    a hold of the GPU lock of its own (gpulock.for_check: shared, and none while inductor compiles a torch.compile
    subject): a measurement window waiting for the GPU then waits for one subject's GPU work, not for all of a job's,
    nor for a compile (docs/pipeline-time.md, the nineteenth session). `implementations`: each maker's, by
    name."""
    from ..core.progress import PREPARE, phase
    from .gpulock import for_check

    calls = {}
    for name, make in makers.items():
        with for_check(implementations[name]):
            with phase(PREPARE):
                calls[name] = make()
            if first:
                first_calls([calls[name]])
    return calls


def checksummed(calls: dict) -> None:
    """After a measurement's window, beside other jobs' GPU work: each call's integer inputs as the host holds them
    (Measured.checksum), each call's in a shared hold of its own, so that a window waits for one copy, not a
    sweep's."""
    from ..core.progress import VERIFY, phase
    from .gpulock import shared
    from .verified import checksum

    for name, call in calls.items():
        with shared():
            with phase(VERIFY):
                checksum({name: call})


@functools.cache
def _drawn(op: str, label: str, seed: int) -> dict:
    return OPS[op].inputs(OPS[op].parse_label(label), seed)


def _ready(op: str, implementation: str, arrays: dict, shape: dict, variant: str | None,
           cubin: str | None, tolerance: dict | None, what: str) -> Measured:
    import torch

    full_fp32()
    spec = OPS[op]
    tensors = {name: torch.from_numpy(a).cuda() for name, a in arrays.items()}
    tensors["out"] = torch.empty(spec.output_shape(shape), dtype=torch.float32, device="cuda")
    run = runner(op, implementation, spec.variant(variant) if variant else None,
                 Path(cubin) if cubin else None)
    what = what or f"{op} / {variant or implementation} at {spec.label(shape)}"
    return Measured(run, tensors, shape, op, what, tolerance, host=arrays)
