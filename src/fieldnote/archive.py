"""Archive and replay: a namespace's bundle with the sources that produced it, in one reproducible tar.gz,
and the way back from it to results/<ns>/ on a machine without a GPU.

Layout inside the archive: `<ns>/bundle/...` (the bundle as published, MANIFEST included) and
`<ns>/source/...` (Snakefile, config, workflow, kernels, the package, pins). Entries are sorted with zeroed
owners and times, and gzip carries no timestamp, so the same bundle and sources give the same bytes.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

from .bundle import bundle_files
from .errors import PipelineError
from .evidence import parse_manifest
from .io import write_bytes

SOURCES = ("Snakefile", "pyproject.toml", "config", "workflow", "kernels", "src/fieldnote", "envs", "profiles")


def source_files(root: Path) -> list[Path]:
    files = []
    for name in SOURCES:
        path = root / name
        files += [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                     and "__pycache__" not in p.parts)
    return files


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    tar.addfile(info, io.BytesIO(data))


def pack(namespace: str, bundle: Path, root: Path, dest: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in bundle_files(bundle):
            _add(tar, f"{namespace}/bundle/{path.relative_to(bundle)}", path.read_bytes())
        for path in source_files(root):
            _add(tar, f"{namespace}/source/{path.relative_to(root)}", path.read_bytes())
    write_bytes(dest, gzip.compress(raw.getvalue(), mtime=0))


class Archive:
    """A packed namespace, read without unpacking to disk; `verify` checks the bundle against its manifest."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            with tarfile.open(self.path, "r:gz") as tar:
                self.files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
        except (OSError, tarfile.TarError) as e:
            raise PipelineError(f"replay: {self.path} is not a readable archive ({e})") from None
        names = {name.split("/", 1)[0] for name in self.files}
        if len(names) != 1:
            raise PipelineError(f"replay: {self.path} holds {len(names)} namespaces, expected one")
        self.namespace = names.pop()

    def bundle_file(self, relative: str) -> bytes:
        name = f"{self.namespace}/bundle/{relative}"
        if name not in self.files:
            raise PipelineError(f"replay: {self.path} has no {relative}")
        return self.files[name]

    def verify(self) -> None:
        """Every file the manifest names is there with its SHA-256, and nothing else is in the bundle."""
        listed = parse_manifest(self.bundle_file("evidence/MANIFEST.sha256").decode())
        prefix = f"{self.namespace}/bundle/"
        present = {n[len(prefix):] for n in self.files if n.startswith(prefix)} - {"evidence/MANIFEST.sha256"}
        if present != set(listed):
            raise PipelineError(f"replay: {self.path}: manifest and bundle differ: "
                                f"{sorted(present ^ set(listed))[:5]}")
        for name, digest in listed.items():
            if hashlib.sha256(self.bundle_file(name)).hexdigest() != digest:
                raise PipelineError(f"replay: {self.path}: {name} does not match its manifest checksum")

    def tables(self) -> list[str]:
        prefix = f"{self.namespace}/bundle/evidence/"
        return sorted(n[len(prefix):-len(".parquet")] for n in self.files
                      if n.startswith(prefix) and n.endswith(".parquet") and "/" not in n[len(prefix):])

    def resolved(self) -> dict:
        return json.loads(self.bundle_file("config.resolved.json"))
