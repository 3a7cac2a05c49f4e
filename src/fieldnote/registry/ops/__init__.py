"""The operations, by name, found as the modules of this package: each module (ops/<op>.py, defining OP) is the one
place for an op's title, shapes, inputs and kernel variants. A new op is its module, its kernels and a default
shape in config/config.yaml; the schemas, the wildcards and the note take it from here."""
import importlib
import pkgutil

from .base import EdgeCase, KernelVariant, LaunchContract, Library, Op, Shape, TensorMap, Unmeasured

_MODULES = [importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)
            if m.name != "base"]
OPS: dict[str, Op] = {m.OP.name: m.OP for m in sorted(_MODULES, key=lambda m: (m.OP.order, m.OP.name))}

__all__ = ["OPS", "Op", "KernelVariant", "EdgeCase", "LaunchContract", "Library", "Shape", "TensorMap", "Unmeasured"]
