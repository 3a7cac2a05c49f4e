"""Matrix multiplication, c = a @ b (a is M x K, b is K x N), in full FP32 (no TF32)."""
import torch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b
