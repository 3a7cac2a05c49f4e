"""The triangle multiplicative update, outgoing (AlphaFold's pair update, as cuEquivariance computes it), whole:

    z = LayerNorm(x)                                             over the channels, per (b, i, j)
    a, b = split(sigmoid(z g_in^T) * (z p_in^T) * mask)          each of `hidden` channels
    t[b, i, j, h] = sum_k a[b, i, k, h] * b[b, j, k, h]          the triangle contraction
    out = sigmoid(z g_out^T) * (LayerNorm(t) p_out^T)            back to the channels

The GPU MODE `trimul` task's shapes (sequence length n, channels, hidden; batch) with the gate of the output over
the channels after the output projection, as AlphaFold and cuEquivariance place it, so that the library made for
it computes the same function."""
import numpy as np

from .base import THREE_TF32, EdgeCase, Library, Op, normal, redraw_normal

EPS = 1e-5
KEPT = 0.9  # the share of pairs the drawn mask keeps


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
    medium_shape={"batch": 1, "n": 24, "channels": 16, "hidden": 8},
    small_shapes=({"batch": 1, "n": 5, "channels": 8, "hidden": 4}, {"batch": 2, "n": 7, "channels": 12, "hidden": 8}),
    edge_cases=(EdgeCase("all-masked", {"batch": 1, "n": 6, "channels": 8, "hidden": 4}, all_masked),
                EdgeCase("heavy-tailed", {"batch": 1, "n": 9, "channels": 16, "hidden": 8}, heavy_tailed)),
    work=work,
    redraw=redraw,
    library=Library("cuEquivariance", "cuequivariance-ops-torch-cu13", ARGS),  # its fused kernels, TF32x3 mode
    # FP32 in and out; the cheapest honest implementation runs its products as three TF32 products on tensor cores
    precision=THREE_TF32,
)
