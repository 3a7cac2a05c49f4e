"""The verdicts: every judgment the note states beside a number, as rows of one evidence table (`verdicts`), made
before a word of the note is. As nvbench's summaries are data its printers format, note.py words these rows and
judges nothing itself; a reader can recompute each from the row's values.

One row per judgment, by `kind`:
- `standing`: at the seed shape, warm and cold, ours against the fastest peer (at its best known, peers.at_best);
- `roofline`: at the seed shape, ours against the roofline's least time (the configured bandwidth and FP32 peak);
- `sweep`: at each sweep point, ours against the fastest peer there, `worst` marking the op's highest ratio;
- `floor`: each implementation against the floors measured beside it (the copy of its bytes; its FLOPs at the rate
  of its precision contract's unit), per L2 state;
- `target`, `prediction`: the targets' and predictions' comparisons, as the claims table records them.
"""
from __future__ import annotations

import pandas as pd

from .vocabulary import HAND_WRITTEN, OPS, hand_written

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
    from .ops import OPS as SPECS

    nbytes, flops = SPECS[op].work(shape)
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
    (`versus` that unit); not physical where the time's whole interval lies below the floor's (ceiling.faster_than)."""
    from .ceiling import COMPUTE, best, faster_than

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


def from_claims(kind: str, claims: pd.DataFrame) -> pd.DataFrame:
    """The targets' or predictions' comparisons (note.judged, as the claims table records them) as verdict rows."""
    rows = claims.rename(columns={"left": "what", "left_value": "value", "right_value": "reference",
                                  "right_low": "reference_low", "right_high": "reference_high", "key": "versus"})
    return frame(rows.assign(kind=kind, op=rows["claim"].map(_op_of)).to_dict("records"))


def _op_of(claim: str) -> str | None:
    """The op a target's claim names ("Bias + GELU: ..."); none for a prediction (a variant's)."""
    title = claim.split(": ", 1)[0]
    return next((op for op, name in OPS.items() if name == title), None)


def table(namespace: str, tables: dict[str, pd.DataFrame], judged_summary: pd.DataFrame,
          judged_sweep: pd.DataFrame | None, roof: tuple[dict, dict] | None, judged: dict) -> pd.DataFrame:
    """Every verdict of a namespace, as the note states them: `judged_summary` and `judged_sweep` hold each peer at
    its best known (note.judging); `roof` (shapes, roofline) where the note sets ours against the roofline;
    `judged` the claims rows of the targets and predictions (note.judged)."""
    parts = [standing(tables["summary"], judged_summary)]
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
