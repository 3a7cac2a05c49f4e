"""Nsight Systems: `nsys profile` over the capture range, exported to SQLite, kernels joined to NVTX ranges."""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import PipelineError
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


def _enclosing(kernels: pd.DataFrame, ranges: pd.DataFrame) -> np.ndarray:
    """Per kernel, the position in `ranges` (ordered by start) of the NVTX range enclosing its launch call, or -1.

    The outermost range open on the launching thread at the call: the workload's ranges do not nest, and a library
    may open its own inside them (cuEquivariance wraps each of its Triton launches in one), whose kernels are still
    the call's. One sweep over each thread's range openings, calls and closings in time order (a range opened at
    the call's instant encloses it, as does one closed at it). Where the launch call was not traced, the kernel's
    own start places it: the last outermost range to open before the kernel started (the workload synchronizes
    after every iteration, so iteration i's kernels run before range i + 1 opens).
    """
    found = np.full(len(kernels), -1)
    traced = kernels["api_start"].notna().to_numpy()
    if (~traced).any():
        outermost = np.flatnonzero(_outermost(ranges))
        at = np.searchsorted(ranges["start"].to_numpy()[outermost], kernels["start"].to_numpy()[~traced],
                             side="right") - 1
        found[~traced] = np.where(at >= 0, outermost[np.maximum(at, 0)], -1)
    events = pd.concat([
        pd.DataFrame({"tid": ranges["tid"], "t": ranges["start"], "kind": 0, "item": np.arange(len(ranges))}),
        pd.DataFrame({"tid": kernels["tid"], "t": kernels["api_start"], "kind": 1,
                      "item": np.arange(len(kernels))})[traced],
        pd.DataFrame({"tid": ranges["tid"], "t": ranges["end"], "kind": 2, "item": np.arange(len(ranges))}),
    ]).sort_values(["tid", "t", "kind"], kind="stable")
    open_, tid = [], None
    for thread, kind, item in zip(events["tid"], events["kind"], events["item"], strict=True):
        if thread != tid:
            open_, tid = [], thread
        if kind == 0:
            open_.append(item)
        elif kind == 2:
            open_.remove(item)
        else:
            found[item] = open_[0] if open_ else -1
    return found


def _outermost(ranges: pd.DataFrame) -> np.ndarray:
    """Whether each range (ordered by start) opened inside none on its thread: it starts after every earlier one
    there has ended."""
    latest_end = ranges.groupby("tid")["end"].transform(lambda end: end.cummax().shift())
    return (latest_end.isna() | (ranges["start"] >= latest_end)).to_numpy()


def _triple(kernels: pd.DataFrame, what: str) -> pd.Series:
    """"x,y,z" of a launch's grid or block, by whole columns (a join per row took seconds for a session's launches)."""
    x, y, z = (kernels[f"{what}{axis}"].astype(str) for axis in "XYZ")
    return x + "," + y + "," + z


def parse_sqlite(path: str | Path) -> pd.DataFrame:
    """One row per captured kernel: name, times, launch shape and resources, and its NVTX range."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        try:
            kernels = pd.read_sql_query(KERNELS, db)
            ranges = pd.read_sql_query(RANGES, db)
        except pd.errors.DatabaseError as e:
            raise PipelineError(f"{path}: not an nsys SQLite export with kernels ({e})") from None
    ranges["index"] = ranges.groupby("name").cumcount()
    at = _enclosing(kernels, ranges)
    inside = at >= 0
    names = np.where(inside, ranges["name"].to_numpy(dtype=object)[np.maximum(at, 0)], None)
    index = pd.array(np.where(inside, ranges["index"].to_numpy()[np.maximum(at, 0)], 0), dtype="Int64")
    index[~inside] = pd.NA
    return pd.DataFrame({
        "kernel": kernels["kernel"], "launch": range(len(kernels)),
        "range": list(names), "iteration": index,
        "start_ns": kernels["start"], "duration_us": (kernels["end"] - kernels["start"]) / 1e3,
        "grid": _triple(kernels, "grid"), "block": _triple(kernels, "block"),
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
