"""Triangle contraction: out[i, j, c] = sum_k a[i, k, c] * b[j, k, c], a and b are N x N x C."""
import dataclasses

import numpy as np

from .base import THREE_TF32, KernelVariant, LaunchContract, Op, TensorMap, cdiv, normal, round_up

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


def packed_ld(s) -> int:
    """The packed rows' length: n up to a 16-byte stride, and never under a TMA box's 32 columns."""
    return max(round_up(s["n"], 4), 32)


def packed(s) -> dict[str, tuple[int, int]]:
    """triangle_3xtf32_wgmma's scratch: A = channels x n x ld, B = channels x kb x ld (kb: n up to a whole K step
    of 32), the batched product channels x n x n; each as the 2-D matrix its TMA map or kernel sees, A's never
    fewer rows than a box (the rows past the channels' reach only outputs that are not stored)."""
    n, c = s["n"], s["channels"]
    return {"a_packed": (max(c * n, 128), packed_ld(s)), "b_packed": (c * round_up(n, 32), packed_ld(s)),
            "batches": (c * n, n)}


def pack(prefix: str, source: str, target: str, rows, swap: int) -> LaunchContract:
    """A step of the batched product (`prefix`'s cubin): `source` (n x n x channels) into `target`, a channel's rows
    after another."""
    return LaunchContract(
        entry=f"{prefix}_pack", block=(256, 1, 1),
        grid=lambda s: (cdiv(packed_ld(s), 32), rows(s), cdiv(s["channels"], 32)),
        args=lambda t, s: (t[source], t[target], i32(s["n"]), i32(s["channels"]), i32(rows(s)), i32(packed_ld(s)),
                           i32(swap)))


def batched_product(prefix: str, bm: int) -> LaunchContract:
    """The channels' products on the matmul family's wgmma mainloop, a channel a blockIdx.z (`prefix`_small or
    _large by `bm`), between the packing and the unpacking."""
    from .matmul import wgmma_tma_shared_bytes

    def args(t, s):
        n = s["n"]
        return (TensorMap("a_packed", (bm, 32)), TensorMap("b_packed", (32, 32)), t["batches"],
                i32(n), i32(n), i32(n), i32(n), i32(0), i32(round_up(n, 32)))

    unpack = LaunchContract(
        entry=f"{prefix}_unpack", block=(256, 1, 1),
        grid=lambda s: (cdiv(s["n"], 32), s["n"], cdiv(s["channels"], 32)),
        args=lambda t, s: (t["batches"], t["out"], i32(s["n"]), i32(s["channels"])))
    packs = (pack(prefix, "a", "a_packed", lambda s: s["n"], 0),
             pack(prefix, "b", "b_packed", lambda s: round_up(s["n"], 32), 1))
    return LaunchContract(entry=f"{prefix}_{'large' if bm == 128 else 'small'}", block=(384, 1, 1),
                          grid=lambda s: (cdiv(s["n"], 128), cdiv(s["n"], bm), s["channels"]), args=args,
                          dynamic_shared_bytes=wgmma_tma_shared_bytes(bm), workspace=packed,
                          before=packs, after=(unpack,))


def batched(prefix: str) -> LaunchContract:
    """The batched product's route: 128 x 128 tiles once the channels' tiles make a full wave on the GPU, else
    64 x 128 (as the matmul)."""
    small, large = batched_product(prefix, 64), batched_product(prefix, 128)

    def by_tiles(t, s):
        from .matmul import multiprocessors

        return large if cdiv(s["n"], 128) ** 2 * s["channels"] >= multiprocessors() else None

    return dataclasses.replace(small, route=by_tiles)


# triangle_by_size: the CUDA-core tiles up to this n, where they led the batched product on the H100's bench
# (docs/h200-003-kernel-notes.md, section 18)
TILES_UP_TO = 128


def by_size(prefix: str) -> LaunchContract:
    """triangle_by_size's route: the tiles' entry up to TILES_UP_TO, the batched product's route past it."""
    tiles = dataclasses.replace(SMEM_TILE32X16, entry=f"{prefix}_tile")
    product = batched(prefix)

    def route(t, s):
        return tiles if s["n"] <= TILES_UP_TO else product.route(t, s)

    return dataclasses.replace(product, route=route)


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
    medium_shape={"n": 24, "channels": 8},
    small_shapes=({"n": 7, "channels": 5},),
    kernel_variants={v.name: v for v in [
        KernelVariant("triangle_thread_per_output", "triangle", THREAD_PER_OUTPUT, "one thread per output element"),
        KernelVariant("triangle_lane_channel_tile4x2", "triangle", LANE_CHANNEL_TILE4X2,
                    "h200-001: a lane per channel, so each load of a or b is one coalesced line; a warp owns a "
                    "four-by-two (i, j) tile, eight accumulators, six loads per eight FMAs, no shared memory"),
        KernelVariant("triangle_smem_tile32x16", "triangle", SMEM_TILE32X16,
                    "h200-001: a matrix product per channel, thirty-two i by sixteen j by eight channels a block "
                    "staged through two shared buffers over k steps of eight, four-by-four outputs of one channel "
                    "a thread"),
        KernelVariant("triangle_3xtf32_mma", "triangle", MMA_3XTF32,
                    "h200-001: A_c B_c^T per channel on tensor cores (mma.sync TF32, 3xTF32 split, each k step "
                    "summed apart in FP32), thirty-two i by sixteen j by eight channels a block, a warp a channel, "
                    "output staged through shared memory"),
        KernelVariant("triangle_3xtf32_wgmma", "triangle", batched("triangle_3xtf32_wgmma"),
                    "h200-002: the channels' n x n x n products as one batched product on the matmul family's wgmma "
                    "mainloop (3xTF32, TMA, a producer warpgroup and two consumer warpgroups, "
                    "sixty-four-by-one-hundred-twenty-eight or one-hundred-twenty-eight-square tiles), a and b first "
                    "packed channel-major (b transposed, rows padded to whole K steps), the products then unpacked to "
                    "out[i][j][c]", arch_specific=True),
        KernelVariant("triangle_by_size", "triangle", by_size("triangle_by_size"),
                    "h200-003: triangle_smem_tile32x16 where n is small enough that the batched product's layout "
                    "copies cost more than its tensor cores save, triangle_3xtf32_wgmma past it: one cubin, the two "
                    "kernels' entries", arch_specific=True),
    ]},
    work=work,
    # triangle_3xtf32_mma and _wgmma: three TF32 products for each FP32 one (torch's, Triton's: the FP32 pipes)
    precision=THREE_TF32,
)
