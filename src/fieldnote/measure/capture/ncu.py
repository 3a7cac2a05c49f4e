"""Nsight Compute: hardware counters for the kernels inside the op's NVTX range, clocks and caches left alone."""
from __future__ import annotations

import dataclasses
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from ...core.errors import PipelineError
from ...evidence.tables import PROFILED_CALLS
from . import Job, session
from ._process import run, workload_command

METRICS = {
    "gpu__time_duration.sum": "duration",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput",
    "dram__bytes.sum": "dram_bytes",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": "l2_throughput",
    "lts__t_sector_hit_rate.pct": "l2_hit_rate",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_throughput",
    "sm__inst_issued.avg.pct_of_peak_sustained_active": "issue_slots_busy",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pipe",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared_load_bank_conflicts",
    "launch__registers_per_thread": "registers",
    "launch__shared_mem_per_block_static": "static_shared",
    "launch__shared_mem_per_block_dynamic": "dynamic_shared",
    "launch__waves_per_multiprocessor": "waves_per_sm",
}


def available() -> bool:
    return shutil.which("ncu") is not None


def version() -> str:
    out = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1].split()[-1] if out else "unknown"


def _number(text: str) -> float | None:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def parse_csv(text: str) -> pd.DataFrame:
    """`ncu --import R --csv --page raw`: a header row, a units row, then one row per profiled kernel."""
    raw = pd.read_csv(io.StringIO(text), dtype=str)
    units, rows = raw.iloc[0], raw.iloc[1:]
    found = [m for m in METRICS if m in raw.columns]
    if not found:
        raise PipelineError("ncu report has none of the requested metrics")
    records = []
    for launch, (_, row) in enumerate(rows.iterrows()):
        for metric in found:
            records.append({"kernel": row.get("Kernel Name"), "launch": launch, "metric": metric,
                            "name": METRICS[metric], "value": _number(row[metric]), "unit": units[metric]})
    return pd.DataFrame(records)


def filterable(job: Job) -> Job:
    """The job with each subject under a name Nsight Compute's NVTX filter reads as written: in `--nvtx-include`,
    `@` separates a domain from a range, so a sweep point's range (`gelu:torch@4099x770`) would name a domain
    `gelu:torch` and match nothing."""
    return dataclasses.replace(job, subjects={name.replace("@", " at "): s for name, s in job.subjects.items()})


def capture(job: Job, workdir: Path, keep: Path | None = None) -> pd.DataFrame:
    """Counters of one implementation (the job's first): kernel replay makes a session per implementation."""
    if not available():
        raise PipelineError("capture backend ncu: `ncu` is not on PATH")
    # Kernel replay costs several passes a launch: every kernel of a few calls suffices. Counted in calls, not
    # launches, so that an implementation of several launches a call (trimul's seven) has each of its kernels.
    report, profiled = workdir / "counters.ncu-rep", filterable(dataclasses.replace(job, iterations=PROFILED_CALLS,
                                                                                    repeats=1))
    profiled_range = profiled.range_of(profiled.subjects_named[0])
    command = ["ncu", "--clock-control", "none", "--cache-control", "none", "--profile-from-start", "off",
               "--nvtx", "--nvtx-include", f"{profiled_range}/",
               "--metrics", ",".join(METRICS), "--export", str(report), "--force-overwrite",
               *workload_command(profiled, workdir / "job.json", "range")]
    run(command, f"ncu capture of {job.range_of(job.subjects_named[0])}", expect=report)
    if keep is not None:
        shutil.copy(report, keep.with_suffix(".ncu-rep"))
    text = run(["ncu", "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"], "ncu import")
    return parse_csv(text).assign(subject=job.subjects_named[0])


def counters_at(op: str, points: dict, capture: dict, tolerance: dict, namespace: str, workdir) -> pd.DataFrame:
    """Nsight Compute's counters of each point alone, one profiled process a point, its calls verified as the
    captures' are."""
    tables = []
    for name, point in points.items():
        job = Job(op=op, subjects={name: point}, npz="", shape={}, iterations=capture["iterations"],
                  warmup=capture["warmup"], repeats=1, tolerance=tolerance, namespace=namespace)
        folder = Path(workdir) / name.replace("@", "-")
        folder.mkdir(parents=True, exist_ok=True)
        tables.append(session(sys.modules[__name__], job, folder))
    return pd.concat(tables, ignore_index=True)
