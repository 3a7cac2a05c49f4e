"""Triangle contraction, out[i, j, c] = sum_k a[i, k, c] * b[j, k, c] (a, b are N x N x C)."""
import torch


def triangle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.einsum("ikc,jkc->ijc", a, b)
