"""Loading a bundle validates it: the manifest matches, every check passed, the evidence is plausible (durations
finite and positive, counts whole, clocks and percentages in range), launch counts are whole numbers per iteration
and each (op, subject) has its full set of span samples. A violation is one error naming table and row.
The same checks guard imported, replayed and measured tables before they enter a bundle."""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import PipelineError
from .names import safe_relative

_LINE = re.compile(r"([0-9a-f]{64})  (.+)")


def parse_manifest(text: str, where: str = "MANIFEST.sha256") -> dict[str, str]:
    """MANIFEST.sha256 (sha256sum format) as {relative path: digest}."""
    listed = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _LINE.fullmatch(line)
        if not match:
            raise PipelineError(f"{where}: line {number} is not '<sha256>  <path>': {line[:80]!r}")
        listed[safe_relative(match[2], f"{where}: line {number}")] = match[1]
    return listed


def verify_manifest(bundle: Path) -> dict[str, str]:
    """The bundle's manifest, {relative path: digest}, once every file it lists is there with that digest."""
    path = bundle / "evidence" / "MANIFEST.sha256"
    if not path.is_file():
        raise PipelineError(f"{bundle}: no evidence/MANIFEST.sha256")
    listed = parse_manifest(path.read_text(errors="replace"), str(path))
    for name, digest in listed.items():
        target = bundle / name
        if not target.exists() or hashlib.sha256(target.read_bytes()).hexdigest() != digest:
            raise PipelineError(f"{bundle}: {name} does not match MANIFEST.sha256")
    return listed


def _first(frame: pd.DataFrame, mask: pd.Series, table: str, what: str) -> None:
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
          "barriers"}
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
                _first(frame, mask, table, f"{column} = {frame[column][mask].iloc[0]} is not {what}")
    if table.endswith("counters") and {"unit", "value"} <= set(frame.columns):
        values = _number(frame["value"])
        percent = frame["unit"] == "%"
        _first(frame, percent & ~((values >= 0) & (values <= COUNTER_PERCENT_MAX)), table,
               f"value is a percentage outside 0 to {COUNTER_PERCENT_MAX}")
        _first(frame, ~percent & ~(np.isfinite(values) & (values >= 0)), table, "value is not finite and at least 0")


def validate_tables(tables: dict[str, pd.DataFrame], samples: int | None) -> None:
    """`samples`: the eager span samples each (op, subject) must have (rounds x iterations)."""
    for name, frame in tables.items():
        check_plausible(name, frame)
    if "checks" in tables:
        checks = tables["checks"]
        _first(checks, ~checks["passed"].astype(bool), "checks", "check did not pass")
    if "capture_summary" in tables:
        cs = tables["capture_summary"]
        _first(cs, cs["launches"] % cs["iterations"] != 0, "capture_summary",
               "launches are not a whole number per iteration")
    if "spans" in tables and samples:
        eager = tables["spans"][tables["spans"]["mode"] == "eager"]
        counts = eager.groupby(["op", "subject"]).size().rename("samples").reset_index()
        _first(counts, counts["samples"] != samples, "spans", f"not {samples} eager samples")


def load(bundle: str | Path, samples: int | None = None) -> dict[str, pd.DataFrame]:
    """Every table of a bundle's evidence, after the manifest and the tables are validated; a bundle written
    before subjects is read in today's layout (subjects.migrate, from the configuration the bundle records)."""
    import json

    from .subjects import migrate

    bundle = Path(bundle)
    verify_manifest(bundle)
    resolved = bundle / "config.resolved.json"
    config = json.loads(resolved.read_text()) if resolved.is_file() else {}
    tables = {p.stem: migrate(pd.read_parquet(p), config.get("variants", {}), config.get("shapes", {}))
              for p in sorted((bundle / "evidence").glob("*.parquet"))}
    validate_tables(tables, samples)
    return tables
