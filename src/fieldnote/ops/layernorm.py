"""Layer normalization over each row: y = (x - mean) / sqrt(var + 1e-5) * weight + bias."""
import numpy as np

from .base import CudaVariant, EdgeCase, LaunchContract, Op, normal

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


def at_most_1024_cols(s):
    return None if s["cols"] <= 1024 else f"holds a row of at most 1024 floats, got cols={s['cols']}"


BLOCK_ROW_1PASS = LaunchContract(
    entry="layernorm_block_row_1pass", block=(128, 1, 1),
    grid=lambda s: (s["rows"], 1, 1),
    args=lambda t, s: (t["x"], t["weight"], t["bias"], t["out"], i32(s["rows"]), i32(s["cols"]), f32(EPS)),
    supports=at_most_1024_cols,
)

OP = Op(
    name="layernorm",
    dims=("rows", "cols"),
    make_inputs=make_inputs,
    output_shape=lambda s: (s["rows"], s["cols"]),
    torch_args=("x", "weight", "bias"),
    triton_args=("x", "weight", "bias"),
    small_shapes=({"rows": 3, "cols": 257},),
    edge_cases=(EdgeCase("constant-rows", {"rows": 8, "cols": 768}, constant_rows),),
    cuda_variants={v.name: v for v in [
        CudaVariant("layernorm_block_row_1pass", "layernorm", BLOCK_ROW_1PASS,
                    "one 128-thread block per row, a quad per thread plus a masked tail quad, single pass, "
                    "warp shuffles then 8 floats of shared behind one barrier, approximate rsqrt"),
    ]},
)
