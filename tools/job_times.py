"""Where a run's time goes: each job's last log line (`phases: {...}`, progress.report_phases) gathered per job
kind (rule), the wall time beside the phases, and what the phases leave (`other`: Snakemake's script preamble,
writing the outputs, what no phase covers). Prints a Markdown table; with --write, docs/pipeline-time.md.

    python tools/job_times.py WORK_LOGS_DIR... [--title TEXT]... [--write]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from fieldnote import progress as ph  # noqa: E402

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
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if len(args.title) > len(args.logs):
        parser.error(f"{len(args.title)} titles for {len(args.logs)} runs")
    titles = args.title + [""] * (len(args.logs) - len(args.title))
    runs = zip(args.logs, titles, strict=True)
    sections = [f"{title}\n\n{markdown(table(jobs(logs)))}".strip() for logs, title in runs]
    text = "\n\n".join(sections)
    print(text)
    if args.write:
        page = ROOT / "docs" / "pipeline-time.md"
        page.write_text(f"# Where a run's time goes\n\n{text}\n")


if __name__ == "__main__":
    main()
