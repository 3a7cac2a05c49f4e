"""Where a run's time goes: each job's last log line (`phases: {...}`, progress.report_phases) gathered per job
kind (rule), the wall time beside the phases, and what the phases leave (`other`: Snakemake's script preamble,
writing the outputs, what no phase covers). Prints a Markdown table; with --write, docs/pipeline-time.md. Where
the run traced its GPU lock (`gpulock.jsonl` beside the logs, FIELDNOTE_GPU_TRACE), a second table: per job kind,
the GPU held shared, held alone and waited for; and the run's time with the GPU alone, and with a window waiting
while others held it shared (a drain: the GPU then runs only what the shared holders give it), with who held it
during the drains. With Snakemake's own log of the run (--snakemake-log), the course of the run: per job kind,
when its first job started and its last ended, from the run's start. With the host's CPU time sampled along the run
(--cpu, the `cores N` line and then `EPOCH cpu ...` lines of /proc/stat that device_pipeline.sh writes), how many of
its cores were busy, on average, in each 30 s of the run. Where the jobs' `benchmark:` records lie beside the logs
(work/benchmarks), the CPU time Snakemake measured for each job kind (its processes' user and system time).

    python tools/job_times.py WORK_LOGS_DIR... [--title TEXT]... [--snakemake-log LOG]... [--cpu FILE]... [--write]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from fieldnote.core import progress as ph  # noqa: E402

ORDER = [ph.START, ph.COMPILE, ph.PREPARE, ph.FIRST, ph.WARMUP, ph.MEASURE, ph.VERIFY, ph.FLUSH, ph.PROFILER, ph.CHECK,
         ph.SANITIZE, ph.WAIT]


def jobs(logs: Path) -> pd.DataFrame:
    rows = []
    for log in sorted(logs.rglob("*.log")):
        lines = [line for line in log.read_text().splitlines() if " phases: " in line]
        if lines:
            phases = json.loads(lines[-1].split(" phases: ", 1)[1])
            rows.append({"rule": log.relative_to(logs).parts[0], **phases})
    return pd.DataFrame(rows)


def table(frame: pd.DataFrame) -> pd.DataFrame:
    phases = [p for p in ORDER if p in frame]
    grouped = frame.groupby("rule")
    out = pd.DataFrame({"jobs": grouped.size(), "wall (s)": grouped["wall"].sum()})
    for p in phases:
        out[p] = grouped[p].sum()
    out["other"] = out["wall (s)"] - out[phases].sum(axis=1)
    out = out.sort_values("wall (s)", ascending=False)
    total = out.sum(numeric_only=True).rename("all jobs")
    return pd.concat([out, total.to_frame().T])


def benchmarked(logs: Path) -> pd.DataFrame:
    """Per job kind, from the `benchmark:` records beside the logs (work/benchmarks/RULE/...tsv): jobs, wall and
    CPU seconds summed, and CPU seconds per wall second; empty where there are none. A record without a CPU time
    (Snakemake writes NA for a job shorter than its first sample) is left out, not counted as no CPU."""
    rows = [{"rule": tsv.relative_to(logs.parent / "benchmarks").parts[0],
             **pd.read_csv(tsv, sep="\t").iloc[-1][["s", "cpu_time"]].to_dict()}
            for tsv in sorted((logs.parent / "benchmarks").rglob("*.tsv"))]
    rows = [row for row in rows if pd.notna(row["cpu_time"])]
    if not rows:
        return pd.DataFrame()
    grouped = pd.DataFrame(rows).groupby("rule")
    out = pd.DataFrame({"jobs": grouped.size(), "wall (s)": grouped["s"].sum(), "CPU (s)": grouped["cpu_time"].sum()})
    out = out.sort_values("CPU (s)", ascending=False)
    out = pd.concat([out, out.sum(numeric_only=True).rename("all benchmarked jobs").to_frame().T])
    return out.assign(**{"CPU per wall second": out["CPU (s)"] / out["wall (s)"]})


def benchmarked_markdown(frame: pd.DataFrame) -> str:
    lines = ["| job kind (`benchmark:`) | jobs | wall (s) | CPU (s) | CPU per wall second |", "|---|---|---|---|---|"]
    for name, row in frame.iterrows():
        lines.append(f"| {name} | {int(row['jobs'])} | {row['wall (s)']:.1f} | {row['CPU (s)']:.1f} | "
                     f"{row['CPU per wall second']:.2f} |")
    return "\n".join(lines)


def holds(logs: Path) -> pd.DataFrame:
    """The traced holds of a run, a row each: job kind, shared or alone, asked, taken, released (seconds)."""
    trace = logs / "gpulock.jsonl"
    if not trace.exists():
        return pd.DataFrame()
    frame = pd.read_json(trace, lines=True)
    frame["rule"] = frame["job"].str.extract(r"logs/([^/]+)/")[0].fillna("other")  # work/logs/<rule>/...
    return frame


def _measure(starts: np.ndarray, ends: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Whether each segment of `grid` (between consecutive points) lies inside some [start, end)."""
    middle = (grid[:-1] + grid[1:]) / 2
    return (np.searchsorted(np.sort(starts), middle, "right") - np.searchsorted(np.sort(ends), middle, "right")) > 0


