"""The per (op, subject) view of a namespace's measurements: kernel time per backend, launches, spans."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import PipelineError
from ..registry.subjects import COLUMNS
from ..registry.vocabulary import hand_written
from .summary import in_ranges

KEY = ["op", "subject"]


def span_stats(spans: pd.DataFrame) -> pd.DataFrame:
    eager = spans[spans["mode"] == "eager"].groupby(KEY)["span_us"]
    graph = spans[spans["mode"] == "graph"].groupby(KEY)["span_us"]
    return pd.DataFrame({"samples": eager.size(), "span_mean_us": eager.mean(), "span_median_us": eager.median(),
                         "graph_span_median_us": graph.median()}).reset_index()


def kernel_times(capture_summary: pd.DataFrame) -> pd.DataFrame:
    """Per (op, subject), each backend's kernel time (median over its captures) and launches."""
    wide = capture_summary.pivot_table(index=KEY, columns="backend",
                                       values=["kernel_us_per_iteration", "launches_per_iteration"],
                                       aggfunc={"kernel_us_per_iteration": "median", "launches_per_iteration": "first"})
    wide.columns = [f"{'kernel_us' if v.startswith('kernel') else 'launches'}_{b}" for v, b in wide.columns]
    return wide.reset_index()


def launch_shapes(kernels: pd.DataFrame) -> pd.DataFrame:
    """Grid, block, registers and shared bytes of each implementation's kernels, as one capture saw them."""
    first = in_ranges(kernels.dropna(subset=["subject"])).sort_values("backend")
    first = first.drop_duplicates([*KEY, "kernel"])
    grouped = first.groupby(KEY)
    return pd.DataFrame({
        "grid_x_block": grouped.apply(lambda g: " + ".join(f"({r.grid})x({r.block})" for r in g.itertuples()),
                                      include_groups=False),
        "registers": grouped["registers"].apply(lambda s: "/".join(map(str, s))),
        "shared_bytes": grouped["shared_bytes"].apply(lambda s: "/".join(map(str, s))),
    }).reset_index()


