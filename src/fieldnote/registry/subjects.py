"""A subject: what one measurement is of. A job, a file, an NVTX range and the `subject` column name it by one
word: `cuda` for the namespace's own CUDA implementation (a namespace's implementation is measured under the
implementation's name), `matmul_3xtf32_mma_64x64` for an attempt's variant, `cuda@65536x4096` for a point of the
sweep. What it is stands in three columns of its own beside the name: the `implementation` (a peer, or the
toolchain of a hand-written kernel), the `variant` it runs (a peer's own name) and the `shape` it runs at (in the
checks, the shape of each case).

Evidence written before subjects (archives up to 2026-12-01) is read into this layout by `migrate.py`.
"""
from __future__ import annotations

import pandas as pd

from .ops import OPS

COLUMNS = ("subject", "implementation", "variant", "shape")
SWEEP = "@"  # between a sweep point's implementation and its shape label


def point_name(implementation: str, label: str) -> str:
    """The name of a sweep point: the implementation at a shape."""
    return f"{implementation}{SWEEP}{label}"


def attributes(op: str, subjects: dict[str, dict], shape: dict | None = None) -> dict[str, dict]:
    """Each subject's implementation, variant and shape label, by name. `subjects`: name -> implementation,
    variant (None for a peer) and, for a sweep point, its own shape; `shape`: the op's shape otherwise."""
    spec = OPS[op]
    return {name: {"implementation": s["implementation"], "variant": s["variant"] or s["implementation"],
                   "shape": spec.label(s.get("shape") or shape)} for name, s in subjects.items()}


def describe(frame: pd.DataFrame, described: dict[str, dict]) -> pd.DataFrame:
    """`frame` with each row's subject (its `subject` column) described by implementation, variant and shape
    (`attributes`) in the columns after it; a `shape` the frame has already (a check's case) is kept. Rows
    outside every subject (a kernel outside its range) keep nulls."""
    out = frame.drop(columns=[c for c in ("implementation", "variant") if c in frame])
    at = out.columns.get_loc("subject") + 1
    for offset, column in enumerate(c for c in COLUMNS[1:] if c not in out):
        out.insert(at + offset, column, out["subject"].map(lambda n, c=column: described.get(n, {}).get(c)))
    return out


def adopted(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the namespace's own implementations (not attempts' variants, not sweep points)."""
    return frame[frame["subject"] == frame["implementation"]]


def range_name(op: str, subject: str, cache: str = "warm") -> str:
    """The NVTX range around each call: `op:subject`, and `op:subject:cold` for a call made with L2 flushed
    before it. No slash: Nsight Compute's NVTX filter reads `a/b/` as range b nested in range a."""
    return f"{op}:{subject}" if cache == "warm" else f"{op}:{subject}:{cache}"
