"""Neighbor aggregation over a CSR graph: out[dst[e]] += weight[e] * x[src[e]] for every edge e."""
import numpy as np

from .base import FP32_FMA, EdgeCase, KernelVariant, LaunchContract, Library, Op, cdiv, normal

i32 = np.int32


def csr(dst: np.ndarray, nodes: int) -> np.ndarray:
    """Row pointer of destinations that are already sorted: rowptr[r]..rowptr[r+1] are row r's edges."""
    return np.concatenate([[0], np.cumsum(np.bincount(dst, minlength=nodes))]).astype(np.int32)


def make_inputs(rng, s):
    nodes, edges = s["nodes"], s["edges"]
    x = normal(rng, nodes, s["features"])
    weight = normal(rng, edges)
    dst = np.sort(rng.integers(0, nodes, edges)).astype(np.int32)
    src = rng.integers(0, nodes, edges).astype(np.int32)
    return {"x": x, "weight": weight, "src": src, "dst": dst, "rowptr": csr(dst, nodes)}


def duplicate_edges(rng, s):
    """The same (dst, src) pair many times: every copy must be summed, none dropped."""
    inputs = make_inputs(rng, s)
    pairs = rng.integers(0, s["nodes"], (3, 2))
    dst, src = pairs[rng.integers(0, 3, s["edges"])].T
    order = np.argsort(dst, kind="stable")
    inputs.update(dst=dst[order].astype(np.int32), src=src[order].astype(np.int32))
    inputs["rowptr"] = csr(inputs["dst"], s["nodes"])
    return inputs


CSR_ROW_FEATURE = LaunchContract(
    entry="neighbor_csr_row_feature", block=(256, 1, 1),
    grid=lambda s: (cdiv(s["nodes"] * s["features"], 256), 1, 1),
    args=lambda t, s: (t["rowptr"], t["src"], t["weight"], t["x"], t["out"], i32(s["nodes"]), i32(s["features"])),
)


def feature_slices(width: int) -> LaunchContract:
    """neighbor_feature_slices<width>: a grid of rows a slice of `width` features, the slices along y."""
    return LaunchContract(
        entry=f"neighbor_feature_slices{width}", block=(256, 1, 1),
        grid=lambda s: (cdiv(s["nodes"] * width, 256), cdiv(s["features"], width), 1),
        args=CSR_ROW_FEATURE.args,
    )


def work(s):
    """x read and out written once, a weight and a source index per edge, the row pointers."""
    return 4 * (2 * s["nodes"] * s["features"] + 2 * s["edges"] + s["nodes"] + 1), 2 * s["edges"] * s["features"]


OP = Op(
    name="neighbor",
    title="Neighbor aggregation",
    order=5,
    dims=("nodes", "features", "edges"),
    make_inputs=make_inputs,
    output_shape=lambda s: (s["nodes"], s["features"]),
    torch_args=("x", "weight", "src", "dst"),
    triton_args=("x", "weight", "src", "rowptr"),
    medium_shape={"nodes": 300, "features": 64, "edges": 2000},
    small_shapes=({"nodes": 7, "features": 9, "edges": 23},),
    edge_cases=(
        EdgeCase("no-edges", {"nodes": 7, "features": 9, "edges": 0}, make_inputs),
        EdgeCase("duplicate-edges", {"nodes": 7, "features": 9, "edges": 23}, duplicate_edges),
    ),
    kernel_variants={v.name: v for v in [
        KernelVariant("neighbor_csr_row_feature", "neighbor", CSR_ROW_FEATURE, "one thread per (row, feature)"),
        *(KernelVariant(f"neighbor_feature_slices{w}", "neighbor", feature_slices(w),
                        "a thread per (row, feature) a slice of the features at a time, the slice's columns of x "
                        "held in L2 while the edges gather them") for w in (8, 16)),
    ]},
    work=work,
    may_be_zero=("edges",),
    precision=FP32_FMA,  # a weight times a feature added, an edge at a time, on every implementation
    # cuSPARSE's SpMM, reached through torch.sparse's CSR times dense: its version is torch's
    library=Library("cuSPARSE", "torch", ("x", "weight", "src", "rowptr")),
)
