"""Layer normalization, one program per row: y = (x - mean) / sqrt(var + eps) * weight + bias.

The whole row is loaded once and stays in registers for both reductions and the store. The block is the row's
width rounded up to a power of two, at least 1024 (the seed's 768 columns take 1024 and 4 warps), with the warps
of the Triton tutorial's layer norm: one per 256 floats, at most 8. Rows wider than 64 KB are refused, as there.
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024
NUM_WARPS = 4
MAX_BLOCK = 65536 // 4


@triton.jit
def layernorm_row_kernel(x_ptr, weight_ptr, bias_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / cols
    centered = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centered * centered, axis=0) / cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(weight_ptr + offs, mask=mask, other=0.0)
    b = tl.load(bias_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * cols + offs, centered * rstd * w + b, mask=mask)


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor,
              eps: float = 1e-5) -> torch.Tensor:
    rows, cols = x.shape
    block = max(BLOCK, triton.next_power_of_2(cols))
    if block > MAX_BLOCK:
        raise ValueError(f"triton layernorm holds a row of at most {MAX_BLOCK} floats, got {cols}")
    layernorm_row_kernel[(rows,)](x, weight, bias, out, cols, eps, BLOCK=block, num_warps=min(block // 256, 8))
    return out


COMPILE = {
    "kernel": layernorm_row_kernel,
    "signature": {"x_ptr": "*fp32", "weight_ptr": "*fp32", "bias_ptr": "*fp32", "y_ptr": "*fp32",
                  "cols": "i32", "eps": "fp32"},
    "constexprs": {"BLOCK": BLOCK},
    "num_warps": NUM_WARPS,
}
