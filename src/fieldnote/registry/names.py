"""The one pattern for namespace and table names, wherever a name enters: a namespace file's name, the namespace
an archive records, the names in progression, drift and history, an archive's table names. A name is one path
component that cannot climb out of results/ or work/; its home is the namespace schema ($defs/name)."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ..core.errors import PipelineError
from ..core.paths import ROOT


@cache
def pattern() -> str:
    """The name pattern without its anchors, as a Snakemake wildcard constraint takes it."""
    from .schemas import schema

    return schema("namespace.schema.yaml")["$defs"]["name"]["pattern"].removeprefix("^").removesuffix("$")


def check(name: str, where: str) -> str:
    """`name` if it is valid, else one error saying where it came from."""
    if not isinstance(name, str) or not re.fullmatch(pattern(), name):
        raise PipelineError(f"{where}: {name!r} is not a valid name (letters, digits, '_' and '-', at most 64, "
                            "starting with a letter or digit: no dots, separators or spaces)")
    return name


def safe_relative(path: str, where: str) -> str:
    """A relative path inside an archive or a manifest: no absolute path, no `..`, no empty component."""
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
        raise PipelineError(f"{where}: {path!r} is not a safe relative path")
    return path


def check_written(path: str, where: str, root: Path = ROOT) -> None:
    """Every path the workflow writes lies inside the checkout's results/ or work/ once resolved."""
    resolved = (root / path).resolve()
    if not any(resolved.is_relative_to((root / top).resolve()) for top in ("results", "work")):
        raise PipelineError(f"{where}: writes {path}, which resolves to {resolved}, outside {root}/results and "
                            f"{root}/work")


def unknown(name: str, known: list[str]) -> str:
    """What to say of a namespace no file declares: the likeliest meant, and every one there is."""
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    meant = f"did you mean '{close[0]}'? " if close else ""
    return (f"unknown namespace '{name}' ({meant}known: {', '.join(sorted(known))}; a namespace is a file "
            "config/namespaces/<ns>.yaml)")
