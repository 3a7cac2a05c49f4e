"""The five operations, by name. Each module is the one place for an op's shapes, inputs and kernel variants."""
from . import gelu, layernorm, matmul, neighbor, triangle
from .base import CudaVariant, EdgeCase, LaunchContract, Op, Shape

OPS: dict[str, Op] = {m.OP.name: m.OP for m in (matmul, gelu, layernorm, triangle, neighbor)}
IMPLEMENTATIONS = ("torch", "triton", "compiled", "cuda")

__all__ = ["OPS", "IMPLEMENTATIONS", "Op", "CudaVariant", "EdgeCase", "LaunchContract", "Shape"]
