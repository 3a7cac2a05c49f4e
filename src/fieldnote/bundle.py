"""The published bundle results/<ns>/: assembled in a hidden folder beside it, then renamed into place,
so an interrupted run never leaves a bundle that looks complete."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pandas as pd

from .errors import PipelineError
from .evidence import load
from .io import write_json, write_table


def input_table(hash_files: list[str]) -> pd.DataFrame:
    rows = []
    for path in hash_files:
        record = json.loads(Path(path).read_text())
        rows += [{"op": record["op"], "shape": record["shape"], "seed": record["seed"], "input": name,
                  "sha256": digest} for name, digest in record["sha256"].items()]
    return pd.DataFrame(rows)


def bundle_files(folder: Path) -> list[Path]:
    """The bundle's files, without Snakemake's hidden markers (.snakemake_timestamp)."""
    return sorted(p for p in Path(folder).rglob("*") if p.is_file() and not p.name.startswith("."))


def manifest(folder: Path) -> str:
    """sha256sum-compatible lines over every file of the bundle but the manifest itself."""
    lines = []
    for path in bundle_files(folder):
        if path.name == "MANIFEST.sha256":
            continue
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(folder)}")
    return "\n".join(lines) + "\n"


def assemble(dest: Path, tables: dict[str, str], hash_files: list[str], resolved: dict, note: str,
             environment: str, figures: str, samples: int | None = None, history: dict | None = None) -> None:
    """Write the bundle beside `dest`, validate it as a reader would load it, then rename it into place."""
    dest = Path(dest)
    staging = dest.with_name(f".{dest.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    evidence = staging / "evidence"
    evidence.mkdir(parents=True)
    for name, path in tables.items():
        shutil.copy(path, evidence / f"{name}.parquet")  # byte for byte: the manifest hashes what was measured
    if hash_files:
        write_table(evidence / "inputs.parquet", input_table(hash_files))
    shutil.copy(environment, evidence / "environment.json")
    for name, path in (history or {}).items():  # other namespaces' tables the note used: evidence/history/
        (evidence / name).parent.mkdir(exist_ok=True)
        shutil.copy(path, evidence / name)
    shutil.copy(note, staging / "note.md")
    shutil.copytree(figures, staging / "figures")
    write_json(staging / "config.resolved.json", resolved)
    (evidence / "MANIFEST.sha256").write_text(manifest(staging))
    try:
        load(staging, samples)
    except PipelineError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(staging, dest)
