"""Triangle contraction through the matrix kernel: out[:, :, c] = a[:, :, c] @ b[:, :, c].T for each channel c.

The channel is the batch index of `matrix_tile_kernel` (grid over the 32 channels); the loads are strided,
since consecutive k of one channel sit `channels` floats apart.
"""
import torch

from .matmul import COMPILE, launch_matrix_tiles  # noqa: F401  (same kernel, so the same census)


def triangle(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n, _, channels = a.shape
    # A_c[i, k] = a[i, k, c]; B_c[k, j] = b[j, k, c]; C_c[i, j] = out[i, j, c]
    return launch_matrix_tiles(a, b, out, n, n, n, channels,
                               (a.stride(2), a.stride(0), a.stride(1)),
                               (b.stride(2), b.stride(1), b.stride(0)),
                               (out.stride(2), out.stride(0), out.stride(1)))
