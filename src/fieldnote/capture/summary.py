"""Per (op, implementation, backend): kernel time per iteration and launches per iteration, validated."""
from __future__ import annotations

import pandas as pd

from ..errors import PipelineError


def in_range(kernels: pd.DataFrame, range_name: str) -> pd.DataFrame:
    """The kernels launched inside the op's NVTX ranges (anything else on the GPU is not this op's work)."""
    return kernels[kernels["range"] == range_name]


def per_iteration(kernels: pd.DataFrame, iterations: int, what: str) -> dict:
    launches = len(kernels)
    if launches == 0 or launches % iterations:
        raise PipelineError(f"{what}: {launches} kernel launches over {iterations} iterations is not a whole "
                            f"number per iteration (a kernel outside the range, or a lost event)")
    return {"iterations": iterations, "launches": launches, "launches_per_iteration": launches // iterations,
            "kernel_us_per_iteration": float(kernels["duration_us"].sum()) / iterations,
            "kernel_names": " | ".join(dict.fromkeys(kernels["kernel"]))}


def summarize(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per (op, implementation, backend, capture) from a kernels table that carries `iterations`."""
    rows = []
    keys = ["op", "implementation", "backend", "capture"]
    for key, group in kernels.groupby(keys, sort=False):
        what = "capture " + "/".join(map(str, key))
        rows.append({**dict(zip(keys, key, strict=True)),
                     **per_iteration(group, int(group["iterations"].iloc[0]), what)})
    return pd.DataFrame(rows)
