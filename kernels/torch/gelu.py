"""Bias + GELU, y = gelu(x + bias) with the tanh approximation; bias broadcasts over rows."""
import torch
import torch.nn.functional as F


def gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.gelu(x + bias, approximate="tanh")
