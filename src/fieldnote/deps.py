"""The package modules a job runs, from the imports of its script: editing any of them reruns the job.

A static walk (ast) of the script and, transitively, of every fieldnote module it imports, at any depth of the
code (imports inside functions count), so nothing a job can run is left out; a package that finds its modules
(pkgutil, the op registry) imports all of them. One exception keeps a job for one op
from rerunning when another op's module changes: the op registry (ops/__init__) imports every op module, and such
a job reads only its own (`for_op`).
"""
from __future__ import annotations

import ast
import hashlib
import json
from functools import cache
from pathlib import Path

from .core.io import write_bytes
from .core.paths import ROOT

PACKAGE = ROOT / "src" / "fieldnote"
# The imports found in each source, by the hash of its path and text, kept between runs: parsing the package's
# modules was a fifth of a no-op run's two seconds. Beside Snakemake's own records; a lost or unreadable file is
# only parsed again.
KNOWN = ROOT / ".snakemake" / "fieldnote-imports.json"


@cache  # every closure asks for the same few dozen modules (3614 asks in a no-op run)
def _module_file(name: str) -> Path | None:
    """src/fieldnote/a/b.py or src/fieldnote/a/b/__init__.py for `fieldnote.a.b`."""
    parts = name.split(".")
    if parts[0] != "fieldnote":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


_found_now: set[str] = set()  # the keys this process added to KNOWN, not yet written


@cache
def _known() -> dict[str, list[str]]:
    try:
        found = json.loads(KNOWN.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _key(path: Path, text: str) -> str:
    return hashlib.sha256(f"{path}\0{text}".encode()).hexdigest()


@cache  # every rule's closure walks the same modules
def _imports(path: Path) -> frozenset[str]:
    """Every fieldnote module `path` names in an import statement, absolute or relative, with its parents (as
    found before where its path and text are unchanged; a registry of its directory's modules is read anew)."""
    text = path.read_text()
    registry = path.name == "__init__.py" and "pkgutil.iter_modules" in text
    known = _known()
    key = _key(path, text)
    if not registry and isinstance(known.get(key), list):
        return frozenset(known[key])
    found = _parsed(path, text, registry)
    if not registry:
        known[key] = sorted(found)
        _found_now.add(key)
    return found


def _parsed(path: Path, text: str, registry: bool) -> frozenset[str]:
    package = None
    if path.is_relative_to(PACKAGE):
        package = ".".join(("fieldnote", *path.relative_to(PACKAGE).with_suffix("").parts))
        if path.name == "__init__.py":
            package = package.removesuffix(".__init__") + ".__init__"
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package:
                anchor = package.split(".")[: -node.level]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}  # `from . import gpu` names a module
    if registry:  # a registry of its modules
        found |= {f"{package.removesuffix('.__init__')}.{p.stem}" for p in path.parent.glob("*.py")}
    named = {n for n in found if n.startswith("fieldnote")}
    return frozenset(".".join(n.split(".")[:i]) for n in named for i in range(1, len(n.split(".")) + 1))


@cache
def closure(script: str) -> tuple[str, ...]:
    """The package files (relative to the root) `script` imports, transitively."""
    seen, todo = set(), [ROOT / script]
    while todo:
        path = todo.pop()
        for name in _imports(path):
            target = _module_file(name)
            if target and target not in seen:
                seen.add(target)
                todo.append(target)
    _remember()
    return tuple(sorted(str(p.relative_to(ROOT)) for p in seen))


def _remember() -> None:
    """KNOWN written again where it grew (after a source changed)."""
    if not _found_now:
        return
    try:
        KNOWN.parent.mkdir(exist_ok=True)
        write_bytes(KNOWN, json.dumps(_known(), sort_keys=True).encode())
    except OSError:  # a checkout one cannot write to: parsed again next time
        return
    _found_now.clear()


def for_op(files: tuple[str, ...], op: str) -> list[str]:
    """A job for one op: every file but the other ops' modules."""
    ops = PACKAGE.relative_to(ROOT) / "registry" / "ops"
    keep = {str(ops / "__init__.py"), str(ops / "base.py"), str(ops / f"{op}.py")}
    return [f for f in files if not f.startswith(str(ops) + "/") or f in keep]
