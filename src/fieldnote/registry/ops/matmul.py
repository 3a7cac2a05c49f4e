"""Matrix multiplication: c = a @ b, a is M x K, b is K x N, FP32."""
import dataclasses

import numpy as np

from .base import THREE_TF32, KernelVariant, LaunchContract, Library, Op, TensorMap, cdiv, normal, round_up

i32 = np.int32


def make_inputs(rng, s):
    return {"a": normal(rng, s["m"], s["k"]), "b": normal(rng, s["k"], s["n"])}


def tile_16x16_grid(s):
    return (cdiv(s["n"], 16), cdiv(s["m"], 16), 1)


def tile_64x64_grid(s):
    return (cdiv(s["n"], 64), cdiv(s["m"], 64), 1)


def abc_mnk(t, s):
    return (t["a"], t["b"], t["out"], i32(s["m"]), i32(s["n"]), i32(s["k"]))


def tile_64x64(entry, threads):
    """A kernel that computes one 64 x 64 tile of C a block, with `threads` threads."""
    return LaunchContract(entry=entry, block=(threads, 1, 1), grid=tile_64x64_grid, args=abc_mnk)


TILED_16X16 = LaunchContract(entry="matmul_tiled_16x16", block=(16, 16, 1), grid=tile_16x16_grid, args=abc_mnk)
REGTILE_64X64_K32 = tile_64x64("matmul_regtile_64x64_k32", 256)
REGTILE_64X64_K64_TRANSPOSED = tile_64x64("matmul_regtile_64x64_k64_transposed", 256)
MMA_3XTF32_64X64 = tile_64x64("matmul_3xtf32_mma_64x64", 128)
MMA_3XTF32_64X64_MASKSPLIT = tile_64x64("matmul_3xtf32_mma_64x64_masksplit", 128)
MMA_3XTF32_64X64_BLOCKED = tile_64x64("matmul_3xtf32_mma_64x64_blocked", 128)
MMA_3XTF32_64X64_8WARPS = tile_64x64("matmul_3xtf32_mma_64x64_8warps", 256)
MMA_3XTF32_64X64_PRESPLIT = tile_64x64("matmul_3xtf32_mma_64x64_presplit", 128)
MMA_3XTF32_64X64_PRESPLIT_8WARPS = tile_64x64("matmul_3xtf32_mma_64x64_presplit_8warps", 256)
WGMMA_3XTF32_64X64 = tile_64x64("matmul_3xtf32_wgmma_64x64", 128)
CPASYNC_2BUF_64X64 = tile_64x64("matmul_cpasync_2buf_64x64", 256)
# What a TMA kernel's cubin launches for shapes TMA cannot take: h200-001's adopted mma.sync kernel, built in.
WGMMA_TMA_FALLBACK = tile_64x64("matmul_3xtf32_wgmma_tma_fallback", 128)


def takes_tma(t, s) -> bool:
    """TMA copies rows of 16-byte strides from 16-byte aligned addresses: n and k multiples of 4, k > 0."""
    aligned = all(t[name].data_ptr() % 16 == 0 for name in ("a", "b"))
    return aligned and s["k"] > 0 and s["k"] % 4 == 0 and s["n"] % 4 == 0


# The wgmma_tma family's two tiles, bm x 128 (a .cu entry's `BM`), and the stages of K 32 each holds in shared
# memory: the most that fit (its `STAGES`).
STAGES = {64: 6, 128: 4}


def wgmma_tma(entry, bm, route=None, a="a", b="b"):
    """kernels/cuda/include/wgmma_tma.cuh: a bm x 128 tile of C a block, three warpgroups, STAGES[bm] stages of K
    32 in shared memory (two tiles of A, hi and lo, and one of B each); A and B (the tensors named `a` and `b`)
    passed as TMA maps."""
    def args(t, s):
        return (TensorMap(a, (bm, 32)), TensorMap(b, (32, 32)), t["out"],
                i32(s["m"]), i32(s["n"]), i32(s["k"]))

    return LaunchContract(entry=entry, block=(384, 1, 1), grid=lambda s: (cdiv(s["n"], 128), cdiv(s["m"], bm), 1),
                          args=args, dynamic_shared_bytes=wgmma_tma_shared_bytes(bm),
                          route=route or (lambda t, s: None if takes_tma(t, s) else WGMMA_TMA_FALLBACK))


