"""Loading a bundle validates it: the manifest matches, every check passed, launch counts are whole numbers and
each (op, implementation) has its full set of span samples. A violation is one error naming table and row."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from .errors import PipelineError


def parse_manifest(text: str) -> dict[str, str]:
    """MANIFEST.sha256 (sha256sum format) as {relative path: digest}."""
    return {name: digest for digest, name in (line.split("  ", 1) for line in text.splitlines())}


def verify_manifest(bundle: Path) -> None:
    path = bundle / "evidence" / "MANIFEST.sha256"
    if not path.exists():
        raise PipelineError(f"{bundle}: no evidence/MANIFEST.sha256")
    for name, digest in parse_manifest(path.read_text()).items():
        target = bundle / name
        if not target.exists() or hashlib.sha256(target.read_bytes()).hexdigest() != digest:
            raise PipelineError(f"{bundle}: {name} does not match MANIFEST.sha256")


def _first(frame: pd.DataFrame, mask: pd.Series, table: str, what: str) -> None:
    bad = frame[mask]
    if not bad.empty:
        row = bad.iloc[0]
        keys = ", ".join(f"{k}={row[k]}" for k in ("op", "implementation", "shape", "case", "backend", "capture")
                         if k in row and not pd.isna(row[k]))
        raise PipelineError(f"{table}: row {bad.index[0]} ({keys}): {what}")


def validate_tables(tables: dict[str, pd.DataFrame], samples: int | None) -> None:
    """`samples`: the eager span samples each (op, implementation) must have (rounds x iterations)."""
    if "checks" in tables:
        checks = tables["checks"]
        _first(checks, ~checks["passed"].astype(bool), "checks", "check did not pass")
    if "capture_summary" in tables:
        cs = tables["capture_summary"]
        _first(cs, cs["launches"] % cs["iterations"] != 0, "capture_summary",
               "launches are not a whole number per iteration")
    if "spans" in tables and samples:
        eager = tables["spans"][tables["spans"]["mode"] == "eager"]
        counts = eager.groupby(["op", "implementation"]).size().rename("samples").reset_index()
        _first(counts, counts["samples"] != samples, "spans", f"not {samples} eager samples")


def load(bundle: str | Path, samples: int | None = None) -> dict[str, pd.DataFrame]:
    """Every table of a bundle's evidence, after the manifest and the tables are validated."""
    bundle = Path(bundle)
    verify_manifest(bundle)
    tables = {p.stem: pd.read_parquet(p) for p in sorted((bundle / "evidence").glob("*.parquet"))}
    validate_tables(tables, samples)
    return tables
