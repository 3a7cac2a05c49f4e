"""Bias + GELU, y = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))) with v = x + bias[column].

One program per BLOCK consecutive elements of the flattened rows x cols array.
"""
import torch
import triton
import triton.language as tl

BLOCK = 256
NUM_WARPS = 4


@triton.jit
def gelu_bias_kernel(x_ptr, bias_ptr, y_ptr, n_elements, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.load(x_ptr + offs, mask=mask, other=0.0) + tl.load(bias_ptr + offs % cols, mask=mask, other=0.0)
    inner = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    tanh = 2.0 * tl.sigmoid(2.0 * inner) - 1.0
    tl.store(y_ptr + offs, 0.5 * v * (1.0 + tanh), mask=mask)


def gelu(x: torch.Tensor, bias: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    gelu_bias_kernel[(triton.cdiv(n, BLOCK),)](x, bias, out, n, x.shape[-1], BLOCK=BLOCK, num_warps=NUM_WARPS)
    return out


COMPILE = {
    "kernel": gelu_bias_kernel,
    "signature": {"x_ptr": "*fp32", "bias_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "cols": "i32"},
    "constexprs": {"BLOCK": BLOCK},
    "num_warps": NUM_WARPS,
}