def wgmma_tma_shared_bytes(bm: int, stages: int | None = None, cols: int = 128) -> int:
    """A block's shared memory, Layout<bm, stages, cols>: the stages (A's hi and lo tiles, B's `cols` wide), 1024
    to align, three barriers a stage; tiles of 64 columns are the ping-pong schedule's, with its two turns'
    barriers. `stages` defaults to STAGES[bm]."""
    stages = stages or STAGES[bm]
    return stages * (2 * bm * 128 + 32 * cols * 4) + 1024 + 8 * (3 * stages + (2 if cols < 128 else 0))


def cluster_shared_bytes(bm: int, stages: int) -> int:
    """A block's shared memory in split_in_cluster, ClusterLayout<bm, stages>: the ring's, 256 bytes, and the stash
    of its partial tile (bm rows of STASH_LD = 128 + 4 floats)."""
    return wgmma_tma_shared_bytes(bm, stages) + 256 + bm * (128 + 4) * 4


def tile_pair(prefix: str, **kwargs) -> dict[int, LaunchContract]:
    """A cubin's two entries of the family, by tile height: `<prefix>_small` (64 x 128), `<prefix>_large`."""
    return {bm: wgmma_tma(f"{prefix}_{size}", bm, **kwargs) for bm, size in ((64, "small"), (128, "large"))}


def multiprocessors() -> int:
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def large_tiles(s) -> bool:
    """128x128 tiles once they make a full wave on the GPU (a block a multiprocessor), else 64x128: at 1024^3 the
    first leaves half the SMs idle."""
    return cdiv(s["m"], 128) * cdiv(s["n"], 128) >= multiprocessors()


def by_tiles(t, s):
    """matmul_3xtf32_wgmma_tma's entries: the tile by `large_tiles`, the mma.sync kernel where TMA cannot go."""
    if not takes_tma(t, s):
        return WGMMA_TMA_FALLBACK
    return WGMMA_TMA_LARGE if large_tiles(s) else None


_ADOPTED_TILES = tile_pair("matmul_3xtf32_wgmma_tma")
WGMMA_TMA_64 = dataclasses.replace(_ADOPTED_TILES[64], route=by_tiles)
WGMMA_TMA_LARGE = _ADOPTED_TILES[128]


def on_copies(prefix: str, contract: LaunchContract) -> LaunchContract:
    """`contract` (whose TMA maps read "a16" and "b16") after a copy of A and of B into scratch rows of 16-byte
    strides: for shapes whose rows TMA cannot read as they lie."""
    def copy(source, target, rows, cols):
        return LaunchContract(entry=f"{prefix}_copy", block=(256, 1, 1),
                              grid=lambda s: (cdiv(s[rows] * round_up(s[cols], 4), 1024), 1, 1),
                              args=lambda t, s: (t[source], t[target], i32(s[rows]), i32(s[cols]),
                                                 i32(round_up(s[cols], 4))))

    def scratch(s):
        return {"a16": (s["m"], round_up(s["k"], 4)), "b16": (s["k"], round_up(s["n"], 4))}

    return dataclasses.replace(contract, workspace=scratch,
                               before=(copy("a", "a16", "m", "k"), copy("b", "b16", "k", "n")))


def padded(prefix: str):
    """The route of matmul_3xtf32_wgmma_tma_padded: as by_tiles where TMA can go; elsewhere (k > 0) a copy of A
    and of B into scratch rows of 16-byte strides first, then the same tiles on the copies."""
    plain = tile_pair(prefix)
    copied = {bm: on_copies(prefix, contract) for bm, contract in tile_pair(prefix, a="a16", b="b16").items()}

    def route(t, s):
        if s["k"] == 0:
            return WGMMA_TMA_FALLBACK
        bm = 128 if large_tiles(s) else 64
        return plain[bm] if takes_tma(t, s) else copied[bm]

    return dataclasses.replace(plain[64], route=route)


