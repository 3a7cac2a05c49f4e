"""One 32x32-tile matrix kernel, as in the original project: C[z] = A[z] @ B[z] for every batch index z.

Each program computes one BLOCK_M x BLOCK_N tile of one batch's C, walking K in BLOCK_K steps.
Strides make it serve both the plain matmul (one batch) and the triangle contraction (a batch per
channel, see triangle.py). The dot keeps full FP32 (`ieee`), never TF32.
"""
import torch
import triton
import triton.language as tl

BLOCK = 32
NUM_WARPS = 4


@triton.jit
def matrix_tile_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                       stride_az, stride_am, stride_ak,
                       stride_bz, stride_bk, stride_bn,
                       stride_cz, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    z = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + z * stride_az + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + z * stride_bz + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + z * stride_cz + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def launch_matrix_tiles(a, b, c, M, N, K, batches, a_strides, b_strides, c_strides):
    """Launch one program per (BLOCK x BLOCK tile of C, batch); strides are (batch, row, column)."""
    grid = (triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK), batches)
    matrix_tile_kernel[grid](a, b, c, M, N, K, *a_strides, *b_strides, *c_strides,
                             BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_K=BLOCK, num_warps=NUM_WARPS)
    return c


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    (M, K), N = a.shape, b.shape[1]
    return launch_matrix_tiles(a, b, out, M, N, K, 1,
                               (0, a.stride(0), a.stride(1)), (0, b.stride(0), b.stride(1)),
                               (0, out.stride(0), out.stride(1)))


COMPILE = {
    "kernel": matrix_tile_kernel,
    "signature": {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                  **{f"stride_{t}{d}": "i32" for t, dims in (("a", "zmk"), ("b", "zkn"), ("c", "zmn"))
                     for d in dims}},
    "constexprs": {"BLOCK_M": BLOCK, "BLOCK_N": BLOCK, "BLOCK_K": BLOCK},
    "num_warps": NUM_WARPS,
}
