"""The per (op, implementation) view of a namespace's measurements: kernel time per backend, launches, spans."""
from __future__ import annotations

import pandas as pd

from .capture.summary import in_ranges


def span_stats(spans: pd.DataFrame) -> pd.DataFrame:
    eager = spans[spans["mode"] == "eager"].groupby(["op", "implementation"])["span_us"]
    graph = spans[spans["mode"] == "graph"].groupby(["op", "implementation"])["span_us"]
    return pd.DataFrame({"samples": eager.size(), "span_mean_us": eager.mean(), "span_median_us": eager.median(),
                         "graph_span_median_us": graph.median()}).reset_index()


def kernel_times(capture_summary: pd.DataFrame) -> pd.DataFrame:
    wide = capture_summary.pivot_table(index=["op", "implementation"], columns="backend",
                                       values=["kernel_us_per_iteration", "launches_per_iteration"], aggfunc="first")
    wide.columns = [f"{'kernel_us' if v.startswith('kernel') else 'launches'}_{b}" for v, b in wide.columns]
    return wide.reset_index()


def launch_shapes(kernels: pd.DataFrame) -> pd.DataFrame:
    """Grid, block, registers and shared bytes of each implementation's kernels, as one capture saw them."""
    first = in_ranges(kernels.dropna(subset=["implementation"])).sort_values("backend")
    first = first.drop_duplicates(["op", "implementation", "kernel"])
    grouped = first.groupby(["op", "implementation"])
    return pd.DataFrame({
        "grid_x_block": grouped.apply(lambda g: " + ".join(f"({r.grid})x({r.block})" for r in g.itertuples()),
                                      include_groups=False),
        "registers": grouped["registers"].apply(lambda s: "/".join(map(str, s))),
        "shared_bytes": grouped["shared_bytes"].apply(lambda s: "/".join(map(str, s))),
    }).reset_index()


def table(spans: pd.DataFrame, capture_summary: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    out = kernel_times(capture_summary).merge(span_stats(spans), on=["op", "implementation"], how="outer")
    return out.merge(launch_shapes(kernels), on=["op", "implementation"], how="left")


def summary(capture_summary: pd.DataFrame, spans: pd.DataFrame, backends=("nsys", "cupti")) -> pd.DataFrame:
    """The `summary` table: per (op, implementation) the kernel time of the first backend present in `backends`
    (median over its captures), launches per iteration, and the eager spans' mean and median."""
    present = [b for b in backends if b in set(capture_summary["backend"])]
    if not present:
        raise ValueError(f"no capture from any of {backends}")
    chosen = capture_summary[capture_summary["backend"] == present[0]]
    kernel = chosen.groupby(["op", "implementation"]).agg(
        kernel_us=("kernel_us_per_iteration", "median"), launches=("launches_per_iteration", "first"),
        captures=("capture", "nunique"), backend=("backend", "first")).reset_index()
    stats = span_stats(spans)[["op", "implementation", "span_mean_us", "span_median_us"]]
    columns = ["op", "implementation", "kernel_us", "span_mean_us", "span_median_us", "launches", "captures", "backend"]
    return kernel.merge(stats, on=["op", "implementation"], how="outer")[columns]
