"""What a plausible value is, by column name: durations finite and positive, counts whole, clocks, percentages and
temperatures in range. A table that breaks one is refused with one error naming table, row and value, wherever it
enters (an import, a replay, a measurement, a bundle's load)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from .errors import PipelineError


def first(frame: pd.DataFrame, mask: pd.Series, table: str, what: str) -> None:
    bad = frame[mask]
    if not bad.empty:
        row = bad.iloc[0]
        named = ("subject",) if "subject" in row else ("implementation",)  # a subject names its implementation
        keys = ", ".join(f"{k}={row[k]}" for k in ("op", *named, "shape", "case", "backend", "capture")
                         if k in row and not pd.isna(row[k]))
        raise PipelineError(f"{table}: row {bad.index[0]} ({keys}): {what}")


def _number(column: pd.Series) -> pd.Series:
    return pd.to_numeric(column, errors="coerce").astype(float)


def _positive(v):
    return ~(np.isfinite(v) & (v > 0))


def _positive_if_present(v):
    return v.notna() & _positive(v)


def _whole(v):
    return v.notna() & ~(np.isfinite(v) & (v >= 0) & (v == np.floor(v)))


def _between(low, high):
    return lambda v: v.notna() & ~((v >= low) & (v <= high))


def _at_least_zero(v):
    return v.notna() & ~(np.isfinite(v) & (v >= 0))


COUNTS = {"launches", "iterations", "captures", "launches_per_iteration", "checked_elements", "nonfinite_elements",
          "registers", "cuobjdump_registers", "launch", "iteration", "round", "position", "capture", "num_warps",
          "barriers", "gpu_index"}
# (which columns, what a bad value is, what a value must be): the plausibility of evidence, by column name.
OPTIONAL_US = {"band_min_us", "band_max_us"}  # no band where an implementation was captured fewer than 3 times
PLAUSIBLE: tuple[tuple[Callable[[str], bool], Callable, str], ...] = (
    (lambda c: (c.endswith("_us") and c not in OPTIONAL_US) or c == "ratio", _positive, "a finite positive number"),
    (lambda c: c in OPTIONAL_US, _positive_if_present, "a finite positive number or absent"),
    (lambda c: c in COUNTS or c.endswith("_bytes"), _whole, "a whole number, at least 0"),
    (lambda c: c.endswith("_clock_mhz"), _between(1, 10_000), "a clock between 1 and 10000 MHz"),
    (lambda c: c.endswith("_pct"), _between(0, 100), "a percentage between 0 and 100"),
    (lambda c: c == "temperature_c", _between(0, 150), "a temperature between 0 and 150 C"),
    (lambda c: c in ("start_ns", "power_w", "bytes", "flops", "achieved_gbs", "achieved_tflops",
                     "fraction_of_roof", "max_abs_error", "max_rel_error", "worst_tolerance_ratio"),
     _at_least_zero, "a finite number, at least 0"),
)
COUNTER_PERCENT_MAX = 110  # Nsight Compute's % of peak sustained rate runs a little over 100 (100.95 measured)


def check_plausible(table: str, frame: pd.DataFrame) -> None:
    """Every value a reader would take as a measurement is one a GPU could have produced."""
    frame = frame.reset_index(drop=True)
    for column in frame.columns:
        if pd.api.types.is_bool_dtype(frame[column]):
            continue
        for applies, bad, what in PLAUSIBLE:
            mask = bad(_number(frame[column])) if applies(column) else None
            if mask is not None and mask.any():
                first(frame, mask, table, f"{column} = {frame[column][mask].iloc[0]} is not {what}")
    if table.endswith("counters") and {"unit", "value"} <= set(frame.columns):
        values = _number(frame["value"])
        percent = frame["unit"] == "%"
        first(frame, percent & ~((values >= 0) & (values <= COUNTER_PERCENT_MAX)), table,
               f"value is a percentage outside 0 to {COUNTER_PERCENT_MAX}")
        first(frame, ~percent & ~(np.isfinite(values) & (values >= 0)), table, "value is not finite and at least 0")
