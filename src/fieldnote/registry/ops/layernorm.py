"""Layer normalization over each row: y = (x - mean) / sqrt(var + 1e-5) * weight + bias."""
import dataclasses

import numpy as np

from .base import FP32_FMA, EdgeCase, KernelVariant, LaunchContract, Library, Op, Unmeasured, cdiv, normal

i32, f32 = np.int32, np.float32
EPS = 1e-5


def make_inputs(rng, s):
    return {"x": normal(rng, s["rows"], s["cols"]), "weight": normal(rng, s["cols"]),
            "bias": normal(rng, s["cols"])}


def constant_rows(rng, s):
    """Every row one value (variance 0): the output must be the bias, with no NaN from rsqrt."""
    inputs = make_inputs(rng, s)
    inputs["x"] = np.repeat(normal(rng, s["rows"], 1), s["cols"], axis=1)
    return inputs


def any_cols(s):
    return None


def at_most_cols(limit):
    """`supports` of a kernel that holds a whole row (in registers or shared memory) of at most `limit` floats."""
    def supports(s):
        return None if s["cols"] <= limit else f"holds a row of at most {limit} floats, got cols={s['cols']}"
    return supports


at_most_1024_cols = at_most_cols(1024)


def one_row_per_block(s):
    return (s["rows"], 1, 1)


def rows_per_block(n):
    """The grid of a kernel whose block takes n rows; the last block may hold fewer."""
    return lambda s: (cdiv(s["rows"], n), 1, 1)


def x_weight_bias_y(t, s):
    return (t["x"], t["weight"], t["bias"], t["out"], i32(s["rows"]), i32(s["cols"]), f32(EPS))


def contract(entry, threads, grid, supports):
    """Every layernorm kernel takes (x, weight, bias, y, rows, cols, eps) on a 1-D grid of 1-D blocks."""
    return LaunchContract(entry=entry, block=(threads, 1, 1), grid=grid, args=x_weight_bias_y, supports=supports)


BLOCK_ROW_1PASS = contract("layernorm_block_row_1pass", 128, one_row_per_block, at_most_1024_cols)
# The stage kernels of mage-001, -002 and -003 read the row from global memory in every pass: any width.
BLOCK256_3PASS = contract("layernorm_block256_3pass", 256, one_row_per_block, any_cols)
WARP_ROW_QUADS = contract("layernorm_warp_row_quads", 256, rows_per_block(8), any_cols)
TWO_WARP_ROW_SHARED = contract("layernorm_2warp_row_shared", 256, rows_per_block(4), any_cols)
# The attempts measured at mage-006 and not adopted. Those that hold 768 columns in registers read the columns
# past 768 twice, so they take any width; the two that hold the whole row stop at 1024, as mage-006 does.
BLOCK96_RSQRT_RN = contract("layernorm_block96_rsqrt_rn", 96, one_row_per_block, any_cols)
BLOCK192_ONE_QUAD = contract("layernorm_block192_one_quad", 192, one_row_per_block, any_cols)
FOUR_WARP_ROW_UNEVEN = contract("layernorm_4warp_row_uneven", 256, rows_per_block(2), at_most_1024_cols)
TWO_WARP_ROW_STAGED_SHARED = contract("layernorm_2warp_row_staged_shared", 256, rows_per_block(4),
                                      at_most_1024_cols)
WARP_ROW_SIX_QUADS = contract("layernorm_warp_row_six_quads", 256, rows_per_block(8), any_cols)
WARP_TWO_ROWS = contract("layernorm_warp_two_rows", 256, rows_per_block(16), any_cols)


def wide_rows_a_block(narrow_cols, rows_a_block):
    """The grid of a kernel that takes rows of up to `narrow_cols` floats `rows_a_block` a block, and wider rows
    (a multiple of 4) one block each; the kernel picks its path by the same test of cols."""
    def grid(s):
        if s["cols"] > narrow_cols and s["cols"] % 4 == 0:
            return (s["rows"], 1, 1)
        return (cdiv(s["rows"], rows_a_block), 1, 1)
    return grid


