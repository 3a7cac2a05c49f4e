"""Nsight Systems: `nsys profile` over the capture range, exported to SQLite, kernels joined to NVTX ranges."""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd

from ..errors import PipelineError
from . import Job, label
from ._process import run, workload_command

PROFILE = ["profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none", "--capture-range=cudaProfilerApi",
           "--capture-range-end=stop", "--export=sqlite", "--force-overwrite=true"]

KERNELS = """
SELECT k.start, k."end", k.correlationId, s.value AS kernel, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY,
       k.blockZ, k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory, r.start AS api_start,
       r.globalTid AS tid
FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
JOIN StringIds AS s ON s.id = k.demangledName
LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId
ORDER BY k.start
"""
RANGES = """
SELECT e.start, e."end", COALESCE(e.text, s.value) AS name, e.globalTid AS tid
FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId
WHERE e."end" IS NOT NULL
ORDER BY e.start
"""


def available() -> bool:
    return shutil.which("nsys") is not None


def version() -> str:
    out = subprocess.run(["nsys", "--version"], capture_output=True, text=True).stdout.strip()
    return out.split()[-1] if out else "unknown"


def _range_of(kernel, ranges: pd.DataFrame) -> tuple[str | None, int | None]:
    """The NVTX range (name, index among ranges of that name) enclosing the kernel's launch call.

    Where the launch call was not traced, the kernel's own start places it: the workload synchronizes after
    every iteration, so iteration i's kernels run before range i + 1 opens.
    """
    if pd.isna(kernel.api_start):
        inside = ranges[(ranges.start <= kernel.start) & (ranges.next_start > kernel.start)]
    else:
        inside = ranges[(ranges.tid == kernel.tid) & (ranges.start <= kernel.api_start)
                        & (ranges.end >= kernel.api_start)]
    if inside.empty:
        return None, None
    innermost = inside.iloc[-1]
    return innermost["name"], int(innermost["index"])


def parse_sqlite(path: str | Path) -> pd.DataFrame:
    """One row per captured kernel: name, times, launch shape and resources, and its NVTX range."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        try:
            kernels = pd.read_sql_query(KERNELS, db)
            ranges = pd.read_sql_query(RANGES, db)
        except pd.errors.DatabaseError as e:
            raise PipelineError(f"{path}: not an nsys SQLite export with kernels ({e})") from None
    ranges["index"] = ranges.groupby("name").cumcount()
    ranges["next_start"] = ranges.groupby("name")["start"].shift(-1).fillna(float("inf"))
    placed = [_range_of(k, ranges) for k in kernels.itertuples()]
    return pd.DataFrame({
        "kernel": kernels["kernel"], "launch": range(len(kernels)),
        "range": [p[0] for p in placed], "iteration": pd.array([p[1] for p in placed], dtype="Int64"),
        "start_ns": kernels["start"], "duration_us": (kernels["end"] - kernels["start"]) / 1e3,
        "grid": kernels[["gridX", "gridY", "gridZ"]].astype(str).agg(",".join, axis=1),
        "block": kernels[["blockX", "blockY", "blockZ"]].astype(str).agg(",".join, axis=1),
        "registers": kernels["registersPerThread"],
        "static_shared_bytes": kernels["staticSharedMemory"], "dynamic_shared_bytes": kernels["dynamicSharedMemory"],
        "shared_bytes": kernels["staticSharedMemory"] + kernels["dynamicSharedMemory"],
    })


def capture(job: Job, workdir: Path, keep: Path | None = None) -> pd.DataFrame:
    if not available():
        raise PipelineError("capture backend nsys: `nsys` is not on PATH (on the GPU machine, source "
                            ".gpu/enter.sh; or use backend cupti)")
    prefix = workdir / "report"
    command = ["nsys", *PROFILE, "-o", str(prefix), *workload_command(job, workdir / "job.json", "range")]
    run(command, f"nsys capture of {job.op}", expect=prefix.with_suffix(".sqlite"))
    if keep is not None:
        shutil.copy(prefix.with_suffix(".sqlite"), keep.with_suffix(".sqlite"))
    return label(parse_sqlite(prefix.with_suffix(".sqlite")), job)