def k_splits(s) -> int:
    """The slices of K matmul_3xtf32_wgmma_tma_splitk takes: as many as the SMs its 64x128 tiles leave idle
    allow, each at least two K steps of 32; 1, no split."""
    steps, tiles = cdiv(s["k"], 32), cdiv(s["m"], 64) * cdiv(s["n"], 128)
    wanted = max(1, min(steps // 2, multiprocessors() // tiles))
    return cdiv(steps, cdiv(steps, wanted))  # no slice left empty by the rounding up of its steps


def split_k(prefix: str):
    """The route of matmul_3xtf32_wgmma_tma_splitk: where `k_splits` > 1, the slices' partial products (the
    family's batched entry, a slice a batch) into scratch, then their sum in order; elsewhere as
    matmul_3xtf32_wgmma_tma."""
    def slice_k(s):
        return cdiv(cdiv(s["k"], 32), k_splits(s)) * 32

    def args(t, s):
        ks = slice_k(s)
        return (TensorMap("a", (64, 32)), TensorMap("b", (32, 32)), t["partials"],
                i32(s["m"]), i32(s["n"]), i32(ks), i32(0), i32(ks), i32(ks))

    reduce = LaunchContract(entry=f"{prefix}_reduce", block=(256, 1, 1),
                            grid=lambda s: (cdiv(s["m"] * s["n"], 1024), 1, 1),
                            args=lambda t, s: (t["partials"], t["out"], i32(s["m"] * s["n"] // 4), i32(k_splits(s))))
    partials = LaunchContract(entry=f"{prefix}_partials", block=(384, 1, 1),
                              grid=lambda s: (cdiv(s["n"], 128), cdiv(s["m"], 64), k_splits(s)), args=args,
                              dynamic_shared_bytes=wgmma_tma_shared_bytes(64),
                              workspace=lambda s: {"partials": (k_splits(s) * s["m"], s["n"])}, after=(reduce,))
    plain = tile_pair(prefix)

    def route(t, s):
        if not takes_tma(t, s) or t["out"].data_ptr() % 16:
            return WGMMA_TMA_FALLBACK
        if k_splits(s) > 1:
            return partials
        return plain[128] if large_tiles(s) else None

    return dataclasses.replace(plain[64], route=route)


def padded_split_k(prefix: str):
    """The route of matmul_3xtf32_wgmma_tma_padded_splitk: split_k's where TMA takes the operands as they lie (its
    slices of K where the tiles leave SMs idle), padded's where it does not (the copies first)."""
    split, pad = split_k(prefix), padded(prefix)

    def route(t, s):
        chosen = split.route(t, s)
        return pad.route(t, s) if chosen is WGMMA_TMA_FALLBACK else chosen

    return dataclasses.replace(split, route=route)


# split_in_cluster's stages: a slice is a few K steps
CLUSTER_STAGES = 4


def cluster_splits(s) -> int:
    """The blocks of a cluster matmul_3xtf32_wgmma_cluster_splitk gives a tile: 8, 4 or 2 (8 is CUDA's portable
    most), the most K has steps for whose clusters fill at most three quarters of the SMs, and no fewer than
    split-K's slices; 1, no cluster. On the H100's bench the clusters led with 64, 80 and 96 blocks and lost with
    128 at 512^3 (docs/h200-003-kernel-notes.md, section 18), where split-K's four slices stay."""
    steps, tiles = cdiv(s["k"], 32), cdiv(s["m"], 64) * cdiv(s["n"], 128)
    room = multiprocessors() * 3 // 4
    splits = next((splits for splits in (8, 4, 2) if splits <= steps and tiles * splits <= room), 1)
    return splits if splits >= k_splits(s) else 1


def cluster_split_k(prefix: str):
    """The route of matmul_3xtf32_wgmma_cluster_splitk: where `cluster_splits` > 1, one launch of a cluster whose
    blocks take a tile's slices of K and sum them through distributed shared memory (after the copies where TMA
    cannot read A and B as they lie); elsewhere padded_split_k's."""
    def slice_k(s):
        return cdiv(cdiv(s["k"], 32), cluster_splits(s)) * 32

    def in_cluster(splits, a="a", b="b"):
        return LaunchContract(
            entry=f"{prefix}_cluster{splits}", block=(384, 1, 1),
            grid=lambda s: (cdiv(s["n"], 128), cdiv(s["m"], 64), splits),
            args=lambda t, s: (TensorMap(a, (64, 32)), TensorMap(b, (32, 32)), t["out"], i32(s["m"]), i32(s["n"]),
                               i32(s["k"]), i32(slice_k(s))),
            dynamic_shared_bytes=cluster_shared_bytes(64, CLUSTER_STAGES))

    clusters = {splits: in_cluster(splits) for splits in (2, 4, 8)}
    copied = {splits: on_copies(prefix, in_cluster(splits, "a16", "b16")) for splits in (2, 4, 8)}
    fallback = padded_split_k(prefix)

    def route(t, s):
        splits = cluster_splits(s)
        if splits == 1:
            return fallback.route(t, s)
        return clusters[splits] if takes_tma(t, s) else copied[splits]

    return dataclasses.replace(fallback, route=route)


# The 64x128 mainloop fed by cp.async from plain pointers, any shape: an attempt (docs/h200-002-kernel-notes.md).
WGMMA_CPASYNC_64X128 = LaunchContract(entry="matmul_3xtf32_wgmma_cpasync_64x128", block=(384, 1, 1),
                                      grid=lambda s: (cdiv(s["n"], 128), cdiv(s["m"], 64), 1), args=abc_mnk,
                                      dynamic_shared_bytes=WGMMA_TMA_64.dynamic_shared_bytes)


def wgmma_tma_variant(tile: str, policy: str, design: str) -> KernelVariant:
    """A variant of the wgmma_tma family: its tile (`128x128` or `64x128`) and its policy suffix name it; its .cu
    file names the policy."""
    name = f"matmul_3xtf32_wgmma_tma_{tile}{policy}"
    return KernelVariant(name, "matmul", wgmma_tma(name, int(tile.split("x")[0])), f"h200-002: {design}",
                       arch_specific=True)


WGMMA_TMA_VARIANTS = {v.name: v for v in [
    wgmma_tma_variant("128x128", "", "the 3xTF32 product on sm_90's own path: C^T = B^T A^T so that A's tile, as TMA "
                      "lays it (128-byte swizzle), is wgmma's K-major shared operand and B^T its register operand; a "
                      "one-hundred-twenty-eight-square tile, four stages of thirty-two along K, a producer warpgroup "
                      "(TMA, and A split into hi and lo tiles) and two consumer warpgroups of wgmma m64n128k8, each "
                      "stage's twelve products summed from zero and added in FP32"),
    wgmma_tma_variant("64x128", "", "as matmul_3xtf32_wgmma_tma_128x128 with sixty-four-by-one-hundred-twenty-eight "
                      "tiles (wgmma m64n64k8) and six stages: twice the blocks at the seed shape, where the larger "
                      "tile leaves half the SMs idle"),
    wgmma_tma_variant("128x128", "_ws", "as matmul_3xtf32_wgmma_tma_128x128 with a warp of its own issuing the TMA "
                      "loads, so the split of A runs up to three stages ahead of the consumers"),
    wgmma_tma_variant("128x128", "_ws_chain2", "as matmul_3xtf32_wgmma_tma_128x128_ws with chains of two stages: "
                      "stage s issued before the previous stage is waited for, the partial tile drained every other "
                      "stage"),
    wgmma_tma_variant("128x128", "_ws_chain2_trunc", "as matmul_3xtf32_wgmma_tma_128x128_ws_chain2 with A's hi left "
                      "as loaded (the tensor core reads a TF32 operand's top nineteen bits) and lo the truncation's "
                      "remainder: one tile written a stage by the split, not two"),
    wgmma_tma_variant("64x128", "_ws_chain2", "as matmul_3xtf32_wgmma_tma_64x128 with a warp of its own issuing the "
                      "TMA loads and chains of two stages"),
    wgmma_tma_variant("64x128", "_ws_chain2_trunc", "as matmul_3xtf32_wgmma_tma_64x128_ws_chain2 with A's hi left as "
                      "loaded and lo the truncation's remainder"),
    KernelVariant("matmul_3xtf32_wgmma_cpasync_64x128", "matmul", WGMMA_CPASYNC_64X128,
                "h200-002: matmul_3xtf32_wgmma_tma_64x128_ws_chain2 for any shape: two producer warps copy the "
                "tiles element by element with cp.async into the layout TMA's swizzle gives (zeros past the "
                "matrix), two split A", arch_specific=True),
    KernelVariant("matmul_3xtf32_wgmma_tma_padded", "matmul", padded("matmul_3xtf32_wgmma_tma_padded"),
                "h200-002: matmul_3xtf32_wgmma_tma where TMA can go; where it cannot (n or k not a multiple of four), "
                "A and B copied first into scratch rows of 16-byte strides, then the same wgmma path on the "
                "copies, instead of the mma.sync kernel", arch_specific=True),
    KernelVariant("matmul_3xtf32_wgmma_tma_splitk", "matmul", split_k("matmul_3xtf32_wgmma_tma_splitk"),
                "h200-002: matmul_3xtf32_wgmma_tma where its tiles fill the GPU; where they leave SMs idle, K cut "
                "into slices of at least two steps, each slice's product a batch of the family's batched entry, "
                "the slices then summed in order by a second kernel", arch_specific=True),
    KernelVariant("matmul_3xtf32_wgmma_tma_padded_splitk", "matmul",
                  padded_split_k("matmul_3xtf32_wgmma_tma_padded_splitk"),
                  "h200-003: matmul_3xtf32_wgmma_tma_splitk where TMA reads the operands as they lie, "
                  "matmul_3xtf32_wgmma_tma_padded where it cannot (the copies first): each shape the route that "
                  "led there", arch_specific=True),
    KernelVariant("matmul_3xtf32_wgmma_cluster_splitk", "matmul",
                  cluster_split_k("matmul_3xtf32_wgmma_cluster_splitk"),
                  "h200-003: where the tiles leave most SMs idle, the blocks of a cluster take one tile's slices of "
                  "K through TMA (after the padded copies where rows are no 16-byte stride) and sum their partial "
                  "tiles through distributed shared memory in rank order, one launch and no partials in global "
                  "memory; elsewhere matmul_3xtf32_wgmma_tma_padded_splitk",
                  arch_specific=True),
    KernelVariant("matmul_3xtf32_wgmma_tma", "matmul", WGMMA_TMA_64,
                "h200-002: matmul_3xtf32_wgmma_tma_128x128_ws_chain2_trunc where its tiles fill the GPU, "
                "matmul_3xtf32_wgmma_tma_64x128_ws_chain2_trunc where they do not, h200-001's mma.sync kernel "
                "where TMA cannot go (n or k not a multiple of four): one cubin, three entries", arch_specific=True),
]}


def work(s):
    return 4 * (s["m"] * s["k"] + s["k"] * s["n"] + s["m"] * s["n"]), 2 * s["m"] * s["n"] * s["k"]


OP = Op(
    name="matmul",
    title="Matrix multiplication",
    order=1,
    dims=("m", "n", "k"),
    in_progression=True,
    make_inputs=make_inputs,
    output_shape=lambda s: (s["m"], s["n"]),
    torch_args=("a", "b"),
    triton_args=("a", "b"),
    medium_shape={"m": 96, "n": 80, "k": 72},
    # 70x132x36: every dimension past a tile and a stage, on the TMA path (rows of 16-byte strides); 64x128x520:
    # one tile and a K long enough to be sliced (split-K), the last slice short
    small_shapes=({"m": 17, "n": 19, "k": 23}, {"m": 1, "n": 1, "k": 1}, {"m": 70, "n": 132, "k": 36},
                  {"m": 64, "n": 128, "k": 520}),
    kernel_variants={v.name: v for v in [
        KernelVariant("matmul_tiled_16x16", "matmul", TILED_16X16,
                    "sixteen-square shared tiles of A and B, one output per thread, a K step of sixteen"),
        KernelVariant("matmul_regtile_64x64_k32", "matmul", REGTILE_64X64_K32,
                    "sixty-four-square block tile, four-by-four outputs per thread, 128-bit global loads, a K step of "
                    "thirty-two, one shared buffer per operand"),
        KernelVariant("matmul_regtile_64x64_k64_transposed", "matmul", REGTILE_64X64_K64_TRANSPOSED,
                    "as matmul_regtile_64x64_k32 plus 128-bit shared reads, A tile stored transposed "
                    "(row stride sixty-eight), a K step of sixty-four"),
        KernelVariant("matmul_cpasync_2buf_64x64", "matmul", CPASYNC_2BUF_64X64,
                    "two shared buffers, next K tile in flight with cp.async (A 4-byte, B 16-byte), a wait that leaves "
                    "one group in flight, a K step of thirty-two per buffer, sixty-four-square tile, four-by-four "
                    "outputs per thread"),
        KernelVariant("matmul_3xtf32_mma_64x64", "matmul", MMA_3XTF32_64X64,
                    "h200-001: tensor cores (mma.sync m16n8k8 TF32) made FP32-accurate by the 3xTF32 split "
                    "(x = hi + lo; lo*hi + hi*lo + hi*hi), sixty-four-square tile, four warps of thirty-two-square, "
                    "two shared buffers fed through registers, a K step of thirty-two"),
        KernelVariant("matmul_3xtf32_mma_64x64_masksplit", "matmul", MMA_3XTF32_64X64_MASKSPLIT,
                    "h200-001: as matmul_3xtf32_mma_64x64, split by masking (hi = x & ~0x1fff, lo = x - hi) "
                    "instead of two cvt.rna, the mma issued term by term across the eight accumulator tiles"),
        KernelVariant("matmul_3xtf32_mma_64x64_blocked", "matmul", MMA_3XTF32_64X64_BLOCKED,
                    "h200-001: as matmul_3xtf32_mma_64x64_masksplit with hi rounded to nearest by integer "
                    "operations and each K step's twelve mma summed from zero, then added in FP32 (the tensor "
                    "core's accumulation truncates)"),
        KernelVariant("matmul_3xtf32_mma_64x64_8warps", "matmul", MMA_3XTF32_64X64_8WARPS,
                    "h200-001: as matmul_3xtf32_mma_64x64_blocked with eight warps of thirty-two-by-sixteen instead "
                    "of four of thirty-two-square"),
        KernelVariant("matmul_3xtf32_mma_64x64_presplit", "matmul", MMA_3XTF32_64X64_PRESPLIT,
                    "h200-001: as matmul_3xtf32_mma_64x64_blocked with each element split once, into (hi, lo) "
                    "pairs in shared memory as the tile is stored, K steps of sixteen"),
        KernelVariant("matmul_3xtf32_mma_64x64_presplit_8warps", "matmul", MMA_3XTF32_64X64_PRESPLIT_8WARPS,
                    "h200-001: as matmul_3xtf32_mma_64x64_presplit with eight warps of thirty-two-by-sixteen instead "
                    "of four of thirty-two-square"),
        KernelVariant("matmul_3xtf32_wgmma_64x64", "matmul", WGMMA_3XTF32_64X64,
                    "h200-001: the 3xTF32 product of matmul_3xtf32_mma_64x64_presplit on warpgroup mma (wgmma "
                    "m64n64k8, sm_90a): A from registers, B transposed into shared memory and read by the tensor "
                    "core, each K step's mma running while the next tile is split and stored",
                    arch_specific=True),
    ]} | WGMMA_TMA_VARIANTS,
    work=work,
    # the wgmma and mma.sync kernels: three TF32 products for each FP32 one (torch's, Triton's: the FP32 pipes)
    precision=THREE_TF32,
    library=Library("CUTLASS", "nvidia-cutlass", ("a", "b")),  # its 3xTF32 GEMM, built here (kernels/library)
)
