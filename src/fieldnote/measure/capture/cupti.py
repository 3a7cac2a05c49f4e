"""CUPTI through torch.profiler: the same workload, kernel events read from its chrome trace."""
from __future__ import annotations

import json
import shutil
from bisect import bisect_right
from itertools import accumulate
from pathlib import Path

import pandas as pd

from ...core.errors import PipelineError
from . import Job, label


def available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def version() -> str:
    import torch

    return f"torch.profiler {torch.__version__}"


def _shape(value) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, list) else str(value)


def parse_trace(path: str | Path) -> pd.DataFrame:
    """One row per kernel event; the enclosing `record_function` range found through the launch's correlation.

    `iteration` is the range's occurrence among ranges of the same name, as in nsys.parse_sqlite."""
    events = json.loads(Path(path).read_text())["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    ranges = sorted((e for e in events if e.get("cat") == "user_annotation"), key=lambda e: e["ts"])
    seen: dict[str, int] = {}
    occurrence = []
    for r in ranges:
        occurrence.append(seen.get(r["name"], 0))
        seen[r["name"]] = occurrence[-1] + 1

    starts = [r["ts"] for r in ranges]
    reach = list(accumulate((r["ts"] + r["dur"] for r in ranges), max))  # the latest end among ranges[:i + 1]

    def enclosing(kernel):
        """The first range around the launch call on its thread; where the launch was not traced, the range the
        kernel ran after (the workload synchronizes after every iteration, so iteration i's kernels finish before
        range i + 1). Found by bisection: most kernels of a session (warm-up, verification) are in no range, and
        scanning every range for each took 37 s on a trace of 56,700 kernels and 2,700 ranges (a layer norm
        session's size) on the CPU machine, 1.3 s this way."""
        launch = launches.get(kernel["args"].get("correlation"))
        if launch is None:
            index = bisect_right(starts, kernel["ts"]) - 1
            return (ranges[index]["name"], occurrence[index]) if index >= 0 else (None, None)
        found = None
        index = bisect_right(starts, launch["ts"]) - 1
        while index >= 0 and reach[index] >= launch["ts"]:  # earlier ranges all end before the launch
            r = ranges[index]
            if launch["ts"] <= r["ts"] + r["dur"] and r.get("tid") == launch.get("tid"):
                found = index
            index -= 1
        return (ranges[found]["name"], occurrence[found]) if found is not None else (None, None)

    placed = [enclosing(k) for k in kernels]
    return pd.DataFrame({
        "kernel": [k["name"] for k in kernels], "launch": range(len(kernels)),
        "range": [p[0] for p in placed], "iteration": pd.array([p[1] for p in placed], dtype="Int64"),
        "start_ns": [round(k["ts"] * 1e3) for k in kernels], "duration_us": [float(k["dur"]) for k in kernels],
        "grid": [_shape(k["args"].get("grid")) for k in kernels],
        "block": [_shape(k["args"].get("block")) for k in kernels],
        "registers": [k["args"].get("registers per thread") for k in kernels],
        "static_shared_bytes": pd.array([None] * len(kernels), dtype="Int64"),
        "dynamic_shared_bytes": pd.array([None] * len(kernels), dtype="Int64"),
        "shared_bytes": [k["args"].get("shared memory") for k in kernels],
    })


def capture(job: Job, workdir: Path, keep: Path | None = None) -> pd.DataFrame:
    if not available():
        raise PipelineError("capture backend cupti: torch sees no CUDA device")
    from .run import profile_torch, record_gpu

    trace = workdir / "trace.json"
    profile_torch(job, str(trace))  # in this process: torch.profiler needs no outside tool
    record_gpu(workdir / "job.json")
    if keep is not None:
        shutil.copy(trace, keep.with_suffix(".json"))
    return label(parse_trace(trace), job)