def lock_table(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Per job kind the seconds held shared, held alone and waited; and the run's seconds alone and draining."""
    alone = frame[frame["mode"] == "alone"]
    grid = np.unique(frame[["asked", "taken", "released"]].to_numpy().ravel())
    held_alone = _measure(alone["taken"].to_numpy(), alone["released"].to_numpy(), grid)
    waiting = _measure(alone["asked"].to_numpy(), alone["taken"].to_numpy(), grid)
    drain = waiting & ~held_alone
    width = np.diff(grid)
    drained = np.concatenate([[0.0], np.cumsum(width * drain)])  # drain seconds up to each grid point
    at = lambda t: np.interp(t, grid, drained)  # noqa: E731
    frame = frame.assign(held=frame["released"] - frame["taken"], waited=frame["taken"] - frame["asked"],
                         in_drain=lambda f: np.where(f["mode"] == "shared", at(f["released"]) - at(f["taken"]), 0))
    grouped = frame.groupby("rule")
    out = pd.DataFrame({
        "holds": grouped.size(),
        "held shared (s)": frame[frame["mode"] == "shared"].groupby("rule")["held"].sum(),
        "held alone (s)": alone.assign(held=alone["released"] - alone["taken"]).groupby("rule")["held"].sum(),
        "waited (s)": grouped["waited"].sum(),
        "held shared during drains (s)": grouped["in_drain"].sum(),
    }).fillna(0.0).sort_values("waited (s)", ascending=False)
    run = {"span": grid[-1] - grid[0], "alone": float((width * held_alone).sum()), "drain": float(drained[-1])}
    return out, run


def lock_markdown(frame: pd.DataFrame) -> str:
    table, run = lock_table(frame)
    lines = [f"The GPU lock over {run['span']:.0f} s: held alone {run['alone']:.1f} s, a window waiting while "
             f"others held it shared {run['drain']:.1f} s.", "",
             "| job kind | " + " | ".join(table.columns) + " |", "|" + "---|" * (len(table.columns) + 1)]
    for name, row in table.iterrows():
        lines.append(f"| {name} | {int(row['holds'])} | " + " | ".join(f"{v:.1f}" for v in row.drop("holds")) + " |")
    return "\n".join(lines)


STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
STARTED = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FINISHED = re.compile(r"^Finished jobid: (\d+)")


def course(log: Path) -> pd.DataFrame:
    """Each job of Snakemake's log: its rule, and its start and end in seconds from the log's first timestamp (the
    `[date]` line before its `rule X:` block, and before its `Finished jobid: N`)."""
    first = now = rule = None
    started, ended = {}, {}
    for line in log.read_text(errors="replace").splitlines():
        if stamp := STAMP.match(line):
            now = datetime.strptime(stamp.group(1), "%a %b %d %H:%M:%S %Y")
            first = first or now
        elif begun := STARTED.match(line):
            rule = begun.group(1)
        elif (job := JOBID.match(line)) and rule and now:
            started[int(job.group(1))] = (rule, (now - first).total_seconds())
            rule = None
        elif (done := FINISHED.match(line)) and now:
            ended[int(done.group(1))] = (now - first).total_seconds()
    return pd.DataFrame([{"rule": r, "start": t, "end": ended.get(j, np.nan)} for j, (r, t) in started.items()])


def course_markdown(frame: pd.DataFrame) -> str:
    by = frame.assign(took=frame["end"] - frame["start"]).groupby("rule").agg(
        jobs=("start", "size"), first_start=("start", "min"), last_end=("end", "max"), longest=("took", "max"))
    lines = ["| job kind | jobs | first started (s) | last ended (s) | longest job (s) |", "|---|---|---|---|---|"]
    for name, row in by.sort_values(["first_start", "last_end"]).iterrows():
        lines.append(f"| {name} | {int(row['jobs'])} | {row['first_start']:.0f} | {row['last_end']:.0f} | "
                     f"{row['longest']:.0f} |")
    return "\n".join(lines)


def jiffies(fields: list[str]) -> tuple[int, int]:
    """/proc/stat's cpu times (user, nice, system, idle, iowait, irq, softirq, steal): the busy ones (not idle nor
    waiting for I/O) and all, in clock ticks."""
    ticks = [int(v) for v in fields]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def cpu_busy(samples: Path, every: float = 30.0) -> pd.DataFrame:
    """The host's busy cores (not idle nor waiting for I/O), on average, in each `every` seconds from the first
    sample: each interval between two samples counted in the bin it ends in."""
    lines = samples.read_text().splitlines()
    cores = int(lines[0].split()[1])
    stamps, busy, total = [], [], []
    for line in lines[1:]:
        fields = line.split()
        if len(fields) < 10 or fields[1] != "cpu":
            continue  # a line cut short when the sampler was stopped
        stamps.append(float(fields[0]))
        busy_jiffies, all_jiffies = jiffies(fields[2:10])
        busy.append(busy_jiffies)
        total.append(all_jiffies)
    if len(stamps) < 2:
        return pd.DataFrame()  # a run stopped before the second sample: nothing to say
    frame = pd.DataFrame({"end": np.array(stamps[1:]) - stamps[0], "busy": np.diff(busy), "total": np.diff(total)})
    frame["bin"] = ((frame["end"] - 1e-9) // every).astype(int)
    summed = frame.groupby("bin")[["busy", "total"]].sum()
    return pd.DataFrame({"from (s)": summed.index * every, "to (s)": (summed.index + 1) * every,
                         "cores busy": cores * summed["busy"] / summed["total"], "of": cores})


def cpu_markdown(frame: pd.DataFrame) -> str:
    lines = [f"| from (s) | to (s) | cores busy, of {int(frame['of'].iloc[0])} |", "|---|---|---|"]
    for _, row in frame.iterrows():
        lines.append(f"| {row['from (s)']:.0f} | {row['to (s)']:.0f} | {row['cores busy']:.1f} |")
    return "\n".join(lines)


def markdown(t: pd.DataFrame) -> str:
    header = "| job kind | " + " | ".join(t.columns) + " |"
    lines = [header, "|" + "---|" * (len(t.columns) + 1)]
    for name, row in t.iterrows():
        cells = [str(int(row["jobs"]))] + [f"{v:.1f}" if v else "" for v in row.drop("jobs")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path, nargs="+", help="one work/logs directory per run")
    parser.add_argument("--title", action="append", default=[], help="what each run was, in the order of the logs")
    parser.add_argument("--snakemake-log", action="append", default=[], type=Path,
                        help="Snakemake's log of each run, in the order of the logs")
    parser.add_argument("--cpu", action="append", default=[], type=Path,
                        help="the host's CPU samples of each run, in the order of the logs")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    for given, name in ((args.title, "titles"), (args.snakemake_log, "Snakemake logs"), (args.cpu, "CPU samples")):
        if len(given) > len(args.logs):
            parser.error(f"{len(given)} {name} for {len(args.logs)} runs")
    titles = args.title + [""] * (len(args.logs) - len(args.title))
    courses = args.snakemake_log + [None] * (len(args.logs) - len(args.snakemake_log))
    samples = args.cpu + [None] * (len(args.logs) - len(args.cpu))
    sections = []
    for logs, title, log, cpu in zip(args.logs, titles, courses, samples, strict=True):
        lock, cpu_of_jobs = holds(logs), benchmarked(logs)
        busy = cpu_busy(cpu) if cpu else pd.DataFrame()
        sections.append("\n\n".join(filter(None, [title, markdown(table(jobs(logs))),
                                                    benchmarked_markdown(cpu_of_jobs) if len(cpu_of_jobs) else "",
                                                    lock_markdown(lock) if len(lock) else "",
                                                    course_markdown(course(log)) if log else "",
                                                    cpu_markdown(busy) if len(busy) else ""])))
    text = "\n\n".join(sections)
    print(text)
    if args.write:
        page = ROOT / "docs" / "pipeline-time.md"
        page.write_text(f"# Where a run's time goes\n\n{text}\n")


if __name__ == "__main__":
    main()
