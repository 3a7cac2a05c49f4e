"""Per (op, subject, backend): kernel time per iteration and launches per iteration, validated."""
from __future__ import annotations

import pandas as pd

from ..core.errors import PipelineError
from ..registry.subjects import COLUMNS, range_name


def in_ranges(kernels: pd.DataFrame) -> pd.DataFrame:
    """The kernels launched inside their own (op, subject) NVTX range; anything else on the GPU during the
    capture is not that subject's work."""
    caches = kernels["cache"] if "cache" in kernels else pd.Series("warm", index=kernels.index)
    names = [range_name(op, impl, cache)
             for op, impl, cache in zip(kernels["op"], kernels["subject"], caches, strict=True)]
    return kernels[kernels["range"] == pd.Series(names, index=kernels.index)]


def per_iteration(kernels: pd.DataFrame, iterations: int, what: str) -> dict:
    launches = len(kernels)
    if launches == 0 or launches % iterations:
        raise PipelineError(f"{what}: {launches} kernel launches over {iterations} iterations is not a whole "
                            f"number per iteration (a kernel outside the range, or a lost event)")
    return {"iterations": iterations, "launches": launches, "launches_per_iteration": launches // iterations,
            "kernel_us_per_iteration": float(kernels["duration_us"].sum()) / iterations,
            "kernel_names": " | ".join(dict.fromkeys(kernels["kernel"]))}


GPU = ("gpu_index", "gpu_uuid", "gpu_name")  # the GPU of each capture, where the evidence records it


def summarize(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per (op, subject, backend, capture) from a kernels table that carries `iterations`; only kernels
    inside their own range count."""
    rows = []
    keys = ["op", *[c for c in COLUMNS if c in kernels], "backend", *(["cache"] if "cache" in kernels else []),
            "capture", *[c for c in GPU if c in kernels]]
    for key, group in in_ranges(kernels.dropna(subset=["subject"])).groupby(keys, sort=False, dropna=False):
        what = "capture " + "/".join(map(str, key))
        rows.append({**dict(zip(keys, key, strict=True)),
                     **per_iteration(group, int(group["iterations"].iloc[0]), what)})
    return pd.DataFrame(rows)
