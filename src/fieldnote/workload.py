"""One (op, implementation) ready to call on the GPU: the namespace's inputs resident, the output allocated.

The timing and capture stages measure exactly this call, so both instruments see the same work.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import inputs
from .implementations import runner
from .ops import OPS


def full_fp32() -> None:
    """FP32 as the contract says: no TF32 anywhere torch could choose it."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def prepare(op: str, implementation: str, npz: str, shape: dict, variant: str | None = None,
            cubin: str | None = None) -> Callable[[], object]:
    import torch

    full_fp32()
    spec = OPS[op]
    tensors = {name: torch.from_numpy(a).cuda() for name, a in inputs.read(npz).items()}
    tensors["out"] = torch.empty(spec.output_shape(shape), dtype=torch.float32, device="cuda")
    run = runner(op, implementation, spec.variant(variant) if implementation == "cuda" else None,
                 Path(cubin) if cubin else None)
    return lambda: run(tensors, shape)
