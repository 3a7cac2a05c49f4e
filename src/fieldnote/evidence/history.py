"""Views across namespaces: the stage progression of the hand-written kernels, and the drift bound that the
operations whose kernel did not change put on everything else."""
from __future__ import annotations

import pandas as pd

from ..registry.subjects import adopted
from ..registry.vocabulary import HAND_WRITTEN, OP_TITLES, hand_written, us


def hand_written_times(summary: pd.DataFrame) -> pd.Series:
    """Kernel time of the hand-written implementation per op (the note's: the first of the registry's order)."""
    mine = summary[summary["implementation"] == hand_written(summary)]
    return mine.set_index("op")["kernel_us"]


def staged() -> list[str]:
    """The ops a progression shows, in the registry's order (Op.in_progression)."""
    from ..registry.ops import OPS

    return [op for op in OP_TITLES if OPS[op].in_progression]


def progression(summaries: dict[str, pd.DataFrame], changes: dict[str, str], ops=None):
    """One row per stage: each op's kernel time read from that stage's own namespace, the speed-up factor
    from the stage before, and what changed (`ops`: by default those the registry stages)."""
    ops, rows, previous = ops or staged(), [], None
    for namespace, summary in summaries.items():
        times = hand_written_times(summary)
        row = {"Stage": f"`{namespace}`"}
        for op in ops:
            factor = "" if previous is None else f" (×{previous[op] / times[op]:.2f})"
            row[f"{OP_TITLES[op]} (µs)"] = us(times[op]) + factor
        row["What changed at this stage"] = changes.get(namespace, "")
        rows.append(row)
        previous = times
    return pd.DataFrame(rows)


def hand_written_kernels(kernels: pd.DataFrame) -> pd.DataFrame:
    """The captured kernels of the namespace's own hand-written implementations (not attempts, not sweep points)."""
    mine = adopted(kernels)
    return mine[mine["implementation"].isin(HAND_WRITTEN)]


def kernel_names(kernels: pd.DataFrame) -> pd.Series:
    """The hand-written kernels each op launched (sorted names, one string per op)."""
    return hand_written_kernels(kernels).groupby("op")["kernel"].agg(lambda names: " + ".join(sorted(set(names))))


def gpu_models(kernels: pd.DataFrame) -> dict[str, frozenset]:
    """The GPU models each op's hand-written kernels were captured on, where the evidence records them (not
    the archives shipped up to 2026-12-01): drift compares an op only between captures on the same model."""
    if "gpu_name" not in kernels:
        return {}
    mine = hand_written_kernels(kernels).dropna(subset=["gpu_name"])
    return {op: frozenset(names) for op, names in mine.groupby("op")["gpu_name"]}


def drift(baseline: tuple[pd.DataFrame, pd.DataFrame], current: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    """For each op whose hand-written kernel is the same in both namespaces: its kernel time in each and the
    movement between them, from the times as the table shows them (so that a reader redoing it gets the same).
    Arguments are (summary, kernels) of the baseline and of this namespace."""
    same = kernel_names(baseline[1]).eq(kernel_names(current[1]).reindex(kernel_names(baseline[1]).index))
    models = gpu_models(baseline[1]), gpu_models(current[1])
    before, after = hand_written_times(baseline[0]), hand_written_times(current[0])
    rows = [{"op": op, "baseline_us": before[op], "current_us": after[op],
             "movement_pct": (float(us(after[op])) - float(us(before[op]))) / float(us(before[op])) * 100}
            for op in OP_TITLES if op in same.index and same[op]
            and (op not in models[0] or op not in models[1] or models[0][op] == models[1][op])]
    return pd.DataFrame(rows, columns=["op", "baseline_us", "current_us", "movement_pct"])


def drift_table(table: pd.DataFrame, baseline: str, current: str) -> pd.DataFrame:
    return pd.DataFrame({"Operation": table["op"].map(OP_TITLES), f"`{baseline}` (µs)": table["baseline_us"].map(us),
                         f"`{current}` (µs)": table["current_us"].map(us),
                         "Movement": table["movement_pct"].map(lambda v: f"{v:+.1f}%")})


def launches_of(kernels: pd.DataFrame) -> pd.Series:
    """Per (op, implementation) of the namespace's own, the set of (kernel, grid, block) its captures recorded:
    what a library or torch.compile chose to run."""
    backends = [b for b in ("nsys", "cupti") if b in set(kernels["backend"])] or sorted(set(kernels["backend"]))
    found = adopted(kernels)
    found = found[found["backend"] == backends[0]]
    found = found.drop_duplicates(["op", "implementation", "kernel", "grid", "block"])
    return found.groupby(["op", "implementation"]).apply(
        lambda g: frozenset(zip(g["kernel"], g["grid"], g["block"], strict=True)), include_groups=False)


def peer_changes(baseline: pd.DataFrame, current: pd.DataFrame) -> pd.DataFrame:
    """The peers (not hand-written) whose kernels differ between the baseline's captures and this namespace's:
    the kernels only one side ran, by name and launch. A peer's time compared across namespaces is then the time
    of other code."""
    before, after = launches_of(baseline), launches_of(current)
    rows = []
    for key in [k for k in after.index if k in before.index and k[1] not in HAND_WRITTEN]:
        gone, new = before[key] - after[key], after[key] - before[key]
        if gone or new:
            rows.append({"op": key[0], "implementation": key[1], "only_before": sorted(gone), "only_now": sorted(new)})
    return pd.DataFrame(rows, columns=["op", "implementation", "only_before", "only_now"])


def peer_changes_table(table: pd.DataFrame, baseline: str, current: str) -> pd.DataFrame:
    def launches(found):
        return "; ".join(f"`{k}` ({g} × {b})" for k, g, b in found) or "—"

    return pd.DataFrame({"Operation": table["op"].map(OP_TITLES), "Peer": table["implementation"],
                         f"Only in `{baseline}`": table["only_before"].map(launches),
                         f"Only in `{current}`": table["only_now"].map(launches)})


def views(progression: dict | None, drift: dict | None, progression_files=(), drift_files=()) -> dict:
    """The cross-namespace views a note and its verdicts draw on, from the namespace's `progression` and `drift`
    and the history tables' files: {"progression": (summaries by stage, changes), "drift": (baseline name,
    (summary, kernels) of the baseline)}."""
    found = {}
    if progression:
        summaries = {ns: pd.read_parquet(path) for ns, path in zip(progression["namespaces"], progression_files,
                                                                    strict=True)}
        found["progression"] = (summaries, progression.get("changes", {}))
    if drift:
        summary, kernels = (pd.read_parquet(path) for path in drift_files)
        found["drift"] = (drift["baseline"], (summary, kernels))
    return found
