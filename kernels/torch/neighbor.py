"""Neighbor aggregation, out[dst[e]] += weight[e] * x[src[e]] over the edges of a CSR graph."""
import torch


def neighbor(x: torch.Tensor, weight: torch.Tensor, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    return out.index_add_(0, dst, weight[:, None] * x[src])