def at_most_8192_cols_in_quads(s):
    if s["cols"] > 8192 and s["cols"] % 4 == 0:
        return f"holds a row of at most 8192 floats in a block, got cols={s['cols']}"
    return None


WARP_ROW_REGISTERS = contract("layernorm_warp_row_registers", 256, wide_rows_a_block(1024, 8),
                              at_most_8192_cols_in_quads)
WARP_ROW_SMEM_AFFINE = contract("layernorm_warp_row_smem_affine", 256, wide_rows_a_block(1024, 8),
                                at_most_8192_cols_in_quads)
# Four rows a warp, 32 a block, at the seed shape.
WARP_ROW_PIPELINED = contract("layernorm_warp_row_pipelined", 256, wide_rows_a_block(768, 32),
                              at_most_8192_cols_in_quads)


def any_width_grid(s):
    """layernorm_warp_row_any_width: a block a row past 1024 columns in quads and past 1021 otherwise (a row that
    starts inside a quad spans one more), else eight rows a block."""
    wide = s["cols"] > 1024 if s["cols"] % 4 == 0 else s["cols"] > 1021
    return (s["rows"], 1, 1) if wide else (cdiv(s["rows"], 8), 1, 1)


def at_most_8192_cols_any_width(s):
    limit = 8192 if s["cols"] % 4 == 0 else 8189
    return None if s["cols"] <= limit else f"holds a row of at most {limit} floats in a block, got cols={s['cols']}"


# Where cols % 4 == 0, the cubin's second entry: layernorm_warp_row_registers' code alone. Compiled inside the
# any-width kernel, the same path ran 12% slower than layernorm_warp_row_registers at 4096 x 768 (nsys, both in
# h200-002's first run).
ANY_WIDTH_QUADS = contract("layernorm_warp_row_any_width_quads", 256, wide_rows_a_block(1024, 8),
                           at_most_8192_cols_in_quads)
WARP_ROW_ANY_WIDTH = dataclasses.replace(
    contract("layernorm_warp_row_any_width", 256, any_width_grid, at_most_8192_cols_any_width),
    route=lambda t, s: ANY_WIDTH_QUADS if s["cols"] % 4 == 0 else None)
TWO_WARP_ROW_REGISTERS = contract("layernorm_2warp_row_registers", 256, rows_per_block(4), any_cols)


def paired_grid(s):
    """layernorm_any_width_paired, off the quads: eight rows a block to 1021 columns, two to 4093, one past it."""
    return (cdiv(s["rows"], 8 if s["cols"] <= 1021 else 2 if s["cols"] <= 4093 else 1), 1, 1)


PAIRED_QUADS = contract("layernorm_any_width_paired_quads", 256, wide_rows_a_block(1024, 8),
                        at_most_8192_cols_in_quads)
ANY_WIDTH_PAIRED = dataclasses.replace(
    contract("layernorm_any_width_paired", 256, paired_grid, at_most_8192_cols_any_width),
    route=lambda t, s: PAIRED_QUADS if s["cols"] % 4 == 0 else None)


# layernorm_warp_row_any_width's two entries, and rows of more than 1021 columns off the quad grid to a third:
# layernorm_block256_3pass's three passes, a block a row (kernel notes of h200-003, section 10).
THREE_PASS_QUADS = contract("layernorm_any_width_three_pass_quads", 256, wide_rows_a_block(1024, 8),
                            at_most_8192_cols_in_quads)
THREE_PASS_WIDE = contract("layernorm_any_width_three_pass_wide", 256, one_row_per_block, any_cols)
ANY_WIDTH_THREE_PASS = dataclasses.replace(
    contract("layernorm_any_width_three_pass", 256, rows_per_block(8), at_most_8192_cols_in_quads),
    route=lambda t, s: THREE_PASS_QUADS if s["cols"] % 4 == 0 else THREE_PASS_WIDE if s["cols"] > 1021 else None)


