"""The note's generated tables and worded sections: one function per table returns rows (a DataFrame), the
markdown is the last step; the judgments they word are the verdicts' (verdicts.py). A template places them
(authored.render: a namespace's own, or templates/generated.md). No number is typed here: each comes from a table
of the bundle."""
from __future__ import annotations

import sys

import pandas as pd

from ..registry.ops import OPS
from ..registry.subjects import adopted
from ..registry.vocabulary import HAND_WRITTEN, IMPLEMENTATIONS, METRIC_NAMES, OP_TITLES, hand_written, us
from . import verdicts
from .verdicts import judging, largest_points, measured_as, outcome, peers, target_rows, verdict_table


def ordered(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(_o=frame["op"].map(list(OP_TITLES).index)).sort_values("_o", kind="stable").drop(columns="_o")


def kernel_and_span(summary: pd.DataFrame) -> pd.DataFrame:
    """Per op, the hand-written implementation's kernel time and mean span."""
    rows = ordered(summary[summary["implementation"] == hand_written(summary)])
    return pd.DataFrame({"Operation": rows["op"].map(OP_TITLES), "Kernel (µs)": rows["kernel_us"].map(us),
                         "Span (µs)": rows["span_mean_us"].map(us)})


def by_implementation(summary: pd.DataFrame, column: str, fmt=us) -> pd.DataFrame:
    """Ops down, implementations across: `column` of the summary (kernel_us, span_mean_us, launches)."""
    wide = summary.pivot(index="op", columns="implementation", values=column)
    wide = wide.loc[[op for op in OP_TITLES if op in wide.index]]
    impls = [i for i in IMPLEMENTATIONS if i in wide.columns]
    out = pd.DataFrame({"Operation": [OP_TITLES[op] for op in wide.index]})
    for impl in impls:
        out[IMPLEMENTATIONS[impl]] = [fmt(v) for v in wide[impl]]
    return out


def resources(kernels: pd.DataFrame) -> pd.DataFrame:
    """The launch the capture recorded for each hand-written kernel: grid x block, registers, shared memory."""
    mine = adopted(kernels)
    mine = mine[mine["implementation"].isin(HAND_WRITTEN)].drop_duplicates(["op", "kernel"])
    mine = ordered(mine)
    return pd.DataFrame({"Kernel": "`" + mine["kernel"] + "`", "Grid × block": mine["grid"] + " × " + mine["block"],
                         "Registers / thread": mine["registers"].astype(str),
                         "Shared memory (bytes)": mine["shared_bytes"].astype(str)})


def triton_census(census: pd.DataFrame) -> pd.DataFrame:
    """What the offline compile of each Triton kernel shows (registers, shared memory, loads by width)."""
    rows = ordered(census.drop_duplicates(["op", "arch"]).sort_values("arch", kind="stable"))
    return pd.DataFrame({
        "Operation": rows["op"].map(OP_TITLES), "Kernel": "`" + rows["kernel"] + "`", "Arch": rows["arch"],
        "Warps": rows["num_warps"].astype(str), "Registers": rows["registers"].astype(str),
        "Shared (bytes)": rows["shared_bytes"].astype(str),
        "Global loads (32 / 128-bit)": rows["global_loads_32bit"].astype(str) + " / "
        + rows["global_loads_128bit"].astype(str),
        "Async copies": rows["async_copies"].astype(str),
        "Stores (32 / 128-bit)": rows["global_stores_32bit"].astype(str) + " / "
        + rows["global_stores_128bit"].astype(str),
        "Barriers": rows["barriers"].astype(str)})


def ptxas(resources: pd.DataFrame) -> pd.DataFrame:
    """The resource report ptxas gave for each hand-written variant."""
    rows = ordered(resources)
    return pd.DataFrame({
        "Variant": "`" + rows["variant"] + "`", "Registers": rows["registers"].astype(str),
        "Spill stores / loads (bytes)": rows["spill_stores_bytes"].astype(str) + " / "
        + rows["spill_loads_bytes"].astype(str),
        "Static shared (bytes)": rows["static_shared_bytes"].astype(str), "Barriers": rows["barriers"].astype(str)})


def implementation_name(name: str) -> str:
    return IMPLEMENTATIONS.get(name, f"`{name}`")


def control_band(capture_summary: pd.DataFrame) -> pd.DataFrame:
    """Per (op, subject) of the first backend: the band its captures span, and any capture outside the
    band of the others (the capture_summary's `under_load`), with its value."""
    first = capture_summary[capture_summary["backend"] == capture_summary["backend"].iloc[0]]
    if "cache" in first:
        first = first[first["cache"] == "warm"]
    rows = []
    for (op, impl), group in first.groupby(["op", "subject"], sort=False):
        values, loaded = group["kernel_us_per_iteration"], group[group["under_load"].astype(bool)]
        rows.append({"op": op, "Implementation": implementation_name(impl), "Captures": str(len(group)),
                     "Band (µs)": f"{us(values.min())}–{us(values.max())}",
                     "Under load": "; ".join(f"capture {int(r.capture)}: {us(r.kernel_us_per_iteration)} outside "
                                             f"{us(r.band_min_us)}–{us(r.band_max_us)}" for r in loaded.itertuples())
                     or "none"})
    rows = ordered(pd.DataFrame(rows))
    return pd.concat([pd.DataFrame({"Operation": rows.pop("op").map(OP_TITLES)}), rows], axis=1)


def attempts(table: pd.DataFrame) -> pd.DataFrame:
    """The attempts not adopted, each in its metric next to what it was compared with, in the same run."""
    from ..registry.ops import OPS

    def design(name):
        return OPS[table.loc[table["attempt"] == name, "op"].iloc[0]].kernel_variants[name].design

    refused = table["refused"].fillna("") if "refused" in table else pd.Series("", index=table.index)
    return pd.DataFrame({
        "Attempt": [f"{OP_TITLES[op]}: {design(a)} (`{a}`)"
                    for op, a in zip(table["op"], table["attempt"], strict=True)],
        "Metric": table["metric"].map(METRIC_NAMES),
        "Value": [f"not timed: {why}" if why else f"{us(v)} µs" for v, why in zip(table["value_us"], refused,
                                                                                   strict=True)],
        "Compared with": [f"{us(v)} µs for {implementation_name(c)}, same run" + ("" if why else f" ({r:.2f}x)")
                          for c, v, r, why in zip(table["compared_with"], table["compared_us"], table["ratio"],
                                                  refused, strict=True)],
        "Against the adopted kernel": [_against_adopted(r) for r in table.to_dict("records")]})


# an attempt against the adopted kernel, worded from its verdict (evidence.measurements.against_adopted)
AGAINST = {"below": "faster than", "above": "slower than", "not distinguishable": "not distinguishable from"}


def _against_adopted(row: dict) -> str:
    said = (f"{AGAINST[row['against_adopted']]} {implementation_name(row['adopted'])}'s {us(row['adopted_us'])} µs"
            if row.get("against_adopted") else "")
    why = row.get("why") or ""
    return "; ".join(filter(None, [said, f"not adopted: {why}" if why else ""]))


def sweep(table: pd.DataFrame) -> pd.DataFrame:
    """Per op, its largest sweep point: each implementation's kernel time, what that achieves, and the fraction
    of the roof (bandwidth for memory-bound ops, FP32 FLOP/s for compute-bound ones)."""
    rows = []
    for op in [o for o in OP_TITLES if o in set(table["op"])]:
        for r in largest_points(table, op).dropna(subset=["kernel_us"]).itertuples():
            achieved = (f"{r.achieved_tflops:.1f} TFLOP/s" if r.bound == "compute" else f"{r.achieved_gbs:.0f} GB/s")
            rows.append({"Operation": OP_TITLES[op], "Shape": r.shape,
                         "Implementation": implementation_name(r.implementation), "Kernel (µs)": us(r.kernel_us),
                         "Achieved": achieved,
                         "Of the roof": f"{r.fraction_of_roof:.0%}"})
    return pd.DataFrame(rows)


def at_or_under(points: pd.DataFrame) -> str:
    """How many of an op's `sweep` verdicts stand at or under 1.00, and how many are not distinguishable from it
    (verdicts.position: by the ratio's interval where the points have one, else by the ratio as shown)."""
    across = int((points["verdict"] == verdicts.ACROSS).sum())
    return f"{int(points['holds'].sum())} of {len(points)}" + (
        f" ({across} not distinguishable from 1.00)" if across else "")


def sweep_worst(table: pd.DataFrame | None, rows: pd.DataFrame | None = None, interval: bool = False
                ) -> pd.DataFrame:
    """Per op, the sweep point where the hand-written kernel stands worst against the fastest peer, and at how
    many of the op's points it is at least as fast as every peer (the `sweep` verdicts of `table`, or `rows`);
    with `interval`, the ratio's interval and where it stands against 1.00 (worst_points)."""
    rows = verdicts.sweep(table, table) if rows is None else rows
    out = []
    for op in [o for o in OP_TITLES if o in set(rows["op"])]:
        points = rows[rows["op"] == op]
        worst = points[points["worst"]].iloc[0]
        judged = ({"Ours / best peer (interval)": ratio(worst), "Against 1.00": worst["verdict"]} if interval
                  else {"Ours / best peer": f"{worst['quotient']:.2f}"})
        out.append({"Operation": OP_TITLES[op], "Worst point": worst["shape"], "Ours (µs)": us(worst["value"]),
                    "Best peer there": f"{IMPLEMENTATIONS[worst['versus']]}{from_source(worst['source'])}, "
                                       f"{us(worst['reference'])} µs",
                    **judged, "Points at or under 1.00": at_or_under(points)})
    return pd.DataFrame(out)


def ratio(row) -> str:
    """A verdict's ratio as the note shows it: two places, and its interval where the verdict has one."""
    low, high = row.get("quotient_low"), row.get("quotient_high")
    spread = "" if pd.isna(low) or pd.isna(high) else f" ({low:.2f} to {high:.2f})"
    return f"{row['quotient']:.2f}{spread}"


def worst_points(rows: pd.DataFrame) -> pd.DataFrame:
    """Per op, its worst sweep point against the fastest peer there (the `sweep` verdicts' `worst`), with the
    ratio's interval and where that interval stands against 1.00."""
    return sweep_worst(None, rows, interval=True)


def points(sweep_table: pd.DataFrame, rows: pd.DataFrame, op: str) -> pd.DataFrame:
    """Every sweep point of one op, in the sweep's order: each implementation's kernel time there in this run (a
    blank where it was left out, as the sweep's `reason` says), the best peer (best_peer) and ours / best peer with
    its interval (the `sweep` verdicts)."""
    here = sweep_table[sweep_table["op"] == op]
    judged = rows[rows["op"] == op].set_index("shape")
    measured = [i for i in IMPLEMENTATIONS if i in set(here["implementation"])]  # the peers first, as everywhere
    times = here.set_index(["shape", "implementation"])["kernel_us"]
    out = []
    for shape in dict.fromkeys(here["shape"]):
        verdict = judged.loc[shape] if shape in judged.index else None
        out.append({"Shape": shape, **{f"{IMPLEMENTATIONS[i]} (µs)": us(times.get((shape, i))) for i in measured},
                    "Best peer": "" if verdict is None else best_peer(verdict),
                    "Ours / best peer (interval)": "" if verdict is None else ratio(verdict)})
    return pd.DataFrame(out)


def seed_standing(summary: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per op at its seed shape, with L2 warm and cold: every implementation's kernel time in this run (`summary`,
    the library peers among them), the best peer the verdict holds ours against (its time too where it is not this
    run's) and ours / best peer with its interval (the `standing` verdicts of each cache)."""
    out = []
    for cache, column in (("warm", "kernel_us"), ("cold", "kernel_cold_us")):
        if column not in summary or summary[column].isna().all():
            continue
        best = verdicts.of(rows, "standing", cache).set_index("op")
        mine, found = peers(summary, column)
        for op, (ours, peers_us) in found.items():
            verdict = best.loc[op] if op in best.index else None
            out.append({"Operation": OP_TITLES[op], "L2": cache,
                        **{IMPLEMENTATIONS[i]: us(v) for i, v in peers_us.items()}, IMPLEMENTATIONS[mine]: us(ours),
                        "Best peer": "" if verdict is None else best_peer(verdict),
                        "Ours / best peer (interval)": "" if verdict is None else ratio(verdict)})
    return pd.DataFrame(out)


def best_peer(verdict) -> str:
    """The peer a verdict holds ours against, with its time where that is a pinned archive's, not this run's."""
    source = verdict["source"]
    elsewhere = isinstance(source, str) and bool(source)
    return IMPLEMENTATIONS[verdict["versus"]] + (f" (in {source}, {us(verdict['reference'])} µs)" if elsewhere else "")


def compute_by_size(sweep_table: pd.DataFrame, ceilings: pd.DataFrame | None) -> pd.DataFrame:
    """Per op whose floor is its FLOPs (a probe of its contract's unit ran, warm, and the sweep finds a point of it
    compute-bound), each sweep point by size: every implementation's FP32 TFLOP/s (blank where it did not run
    there), the bound the fastest probe sets (its unit's rate over the contract's cost a FLOP) and ours / that floor
    with its interval (verdicts.floor_points)."""
    from ..evidence.floors import COMPUTE, best

    if ceilings is None or ceilings.empty:
        return pd.DataFrame()
    probes, out = best(ceilings, COMPUTE), []
    computed = set(sweep_table.loc[sweep_table["bound"] == "compute", "op"])
    for op in [o for o in OP_TITLES if (o, "warm") in probes.index and o in computed]:
        probe, points = probes.loc[(op, "warm")], sweep_table[sweep_table["op"] == op]
        floor = verdicts.floor_points(sweep_table, op, hand_written(points), probe).set_index("shape")
        measured = [i for i in IMPLEMENTATIONS if i in set(points["implementation"])]  # the peers first, as points'
        tflops = points.set_index(["shape", "implementation"])["achieved_tflops"]
        for shape in floor.sort_values("unit_flops", kind="stable").index:
            at = floor.loc[shape]
            out.append({"Operation": OP_TITLES[op], "Shape": shape,
                        **{f"{IMPLEMENTATIONS[i]} (TFLOP/s)": _tflops(tflops.get((shape, i))) for i in measured},
                        "Bound (TFLOP/s)": f"{probe['tflops'] / OPS[op].precision.per_flop:.1f}",
                        "Ours / floor (interval)": ratio({"quotient": at["ratio"], "quotient_low": at.get("ratio_low"),
                                                          "quotient_high": at.get("ratio_high")})})
    return pd.DataFrame(out).fillna("")  # an op without an implementation another op has: blank, as a point's


def _tflops(value) -> str:
    return "" if value is None or pd.isna(value) else f"{value:.1f}"


def from_source(namespace: str) -> str:
    """Where a verdict's peer time came from, where not from this run (peers.at_best): ` (in h200-001)`."""
    return f" (in {namespace})" if isinstance(namespace, str) and namespace else ""


def sweep_autotuning(tables: dict) -> str:
    """How torch.compile autotuned at the sweep's sizes, as its sweep checks recorded it (evidence archived before
    `gpu_alone` was recorded autotuned beside other checks)."""
    checks = tables.get("sweep_checks")
    if checks is None or not (checks["implementation"] == "compiled").any():
        return ""
    compiled = checks[checks["implementation"] == "compiled"]
    if "gpu_alone" in compiled and compiled["gpu_alone"].eq(True).all():
        return (" torch.compile autotuned at these sizes inside the sweep's checks, timing its candidates with the GPU "
                "to itself as at the seed shapes.")
    return (" torch.compile autotuned at these sizes inside the sweep's checks, beside other checks on the GPU (at "
            "the seed shapes it autotuned alone), so its choices here may be noisier.")


def standing(summary: pd.DataFrame, shapes: dict, roofline: dict, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per op, the hand-written kernel against the fastest of the other implementations (the best peer), and
    against the roofline floor at the op's shape: the `standing` (warm) and `roofline` verdicts of `summary`, or
    `rows`."""
    if rows is None:
        rows = pd.concat([verdicts.standing(summary, summary), verdicts.roofline(summary, shapes, roofline)])
    best = verdicts.of(rows, "standing", "warm").set_index("op")
    floor = verdicts.of(rows, "roofline").set_index("op")
    mine, found = peers(summary)
    out = []
    for op, (ours, peers_us) in found.items():
        peer = best.loc[op] if op in best.index else None
        out.append({"Operation": OP_TITLES[op], **{IMPLEMENTATIONS[i]: us(v) for i, v in peers_us.items()},
                    IMPLEMENTATIONS[mine]: us(ours),
                    "Best peer": "" if peer is None else IMPLEMENTATIONS[peer["versus"]] + from_source(peer["source"]),
                    "Ours / best peer": "" if peer is None else f"{peer['quotient']:.2f}",
                    "Floor (µs)": us(floor.loc[op, "reference"]), "Ours / floor": f"{floor.loc[op, 'quotient']:.2f}"})
    return pd.DataFrame(out)


def peer_moves(tables: dict, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each verdict's ratio that a peer's best known time moves: at the seed shapes (warm and cold) and the sweep's
    points, ours over the best peer of this run, and over the best known, with where that came from (the
    `standing` and `sweep` verdicts, or `rows`)."""
    if rows is None:
        summary, sweep_table = judging(tables)
        rows = pd.concat([verdicts.standing(tables["summary"], summary),
                          *([verdicts.sweep(tables["sweep"], sweep_table)] if sweep_table is not None else [])])
    moved = rows[rows["kind"].isin(["standing", "sweep"]) & (rows["reference"] < rows["reference_this_run"])]
    return pd.DataFrame({
        "Operation": moved["op"].map(OP_TITLES), "Shape": moved["shape"],
        "Verdict at": moved["kind"].map({"standing": "seed shape", "sweep": "sweep point"}), "L2": moved["cache"],
        "Best peer this run (µs)": moved["reference_this_run"].map(us), "Best known (µs)": moved["reference"].map(us),
        "Best known": [IMPLEMENTATIONS[p] + from_source(n) for p, n in zip(moved["versus"], moved["source"],
                                                                            strict=True)],
        "Ours / best peer this run": (moved["value"] / moved["reference_this_run"]).map("{:.2f}".format),
        "Ours / best known": moved["quotient"].map("{:.2f}".format)}).reset_index(drop=True)


def against_targets(summary: pd.DataFrame, sweep_table: pd.DataFrame | None, targets: dict,
                    ceilings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per op, each target the namespace sets, what was measured and by how much it is missed: at the seed shape
    the hand-written kernel's time against the best peer's (warm, or within a margin of the copy of its bytes;
    cold) and against a kernel-time bound; over the sweep, its worst ratio to the best peer, its ratio to a named
    peer and its TFLOP/s at named points, and its fraction of the bandwidth roof at the largest size where the op is
    memory-bound there. Each is judged on the unrounded value (`Judged`). A value the evidence lacks (no peer, no
    point of ours at that size) is "not measured", which is not met either."""
    rows = [(OP_TITLES[op], target, measured, met) for op, target, measured, met, _ in
            target_rows(summary, sweep_table, targets, ceilings)]
    return pd.DataFrame(rows, columns=["Operation", "Target (declared)", "Measured", "Met"])


def targets_section(summary: pd.DataFrame, sweep_table: pd.DataFrame | None, targets: dict,
                    ceilings: pd.DataFrame | None = None, point_counters: str | None = None) -> list[str]:
    """The targets table, the counters at the sweep points it names (where captured), then what limits each op
    that misses one, as the namespace file states it. Which targets a run misses is known only once it is
    measured: a miss the file says nothing of, or a limit it states for an op that missed nothing, is named in the
    note (and printed), not an error that would cost the run its note and archive."""
    table = against_targets(summary, sweep_table, targets, ceilings)
    missed = [op for op in OP_TITLES if (table.loc[table["Operation"] == OP_TITLES[op], "Met"] != "met").any()]
    limits = targets.get("limits", {})
    stale = [op for op in OP_TITLES if op in limits and op not in missed]
    said = [f"- **{OP_TITLES[op]}.** " + (" ".join(limits[op].split()) if op in limits else
                                     f"Not stated: the namespace file has no `targets.limits.{op}`.") for op in missed]
    unsaid = [f"{OP_TITLES[op]} met every target; what the namespace file states limits it (`targets.limits.{op}`) is "
              "left out." for op in stale]
    for op in [op for op in missed if op not in limits]:
        print(f"fieldnote: note: {OP_TITLES[op]} misses a target and key 'targets.limits.{op}' is missing",
              file=sys.stderr)
    for line in unsaid:
        print(f"fieldnote: note: {line}", file=sys.stderr)
    at_points = ["Nsight Compute's counters at the sweep points the targets name, ours and the peer each is held "
                 "against, each profiled alone:", point_counters] if point_counters else []
    return ["## Against the targets", "The targets the namespace sets. A miss is how far the measurement lies past "
            "its target, as a fraction of the target.", markdown(table), *at_points,
            *(["What limits each miss, with the counters above as evidence:", "\n".join(said)] if said else []),
            *unsaid]


COUNTERS = {"duration": ("Duration (µs)", lambda v: us(v / 1e3)), "sm_throughput": ("SM busy", "{:.0f}%"),
            "issue_slots_busy": ("Issue slots", "{:.0f}%"), "tensor_pipe": ("Tensor pipe", "{:.0f}%"),
            "achieved_occupancy": ("Occupancy", "{:.0f}%"), "l2_throughput": ("L2 throughput", "{:.0f}%"),
            "l2_hit_rate": ("L2 hits", "{:.0f}%"), "dram_throughput": ("DRAM throughput", "{:.0f}%"),
            "shared_load_bank_conflicts": ("Shared-load bank conflicts", "{:.0f}"),
            "registers": ("Registers", "{:.0f}"), "waves_per_sm": ("Waves", "{:.2f}")}


def counters(table: pd.DataFrame, at_points: bool = False) -> pd.DataFrame:
    """Nsight Compute's counters of each hand-written kernel (`at_points`: of each subject at the sweep points a
    target names), the median over the launches it profiled; a counter the capture did not ask for stays empty."""
    keys = ["op", "subject", "kernel"] if at_points else ["op", "kernel"]
    medians = ordered(table).groupby([*keys, "name"], sort=False)["value"].median().unstack("name")
    rows = medians.index.to_frame(index=False)
    out = pd.DataFrame({"Operation": [OP_TITLES[op] for op in rows["op"]]})
    if at_points:
        out["At"] = [f"`{subject}`" for subject in rows["subject"]]
    out["Kernel"] = [f"`{kernel}`" for kernel in rows["kernel"]]
    for name, (title, fmt) in COUNTERS.items():
        values = medians[name] if name in medians else pd.Series(float("nan"), index=medians.index)
        out[title] = ["" if pd.isna(v) else fmt(v) if callable(fmt) else fmt.format(v) + out_of_range(fmt, v)
                      for v in values]
    return out


def point_traffic(counted: pd.DataFrame) -> pd.DataFrame:
    """At each sweep point a target names, each profiled subject's DRAM traffic a call as Nsight Compute counted it
    (each kernel's median over its launches, times its launches a call), against the op's least bytes there (its
    `work`, the roofline's bytes): how many times over a kernel moves what the op must."""
    from ..evidence.tables import PROFILED_CALLS

    out = []
    moved = counted[counted["name"] == "dram_bytes"]
    for (op, subject), group in ordered(moved).groupby(["op", "subject"], sort=False):
        kernels = group.groupby("kernel", sort=False)["value"]
        traffic = float((kernels.median() * kernels.size() / PROFILED_CALLS).sum())
        least = OPS[op].work(OPS[op].parse_label(group["shape"].iloc[0]))[0]
        out.append({"Operation": OP_TITLES[op], "At": f"`{subject}`", "DRAM a call (MiB)": f"{traffic / 2**20:.1f}",
                    "Least bytes (MiB)": f"{least / 2**20:.1f}", "DRAM / least": f"{traffic / least:.2f}"})
    return pd.DataFrame(out)


def out_of_range(fmt: str, value: float) -> str:
    """A share Nsight Compute reports past 100%: shown as measured and marked, for such a ratio was not collected
    accurately (its two counts came from different replays of a kernel too short to reach a steady state)."""
    return " (out of range)" if fmt.endswith("%") and value > 100.5 else ""


def unverified(provenance: dict) -> str:
    return (f"**Unverified archive.** This note is rebuilt from {provenance['archive']} (SHA-256 "
            f"`{provenance['sha256']}`), which no namespace file pins: its evidence is only as trustworthy as "
            "wherever that file came from. The note is the generated one: a note's template is code, rendered only "
            "for an archive a namespace file pins.")


def place_figure(name: str, caption: str) -> str:
    """A figure where the note places it: the image, then its caption (note.html inlines both)."""
    return f"![{caption}](figures/{name}.svg)\n\n*Figure: {caption}*"


def markdown(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def generated(namespace: str, tables: dict[str, pd.DataFrame], history: dict | None = None,
              roofline: tuple[dict, dict] | None = None, targets: dict | None = None,
              predictions: tuple[dict, ...] = (), rows: pd.DataFrame | None = None) -> dict[str, str]:
    """The note's generated tables (markdown) by name, each where the evidence has it: the default note places
    them all, an authored note (authored.py) places those it names. `rows`: the verdicts (verdict_table), which
    the tables word."""
    summary = tables["summary"]
    judged_summary, judged_sweep = judging(tables)
    if rows is None:
        rows = verdict_table(namespace, tables, roofline, targets, predictions)
    found = {"kernel_and_span": kernel_and_span(summary), "kernel": by_implementation(summary, "kernel_us"),
             "span": by_implementation(summary, "span_mean_us"),
             "launches": by_implementation(summary, "launches", fmt=lambda v: "" if pd.isna(v) else str(int(v))),
             "resources": resources(tables["kernels"])}
    if roofline:
        found["standing"] = standing(judged_summary, *roofline, rows=rows)
        found["seed_standing"] = seed_standing(summary, rows)
        if "counters" in tables:
            found["counters"] = counters(tables["counters"])
    if "sweep_counters" in tables:
        found["point_counters"] = counters(tables["sweep_counters"], at_points=True)
        found["point_traffic"] = point_traffic(tables["sweep_counters"])
    found.update(history_tables(namespace, tables, history or {}))
    band = tables.get("capture_summary")
    if band is not None and "under_load" in band and (band.groupby(["op", "subject"]).size() > 2).any():
        found["control_band"] = control_band(band)
    if "sweep" in tables:
        found["sweep"] = sweep(tables["sweep"])
        found["sweep_worst"] = sweep_worst(judged_sweep, verdicts.of(rows, "sweep"))
        found["worst_points"] = worst_points(verdicts.of(rows, "sweep"))
        for op in [o for o in OP_TITLES if o in set(tables["sweep"]["op"])]:
            found[f"points_{op}"] = points(tables["sweep"], verdicts.of(rows, "sweep"), op)
        by_size = compute_by_size(tables["sweep"], tables.get("ceilings"))
        if not by_size.empty:
            found["compute_by_size"] = by_size
    if targets:
        found["targets"] = against_targets(judged_summary, judged_sweep, targets, tables.get("ceilings"))
    if "known_peers" in tables:
        found["known_peers"] = peer_moves(tables, rows)
    for name, table, view in (("attempts", "attempts", attempts), ("ptxas", "resources", ptxas),
                              ("census", "census", triton_census)):
        if table in tables:
            found[name] = view(tables[table])
    if "kernel_cold_us" in summary and summary["kernel_cold_us"].notna().any():
        found["cache"] = warm_and_cold(summary)
    if "ceilings" in tables and not tables["ceilings"].empty:
        found["ceilings"] = ceilings(tables["ceilings"])
        found["floors"] = floors(summary, tables["ceilings"], verdicts.of(rows, "floor"))
    checks = tables.get("checks")
    if checks is not None and "generated_sha256" in checks and checks["generated_sha256"].notna().any():
        found["inductor"] = inductor_choices(checks)
    if "compiled_tunes" in tables:
        found["tunes"] = compiled_tunes(tables["compiled_tunes"])
    if predictions:
        found["predictions"] = against_predictions(predictions, summary, tables.get("attempts"))
    return {name: markdown(frame) for name, frame in found.items()}


def in_table_order(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows by op, then by implementation in the registry's order (names it lacks last), as the tables show them."""
    order = {name: i for i, name in enumerate(IMPLEMENTATIONS)}
    rows = rows.assign(_i=rows["implementation"].map(lambda i: order.get(i, len(order))))
    return ordered(rows.sort_values("_i", kind="stable")).drop(columns="_i")


def warm_and_cold(summary: pd.DataFrame) -> pd.DataFrame:
    """Per op and implementation, kernel time with the inputs left in L2 and with L2 flushed before each call,
    captured side by side in one session."""
    rows = in_table_order(summary.dropna(subset=["kernel_cold_us"]))
    return pd.DataFrame({"Operation": rows["op"].map(OP_TITLES), "Implementation": rows["implementation"].map(
        implementation_name), "Warm L2 (µs)": rows["kernel_us"].map(us),
        "Cold L2 (µs)": rows["kernel_cold_us"].map(us),
        "Cold / warm": (rows["kernel_cold_us"] / rows["kernel_us"]).map("{:.2f}".format)})


def ceilings(table: pd.DataFrame) -> pd.DataFrame:
    """Per op, the copy of its traffic that was fastest, warm and cold: the memory floor of that op; where probes of
    its precision contract's unit ran beside it (a table from before the compute floor has none), the fastest
    probe's rate and the compute floor it sets at the op's shape."""
    from ..evidence.floors import COMPUTE, best

    rows, chosen, probes = [], best(table), best(table, COMPUTE)
    for op in [o for o in OP_TITLES if o in set(table["op"])]:
        row = {"Operation": OP_TITLES[op], "Traffic (MiB read + written)": "{:.2f} + {:.2f}".format(
            *(chosen.loc[(op, "warm"), k] / 2**20 for k in ("bytes_read", "bytes_written")))}
        for cache in [c for c in ("warm", "cold") if (op, c) in chosen.index]:
            c = chosen.loc[(op, cache)]
            row[f"Copy, {cache} (µs)"] = us(c["kernel_us"])
            row[f"Copy, {cache} (TB/s)"] = f"{c['gbs'] / 1e3:.2f}"
            row[f"Launch, {cache}"] = f"`{c['config']}`"
        if not probes.empty:
            row |= _compute_ceiling(op, probes)
        rows.append(row)
    return pd.DataFrame(rows)


def _compute_ceiling(op: str, probes: pd.DataFrame) -> dict:
    """The op's precision contract, and per cache the fastest probe's rate, the compute floor it sets and the
    probe; a dash where the op has none (its work is all bytes)."""
    from ..evidence.floors import UNITS
    from ..registry.ops import OPS

    contract = OPS[op].precision
    unit = UNITS[contract.unit]
    row = {"Contract": unit if contract.per_flop == 1 else f"{contract.per_flop} {unit} FLOPs a FLOP"}
    for cache in ("warm", "cold"):
        p = probes.loc[(op, cache)] if (op, cache) in probes.index else None
        row[f"Rate, {cache} (TFLOP/s)"] = "—" if p is None else f"{p['tflops']:.1f}"
        row[f"Compute floor, {cache} (µs)"] = "—" if p is None else us(p["floor_us"])
        row[f"Probe, {cache}"] = "—" if p is None else f"`{p['config']}`"
    return row


def floors(summary: pd.DataFrame, table: pd.DataFrame, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per op and implementation, its kernel time against both floors measured in the same cache state (the
    `floor` verdicts of `summary`, or `rows`): the copy of its traffic and, where probes of its contract's unit
    ran, its FLOPs at the fastest probe's rate; a time whose interval lies wholly below either floor's is marked
    not physical."""
    from ..evidence.floors import COMPUTE, UNITS, best

    rows = verdicts.floors(summary, table) if rows is None else rows
    compute, out = not best(table, COMPUTE).empty, []
    for r in in_table_order(summary[summary["op"].isin(set(table["op"]))]).itertuples():
        row, flags = {"Operation": OP_TITLES[r.op], "Implementation": implementation_name(r.implementation)}, []
        mine = rows[(rows["op"] == r.op) & (rows["implementation"] == r.implementation)]
        for cache in ("warm", "cold"):
            here, name = mine[mine["cache"] == cache], cache.capitalize()
            if here.empty:
                continue
            copy, probe = here[here["versus"] == "copy"], here[here["versus"] != "copy"]
            row[f"{name} (µs)"] = us(here["value"].iloc[0])
            row[f"{name} / copy"] = "—" if copy.empty else f"{copy['quotient'].iloc[0]:.2f}"
            if (copy["verdict"] == verdicts.NOT_PHYSICAL).any():
                flags.append(f"{verdicts.NOT_PHYSICAL} ({cache}: faster than the copy of its bytes)")
            if not compute:
                continue
            row[f"{name} / compute floor"] = "—" if probe.empty else f"{probe['quotient'].iloc[0]:.2f}"
            if (probe["verdict"] == verdicts.NOT_PHYSICAL).any():
                flags.append(f"{verdicts.NOT_PHYSICAL} ({cache}: faster than its FLOPs at the "
                             f"{UNITS[probe['versus'].iloc[0]]} rate)")
        row["Judged"] = "; ".join(flags) or verdicts.WITHIN
        out.append(row)
    return pd.DataFrame(out)


def floors_section(table: pd.DataFrame, made: dict) -> list[str]:
    """The floors' heading, what they are, the ceilings and the floors tables; the memory floor's words alone for
    a table from before the compute floor."""
    from ..evidence.floors import COMPUTE, with_kinds

    copies = ("Beside each op in its capture session, a copy of the op's own traffic (the bytes it must read and "
              "write at its shape) was timed in several launch configurations, warm and cold; the fastest is the "
              "floor for that cache state.")
    if not (with_kinds(table)["kind"] == COMPUTE).any():
        return ["## The memory floor, measured", f"{copies} A kernel time whose interval lies wholly below the "
                f"copy's is marked {verdicts.NOT_PHYSICAL}.", made["ceilings"], made["floors"]]
    return ["## The memory and compute floors, measured",
            f"{copies} Beside them, where the op counts FLOPs, probes of the unit its precision contract computes "
            "on (the contract of its cheapest honest implementation: three TF32 products on the tensor cores for "
            "each FP32 product, 3xTF32, or FMAs on the FP32 pipes): cuBLAS's TF32 product of large square "
            "matrices, or chains of FMAs over the GPU's resident threads. The fastest probe's rate sets the compute "
            "floor: the op's FLOPs times the contract's products at that rate. A kernel time whose interval lies "
            f"wholly below either floor's is marked {verdicts.NOT_PHYSICAL}.", made["ceilings"], made["floors"]]


def inductor_choices(checks: pd.DataFrame) -> pd.DataFrame:
    """What torch.compile generated for each op at the namespace's shape: the source's SHA-256 (its first twelve
    digits) and the Triton kernels it defines."""
    rows = ordered(checks.dropna(subset=["generated_sha256"]).drop_duplicates("op"))
    return pd.DataFrame({"Operation": rows["op"].map(OP_TITLES), "Shape": rows["shape"],
                         "Generated source (SHA-256)": "`" + rows["generated_sha256"].str[:12] + "`",
                         "Kernels": rows["generated_kernels"].map(lambda k: ", ".join(f"`{n}`" for n in k.split())
                                                                  or "—")})


def compiled_tunes(tunes: pd.DataFrame) -> pd.DataFrame:
    """torch.compile's tunes of each op, each in a fresh cache: its median GPU time on fresh inputs, that over the
    kept (fastest) tune's, and what Inductor generated there."""
    rows = ordered(tunes)
    kept = rows[rows["kept"]].set_index("op")["gpu_us"]
    return pd.DataFrame({"Operation": rows["op"].map(OP_TITLES), "Shape": rows["shape"], "Tune": rows["tune"],
                         "Median GPU time (µs)": rows["gpu_us"].map(us),
                         "Over the kept": (rows["gpu_us"] / rows["op"].map(kept)).map("{:.2f}".format),
                         "Generated source (SHA-256)": "`" + rows["generated_sha256"].str[:12] + "`",
                         "Kept": rows["kept"].map({True: "kept", False: ""})})


def against_predictions(predictions, summary: pd.DataFrame, attempts_table) -> pd.DataFrame:
    """Each declared prediction beside what this run measured, and whether it held."""
    rows = []
    for p in predictions:
        measured = measured_as(p["variant"], p["metric"], summary, attempts_table)
        rows.append({"Variant": f"`{p['variant']}`", "Metric": METRIC_NAMES[p["metric"]],
                     "Predicted, declared (µs)": f"{us(p['low_us'])}–{us(p['high_us'])}",
                     "Measured (µs)": us(measured[0]),
                     "Outcome": outcome(measured, p), "Predicted in": f"{p['source']}, {p['made']}"})
    return pd.DataFrame(rows)


def several_gpus(tables: dict[str, pd.DataFrame]) -> str:
    """A sentence where the measurements ran on more than one GPU of the host (devices.py), else nothing."""
    recorded = [tables[t][["gpu_uuid", "gpu_name"]] for t in ("kernels", "gpu_state")
                if "gpu_uuid" in tables.get(t, {})]
    gpus = pd.concat(recorded).dropna().drop_duplicates("gpu_uuid") if recorded else pd.DataFrame()
    if len(gpus) < 2:
        return ""
    models = ", ".join(f"{n} x {m}" for m, n in gpus["gpu_name"].value_counts().sort_index().items())
    return (f" The measurements ran on {len(gpus)} GPUs of one host ({models}), each measurement window alone on "
            "its GPU; every capture and timing names its GPU in the evidence (`gpu_index`, `gpu_uuid`), and the "
            "control band compares captures of one GPU model only.")


def libraries(summary: pd.DataFrame, environment: dict) -> str:
    """A sentence naming the library behind each op's Library column, at the version the run recorded."""
    ops = [op for op in OPS if ((summary["op"] == op) & (summary["implementation"] == "library")).any()]
    recorded = environment.get("libraries", {})

    def named(op: str) -> str:
        lib = recorded.get(op) or {"library": OPS[op].library.title, "package": OPS[op].library.package}
        version = lib.get("version") or "at a version not recorded"
        return f"{lib['library']} ({lib['package']} {version}) for {OP_TITLES[op]}"
    unmeasured = [f"{other.title} ({other.package}) for {OP_TITLES[op]}, {other.why}"
                  for op in ops for other in OPS[op].library.unmeasured]
    return (f" The {IMPLEMENTATIONS['library']} column is each op's own library, as its users call it: "
            f"{'; '.join(map(named, ops))}."
            + (f" Not measured: {'; '.join(unmeasured)}." if unmeasured else "")) if ops else ""


def past_compute_roof(swept: pd.DataFrame | None) -> bool:
    """Whether a compute-bound sweep point ran past the whole of the declared FP32 roof (a tensor-core kernel)."""
    return swept is not None and bool(((swept["bound"] == "compute") & (swept["fraction_of_roof"] > 1)).any())


def words(namespace: str, description: str, environment: dict, tables: dict[str, pd.DataFrame],
          made: dict[str, str], history: dict | None = None, roofline: tuple[dict, dict] | None = None,
          targets: dict | None = None, provenance: dict | None = None,
          figures: dict | None = None) -> dict[str, object]:
    """What the generated note's template (templates/generated.md) says beside the tables `made`: its worded
    sections, by name, each empty where the evidence has nothing for it. `history`: optional cross-namespace views,
    {"progression": (summaries, changes), "drift": (baseline name, (summary, kernels) of the baseline)};
    `roofline`: (shapes, roofline) for the standing against peers and floor; `targets`: the namespace's targets and
    what limits each miss; `provenance`: set for an archive nobody pinned."""
    summary, spans = tables["summary"], tables["spans"]
    eager = spans[spans["mode"] == "eager"]
    mine = IMPLEMENTATIONS.get(hand_written(summary), "hand-written")
    hands = [IMPLEMENTATIONS[i] for i in HAND_WRITTEN if i in set(summary["implementation"])]
    swept = tables.get("sweep")
    return {
        "unverified": unverified(provenance) if provenance else "", "description": description,
        "method": f"GPU: {environment.get('gpu', 'unknown')}. Kernel time is the sum of captured kernel durations "
                  f"per iteration ({', '.join(sorted(set(summary['backend'].dropna())))}); a span is the mean of "
                  f"{eager.groupby(['op', 'subject']).size().min()} warmed CUDA-event samples around one call in "
                  f"{eager['round'].nunique()} rounds with rotating implementation order.{several_gpus(tables)}"
                  f"{libraries(summary, environment)}",
        "mine_title": mine, "hands_title": " and ".join(hands) or mine,
        "roof": roofline[1] if roofline else None,
        "history_sections": "\n\n".join(history_sections(namespace, tables, history or {}, made)),
        "floors_section": "\n\n".join(floors_section(tables["ceilings"], made)) if "ceilings" in made else "",
        "band_margin": (f"{tables['capture_summary']['band_margin'].iloc[0]:.0%}" if "control_band" in made
                        else ""),
        "sweep_autotuning": sweep_autotuning(tables),
        "past_compute_roof": past_compute_roof(swept),
        "left_out": [] if swept is None else [f"Left out: {r.implementation} at {r.op} {r.shape} ({r.reason})."
                                               for r in swept[swept["kernel_us"].isna()].itertuples()],
        "known_peers_section": ("\n\n".join(known_peers_section(made["known_peers"])) if "known_peers" in made
                                else ""),
        "targets_section": ("\n\n".join(targets_section(*judging(tables), targets, tables.get("ceilings"),
                                                          made.get("point_counters"))) if targets else ""),
        "census_arch": (" and ".join(dict.fromkeys(tables["census"]["arch"])) if "census" in tables else ""),
        "figure_names": list(figures or {}),
        "correctness": correctness(tables["checks"]) if "checks" in tables else ""}


def known_peers_section(moves: str) -> list[str]:
    """The peers at their best known, and which ratios that moves."""
    lead = ("## The peers at their best known",
            "A peer's time differs from one run to the next (torch.compile's autotune most of all), so every "
            "verdict above and below holds ours against each peer's fastest time known at that shape and L2 state "
            "on this GPU model: this run's, or one a pinned archive recorded before it (evidence/known_peers.parquet "
            "names each).")
    if moves.count("\n") < 2:  # a header and its rule: no ratio moved
        return [*lead, "No peer's known time is below this run's: the ratios are this run's."]
    return [*lead, "Where that is not this run's, the ratio it moves:", moves]


def verification(spans: pd.DataFrame, imported: bool = False) -> str:
    """What was verified of the timed calls (docs/integrity.md), as the spans table records it."""
    if imported:
        return ("These measurements are imported: the original project checked its kernels before timing them, and "
                "nothing here verified what its timed calls computed.")
    if "fresh_inputs" in spans and spans["fresh_inputs"].astype(bool).all():
        return (f"Every timed call ({len(spans)} spans and replays, and every captured call) was verified: its "
                "inputs drawn afresh before it, a set no other call saw, its output poisoned, then compared with the "
                "float64 reference of those inputs after it, outside the timed window.")
    if "verified" in spans and spans["verified"].astype(bool).all():
        return (f"Every timed call ({len(spans)} spans and replays, and every captured call) was verified: its output "
                "poisoned before it and compared with a float64 reference after it, outside the timed window, on "
                "two input sets in alternation, and the inputs checksummed after the measurement.")
    return ("These measurements predate the verification of timed calls: the gate checked every subject before it "
            "was timed, but what the timed calls computed was not compared.")


def sanitizer_summary(table: pd.DataFrame) -> str:
    tools = ", ".join(dict.fromkeys(table["tool"]))
    return (f"compute-sanitizer ({tools}) ran over {table['variant'].nunique()} hand-written variants at "
            f"{len(table)} (variant, tool, shape) cases before timing; {int(table['errors'].sum())} errors.")


def correctness(checks: pd.DataFrame) -> str:
    return (f"{int(checks['passed'].sum())} of {len(checks)} checks passed (rtol = {checks['rtol'].max():g}, "
            f"atol = {checks['atol'].max():g}); largest absolute error {checks['max_abs_error'].max():.3g}.")


def history_tables(namespace: str, tables: dict, history: dict) -> dict[str, pd.DataFrame]:
    from ..evidence import history as views

    found = {}
    if "progression" in history:
        found["progression"] = views.progression(*history["progression"])
    if "drift" in history:
        baseline, evidence = history["drift"]
        table = views.drift(evidence, (tables["summary"], tables["kernels"]))
        if not table.empty:
            found["drift"] = views.drift_table(table, baseline, namespace)
        changes = views.peer_changes(evidence[1], tables["kernels"])
        changes["implementation"] = changes["implementation"].map(implementation_name)
        if not changes.empty:
            found["peer_kernels"] = views.peer_changes_table(changes, baseline, namespace)
    return found


def history_sections(namespace: str, tables: dict, history: dict, made: dict[str, str]) -> list[str]:
    from ..evidence import history as views

    sections = []
    if "progression" in made:
        sections += ["## How each kernel reached its time",
                     "GPU kernel time of the hand-written kernel at each stage, each value read from that stage's "
                     "own namespace; the factor is that step's speed-up.", made["progression"]]
    if "drift" in made:
        baseline, evidence = history["drift"]
        bound = views.drift(evidence, (tables["summary"], tables["kernels"]))["movement_pct"].abs().max()
        sections += ["## The unchanged operations bound the drift",
                     f"These operations kept their kernel between `{baseline}` and `{namespace}`; their kernel "
                     f"time moved by at most {bound:.1f}%, which bounds how much of the rewritten kernels' "
                     f"movement could be environment drift.", made["drift"]]
    return sections
