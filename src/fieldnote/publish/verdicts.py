"""The verdicts: every judgment the note states beside a number, as rows of one evidence table (`verdicts`), made
before a word of the note is. As nvbench's summaries are data its printers format, note.py words these rows and
judges nothing itself; a reader can recompute each from the row's values.

One row per judgment, by `kind`:
- `standing`: at the seed shape, warm and cold, ours against the fastest peer (at its best known, peers.at_best);
- `roofline`: at the seed shape, ours against the roofline's least time (the configured bandwidth and FP32 peak);
- `sweep`: at each sweep point, ours against the fastest peer there, `worst` marking the op's highest ratio;
- `floor`: each implementation against the floors measured beside it (the copy of its bytes; its FLOPs at the rate
  of its precision contract's unit), per L2 state;
- `progression`, `drift`: ours against another namespace's hand-written kernel (the stage before; the drift
  baseline, where the kernel is unchanged), each side with its own interval;
- `target`, `prediction`: the targets' and predictions' comparisons, as the claims table records them (their row
  texts too, which the targets table prints).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import pandas as pd

from ..registry.vocabulary import HAND_WRITTEN, IMPLEMENTATIONS, METRIC_NAMES, OP_TITLES, hand_written, us

COLUMNS = ["namespace", "kind", "op", "shape", "cache", "implementation", "versus", "source", "what", "value",
           "value_low", "value_high", "reference", "reference_low", "reference_high", "reference_this_run",
           "quotient", "quotient_low", "quotient_high", "relation", "verdict", "holds", "margin", "relative_margin",
           "worst"]
# a peer verdict's position against 1.00: wholly at or under it, across it, or over it
AT_OR_UNDER, ACROSS, OVER = "at or under", "not distinguishable", "over"
WITHIN, NOT_PHYSICAL = "within the ceiling", "not physical"
TIMES = {"warm": ("kernel_us", "kernel_low_us", "kernel_high_us"),
         "cold": ("kernel_cold_us", "kernel_cold_low_us", "kernel_cold_high_us")}


def position(quotient: float, low: float, high: float, spread: bool, limit: float = 1.0) -> str:
    """Where a ratio stands against `limit`: by its interval where the table has intervals (a missing end is no
    evidence of being under), else by the ratio as the note shows it, to two places."""
    if spread:
        return AT_OR_UNDER if high <= limit else ACROSS if low <= limit else OVER
    return AT_OR_UNDER if round(quotient, 2) <= limit else OVER


def _peer_rows(raw: pd.DataFrame, best: pd.DataFrame, kind: str, cache: str) -> list[dict]:
    """Per (op, shape) of a summary or sweep judged at the peers' best (`best`; `raw`, this run's), ours against the
    fastest peer, with both intervals where the table has them and the fastest peer this run."""
    from .peers import SOURCE

    time, low, high = TIMES[cache] if kind == "standing" else TIMES["warm"]
    if time not in best:
        return []
    spread = low in best and high in best
    named = SOURCE[cache] if kind == "standing" else SOURCE["warm"]
    rows = []
    for (op, shape), point in best.dropna(subset=[time]).groupby(["op", "shape"], sort=False):
        mine, times = hand_written(point), point.set_index("implementation")
        others = times[~times.index.isin(HAND_WRITTEN)]
        if mine is None or mine not in times.index or others.empty:
            continue
        peer, ours = others[time].idxmin(), times.loc[mine]
        before = raw[(raw["op"] == op) & (raw["shape"] == shape)].set_index("implementation")[time]
        this_run = before[~before.index.isin(HAND_WRITTEN)].min()
        row = {"kind": kind, "op": op, "shape": shape, "cache": cache, "implementation": mine, "versus": peer,
               "source": others.loc[peer].get(named, "") or "", "value": ours[time],
               "reference": others.loc[peer, time], "reference_this_run": this_run,
               "quotient": ours[time] / others.loc[peer, time]}
        if spread:
            row |= {"value_low": ours[low], "value_high": ours[high], "reference_low": others.loc[peer, low],
                    "reference_high": others.loc[peer, high], "quotient_low": ours[low] / others.loc[peer, high],
                    "quotient_high": ours[high] / others.loc[peer, low]}
        row["verdict"] = position(row["quotient"], row.get("quotient_low"), row.get("quotient_high"), spread)
        row["holds"] = row["verdict"] == AT_OR_UNDER
        rows.append(row)
    return rows


def standing(raw: pd.DataFrame, best: pd.DataFrame) -> pd.DataFrame:
    """At the seed shape, warm and (where captured) cold: ours against the fastest peer."""
    return frame([r for cache in TIMES for r in _peer_rows(raw, best, "standing", cache)])


def sweep(raw: pd.DataFrame, best: pd.DataFrame) -> pd.DataFrame:
    """At every sweep point where ours and a peer were measured: ours against the fastest peer there; `worst`
    marks each op's highest ratio (its first point, where two are level)."""
    rows = frame(_peer_rows(raw, best, "sweep", "warm"))
    worst = rows.groupby("op", sort=False)["quotient"].idxmax() if len(rows) else []
    rows["worst"] = rows.index.isin(list(worst))
    return rows


