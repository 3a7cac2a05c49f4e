"""The triangle multiplicative update, outgoing (AlphaFold's pair update, as cuEquivariance computes it), whole:

    z = LayerNorm(x)                                             over the channels, per (b, i, j)
    a, b = split(sigmoid(z g_in^T) * (z p_in^T) * mask)          each of `hidden` channels
    t[b, i, j, h] = sum_k a[b, i, k, h] * b[b, j, k, h]          the triangle contraction
    out = sigmoid(z g_out^T) * (LayerNorm(t) p_out^T)            back to the channels

The GPU MODE `trimul` task's shapes (sequence length n, channels, hidden; batch) with the gate of the output over
the channels after the output projection, as AlphaFold and cuEquivariance place it, so that the library made for
it computes the same function."""
import dataclasses

import numpy as np

from .base import (
    THREE_TF32,
    EdgeCase,
    KernelVariant,
    LaunchContract,
    Library,
    Op,
    Shape,
    TensorMap,
    cdiv,
    normal,
    redraw_normal,
    round_up,
)
from .matmul import wgmma_tma_shared_bytes

EPS = 1e-5
KEPT = 0.9  # the share of pairs the drawn mask keeps
i32, f32 = np.int32, np.float32


def make_inputs(rng, s):
    bs, n, c, h = s["batch"], s["n"], s["channels"], s["hidden"]
    return {"x": normal(rng, bs, n, n, c), "mask": (rng.random((bs, n, n)) < KEPT).astype(np.float32),
            "norm_in_weight": normal(rng, c), "norm_in_bias": normal(rng, c),
            "p_in_weight": normal(rng, 2 * h, c), "g_in_weight": normal(rng, 2 * h, c),
            "norm_out_weight": normal(rng, h), "norm_out_bias": normal(rng, h),
            "p_out_weight": normal(rng, c, h), "g_out_weight": normal(rng, c, c)}


def all_masked(rng, s):
    """No pair kept: the contraction is zero and its LayerNorm has no variance, so the output is that LayerNorm's
    bias projected, times the output gate."""
    inputs = make_inputs(rng, s)
    inputs["mask"] = np.zeros_like(inputs["mask"])
    return inputs


def heavy_tailed(rng, s):
    """x from a Cauchy distribution of scale two (the task's other distribution): rows with huge outliers."""
    inputs = make_inputs(rng, s)
    inputs["x"] = (2.0 * rng.standard_cauchy(inputs["x"].shape)).astype(np.float32)
    return inputs


def redraw(tensors: dict, generator) -> None:
    """Fresh values for a timed call: normal(0, 0.25) as every op draws them, and a mask of zeros and ones kept as
    drawn."""
    redraw_normal({name: t for name, t in tensors.items() if name != "mask"}, generator)
    tensors["mask"].bernoulli_(KEPT, generator=generator)


def work(s):
    """x and the mask read once, the output written once, the weights; the FLOPs of the five products."""
    bs, n, c, h = s["batch"], s["n"], s["channels"], s["hidden"]
    pairs = bs * n * n
    weights = 4 * h * c + c * h + c * c + 2 * c + 2 * h
    flops = 2 * pairs * c * 4 * h + 2 * pairs * c * c + 2 * pairs * h * c + 2 * pairs * n * h
    return 4 * (2 * pairs * c + pairs + weights), flops


def sizes(s) -> dict[str, int]:
    """trimul_3xtf32_wgmma's extents: rows of whole TMA boxes (32 columns, 32 rows of B, 128 of A) and K-steps."""
    bs, n, c, h = s["batch"], s["n"], s["channels"], s["hidden"]
    return {"pairs": bs * n * n, "planes": bs * h, "kp": round_up(c, 32), "np": max(2 * h, 32), "cl": max(c, 32),
            "hp": round_up(h, 32), "hl": max(h, 32), "ld": max(round_up(n, 4), 32), "kb": round_up(n, 32)}


def scratch(s) -> dict[str, tuple[int, int]]:
    """The steps' operands: the weights as K x N, z twice (pairs' order, then transposed), a and b packed per
    (batch, hidden) plane, the contraction's planes t, its LayerNorm tn."""
    e = sizes(s)
    return {"w_in": (2 * e["kp"], e["np"]), "gt": (e["kp"], e["cl"]), "pt": (e["hp"], e["cl"]),
            "zz": (max(2 * e["pairs"], 128), e["cl"]), "a_packed": (max(e["planes"] * s["n"], 128), e["ld"]),
            "b_packed": (e["planes"] * e["kb"], e["ld"]), "t": (e["planes"] * s["n"], s["n"]),
            "tn": (max(e["pairs"], 128), e["hl"])}


def supports(s) -> str | None:
    if s["channels"] % 4 or s["hidden"] % 4:
        return "channels and hidden must be multiples of 4 (rows of 16-byte strides for TMA)"
    if s["channels"] > 512 or s["hidden"] > 256:
        return "channels at most 512 (a warp's row of LayerNorm) and hidden at most 256 (a block's tile)"
    if 2 * sizes(s)["pairs"] >= 2**31:
        return "z's rows, twice the pairs, must have 32-bit indices (TMA's coordinates and the epilogues')"
    return None


