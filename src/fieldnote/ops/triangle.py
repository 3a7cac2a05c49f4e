"""Triangle contraction: out[i, j, c] = sum_k a[i, k, c] * b[j, k, c], a and b are N x N x C."""
import numpy as np

from .base import CudaVariant, LaunchContract, Op, cdiv, normal

i32 = np.int32


def make_inputs(rng, s):
    n, c = s["n"], s["channels"]
    return {"a": normal(rng, n, n, c), "b": normal(rng, n, n, c)}


def a_b_out(t, s):
    """Every triangle kernel takes (a, b, out, n, channels)."""
    return (t["a"], t["b"], t["out"], i32(s["n"]), i32(s["channels"]))


def tile_32i_16j_8c(s):
    """A block for 32 i x 16 j x 8 channels: j tiles on x, i tiles on y, channel chunks on z."""
    return (cdiv(s["n"], 16), cdiv(s["n"], 32), cdiv(s["channels"], 8))


THREAD_PER_OUTPUT = LaunchContract(
    entry="triangle_thread_per_output", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["n"] * s["n"] * s["channels"], 256), 1, 1),
    args=a_b_out,
)
LANE_CHANNEL_TILE4X2 = LaunchContract(
    entry="triangle_lane_channel_tile4x2", block=(128, 1, 1),
    grid=lambda s: (cdiv(cdiv(s["n"], 4) * cdiv(s["n"], 2) * cdiv(s["channels"], 32), 4), 1, 1),
    args=a_b_out,
)
SMEM_TILE32X16 = LaunchContract(
    entry="triangle_smem_tile32x16", block=(256, 1, 1),
    grid=tile_32i_16j_8c,
    args=a_b_out,
)
MMA_3XTF32 = LaunchContract(
    entry="triangle_3xtf32_mma", block=(256, 1, 1),
    grid=tile_32i_16j_8c,
    args=a_b_out,
)


def work(s):
    return 4 * 3 * s["n"] * s["n"] * s["channels"], 2 * s["n"] ** 3 * s["channels"]


OP = Op(
    name="triangle",
    title="Triangle contraction",
    order=4,
    dims=("n", "channels"),
    make_inputs=make_inputs,
    output_shape=lambda s: (s["n"], s["n"], s["channels"]),
    torch_args=("a", "b"),
    triton_args=("a", "b"),
    small_shapes=({"n": 7, "channels": 5},),
    cuda_variants={v.name: v for v in [
        CudaVariant("triangle_thread_per_output", "triangle", THREAD_PER_OUTPUT, "one thread per output element"),
        CudaVariant("triangle_lane_channel_tile4x2", "triangle", LANE_CHANNEL_TILE4X2,
                    "h200-001: a lane per channel, so each load of a or b is one coalesced line; a warp owns a 4 x 2 "
                    "(i, j) tile, 8 accumulators, 6 loads per 8 FMAs, no shared memory"),
        CudaVariant("triangle_smem_tile32x16", "triangle", SMEM_TILE32X16,
                    "h200-001: a matrix product per channel, 32 i x 16 j x 8 channels a block staged through "
                    "two shared buffers over k steps of 8, 4 x 4 outputs of one channel a thread"),
        CudaVariant("triangle_3xtf32_mma", "triangle", MMA_3XTF32,
                    "h200-001: A_c B_c^T per channel on tensor cores (mma.sync TF32, 3xTF32 split, each k step "
                    "summed apart in FP32), 32 i x 16 j x 8 channels a block, a warp a channel, output staged "
                    "through shared memory"),
    ]},
    work=work,
)