def fitted_quads(s) -> int:
    """The quads a row of layernorm_any_width_fitted spans: cols / 4 in quads, else (cols + 6) / 4, as a row that
    starts three floats into a quad spans."""
    return s["cols"] // 4 if s["cols"] % 4 == 0 else (s["cols"] + 6) // 4


# Each row's registers fitted to its width: a warp a row with the fewest quads a lane that hold it (up to eight), a
# block of 256 a row past that (up to eight quads a lane), three passes wider (kernel notes of h200-003, section 15).
FITTED_WARP = {q: contract(f"layernorm_any_width_fitted_warp{q}", 256, rows_per_block(8), any_cols)
               for q in range(1, 9)}
FITTED_BLOCK = {q: contract(f"layernorm_any_width_fitted_block{q}", 256, one_row_per_block, any_cols)
                for q in range(2, 9)}


def fitted_route(t, s):
    quads = fitted_quads(s)
    if quads <= 32 * 8:
        return FITTED_WARP[max(1, cdiv(quads, 32))]
    return FITTED_BLOCK[cdiv(quads, 256)] if quads <= 256 * 8 else None


# The cubin's own entry, three passes a block a row, takes the rows wider than the fitted entries hold.
ANY_WIDTH_FITTED = dataclasses.replace(contract("layernorm_any_width_fitted", 256, one_row_per_block, any_cols),
                                       route=fitted_route)


def work(s):
    return 4 * (2 * s["rows"] * s["cols"] + 2 * s["cols"]), 0  # memory-bound: the roofline is bandwidth