WGMMA = dict(block=(384, 1, 1), dynamic_shared_bytes=wgmma_tma_shared_bytes(128))  # the matmul family's 128 x 128
# trimul_3xtf32_wgmma_pingpong's walking products: tiles 128 x 64, five stages (trimul.cuh's PINGPONG_STAGES)
PINGPONG_COLS, PINGPONG_STAGES = 64, 5
PINGPONG = dict(block=(384, 1, 1), dynamic_shared_bytes=wgmma_tma_shared_bytes(128, PINGPONG_STAGES, PINGPONG_COLS))


def a_map(tensor: str) -> TensorMap:
    """A product's A operand as the mainloop loads it: boxes of 128 rows by a K step of 32."""
    return TensorMap(tensor, (128, 32))


def b_map(tensor: str) -> TensorMap:
    return TensorMap(tensor, (32, 32))


def weights_step(t, s):
    e = sizes(s)
    return (t["p_in_weight"], t["g_in_weight"], t["g_out_weight"], t["p_out_weight"], t["w_in"], t["gt"], t["pt"],
            i32(s["channels"]), i32(s["hidden"]), i32(e["kp"]), i32(e["np"]), i32(e["cl"]), i32(e["hp"]))


# The blocks of a product that walks its tiles (wgmma_tma::run's `tiles`): the H100's and the H200's 132 SMs, a block
# each (the mainloop's 197 KB of shared memory); on a GPU of other size they still cover every tile.
WALKERS = 132


def tiles(columns: int, s, cols: int = 128) -> tuple[int, int]:
    """(tiles across, tiles in all) of a product with a row per pair and `columns` columns, 128 x `cols` a tile."""
    across = cdiv(columns, cols)
    return across, across * cdiv(sizes(s)["pairs"], 128)


def walkers(columns, sides: int = 1, cols: int = 128):
    """The grid of a product that walks its tiles: as many blocks as the SMs take, split among `sides` (its
    blockIdx.z), none idle."""
    return lambda s: (min(cdiv(WALKERS, sides), tiles(columns(s), s, cols)[1]), 1, sides)


def project_in(cols: int):
    def args(t, s):
        e = sizes(s)
        return (a_map("zz"), b_map("w_in"), t["a_packed"], t["b_packed"], t["mask"],
                i32(s["n"]), i32(s["channels"]), i32(s["hidden"]), i32(e["pairs"]), i32(e["ld"]), i32(e["kb"]),
                i32(e["kp"]), *map(i32, tiles(2 * s["hidden"], s, cols)))

    return args


def product(t, s):
    n, e = s["n"], sizes(s)
    return (a_map("a_packed"), b_map("b_packed"), t["t"], i32(n), i32(n), i32(n), i32(n),
            i32(0), i32(e["kb"]))


def steps_before(walking: dict, cols: int = 128) -> tuple[LaunchContract, ...]:
    """Steps 1 to 3, the gated input projections' tiles 128 x `cols`, their block and shared memory `walking`."""
    return (
        LaunchContract(entry="trimul_weights", block=(256, 1, 1), args=weights_step,
                       grid=lambda s: (min(cdiv(2 * sizes(s)["kp"] * sizes(s)["np"], 256), 1024), 1, 1)),
        LaunchContract(entry="trimul_norm_in", block=(256, 1, 1), grid=lambda s: (cdiv(sizes(s)["pairs"], 8), 1, 1),
                       args=lambda t, s: (t["x"], t["norm_in_weight"], t["norm_in_bias"], t["zz"],
                                          i32(sizes(s)["pairs"]), i32(s["n"]), i32(s["channels"]),
                                          i32(sizes(s)["cl"]), f32(EPS))),
        LaunchContract(entry="trimul_project_in", args=project_in(cols), **walking,
                       grid=walkers(lambda s: 2 * s["hidden"], sides=2, cols=cols)),
    )


NORM_OUT = LaunchContract(entry="trimul_norm_out", block=(256, 1, 1),
                          grid=lambda s: (cdiv(s["n"] * s["n"], 32), s["batch"], 1),
                          args=lambda t, s: (t["t"], t["norm_out_weight"], t["norm_out_bias"], t["tn"], i32(s["n"]),
                                             i32(s["hidden"]), i32(sizes(s)["hl"]), f32(EPS)))


def steps_after(walking: dict, cols: int = 128) -> tuple[LaunchContract, ...]:
    """Steps 5 to 7, the output gate's and the output projection's tiles 128 x `cols`."""
    def across(s):
        return tiles(s["channels"], s, cols)

    return (
        NORM_OUT,
        LaunchContract(entry="trimul_gate_out", grid=walkers(lambda s: s["channels"], cols=cols), **walking,
                       args=lambda t, s: (a_map("zz"), b_map("gt"), t["out"], i32(sizes(s)["pairs"]),
                                          i32(s["channels"]), *map(i32, across(s)))),
        LaunchContract(entry="trimul_project_out", grid=walkers(lambda s: s["channels"], cols=cols), **walking,
                       args=lambda t, s: (a_map("tn"), b_map("pt"), t["out"], i32(sizes(s)["pairs"]),
                                          i32(s["channels"]), i32(s["hidden"]), *map(i32, across(s)))),
    )


