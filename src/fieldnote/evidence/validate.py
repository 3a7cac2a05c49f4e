"""Loading a bundle validates it: the manifest matches, every check passed, the evidence is plausible (durations
finite and positive, counts whole, clocks and percentages in range), launch counts are whole numbers per iteration
and each (op, subject) has its full set of span samples. A violation is one error naming table and row.
The same value checks (plausible.py) guard imported, replayed and measured tables before they enter a bundle."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pandas as pd

from ..core.errors import PipelineError
from ..registry.names import safe_relative
from .plausible import check_plausible, first

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


def validate_tables(tables: dict[str, pd.DataFrame], samples: int | None) -> None:
    """`samples`: the eager span samples each (op, subject) must have (rounds x iterations)."""
    for name, frame in tables.items():
        check_plausible(name, frame)
    if "checks" in tables:
        checks = tables["checks"]
        first(checks, ~checks["passed"].astype(bool), "checks", "check did not pass")
    if "capture_summary" in tables:
        cs = tables["capture_summary"]
        first(cs, cs["launches"] % cs["iterations"] != 0, "capture_summary",
               "launches are not a whole number per iteration")
    if "spans" in tables and samples:
        eager = tables["spans"][tables["spans"]["mode"] == "eager"]
        counts = eager.groupby(["op", "subject"]).size().rename("samples").reset_index()
        first(counts, counts["samples"] != samples, "spans", f"not {samples} eager samples")


def load(bundle: str | Path, samples: int | None = None) -> dict[str, pd.DataFrame]:
    """Every table of a bundle's evidence, after the manifest and the tables are validated; a bundle written
    before subjects is read in today's layout (migrate.py, from the configuration the bundle records)."""
    import json

    from .migrate import migrate

    bundle = Path(bundle)
    verify_manifest(bundle)
    resolved = bundle / "config.resolved.json"
    config = json.loads(resolved.read_text()) if resolved.is_file() else {}
    tables = {p.stem: migrate(pd.read_parquet(p), config.get("variants", {}), config.get("shapes", {}), p.stem)
              for p in sorted((bundle / "evidence").glob("*.parquet"))}
    validate_tables(tables, samples)
    return tables
