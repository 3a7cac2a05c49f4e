"""The capture backends by name: above the package's shared pieces (Job, label, range_name), which the backends and
the ceiling's copies import."""
from __future__ import annotations

from ...core.errors import PipelineError
from . import cupti, ncu, nsys

MODULES = {"nsys": nsys, "cupti": cupti, "ncu": ncu}


def backend(name: str):
    if name not in MODULES:
        raise PipelineError(f"capture: unknown backend '{name}' (known: {', '.join(MODULES)})")
    return MODULES[name]