def table(spans: pd.DataFrame, capture_summary: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    out = kernel_times(capture_summary).merge(span_stats(spans), on=KEY, how="outer")
    return out.merge(launch_shapes(kernels), on=KEY, how="left")


BOOTSTRAP_RESAMPLES, BOOTSTRAP_LEVEL, BOOTSTRAP_SEED = 2000, 0.95, 20261201


def kernel_interval(kernels: pd.DataFrame, backend: str, cache: str = "warm") -> pd.DataFrame:
    """Per (op, subject), the noise around its kernel time: a percentile bootstrap of the median over
    captures of each capture's mean kernel time per iteration (captures resampled, then iterations within each),
    widened to the captures' own range (the control band). Claims that one time is below another need these
    intervals apart; a single capture still has its iterations to resample. `cache`: which calls (warm or cold)."""
    mine = in_ranges(kernels[(kernels["backend"] == backend) & kernels["subject"].notna()])
    if "cache" in mine:
        mine = mine[mine["cache"] == cache]
    per_iteration = mine.groupby([*KEY, "capture", "iteration"])["duration_us"].sum()
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    rows = [{"op": op, "subject": impl, **dict(zip(("kernel_low_us", "kernel_high_us"),
                                                         interval(group, rng), strict=True))}
            for (op, impl), group in per_iteration.groupby(level=KEY, sort=True)]
    return pd.DataFrame(rows, columns=[*KEY, "kernel_low_us", "kernel_high_us"])


def interval(per_iteration: pd.Series, rng: np.random.Generator) -> tuple[float, float]:
    """(low, high) around the median over captures of one subject's per-iteration kernel times, indexed by a
    `capture` level (kernel_interval)."""
    captures = [g.to_numpy() for _, g in per_iteration.groupby(level="capture")]
    pick = rng.integers(0, len(captures), (BOOTSTRAP_RESAMPLES, len(captures)))
    means = np.stack([c[rng.integers(0, len(c), (BOOTSTRAP_RESAMPLES, len(c)))].mean(axis=1) for c in captures],
                     axis=1)
    medians = np.median(np.take_along_axis(means, pick, axis=1), axis=1)
    tail = (1 - BOOTSTRAP_LEVEL) / 2
    lows, highs = np.quantile(medians, [tail, 1 - tail])
    observed = [c.mean() for c in captures]
    return float(min(lows, *observed)), float(max(highs, *observed))


def span_rounds(spans: pd.DataFrame) -> pd.DataFrame:
    """Per (op, subject), the range of its eager rounds' mean spans (the figures' whiskers)."""
    eager = spans[spans["mode"] == "eager"]
    means = eager.groupby([*KEY, "round"])["span_us"].mean().groupby(KEY)
    return pd.DataFrame({"span_round_min_us": means.min(), "span_round_max_us": means.max()}).reset_index()


def summary(capture_summary: pd.DataFrame, spans: pd.DataFrame, kernels: pd.DataFrame | None = None,
            backends=("nsys", "cupti")) -> pd.DataFrame:
    """The `summary` table: per (op, subject) the kernel time of the first backend present in `backends`
    (median over its captures) with its noise interval (`kernel_interval`, given the kernels table), launches per
    iteration, and the eager spans' mean, median and the range of their round means."""
    present = [b for b in backends if b in set(capture_summary["backend"])]
    if not present:
        raise PipelineError(f"capture_summary: no capture from any of {', '.join(backends)} (the table has "
                            f"{len(capture_summary)} rows)")
    chosen = capture_summary[capture_summary["backend"] == present[0]]
    cold = None
    if "cache" in chosen:  # warm is the kernel time; cold (L2 flushed before each call) stands beside it
        cold = chosen[chosen["cache"] == "cold"].groupby(KEY)["kernel_us_per_iteration"]
        cold = cold.median().rename("kernel_cold_us").reset_index()
        chosen = chosen[chosen["cache"] == "warm"]
    kernel = chosen.groupby(KEY).agg(
        kernel_us=("kernel_us_per_iteration", "median"), launches=("launches_per_iteration", "first"),
        captures=("capture", "nunique"), backend=("backend", "first")).reset_index()
    stats = span_stats(spans)[[*KEY, "span_mean_us", "span_median_us"]]
    stats = stats.merge(span_rounds(spans), on=KEY, how="left")
    columns = [*KEY, "kernel_us", "span_mean_us", "span_median_us", "launches", "captures", "backend",
               "span_round_min_us", "span_round_max_us"]
    out = kernel.merge(stats, on=KEY, how="outer")[columns]
    if cold is not None:
        out = out.merge(cold, on=KEY, how="left")
        columns = [*columns[:3], "kernel_cold_us", *columns[3:]]
        out = out[columns]
    if kernels is None:
        return described(out, capture_summary, spans)
    out = out.merge(kernel_interval(kernels, present[0]), on=KEY, how="left")
    columns = [*columns[:3], "kernel_low_us", "kernel_high_us", *columns[3:]]
    if cold is not None:
        bounds = kernel_interval(kernels, present[0], "cold").rename(
            columns={"kernel_low_us": "kernel_cold_low_us", "kernel_high_us": "kernel_cold_high_us"})
        out = out.merge(bounds, on=KEY, how="left")
        at = columns.index("kernel_cold_us") + 1
        columns = [*columns[:at], "kernel_cold_low_us", "kernel_cold_high_us", *columns[at:]]
    return described(out[columns], capture_summary, spans)


def described(table: pd.DataFrame, *sources: pd.DataFrame) -> pd.DataFrame:
    """`table` with each subject's implementation, variant and shape, as the tables it was computed from say."""
    found = pd.concat([s[["op", *COLUMNS]] for s in sources if "variant" in s]).drop_duplicates(KEY)
    out = table.merge(found, on=KEY, how="left")
    return out[["op", *COLUMNS, *[c for c in table if c not in KEY]]]


def control_band(capture_summary: pd.DataFrame, margin: float) -> pd.DataFrame:
    """Each capture against the band (min to max) of the other captures of its (op, subject, backend):
    one further than `margin` (a fraction) outside that band ran under load. It is labelled, never dropped.
    With fewer than two other captures there is no band to be outside of."""
    out = capture_summary.copy()
    out["band_min_us"], out["band_max_us"], out["band_margin"] = float("nan"), float("nan"), margin
    out["under_load"] = False
    same = [c for c in ("cache", "gpu_name") if c in out]  # a band of one cache state, of one GPU model
    for _, group in out.groupby([*KEY, "backend", *same], sort=False):
        values = group["kernel_us_per_iteration"]
        if len(values) < 3:
            continue
        for index, value in values.items():
            others = values.drop(index)
            lo, hi = others.min(), others.max()
            out.loc[index, ["band_min_us", "band_max_us"]] = lo, hi
            out.loc[index, "under_load"] = bool(value > hi * (1 + margin) or value < lo * (1 - margin))
    return out


METRICS = {"kernel": "kernel_us", "span": "span_mean_us"}
# each metric's noise interval in the summary: the kernel time's bootstrap, the span's range of round means
INTERVALS = {"kernel": ("kernel_low_us", "kernel_high_us"), "span": ("span_round_min_us", "span_round_max_us")}


def compare(left: tuple[float, float], right: tuple[float, float]) -> tuple[str, float]:
    """below, above or not distinguishable, by two noise intervals, and the margin: how far apart they are
    (negative where they overlap)."""
    (l_low, l_high), (r_low, r_high) = left, right
    if l_high < r_low:
        return "below", r_low - l_high
    if l_low > r_high:
        return "above", l_low - r_high
    return "not distinguishable", -min(l_high - r_low, r_high - l_low)


def attempts(summary_all: pd.DataFrame, declared: list[dict], refused: dict[str, str] | None = None) -> pd.DataFrame:
    """The attempts not adopted: each attempt's value in its metric next to what it was compared with, both
    read from one run's summary (every subject measured side by side). An attempt the sanitizer's gate left out
    (`refused`: variant -> its finding) has no value, and says why; any other attempt missing from the run is an
    error."""
    from ..registry.ops import OPS

    refused, rows = refused or {}, []
    for attempt in declared:
        column, other, name = METRICS[attempt["metric"]], attempt["compared_with"], attempt["variant"]
        op = next(op for op, spec in OPS.items() if name in spec.kernel_variants)
        by_name = summary_all[summary_all["op"] == op].set_index("subject")
        if name not in by_name.index and name not in refused:
            raise PipelineError(f"attempts: {name} ({op}) was not measured, and the sanitizer did not refuse it")
        value, compared = by_name[column].get(name, float("nan")), by_name.loc[other, column]
        measured = name in by_name.index
        low, high = noise(by_name.loc[name], attempt["metric"]) if measured else (float("nan"),) * 2
        rows.append({"op": op, "attempt": name, "metric": attempt["metric"], "value_us": value,
                     "low_us": low, "high_us": high, "compared_with": other, "compared_us": compared,
                     "ratio": value / compared,
                     **against_adopted(by_name, (low, high) if measured else None, attempt["metric"]),
                     "why": attempt.get("why", ""),
                     "refused": "" if name in by_name.index else refused[name]})
    table = pd.DataFrame(rows)
    # a run with no attempt left out keeps the table as it was before the column (archives replay to the byte)
    return table if (table["refused"] != "").any() else table.drop(columns="refused")


def against_adopted(by_name: pd.DataFrame, interval: tuple[float, float] | None, metric: str) -> dict:
    """An attempt (its noise `interval`, None where it was not measured) against the kernel the namespace adopted for
    its op, in the attempt's metric, measured in the same run: the adopted value, and below (faster), above (slower)
    or not distinguishable by the two noise intervals."""
    adopted = hand_written(by_name) if "implementation" in by_name else None
    if interval is None or adopted not in by_name.index:
        return {"adopted": adopted, "adopted_us": float("nan"), "against_adopted": ""}
    theirs = by_name.loc[adopted]
    verdict, _ = compare(interval, noise(theirs, metric))
    return {"adopted": adopted, "adopted_us": theirs[METRICS[metric]], "against_adopted": verdict}


def noise(row: pd.Series, metric: str) -> tuple[float, float]:
    """A summary row's noise interval in a metric; its value, as a point, where the row records none."""
    value = row[METRICS[metric]]
    low, high = (row.get(c, float("nan")) for c in INTERVALS[metric])
    return (value, value) if pd.isna(low) or pd.isna(high) else (low, high)
