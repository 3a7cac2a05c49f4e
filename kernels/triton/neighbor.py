"""Neighbor aggregation over CSR rows: out[row, f] = sum_{e in row} weight[e] * x[src[e], f].

Grid (nodes, features / BLOCK_F): one program per row and 64-feature slice, walking the row's edges
BLOCK_E at a time.
"""
import torch
import triton
import triton.language as tl

BLOCK_F = 64
BLOCK_E = 32
NUM_WARPS = 4


@triton.jit
def neighbor_csr_kernel(rowptr_ptr, src_ptr, weight_ptr, x_ptr, out_ptr, features,
                        BLOCK_F: tl.constexpr, BLOCK_E: tl.constexpr):
    row = tl.program_id(0)
    f = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    fmask = f < features
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    acc = tl.zeros((BLOCK_F,), dtype=tl.float32)
    for e0 in range(start, end, BLOCK_E):
        e = e0 + tl.arange(0, BLOCK_E)
        emask = e < end
        src = tl.load(src_ptr + e, mask=emask, other=0)
        w = tl.load(weight_ptr + e, mask=emask, other=0.0)
        xs = tl.load(x_ptr + src[:, None] * features + f[None, :], mask=emask[:, None] & fmask[None, :], other=0.0)
        acc += tl.sum(w[:, None] * xs, axis=0)
    tl.store(out_ptr + row * features + f, acc, mask=fmask)


def neighbor(x: torch.Tensor, weight: torch.Tensor, src: torch.Tensor, rowptr: torch.Tensor,
             out: torch.Tensor) -> torch.Tensor:
    nodes, features = x.shape
    grid = (nodes, triton.cdiv(features, BLOCK_F))
    neighbor_csr_kernel[grid](rowptr, src, weight, x, out, features, BLOCK_F=BLOCK_F, BLOCK_E=BLOCK_E,
                              num_warps=NUM_WARPS)
    return out


COMPILE = {
    "kernel": neighbor_csr_kernel,
    "signature": {"rowptr_ptr": "*i32", "src_ptr": "*i32", "weight_ptr": "*fp32", "x_ptr": "*fp32",
                  "out_ptr": "*fp32", "features": "i32"},
    "constexprs": {"BLOCK_F": BLOCK_F, "BLOCK_E": BLOCK_E},
    "num_warps": NUM_WARPS,
}
