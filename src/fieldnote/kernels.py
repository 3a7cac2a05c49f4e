"""Load the kernel files under kernels/ (torch references and Triton kernels) as modules."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

from .paths import ROOT


def load(implementation: str, op: str) -> ModuleType:
    """kernels/<implementation>/<op>.py, imported as kernels.<implementation>.<op>."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"kernels.{implementation}.{op}")


def function(implementation: str, op: str):
    """The op's entry point in that kernel file: a function named after the op."""
    return getattr(load(implementation, op), op)
