"""The published bundle results/<ns>/: assembled in a hidden folder beside it, validated, then swapped into place,
so an interrupted or failed run never leaves a bundle that looks complete and never loses the one it had."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pandas as pd

from ..core.errors import PipelineError
from ..core.io import temporary_name, write_json, write_table
from .validate import load, verify_manifest


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
             environment: str, figures: str, samples: int | None = None, history: dict | None = None,
             provenance: dict | None = None, page: str | None = None, template: str | None = None) -> None:
    """Write the bundle beside `dest`, validate it as a reader would load it, then swap it in. Whatever fails
    (a bad table, a full disk, no permission) leaves `dest` as it was and nothing beside it."""
    dest = Path(dest)
    staging = dest.with_name(temporary_name(dest, "partial"))
    try:
        _write(staging, tables, hash_files, resolved, note, environment, figures, history or {}, provenance)
        for path, name in ((page, "note.html"), (template, "note.template.md")):
            if path:  # the page, and the template an authored note was rendered from (a replay may need it)
                shutil.copy(path, staging / name)
        (staging / "evidence" / "MANIFEST.sha256").write_text(manifest(staging))
        load(staging, samples)
        _swap(staging, dest)
    except OSError as e:
        what = f"{e.strerror}: {e.filename}" if e.filename else (e.strerror or e)
        raise PipelineError(f"{dest}: the new bundle could not be written ({what}); the previous one is left as "
                            "it was") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write(staging: Path, tables, hash_files, resolved, note, environment, figures, history, provenance) -> None:
    evidence = staging / "evidence"
    evidence.mkdir(parents=True)
    for name, path in tables.items():
        shutil.copy(path, evidence / f"{name}.parquet")  # byte for byte: the manifest hashes what was measured
    if hash_files:
        write_table(evidence / "inputs.parquet", input_table(hash_files))
    shutil.copy(environment, evidence / "environment.json")
    for name, path in history.items():  # other namespaces' tables the note used: evidence/history/
        (evidence / name).parent.mkdir(exist_ok=True)
        shutil.copy(path, evidence / name)
    if provenance:  # where the evidence came from, when nobody vouches for it (an unpinned archive)
        write_json(evidence / "provenance.json", provenance)
    shutil.copy(note, staging / "note.md")
    shutil.copytree(figures, staging / "figures")
    write_json(staging / "config.resolved.json", resolved)
    (evidence / "MANIFEST.sha256").write_text(manifest(staging))


def _swap(staging: Path, dest: Path) -> None:
    """Two renames: the old bundle aside, the new one in. A process killed between them leaves the old one
    aside under a name the next run restores (io.remove_leftovers)."""
    if dest.exists():
        aside = dest.with_name(temporary_name(dest, "old"))
        os.replace(dest, aside)
        os.replace(staging, dest)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.replace(staging, dest)


def is_complete(folder: Path) -> bool:
    """A bundle a run may take as done: its manifest is there, lists its note and matches."""
    try:
        return "note.md" in verify_manifest(Path(folder))
    except (PipelineError, OSError):
        return False


# Where Snakemake copies an update() output before its job (persistence.backup_output), removing the copy after it;
# a run killed in between leaves the copy, and the output's next job fails on it (copytree: File exists).
BACKUPS = Path(".snakemake") / "backups"


def recover_backup(folder: Path, backups: Path = BACKUPS) -> None:
    """Snakemake's copy of a bundle a killed run left: dropped where the bundle in place is complete, or is
    incomplete and so is the copy (the bundle in place is rebuilt); put back where the bundle is gone, or is
    incomplete and the copy is not (what Snakemake itself restores when a job fails)."""
    backup = backups / folder
    if not backup.is_dir() or backup.is_symlink():
        return
    if any((backups.parent / "locks").glob("*.lock")):  # a Snakemake holds the checkout: the copy may be its job's
        return  # (a killed one's lock stays too, until the `--unlock` Snakemake asks for)
    try:
        if is_complete(folder) or (folder.exists() and not is_complete(backup)):
            shutil.rmtree(backup)
            return
        if folder.exists():
            shutil.rmtree(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.replace(backup, folder)  # one file system: the backups lie in the checkout's .snakemake
    except OSError as e:
        raise PipelineError(f"{backup}: Snakemake's copy of {folder}, left by a killed run, cannot be handled "
                            f"({e.strerror or e}): remove it by hand") from None


def stale_if_incomplete(folder: Path) -> None:
    """A bundle folder that is not complete (emptied, damaged, hand-edited) is dated to the epoch, so Snakemake
    rebuilds it instead of taking it as up to date; nothing in it is removed."""
    if folder.is_dir() and not is_complete(folder):
        for path in (folder / ".snakemake_timestamp", folder):
            try:
                os.utime(path, (0, 0))
            except FileNotFoundError:
                pass
            except OSError as e:
                raise PipelineError(f"{folder}: not a complete bundle, and it cannot be marked for rebuilding "
                                    f"({e.strerror or e})") from None
