"""Which of a capture's kernels the evidence keeps. A module of its own, imported by the collecting stage only: a
change to the selection re-derives the evidence from the captures in work/ without measuring anything again."""
from __future__ import annotations

import pandas as pd


def measured(kernels: pd.DataFrame) -> pd.DataFrame:
    """The kernels launched inside an NVTX range: a subject's call or a ceiling's copy. The profiler runs from
    before the warm-up to after the last verification (run.py), so it also records the warm-up and each
    verification's poisoning and comparison, outside every range: twelve times the measured launches in
    h200-002's seed captures, and no measurement among them."""
    return kernels[kernels["range"].notna()].reset_index(drop=True)