def floor_us(op: str, shape: dict, roofline: dict) -> float:
    """The roofline's least time at a shape: the op's least bytes at the bandwidth or its FLOPs at the FP32 peak,
    whichever is longer."""
    from ..registry.ops import OPS

    nbytes, flops = OPS[op].work(shape)
    return max(nbytes / roofline["bandwidth_gbs"] / 1e3, flops / roofline["fp32_tflops"] / 1e6)


def roofline(summary: pd.DataFrame, shapes: dict, roof: dict) -> pd.DataFrame:
    """At the seed shape, ours against the roofline's least time."""
    mine = hand_written(summary)
    rows = []
    for r in summary[summary["implementation"] == mine].itertuples():
        least = floor_us(r.op, shapes[r.op], roof)
        rows.append({"kind": "roofline", "op": r.op, "shape": r.shape, "cache": "warm", "implementation": mine,
                     "versus": "roofline", "value": r.kernel_us, "reference": least, "quotient": r.kernel_us / least})
    return frame(rows)


def floors(summary: pd.DataFrame, ceilings: pd.DataFrame) -> pd.DataFrame:
    """Each implementation's kernel time against the floors measured in the same L2 state: the fastest copy of its
    traffic (`versus` copy) and, where probes of its contract's unit ran, its FLOPs at the fastest probe's rate
    (`versus` that unit); not physical where the time's whole interval lies below the floor's (floors.faster_than)."""
    from ..evidence.floors import COMPUTE, best, faster_than

    chosen, probes, rows = best(ceilings), best(ceilings, COMPUTE), []
    for r in summary[summary["op"].isin(set(ceilings["op"]))].itertuples():
        for cache, (time, _, high) in TIMES.items():
            value = getattr(r, time, float("nan"))
            if pd.isna(value):
                continue
            for table, time_column in ((chosen, "kernel_us"), (probes, "floor_us")):
                if (r.op, cache) not in table.index:
                    continue
                floor = table.loc[(r.op, cache)]
                physical = not faster_than(getattr(r, high), floor["floor_low_us"])
                rows.append({"kind": "floor", "op": r.op, "shape": getattr(r, "shape", None), "cache": cache,
                             "implementation": r.implementation,
                             "versus": "copy" if table is chosen else floor["unit"], "source": floor["config"],
                             "value": value, "value_high": getattr(r, high), "reference": floor[time_column],
                             "reference_low": floor["floor_low_us"], "quotient": value / floor[time_column],
                             "verdict": WITHIN if physical else NOT_PHYSICAL, "holds": physical})
    return frame(rows)


FASTER, SLOWER, NO_INTERVAL = "faster", "slower", "no interval"


def _versus(kind: str, op: str, mine: pd.Series, theirs: pd.Series, other: str) -> dict:
    """One op's hand-written kernel time here against another namespace's, each with its own interval: faster or
    slower only where the quotient's interval lies wholly on one side of one, and no verdict where a side has no
    interval (a summary archived before intervals)."""
    low, high = mine.get("kernel_low_us"), mine.get("kernel_high_us")
    other_low, other_high = theirs.get("kernel_low_us"), theirs.get("kernel_high_us")
    row = {"kind": kind, "op": op, "shape": mine.get("shape"), "cache": "warm",
           "implementation": mine["implementation"], "versus": other, "value": mine["kernel_us"], "value_low": low,
           "value_high": high, "reference": theirs["kernel_us"], "reference_low": other_low,
           "reference_high": other_high, "quotient": mine["kernel_us"] / theirs["kernel_us"]}
    if pd.isna(pd.Series([low, high, other_low, other_high], dtype=float)).any():
        return row | {"verdict": NO_INTERVAL}
    row |= {"quotient_low": low / other_high, "quotient_high": high / other_low}
    verdict = FASTER if row["quotient_high"] < 1 else SLOWER if row["quotient_low"] > 1 else ACROSS
    return row | {"verdict": verdict, "holds": verdict != ACROSS}


