"""What a plausible value is, by column name: durations finite and positive, counts whole, clocks, percentages and
temperatures in range. A table that breaks one is refused with one error naming table, row and value, wherever it
enters (an import, a replay, a measurement, a bundle's load).

A duration lies between a nanosecond and 100 s, and a numeric column holds numbers, not text. A table from an
archive also has the columns of its registry entry (tables.py), and no others."""
from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..core.errors import PipelineError
from .tables import OPTIONAL, TABLES


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


# A duration is at least a nanosecond (the GPU timer's resolution; the shortest shipped kernel is 0.768 µs, a
# denormal is no measurement) and at most 100 s: the longest shipped value is 21 ms, a kernel or a timed call of
# 100 s is a hung GPU, and 1e308 would be published as a 309-digit number. One bound for every op: the op
# registry's work (bytes, FLOPs) bounds how fast a call can be, not how slow, and a kernels row is one kernel of
# an op's several. A per-op bound at any throughput an H200 could fall to lies above this one at shipped shapes.
MIN_US, MAX_US = 1e-3, 1e8


def _duration(v):
    return ~(np.isfinite(v) & (v >= MIN_US) & (v <= MAX_US))


def _duration_if_present(v):
    return v.notna() & _duration(v)


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
DURATION = f"a finite positive number of µs, {MIN_US:g} (1 ns) to {MAX_US:g} (100 s)"
PLAUSIBLE: tuple[tuple[Callable[[str], bool], Callable, str], ...] = (
    (lambda c: c.endswith("_us") and c not in OPTIONAL_US, _duration, DURATION),
    (lambda c: c in OPTIONAL_US, _duration_if_present, DURATION + ", or absent"),
    (lambda c: c == "ratio", _positive, "a finite positive number"),
    (lambda c: c in COUNTS or c.endswith("_bytes"), _whole, "a whole number, at least 0"),
    (lambda c: c.endswith("_clock_mhz"), _between(1, 10_000), "a clock between 1 and 10000 MHz"),
    (lambda c: c.endswith("_pct"), _between(0, 100), "a percentage between 0 and 100"),
    (lambda c: c == "temperature_c", _between(0, 150), "a temperature between 0 and 150 C"),
    (lambda c: c in ("start_ns", "power_w", "bytes", "flops", "achieved_gbs", "achieved_tflops",
                     "fraction_of_roof", "max_abs_error", "max_rel_error", "worst_tolerance_ratio"),
     _at_least_zero, "a finite number, at least 0"),
)
COUNTER_PERCENT_MAX = 110  # Nsight Compute's % of peak sustained rate runs a little over 100 (100.95 measured)


def _text(column: pd.Series) -> pd.Series:
    """Values of a numeric column that are not numbers (a string, even "3", breaks a reader's arithmetic later)."""
    if pd.api.types.is_numeric_dtype(column):
        return pd.Series(False, index=column.index)
    return column.notna() & ~column.map(lambda v: isinstance(v, numbers.Real))


def check_plausible(table: str, frame: pd.DataFrame) -> None:
    """Every value a reader would take as a measurement is one a GPU could have produced."""
    frame = frame.reset_index(drop=True)
    counters = table.removesuffix(".parquet").endswith("counters")  # a replay names it evidence/counters.parquet
    for column in frame.columns:
        if pd.api.types.is_bool_dtype(frame[column]):
            continue
        rules = [(bad, what) for applies, bad, what in PLAUSIBLE if applies(column)]
        if rules or (counters and column == "value"):
            text = _text(frame[column])
            if text.any():
                first(frame, text, table, f"{column} = {frame[column][text].iloc[0]!r} is text, not a number")
        for bad, what in rules:
            mask = bad(_number(frame[column]))
            if mask.any():
                first(frame, mask, table, f"{column} = {frame[column][mask].iloc[0]} is not {what}")
    if counters and {"unit", "value"} <= set(frame.columns):
        values = _number(frame["value"])
        percent = frame["unit"] == "%"
        first(frame, percent & ~((values >= 0) & (values <= COUNTER_PERCENT_MAX)), table,
               f"value is a percentage outside 0 to {COUNTER_PERCENT_MAX}")
        first(frame, ~percent & ~(np.isfinite(values) & (values >= 0)), table, "value is not finite and at least 0")


def _entry(where: str, table: str):
    if table not in TABLES:
        raise PipelineError(f"{where}: {table!r} is not a table of the registry (fieldnote.evidence.tables)")
    return TABLES[table]


def check_columns(where: str, table: str, frame: pd.DataFrame) -> None:
    """A table from an archive holds only columns its registry entry lists: a `spans` that is really a `kernels`
    is refused at its first column spans has not."""
    known = _entry(where, table).column_names
    foreign = [c for c in frame.columns if c not in known]
    if foreign:
        raise PipelineError(f"{where}: column {foreign[0]!r} is not a column of table {table} "
                            "(fieldnote.evidence.tables)")


def check_required(where: str, table: str, frame: pd.DataFrame) -> None:
    """...and every column its readers take, once read into today's layout (migrate): all its entry lists but
    those tables.OPTIONAL says may be absent."""
    optional = OPTIONAL.get(table, frozenset())
    missing = [n for c in _entry(where, table).columns for n in c.names if n not in optional and n not in frame]
    if missing:
        raise PipelineError(f"{where}: column {missing[0]!r} is missing: table {table} must have it "
                            "(fieldnote.evidence.tables.OPTIONAL lists the columns that may be absent)")
