"""Load the kernel files under kernels/ (torch references and Triton kernels) as modules."""
from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from types import ModuleType

from ..core.paths import ROOT


def load(implementation: str, op: str) -> ModuleType:
    """kernels/<implementation>/<op>.py, imported as kernels.<implementation>.<op>."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"kernels.{implementation}.{op}")


def function(implementation: str, op: str):
    """The op's entry point in that kernel file: a function named after the op."""
    return getattr(load(implementation, op), op)


def sources(implementation: str, op: str, root: Path = ROOT) -> list[str]:
    """kernels/<implementation>/<op>.py and the files of its folder it imports (the triangle's Triton kernel is the
    matmul's), each with the CUDA source beside it that it builds (the library matmul's <op>.cu), relative to
    `root`: what a job running it depends on."""
    import ast

    folder, todo, found = Path("kernels") / implementation, [op], []
    while todo:
        name = todo.pop()
        path = folder / f"{name}.py"
        if str(path) in found or not (root / path).is_file():
            continue
        found.append(str(path))
        if (root / path.with_suffix(".cu")).is_file():
            found.append(str(path.with_suffix(".cu")))
        tree = ast.parse((root / path).read_text())
        todo += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module]
    return found


@functools.cache  # the workflow's input functions ask once a job
def cached_sources(implementation: str, op: str, root: Path) -> tuple[str, ...]:
    return tuple(sources(implementation, op, root))