def _hand_written(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[summary["implementation"] == hand_written(summary)].set_index("op")


def across(views: dict, summary: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    """The comparisons across namespaces, each side with its interval: every stage of the progression against the
    stage before it (`progression`; `source` the later stage), and the ops whose kernel is unchanged against the
    drift baseline (`drift`)."""
    from ..evidence.history import drift

    rows = []
    if "progression" in views:
        stages = list(views["progression"][0].items())
        for (before, earlier), (stage, later) in pairwise(stages):
            old, new = _hand_written(earlier), _hand_written(later)
            rows += [_versus("progression", op, new.loc[op], old.loc[op], before) | {"source": stage}
                     for op in OP_TITLES if op in new.index and op in old.index]
    if "drift" in views:
        baseline, (base_summary, base_kernels) = views["drift"]
        unchanged = drift((base_summary, base_kernels), (summary, kernels))["op"]
        old, new = _hand_written(base_summary), _hand_written(summary)
        rows += [_versus("drift", op, new.loc[op], old.loc[op], baseline) for op in unchanged]
    return frame(rows)


def from_claims(kind: str, claims: pd.DataFrame) -> pd.DataFrame:
    """The targets' or predictions' comparisons (`judged`, as the claims table records them) as verdict rows."""
    rows = claims.rename(columns={"left": "what", "left_value": "value", "right_value": "reference",
                                  "right_low": "reference_low", "right_high": "reference_high", "key": "versus"})
    return frame(rows.assign(kind=kind, op=rows["claim"].map(_op_of)).to_dict("records"))


def _op_of(claim: str) -> str | None:
    """The op a target's claim names ("Bias + GELU: ..."); none for a prediction (a variant's)."""
    title = claim.split(": ", 1)[0]
    return next((op for op, name in OP_TITLES.items() if name == title), None)


def _assembled(namespace: str, tables: dict[str, pd.DataFrame], judged_summary: pd.DataFrame,
          judged_sweep: pd.DataFrame | None, roof: tuple[dict, dict] | None, judged: dict,
          views: dict | None = None) -> pd.DataFrame:
    """Every verdict of a namespace: `judged_summary` and `judged_sweep` hold each peer at its best known
    (`judging`); `roof` (shapes, roofline) where the note sets ours against the roofline; `judged` the claims rows
    of the targets and predictions (`judged`); `views` the cross-namespace views (history.views)."""
    parts = [standing(tables["summary"], judged_summary)]
    if views:
        parts.append(across(views, tables["summary"], tables["kernels"]))
    if roof:
        parts.append(roofline(tables["summary"], *roof))
    if judged_sweep is not None:
        parts.append(sweep(tables["sweep"], judged_sweep))
    if "ceilings" in tables and not tables["ceilings"].empty:
        parts.append(floors(tables["summary"], tables["ceilings"]))
    parts += [from_claims(kind, claims) for kind, claims in (("target", judged.get("targets")),
                                                             ("prediction", judged.get("predictions")))
              if claims is not None]
    return frame(pd.concat(parts, ignore_index=True).to_dict("records")).assign(namespace=namespace)


def frame(rows: list[dict]) -> pd.DataFrame:
    """Rows in the table's columns; the booleans stay booleans where a kind leaves them empty."""
    out = pd.DataFrame(rows, columns=COLUMNS)
    for column in ("holds", "worst"):
        out[column] = [False if pd.isna(v) else bool(v) for v in out[column]]
    for column in ("namespace", "kind", "op", "shape", "cache", "implementation", "versus", "source", "what",
                   "relation", "verdict"):
        out[column] = out[column].astype(object)
    return out


def of(verdicts: pd.DataFrame, kind: str, cache: str | None = None) -> pd.DataFrame:
    """The rows of one kind (and L2 state)."""
    rows = verdicts[verdicts["kind"] == kind]
    return rows if cache is None else rows[rows["cache"] == cache]


# --- the targets and the predictions, judged on unrounded values ------------------------------------------------


def largest_points(table: pd.DataFrame, op: str) -> pd.DataFrame:
    """An op's sweep rows at its largest size (the most bytes), one per implementation, measured or left out."""
    points = table[table["op"] == op]
    if points["bytes"].isna().all():
        return points.iloc[:0]
    return points[points["shape"] == points.loc[points["bytes"].idxmax(), "shape"]]


def sweep_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """Every sweep point where the hand-written kernel and a peer were both measured (`sweep`): ours, the
    fastest peer there and the ratio of the two; where the points have intervals, the ratio's."""
    rows = sweep(table, table).rename(columns={
        "value": "ours_us", "versus": "best_peer", "reference": "best_peer_us", "quotient": "ratio",
        "quotient_low": "ratio_low", "quotient_high": "ratio_high"})
    spread = "kernel_low_us" in table
    return rows[["op", "shape", "ours_us", "best_peer", "best_peer_us", "ratio",
                 *(["ratio_low", "ratio_high"] * spread)]].reset_index(drop=True)


def peers(summary: pd.DataFrame, column: str = "kernel_us") -> tuple[str, dict[str, tuple[float, pd.Series]]]:
    """The hand-written implementation, and per op its kernel time and the library implementations' (the peers; a
    second hand-written toolchain is not one), in the other tables' order; a peer an op lacks is NaN."""
    mine = hand_written(summary)
    others = [i for i in IMPLEMENTATIONS if i in set(summary["implementation"]) and i not in HAND_WRITTEN]
    found = {}
    for op in [o for o in OP_TITLES if o in set(summary["op"])]:
        times = summary[summary["op"] == op].set_index("implementation")[column]
        found[op] = (times[mine], times.reindex(others))
    return mine, found


def judging(tables: dict) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The summary and the sweep the verdicts read: each peer at its best known (peers.at_best), where the
    namespace recorded the known peers."""
    from .peers import at_best

    known = tables.get("known_peers")
    if known is None:
        return tables["summary"], tables.get("sweep")
    sweep_table = tables.get("sweep")
    return at_best(tables["summary"], known), None if sweep_table is None else at_best(sweep_table, known)


NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Judged:
    """One comparison a target is judged by, on unrounded values: what was measured (`what`, `value`), the target
    (`limit`, at most or at least) and where the namespace sets it (`key`; `against` names the limit where it is
    derived from the key's value)."""

    key: str
    what: str
    value: float
    limit: float
    at_most: bool
    against: str = ""

    @property
    def margin(self) -> float:
        """How far the value lies inside its target, in the value's unit: negative past it, NaN unmeasured."""
        return self.limit - self.value if self.at_most else self.value - self.limit

    @property
    def verdict(self) -> str:
        return NOT_MEASURED if pd.isna(self.value) else "met" if self.margin >= 0 else "missed"


def _verdict(judged: Judged, shown: float) -> str:
    """Met or missed on the unrounded value: one that rounds to its target but lies past it is missed. How far is
    worded from the value as the row shows it, so that a reader can redo it from the row, and never reads "by 0%";
    the unrounded margin is in claims.parquet (`target_claims`)."""
    if judged.verdict != "missed":
        return judged.verdict
    short = shown / judged.limit - 1 if judged.at_most else 1 - shown / judged.limit
    by = f"{max(short, 0):.0%}"
    return f"missed by {'less than 1%' if by == '0%' else by}"


def worst_point(ratios: pd.DataFrame, op: str) -> pd.Series | None:
    """An op's row of `sweep_ratios` where ours stands worst against the fastest peer; None where none was
    measured."""
    points = ratios[ratios["op"] == op]
    return None if points.empty else points.loc[points["ratio"].idxmax()]


def _fastest(times: pd.Series) -> str:
    return times.idxmin() if times.notna().any() else "none measured"


def _sweep_target(ratios: pd.DataFrame, op: str, limit: float) -> tuple[str, str, str, tuple[Judged, ...]]:
    """The target on every sweep point of an op: its worst ratio to the fastest peer, and where it falls."""
    target, worst = f"at every sweep point, ours / best peer at most {limit:.2f}", worst_point(ratios, op)
    if worst is None:
        return target, "", NOT_MEASURED, (Judged("targets.sweep_best_peer_ratio", f"{op}: ours / the best peer at "
                                                 "its worst sweep point", float("nan"), limit, True),)
    # where the points have intervals, the worst is the highest upper end, and it is met only when that is
    spread = "ratio_high" in ratios and ratios.loc[ratios["op"] == op, "ratio_high"].notna().all()
    if spread:
        mine = ratios[ratios["op"] == op]
        worst = mine.loc[mine["ratio_high"].idxmax()]
    judged = Judged("targets.sweep_best_peer_ratio", f"{op}: ours / the best peer ({worst['best_peer']}) at "
                    f"{worst['shape']}, its worst sweep point" + (", the upper end of its interval" if spread else ""),
                    worst["ratio_high"] if spread else worst["ratio"], limit, True)
    shown = round(judged.value, 2)
    measured = (f"{worst['ratio']:.2f} [{worst['ratio_low']:.2f}, {shown:.2f}]" if spread else f"{shown:.2f}")
    return target, f"{measured} at {worst['shape']}", _verdict(judged, shown), (judged,)


def target_rows(summary: pd.DataFrame, sweep_table: pd.DataFrame | None, targets: dict,
                 ceilings: pd.DataFrame | None = None) -> list[tuple]:
    """Each row of the targets table, (op, target, measured, met), with the comparisons it is judged by."""
    mine, found = peers(summary)
    cold = peers(summary, "kernel_cold_us")[1] if "kernel_cold_us" in summary else {}
    rows = []
    for op, (ours, peers_us) in found.items():
        if "best_peer_ratio" in targets:
            row = _best_peer_target(op, mine, ours, peers_us, targets, ceilings)
            rows.append((op, *_or_at_the_floor(row, op, mine, ours, peers_us, "warm", targets, ceilings)))
        if "cold_best_peer_ratio" in targets and cold:
            (ours_cold, peers_cold), limit = cold[op], targets["cold_best_peer_ratio"]
            judged = Judged("targets.cold_best_peer_ratio", f"{op}: {mine} / the best peer "
                            f"({_fastest(peers_cold)}), L2 cold", ours_cold / peers_cold.min(), limit, True)
            ratio = round(judged.value, 2)
            row = (f"L2 cold: ours / best peer at most {limit:.2f}", "" if pd.isna(ratio) else f"{ratio:.2f}",
                   _verdict(judged, ratio), (judged,))
            rows.append((op, *_or_at_the_floor(row, op, mine, ours_cold, peers_cold, "cold", targets, ceilings)))
        if op in targets.get("kernel_us", {}):
            limit = targets["kernel_us"][op]
            judged = Judged(f"targets.kernel_us.{op}", f"{op}: {mine} kernel time (µs)", ours, limit, True)
            rows.append((op, f"kernel at most {us(limit)} µs", f"{us(ours)} µs", _verdict(judged, round(ours, 2)),
                         (judged,)))
        if sweep_table is not None:
            rows += [(op, *row) for row in _sweep_targets(sweep_table, op, mine, targets)]
            rows += [(op, *row) for row in _floor_targets(sweep_table, op, mine, targets, ceilings)]
    return rows


def target_claims(summary: pd.DataFrame, sweep_table: pd.DataFrame | None, targets: dict,
                  ceilings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each comparison a row of the targets table is judged by, as rows of the claims table (authored.Claims): the
    unrounded value and its target, and the margin, signed (negative past the target) and as a fraction of the
    target. A row met by either of two comparisons (the best peer, or the warm copy) has both."""
    rows = [claim_row(f"{OP_TITLES[op]}: {target}", j.key, j.what, j.value, "<=" if j.at_most else ">=",
                      j.against or j.key, j.limit, j.verdict, j.margin, j.margin / j.limit, j.verdict == "met")
            for op, target, _, _, judged in target_rows(summary, sweep_table, targets, ceilings) for j in judged]
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


# A generated table's verdict as a row of the claims table (its file, line and kind are the note's: authored.Claims).


CLAIM_COLUMNS = ["claim", "key", "left", "left_value", "left_low", "left_high", "relation", "right", "right_value",
                 "right_low", "right_high", "verdict", "margin", "relative_margin", "holds"]


def claim_row(claim: str, key: str, left: str, value: float, relation: str, right: str, right_value: float,
              verdict: str, margin: float, relative: float, holds: bool, right_low: float | None = None,
              right_high: float | None = None) -> dict:
    """A value judged as a point (its interval is itself) against a limit or a range."""
    low = right_value if right_low is None else right_low
    high = right_value if right_high is None else right_high
    return dict(zip(CLAIM_COLUMNS, (claim, key, left, value, value, value, relation, right, right_value, low, high,
                                    verdict, margin, relative, bool(holds)), strict=True))


def _best_peer_target(op: str, mine: str, ours: float, peers_us: pd.Series, targets: dict,
                      ceilings) -> tuple[str, str, str, tuple[Judged, ...]]:
    """Ours against the best peer at the seed shape; where the namespace allows it (`warm_ceiling_margin`), met
    too by a kernel within that margin of the warm copy of its own bytes, which no kernel can beat by much."""
    limit, margin = targets["best_peer_ratio"], targets.get("warm_ceiling_margin")
    peer = Judged("targets.best_peer_ratio", f"{op}: {mine} / the best peer ({_fastest(peers_us)})",
                  ours / peers_us.min(), limit, True)
    ratio = round(peer.value, 2)
    verdict = _verdict(peer, ratio)
    if margin is None:
        return f"ours / best peer at most {limit:.2f}", f"{ratio:.2f}", verdict, (peer,)
    from ..evidence.floors import best

    chosen = best(ceilings) if ceilings is not None and not ceilings.empty else pd.DataFrame()
    copy_us = chosen.loc[(op, "warm"), "kernel_us"] if (op, "warm") in chosen.index else float("nan")
    copy = Judged("targets.warm_ceiling_margin", f"{op}: {mine} / the warm copy of its bytes", ours / copy_us,
                  1 + margin, True, "1 + targets.warm_ceiling_margin")
    shown = round(copy.value, 2)
    measured = f"{ratio:.2f}" + ("" if pd.isna(shown) else f"; {shown:.2f}x the warm copy")
    if copy.verdict == "met":
        verdict = "met"
    return (f"ours / best peer at most {limit:.2f}, or at most {1 + margin:.2f}x the warm copy", measured, verdict,
            (peer, copy))


def floor_of(op: str, cache: str, ceilings: pd.DataFrame | None) -> tuple[float, str]:
    """An op's measured floor in one L2 state, and which it is: the higher of the fastest copy of its bytes and the
    compute floor of its fastest probe (NaN and "" where neither ran)."""
    from ..evidence.floors import COMPUTE, best

    if ceilings is None or ceilings.empty:
        return float("nan"), ""
    found = [(rows.loc[(op, cache), column], name) for rows, column, name in (
        (best(ceilings), "kernel_us", "copy of its bytes"), (best(ceilings, COMPUTE), "floor_us", "compute floor"))
        if (op, cache) in rows.index]
    return max(found) if found else (float("nan"), "")


def _or_at_the_floor(row: tuple, op: str, mine: str, ours: float, peers_us: pd.Series, cache: str, targets: dict,
                     ceilings) -> tuple:
    """A best-peer target row (target, measured, verdict, comparisons), met too, where the namespace sets
    `unreachable_floor_margin`, by a kernel within that margin of the op's measured floor (floor_of) when the
    target's share of the best peer lies under that floor: no kernel could meet the ratio there (issue 46)."""
    margin, (floor, kind) = targets.get("unreachable_floor_margin"), floor_of(op, cache, ceilings)
    if margin is None or pd.isna(floor):  # no floor measured in that state: the ratio alone
        return row
    target, measured, verdict, judged = row
    name = "best_peer_ratio" if cache == "warm" else "cold_best_peer_ratio"
    limit = targets[name]
    reach = Judged(f"targets.{name}", f"{op}: {limit:g} of the best peer ({_fastest(peers_us)}) / the {kind}, "
                   f"L2 {cache} (at most 1: no kernel meets the ratio)", limit * peers_us.min() / floor, 1.0, True, "1")
    near = Judged("targets.unreachable_floor_margin", f"{op}: {mine} / the {kind}, L2 {cache}", ours / floor,
                  1 + margin, True, "1 + targets.unreachable_floor_margin")
    measured += f"; {limit:.2f}x the best peer is {reach.value:.2f}x the {kind}, ours {near.value:.2f}x it"
    if reach.verdict == "met" and near.verdict == "met":
        verdict = "met"
    return (f"{target}, or at most {1 + margin:.2f}x the floor where that lies under it", measured, verdict,
            (*judged, reach, near))


def _sweep_targets(sweep_table: pd.DataFrame, op: str, mine: str, targets: dict) -> list[tuple]:
    """The targets the namespace sets on the sweep's points of one op."""
    rows, ratios = [], sweep_ratios(sweep_table)
    if "sweep_best_peer_ratio" in targets:
        rows.append(_sweep_target(ratios, op, targets["sweep_best_peer_ratio"]))
    points = sweep_table[sweep_table["op"] == op].set_index(["shape", "implementation"])
    ratios = ratios.set_index(["op", "shape"])
    named = [t.get("shape", t.get("from")) for key in ("points", "tflops", "floor_margin")
             for t in targets.get(key, []) if t["op"] == op]
    for shape in named:
        if shape not in set(sweep_table.loc[sweep_table["op"] == op, "shape"]):
            from ..core.errors import PipelineError

            raise PipelineError(f"targets: {op} at '{shape}' is no point of its sweep (its points: "
                                f"{', '.join(dict.fromkeys(sweep_table.loc[sweep_table['op'] == op, 'shape']))})")
    for i, t in [(i, t) for i, t in enumerate(targets.get("points", [])) if t["op"] == op]:
        if t["versus"] == "best_peer":
            ratio = ratios["ratio"].get((op, t["shape"]), float("nan"))
        else:
            ratio = (points["kernel_us"].get((t["shape"], mine), float("nan"))
                     / points["kernel_us"].get((t["shape"], t["versus"]), float("nan")))
        versus = "best peer" if t["versus"] == "best_peer" else IMPLEMENTATIONS[t["versus"]]
        judged = Judged(f"targets.points.{i}", f"{op}: {mine} / {t['versus']} at {t['shape']}", ratio, t["at_most"],
                        True)
        shown = round(ratio, 2)
        rows.append((f"at {t['shape']}, ours / {versus} at most {t['at_most']:.2f}",
                     "" if pd.isna(shown) else f"{shown:.2f}", _verdict(judged, shown), (judged,)))
    for i, t in [(i, t) for i, t in enumerate(targets.get("tflops", [])) if t["op"] == op]:
        judged = Judged(f"targets.tflops.{i}", f"{op}: {mine} TFLOP/s at {t['shape']}",
                        points["achieved_tflops"].get((t["shape"], mine), float("nan")), t["at_least"], False)
        shown = round(judged.value, 1)
        rows.append((f"at {t['shape']}, at least {t['at_least']:g} TFLOP/s", "" if pd.isna(shown) else
                     f"{shown:.1f} TFLOP/s", _verdict(judged, shown), (judged,)))
    if "roof_fraction" in targets:
        largest = largest_points(sweep_table, op)
        if (largest["bound"] == "memory").any():
            ours_there = largest.loc[largest["implementation"] == mine, "fraction_of_roof"]
            shape, limit = largest["shape"].iloc[0], targets["roof_fraction"]
            judged = Judged("targets.roof_fraction", f"{op}: {mine} fraction of the bandwidth roof at {shape}",
                            ours_there.max(), limit, False)
            shown = round(judged.value, 2)
            rows.append((f"at {shape}, at least {limit:.0%} of the bandwidth roof",
                         "" if pd.isna(shown) else f"{shown:.0%}", _verdict(judged, shown), (judged,)))
    return rows


def floor_points(sweep_table: pd.DataFrame, op: str, implementation: str, probe: pd.Series) -> pd.DataFrame:
    """An implementation against its compute floor at every sweep point of `op`: the floor there is the probe's
    (the run's fastest of the op's unit, warm, at the seed shape) scaled by the point's unit FLOPs; the ratio's
    interval, where the sweep has one, is ours' over the floor's."""
    from ..evidence.floors import unit_flops
    from ..registry.ops import OPS

    spread = "kernel_high_us" in sweep_table and "floor_low_us" in probe
    rows = []
    for r in sweep_table[(sweep_table["op"] == op) & (sweep_table["implementation"] == implementation)].itertuples():
        flops = unit_flops(op, OPS[op].parse_label(r.shape))
        share = flops / probe["unit_flops"]
        row = {"shape": r.shape, "unit_flops": flops, "floor_us": probe["floor_us"] * share,
               "ratio": r.kernel_us / (probe["floor_us"] * share)}
        if spread:
            row |= {"ratio_low": r.kernel_low_us / (probe["floor_high_us"] * share),
                    "ratio_high": r.kernel_high_us / (probe["floor_low_us"] * share)}
        rows.append(row)
    columns = ["shape", "unit_flops", "floor_us", "ratio", *["ratio_low", "ratio_high"] * spread]
    return pd.DataFrame(rows, columns=columns)


def _floor_targets(sweep_table: pd.DataFrame, op: str, mine: str, targets: dict, ceilings) -> list[tuple]:
    """`floor_margin`: ours within a margin of its compute floor at every sweep point from a named one on (by FLOPs,
    `floor_points`); a point is judged by the upper end of its ratio's interval where it has one, and the worst
    point stands for all."""
    from ..evidence.floors import COMPUTE, best, unit_flops
    from ..registry.ops import OPS

    probes = best(ceilings, COMPUTE) if ceilings is not None and not ceilings.empty else pd.DataFrame()
    rows = []
    for i, t in [(i, t) for i, t in enumerate(targets.get("floor_margin", [])) if t["op"] == op]:
        least, limit = unit_flops(op, OPS[op].parse_label(t["from"])), 1 + t["margin"]
        ratios = pd.Series(dtype=float)
        if (op, "warm") in probes.index:
            points = floor_points(sweep_table, op, mine, probes.loc[(op, "warm")])
            points = points[points["unit_flops"] >= least].set_index("shape")
            ratios = points["ratio_high" if "ratio_high" in points else "ratio"]
        worst = ratios.idxmax() if not ratios.empty else None
        judged = Judged(f"targets.floor_margin.{i}", f"{op}: {mine} / its compute floor at "
                        f"{worst or 'no point measured'}, its worst point from {t['from']} on",
                        ratios.max() if worst else float("nan"), limit, True, "1 + targets.floor_margin.margin")
        shown = round(judged.value, 2)
        rows.append((f"from {t['from']} on, at most {limit:.2f}x the compute floor",
                     "" if worst is None else f"{shown:.2f}x at {worst}", _verdict(judged, shown), (judged,)))
    return rows


def measured_as(variant: str, metric: str, summary: pd.DataFrame, attempts_table) -> tuple[float, float, float]:
    """A variant's value in this run and its noise interval: its implementation's where the namespace adopted it
    (the summary's variant), else its row of the attempts table (measured in the metric that decided it)."""
    from ..evidence.measurements import METRICS, noise

    rows = summary[summary["variant"] == variant]
    if not rows.empty:
        return (float(rows[METRICS[metric]].iloc[0]), *noise(rows.iloc[0], metric))
    if attempts_table is not None:
        rows = attempts_table[(attempts_table["attempt"] == variant) & (attempts_table["metric"] == metric)]
        if not rows.empty:
            return tuple(float(rows[c].iloc[0]) if c in rows else float("nan")
                         for c in ("value_us", "low_us", "high_us"))
    return (float("nan"),) * 3


def outcome(measured: tuple[float, float, float], prediction: dict) -> str:
    """Held when the unrounded value lies in the predicted range; not distinguishable from it when it lies outside
    but its noise interval reaches into the range; faster or slower than predicted only when the interval lies
    wholly outside."""
    value, v_low, v_high = measured
    low, high = prediction["low_us"], prediction["high_us"]
    if pd.isna(value):
        return NOT_MEASURED
    if low <= value <= high:
        return "held"
    if not (pd.isna(v_low) or pd.isna(v_high)) and v_low <= high and v_high >= low:
        return "not distinguishable from the prediction"
    return "faster than predicted" if value < low else "slower than predicted"


def prediction_claims(predictions, summary: pd.DataFrame, attempts_table) -> pd.DataFrame:
    """Each prediction's outcome as a row of the claims table: the unrounded value against the predicted range,
    the margin the distance inside the range to its nearer bound (µs; negative outside it) and as a fraction of
    that bound."""
    rows = []
    for i, p in enumerate(predictions):
        measured = measured_as(p["variant"], p["metric"], summary, attempts_table)
        value, low, high = measured[0], p["low_us"], p["high_us"]
        margin, nearer = min((value - low, low), (high - value, high))
        said = outcome(measured, p)
        rows.append(claim_row(f"`{p['variant']}`: {METRIC_NAMES[p['metric']]} within its prediction",
                              f"predictions.{i}", f"{p['variant']}: {METRIC_NAMES[p['metric']]} (µs)", value, "in",
                              f"predictions.{i}", float("nan"), said, margin, margin / nearer, said == "held",
                              low, high))
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def judged(tables: dict[str, pd.DataFrame], targets: dict | None = None,
           predictions: tuple[dict, ...] = ()) -> dict[str, pd.DataFrame]:
    """The verdicts behind the generated tables that make them, by the table's name (`generated`): the targets'
    and the predictions', judged on unrounded values, as rows of the claims table. A note records those of the
    tables it places (authored.Claims)."""
    (summary, sweep_table), found = judging(tables), {}
    if targets:
        found["targets"] = target_claims(summary, sweep_table, targets, tables.get("ceilings"))
    if predictions:
        found["predictions"] = prediction_claims(predictions, summary, tables.get("attempts"))
    return found


def verdict_table(namespace: str, tables: dict[str, pd.DataFrame], roofline: tuple[dict, dict] | None = None,
                  targets: dict | None = None, predictions: tuple[dict, ...] = (),
                  views: dict | None = None) -> pd.DataFrame:
    """Every verdict of a namespace, each peer at its best known: the `verdicts` evidence table."""
    return _assembled(namespace, tables, *judging(tables), roofline, judged(tables, targets, predictions), views)
