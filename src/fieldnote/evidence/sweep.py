"""The size sweep: every implementation of an op at each shape a namespace lists, checked first, then captured in
one profiled session per op, and set against the machine's roofline.

A sweep point is a subject (subjects.py) named `implementation@shape` (`cuda@65536x4096`) with its own shape and
inputs drawn from the namespace's seed, so the capture stage runs it unchanged.
"""
from __future__ import annotations

import pandas as pd

from ..registry.ops import OPS
from ..registry.subjects import point_name
from ..registry.vocabulary import HAND_WRITTEN


def subjects(op: str, shapes: list[dict], implementations: dict[str, dict], seed: int) -> tuple[dict, list[dict]]:
    """The sweep subjects of an op, and the points left out because a CUDA variant's launch contract or the
    library's range does not take that shape (each with its reason). `implementations`: name -> implementation,
    variant, cubin."""
    spec, points, skipped = OPS[op], {}, []
    for shape in shapes:
        for name, s in implementations.items():
            reason = spec.refusal(s["implementation"], s["variant"], shape)
            if reason:
                skipped.append({"op": op, "implementation": s["implementation"], "variant": s["variant"] or name,
                                "shape": spec.label(shape), "reason": reason})
                continue
            points[point_name(name, spec.label(shape))] = {**s, "shape": shape, "seed": seed}
    return points, skipped


def passed(points: dict, checks: pd.DataFrame) -> dict:
    """The points whose every check passed: a kernel that fails its check is never timed."""
    ok = checks.groupby("subject")["passed"].all()
    return {name: point for name, point in points.items() if ok.get(name, False)}


def failed_points(checks: pd.DataFrame) -> list[dict]:
    """The points that failed their check, each with its worst error, as the sweep table lists them."""
    rows = []
    for r in checks[~checks["passed"]].itertuples():
        rows.append({"op": r.op, "implementation": r.implementation, "variant": r.variant, "shape": r.shape,
                     "reason": f"failed the check: max abs error {r.max_abs_error:.3g}, "
                               f"max rel error {r.max_rel_error:.3g}"})
    return rows


def target_points(op: str, points: dict, targets: dict | None) -> dict:
    """The sweep points of `op` that a target names (`targets.points`): ours at each named shape, and the peer it
    is held against where that is one implementation (not the fastest of them). Their counters are what the
    note binds a met or missed target to."""
    named = [(t["shape"], t["versus"]) for t in (targets or {}).get("points", []) if t["op"] == op]
    label = OPS[op].label
    return {name: p for name, p in points.items()
            if any(label(p["shape"]) == shape and (p["implementation"] in HAND_WRITTEN or p["implementation"] == versus)
                   for shape, versus in named)}


INTERVAL_CAPTURES = 3  # the fewest captures a point's interval is drawn from (fewer: evidence without one)


def table(capture_summary: pd.DataFrame, roofline: dict, kernels: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (op, implementation, shape): kernel time per call (median over captures), launches, the
    op's least bytes and FLOPs at that shape, what they come to per second, and the fraction of the roof; with
    the `kernels` of a sweep whose every point was captured at least INTERVAL_CAPTURES times, each point's interval
    as the summary's (measurements.kernel_interval) and its captures."""
    rows = []
    for (op, _), group in capture_summary.groupby(["op", "subject"], sort=False):
        implementation, variant, label = group[["implementation", "variant", "shape"]].iloc[0]
        shape = OPS[op].parse_label(label)
        nbytes, flops = OPS[op].work(shape)
        kernel_us = float(group["kernel_us_per_iteration"].median())
        gbs, tflops = nbytes / kernel_us / 1e3, flops / kernel_us / 1e6
        bound = "compute" if flops / nbytes > roofline["fp32_tflops"] * 1e3 / roofline["bandwidth_gbs"] else "memory"
        roof = tflops / roofline["fp32_tflops"] if bound == "compute" else gbs / roofline["bandwidth_gbs"]
        rows.append({"op": op, "implementation": implementation, "variant": variant, "shape": label,
                     "kernel_us": kernel_us,
                     "launches": int(group["launches_per_iteration"].iloc[0]), "bytes": nbytes, "flops": flops,
                     "achieved_gbs": gbs, "achieved_tflops": tflops, "bound": bound, "fraction_of_roof": roof,
                     "fits_l2": nbytes <= roofline["l2_bytes"]})
    out = pd.DataFrame(rows)
    captures = capture_summary.groupby(["op", "subject"], sort=False)["capture"].nunique()
    if kernels is None or out.empty or captures.min() < INTERVAL_CAPTURES:
        return out
    return with_intervals(out, capture_summary, kernels, captures)


def with_intervals(out: pd.DataFrame, capture_summary: pd.DataFrame, kernels: pd.DataFrame,
                   captures: pd.Series) -> pd.DataFrame:
    from .measurements import kernel_interval

    subjects = capture_summary.drop_duplicates(["op", "subject"]).set_index(["op", "implementation", "shape"])
    intervals = kernel_interval(kernels, capture_summary["backend"].iloc[0]).set_index(["op", "subject"])
    keys = [(r.op, subjects.loc[(r.op, r.implementation, r.shape), "subject"]) for r in out.itertuples()]
    return out.assign(kernel_low_us=[intervals.loc[k, "kernel_low_us"] for k in keys],
                      kernel_high_us=[intervals.loc[k, "kernel_high_us"] for k in keys],
                      captures=[int(captures[k]) for k in keys])
