"""Bias + GELU: y = gelu(x + bias) with the tanh approximation, x is rows x cols, bias is cols."""
import numpy as np

from .base import FP32_FMA, KernelVariant, LaunchContract, Op, cdiv, normal

i32 = np.int32


def make_inputs(rng, s):
    return {"x": normal(rng, s["rows"], s["cols"]), "bias": normal(rng, s["cols"])}


def x_bias_y(t, s):
    """Every GELU kernel takes (x, bias, y, rows, cols)."""
    return (t["x"], t["bias"], t["out"], i32(s["rows"]), i32(s["cols"]))


ELEMENTWISE = LaunchContract(
    entry="gelu_bias_tanh", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["rows"] * s["cols"], 256), 1, 1),
    args=x_bias_y,
)

FOUR_PER_THREAD = LaunchContract(
    entry="gelu_bias_sigmoid_vec4", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["rows"] * s["cols"], 1024), 1, 1),
    args=x_bias_y,
)
FLAT_FOUR_QUADS = LaunchContract(
    entry="gelu_bias_sigmoid_flat4_quads", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["rows"] * s["cols"], 1024), 1, 1),
    args=x_bias_y,
)


def whole_quads(t, s):
    """gelu_bias_sigmoid_flat4's second entry where every float4 lies inside one row: cols a multiple of 4, the
    arrays 16-byte aligned."""
    aligned = all(t[name].data_ptr() % 16 == 0 for name in ("x", "bias", "out"))
    return FLAT_FOUR_QUADS if aligned and s["cols"] % 4 == 0 else None


FLAT_FOUR_PER_THREAD = LaunchContract(
    entry="gelu_bias_sigmoid_flat4", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["rows"] * s["cols"], 1024), 1, 1),
    args=x_bias_y, route=whole_quads,
)
EIGHT_PER_THREAD = LaunchContract(
    entry="gelu_bias_sigmoid_vec8", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["rows"] * s["cols"], 2048), 1, 1),
    args=x_bias_y,
)
ONE_PER_THREAD_PTX = LaunchContract(
    entry="gelu_bias_sigmoid_ptx", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["rows"] * s["cols"], 256), 1, 1),
    args=x_bias_y,
)
QUAD_PER_THREAD_ROWS = LaunchContract(
    entry="gelu_bias_sigmoid_rows", block=(64, 1, 1),
    grid=lambda s: (s["rows"], cdiv(cdiv(s["cols"], 4), 64), 1),
    args=x_bias_y,
)


def work(s):
    return 4 * (2 * s["rows"] * s["cols"] + s["cols"]), 0  # memory-bound: the roofline is bandwidth


OP = Op(
    name="gelu",
    title="Bias + GELU",
    order=2,
    dims=("rows", "cols"),
    sweep_lines_by="cols",
    make_inputs=make_inputs,
    output_shape=lambda s: (s["rows"], s["cols"]),
    torch_args=("x", "bias"),
    triton_args=("x", "bias"),
    medium_shape={"rows": 33, "cols": 768},
    small_shapes=({"rows": 3, "cols": 257},),
    kernel_variants={v.name: v for v in [
        KernelVariant("gelu_bias_tanh", "gelu", ELEMENTWISE, "one thread per element, tanh approximation"),
        KernelVariant("gelu_bias_sigmoid_vec4", "gelu", FOUR_PER_THREAD,
                    "h200-001: four elements a thread as 128-bit loads and stores (when cols is a multiple of four),"
                    " tanh written as the logistic of 2u: one exp2 and one division"),
        KernelVariant("gelu_bias_sigmoid_flat4", "gelu", FLAT_FOUR_PER_THREAD,
                    "h200-002: gelu_bias_sigmoid_vec4 for any width: x and y as float4 over the flat array whatever "
                    "cols is, only the bias read element by element where a row ends inside the four; where cols is "
                    "a multiple of four, vec4's float4 path alone, an entry of its own"),
        KernelVariant("gelu_bias_sigmoid_vec8", "gelu", EIGHT_PER_THREAD,
                    "h200-001: as gelu_bias_sigmoid_vec4 with eight elements a thread, two float4 a block width "
                    "apart, both loads issued first"),
        KernelVariant("gelu_bias_sigmoid_ptx", "gelu", ONE_PER_THREAD_PTX,
                    "hand-written PTX: one element a thread, gelu_bias_sigmoid_vec4's arithmetic (one ex2.approx, "
                    "one approximate division)", toolchain="ptx"),
        KernelVariant("gelu_bias_sigmoid_rows", "gelu", QUAD_PER_THREAD_ROWS,
                    "h200-001: vec4's arithmetic on a 2-D grid (a row a blockIdx.x, blocks of sixty-four threads), "
                    "so no 64-bit division finds the bias column; ex2.approx.ftz without exp2f's range fix-up"),
    ]},
    work=work,
    precision=FP32_FMA,  # work counts no FLOPs: no compute floor is measured
)