OP = Op(
    name="layernorm",
    title="LayerNorm",
    order=3,
    dims=("rows", "cols"),
    in_progression=True,
    sweep_lines_by="cols",
    make_inputs=make_inputs,
    output_shape=lambda s: (s["rows"], s["cols"]),
    torch_args=("x", "weight", "bias"),
    triton_args=("x", "weight", "bias"),
    medium_shape={"rows": 33, "cols": 768},
    small_shapes=({"rows": 3, "cols": 257},),
    edge_cases=(EdgeCase("constant-rows", {"rows": 8, "cols": 768}, constant_rows),),
    kernel_variants={v.name: v for v in [
        KernelVariant("layernorm_block_row_1pass", "layernorm", BLOCK_ROW_1PASS,
                    "one block of a hundred twenty-eight threads per row, a quad per thread plus a masked tail quad,"
                    " single pass, warp shuffles then eight floats of shared behind one barrier, approximate rsqrt"),
        KernelVariant("layernorm_block256_3pass", "layernorm", BLOCK256_3PASS,
                    "one block of two hundred fifty-six threads per row, three passes over x (mean, variance, "
                    "normalize), scalar loads, two tree reductions in shared memory"),
        KernelVariant("layernorm_warp_row_quads", "layernorm", WARP_ROW_QUADS,
                    "one warp per row (eight rows per block of two hundred fifty-six threads), 128-bit quads, sum "
                    "and sum of squares in one pass, shuffle reductions, a second pass over x for the output"),
        KernelVariant("layernorm_2warp_row_shared", "layernorm", TWO_WARP_ROW_SHARED,
                    "two warps per row (four rows per block of two hundred fifty-six threads), 128-bit quads, two "
                    "passes over x, the two warps exchange partial sums once through shared memory "
                    "behind a single barrier"),
        KernelVariant("layernorm_block96_rsqrt_rn", "layernorm", BLOCK96_RSQRT_RN,
                    "the mage-006 kernel with one block of ninety-six threads per row (two quads a thread hold a row"
                    " of the seed width) and the reciprocal square root rounded to nearest instead of the "
                    "approximate rsqrt"),
        KernelVariant("layernorm_block192_one_quad", "layernorm", BLOCK192_ONE_QUAD,
                    "one block of a hundred ninety-two threads per row, each thread holding one quad (a row of the "
                    "seed width exactly), single pass, six warps meet in twelve floats of shared behind one barrier"),
        KernelVariant("layernorm_4warp_row_uneven", "layernorm", FOUR_WARP_ROW_UNEVEN,
                    "four warps per row (two rows per block of two hundred fifty-six threads) on an uneven split of "
                    "the row's quads (at the seed width the first half of the threads hold two quads, the second "
                    "half one), single pass from registers"),
        KernelVariant("layernorm_2warp_row_staged_shared", "layernorm", TWO_WARP_ROW_STAGED_SHARED,
                    "the two-warp split of mage-003 with the row staged in shared memory, so x is read from global "
                    "memory once"),
        KernelVariant("layernorm_2warp_row_registers", "layernorm", TWO_WARP_ROW_REGISTERS,
                    "the two-warp split of mage-003 with the row held in registers (three quads a thread at the seed"
                    " width), so x is read from global memory once"),
        KernelVariant("layernorm_warp_row_any_width", "layernorm", WARP_ROW_ANY_WIDTH,
                    "h200-002: layernorm_warp_row_registers for widths that are not a multiple of four too: the "
                    "aligned quads that cover a row loaded into registers, the elements outside it zeroed, y written"
                    " as whole quads inside the row and element by element at its ends (three scalar passes before);"
                    " where cols is a multiple of four, layernorm_warp_row_registers' code, an entry of its own"),
        KernelVariant("layernorm_any_width_paired", "layernorm", ANY_WIDTH_PAIRED,
                    "h200-003: layernorm_warp_row_any_width with two rows a block of two hundred fifty-six threads "
                    "where it took one, at the widths past a warp's reach that are not a multiple of four and that "
                    "half a block holds: twice the rows in flight on an SM on the same registers"),
        KernelVariant("layernorm_any_width_three_pass", "layernorm", ANY_WIDTH_THREE_PASS,
                    "h200-003: layernorm_warp_row_any_width, but rows past a warp's reach that are not a multiple "
                    "of four take layernorm_block256_3pass's three passes in an entry of their own, whose few "
                    "registers keep twice the rows in flight"),
        KernelVariant("layernorm_any_width_fitted", "layernorm", ANY_WIDTH_FITTED,
                    "h200-003: each row in registers by the fewest quads a lane that hold it, a warp a row to eight "
                    "quads a lane and a block a row past that, so that a thread holds no register its row leaves "
                    "empty and more rows are in flight on an SM; three passes past eight quads a lane of a block"),
        KernelVariant("layernorm_warp_row_registers", "layernorm", WARP_ROW_REGISTERS,
                    "h200-001: one warp per row (eight rows per block of two hundred fifty-six threads), the whole "
                    "row in registers with all its 128-bit loads in flight at once, mean then variance about it by "
                    "shuffles, no shared memory, no barrier"),
        KernelVariant("layernorm_warp_row_six_quads", "layernorm", WARP_ROW_SIX_QUADS,
                    "h200-001: the register kernel sized to hold at most a row of the seed width (six quads a lane);"
                    " wider rows stream from L2 in three passes"),
        KernelVariant("layernorm_warp_two_rows", "layernorm", WARP_TWO_ROWS,
                    "h200-001: two rows a warp, both rows' loads issued before either is reduced, so an SM's load, "
                    "reduce and store phases overlap; rows up to the seed width in registers"),
        KernelVariant("layernorm_warp_row_pipelined", "layernorm", WARP_ROW_PIPELINED,
                    "h200-001: four rows a warp in turn, the next row's loads issued before the current row is "
                    "reduced and stored; rows wider than the seed width one block of two hundred fifty-six threads "
                    "each, in registers"),
        KernelVariant("layernorm_warp_row_smem_affine", "layernorm", WARP_ROW_SMEM_AFFINE,
                    "h200-001: as layernorm_warp_row_registers, weight and bias staged in shared memory by the block"
                    " while the rows load, read from there after the reductions"),
    ]},
    work=work,
    precision=FP32_FMA,  # work counts no FLOPs: no compute floor is measured
    library=Library("Liger", "liger-kernel", ("x", "weight", "bias"), unmeasured=(
        Unmeasured("quack", "quack-kernels", "whose CuTe DSL runtime (nvidia-cutlass-dsl-libs-cu13), packed, is more "
                   "than one call to the GPU machine carries beside the project"),)),
)