WGMMA_PIPELINE = LaunchContract(
    entry="trimul_product", grid=lambda s: (cdiv(s["n"], 128), cdiv(s["n"], 128), sizes(s)["planes"]), args=product,
    supports=supports, workspace=scratch, before=steps_before(WGMMA), after=steps_after(WGMMA), **WGMMA)
# trimul_3xtf32_wgmma_fused_out: the output gate and the output product in one launch, both into each tile of out
FUSED_OUT_PIPELINE = dataclasses.replace(WGMMA_PIPELINE, after=(
    NORM_OUT,
    LaunchContract(entry="trimul_out", grid=walkers(lambda s: s["channels"]), **WGMMA,
                   args=lambda t, s: (a_map("zz"), b_map("gt"), a_map("tn"), b_map("pt"), t["out"],
                                      i32(sizes(s)["pairs"]), i32(s["channels"]), i32(s["hidden"]),
                                      *map(i32, tiles(s["channels"], s)))),
))
# trimul_3xtf32_wgmma_pingpong: the walking products' consumers on alternate tiles of 128 x 64
PINGPONG_PIPELINE = dataclasses.replace(WGMMA_PIPELINE, before=steps_before(PINGPONG, PINGPONG_COLS),
                                        after=steps_after(PINGPONG, PINGPONG_COLS))


def library_range(s: Shape) -> str | None:
    """cuEquivariance's gated GEMMs step through the channels and the hidden width in tiles of 16 to 64 and assert
    that the tile divides the width (gated_gemm_torch.py; channels 196 refused on an H100): measured where both are
    multiples of 32, the tile its kernels default to."""
    if s["channels"] % 32 or s["hidden"] % 32:
        return "cuEquivariance's gated GEMMs take channels and hidden in whole tiles (measured at multiples of 32)"
    return None


ARGS = ("x", "mask", "norm_in_weight", "norm_in_bias", "p_in_weight", "g_in_weight", "norm_out_weight",
        "norm_out_bias", "p_out_weight", "g_out_weight")

OP = Op(
    name="trimul",
    title="Triangle multiplicative update",
    order=6,
    dims=("batch", "n", "channels", "hidden"),
    make_inputs=make_inputs,
    output_shape=lambda s: (s["batch"], s["n"], s["n"], s["channels"]),
    torch_args=ARGS,
    # widths of 32 but one small shape's: where the library is measured too (cuEquivariance's range, library_range)
    medium_shape={"batch": 1, "n": 24, "channels": 16, "hidden": 32},
    small_shapes=({"batch": 1, "n": 5, "channels": 32, "hidden": 32},
                  {"batch": 2, "n": 7, "channels": 12, "hidden": 32}),
    edge_cases=(EdgeCase("all-masked", {"batch": 1, "n": 6, "channels": 32, "hidden": 32}, all_masked),
                EdgeCase("heavy-tailed", {"batch": 1, "n": 9, "channels": 32, "hidden": 32}, heavy_tailed)),
    work=work,
    redraw=redraw,
    kernel_variants={v.name: v for v in [
        KernelVariant("trimul_3xtf32_wgmma", "trimul", WGMMA_PIPELINE,
                      "h200-003: the five products on the matmul family's wgmma mainloop (3xTF32, TMA), gates, mask "
                      "and layouts in their epilogues: the weights transposed, z by a warp a pair (twice: in order "
                      "and transposed, so a and b leave as runs of their packed rows), the gated input products, "
                      "the batch x hidden contractions, t's LayerNorm a block of thirty-two pairs, then the output "
                      "gate and the output product into out", arch_specific=True),
        KernelVariant("trimul_3xtf32_wgmma_fused_out", "trimul", FUSED_OUT_PIPELINE,
                      "h200-003: trimul_3xtf32_wgmma with its output gate and output product in one launch, each "
                      "tile of out taking both products through one ring, the gate's sigmoid written and read back by "
                      "the same thread, so that out is written once and the SMs fill once", arch_specific=True),
        KernelVariant("trimul_3xtf32_wgmma_pingpong", "trimul", PINGPONG_PIPELINE,
                      "h200-003: trimul_3xtf32_wgmma with its three walking products (the gated input projections, "
                      "the output gate, the output projection) on the ping-pong schedule: tiles half as wide, the "
                      "two consumer warpgroups taking them in turn, so that one issues its products while the other "
                      "writes its epilogue", arch_specific=True),
    ]},
    library=Library("cuEquivariance", "cuequivariance-ops-torch-cu13", ARGS, library_range),  # TF32x3 mode
    # FP32 in and out; the cheapest honest implementation runs its products as three TF32 products on tensor cores
    precision=THREE_TF32,
)
