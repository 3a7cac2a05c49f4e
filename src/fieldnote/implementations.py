"""One callable per (op, implementation): takes the input tensors and a preallocated output, returns the result.

torch returns a fresh tensor (as a library user would write it); compiled is the same torch function through
torch.compile (max-autotune, without CUDA graphs: what a user reaches for instead of hand-written kernels, and a
peer of ours); triton and cuda write into `out`.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import kernels
from .ops import OPS, CudaVariant

Runner = Callable[[dict, dict], object]  # (tensors incl. "out", shape) -> output tensor


def runner(op: str, implementation: str, variant: CudaVariant | None = None, cubin: Path | None = None) -> Runner:
    spec = OPS[op]
    if implementation == "torch":
        fn = kernels.function("torch", op)
        return lambda t, shape: fn(*(t[n] for n in spec.torch_args))
    if implementation == "compiled":
        fn = compiled(op)
        return lambda t, shape: fn(*(t[n] for n in spec.torch_args))
    if implementation == "triton":
        fn = kernels.function("triton", op)
        return lambda t, shape: fn(*(t[n] for n in spec.triton_args), t["out"])
    if implementation == "cuda":
        from .launch import CudaKernel
        kernel = CudaKernel(cubin, variant)

        def run(t, shape):
            kernel(t, shape)
            return t["out"]
        return run
    raise ValueError(f"unknown implementation '{implementation}'")


def compiled(op: str):
    """torch.compile of the op's torch function. Inductor compiles on the first call of each shape and keeps
    its kernels and autotuning results in TORCHINDUCTOR_CACHE_DIR, which the workflow points at work/, so
    the check, timing and capture jobs of a namespace compile and tune once."""
    import torch

    return torch.compile(kernels.function("torch", op), mode="max-autotune-no-cudagraphs", dynamic=False)
