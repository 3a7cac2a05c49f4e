"""The vocabulary the workflow, the note, the figures and the history views share, in one home: the ops' titles
(from the op registry), the implementation registry (title, colour, hand-written or peer, measured here or only
imported, checked on the CPU too) and how a time is written."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .ops import OPS


@dataclass(frozen=True)
class Implementation:
    name: str
    title: str
    colour: str  # in every figure
    hand_written: bool  # the kernels the note is about; the others are the peers they are held against
    measured: bool = True  # built and run by this pipeline (a namespace may list it), not only imported
    checked_on_cpu: bool = False  # also checked without a GPU (torch itself, Triton in its interpreter)


IMPLEMENTATION_REGISTRY = {i.name: i for i in (
    Implementation("torch", "PyTorch", "#4C72B0", False, checked_on_cpu=True),
    Implementation("triton", "Triton", "#DD8452", False, checked_on_cpu=True),
    Implementation("compiled", "torch.compile", "#8172B3", False),
    Implementation("library", "Library", "#DA8BC3", False),  # the op's own library (ops/base.py: Library)
    Implementation("cuda", "CUDA C++", "#55A868", True),
    Implementation("ptx", "PTX", "#937860", True),  # hand-written PTX (toolchains.py: the second toolchain)
    Implementation("rust", "Rust", "#C44E52", True, measured=False),  # the original's cuda-oxide kernels, imported
)}
OP_TITLES = {name: op.title for name, op in OPS.items()}
IMPLEMENTATIONS = {name: i.title for name, i in IMPLEMENTATION_REGISTRY.items()}
COLORS = {name: i.colour for name, i in IMPLEMENTATION_REGISTRY.items()}
HAND_WRITTEN = tuple(name for name, i in IMPLEMENTATION_REGISTRY.items() if i.hand_written)
MEASURED = tuple(name for name, i in IMPLEMENTATION_REGISTRY.items() if i.measured)
PEERS = tuple(name for name, i in IMPLEMENTATION_REGISTRY.items() if i.measured and not i.hand_written)
CHECKED_ON_CPU = tuple(name for name, i in IMPLEMENTATION_REGISTRY.items() if i.checked_on_cpu)


def us(value) -> str:
    """Every time in the note: microseconds with two decimals."""
    return "" if pd.isna(value) else f"{value:.2f}"


def hand_written(summary: pd.DataFrame) -> str | None:
    """The hand-written implementation a summary holds (cuda, or the original's rust); where it holds two
    (cuda and ptx side by side), the first of the registry's order is the one the note is about."""
    impl = [i for i in HAND_WRITTEN if i in set(summary["implementation"])]
    return impl[0] if impl else None

# how the note names the metric an attempt or a prediction was measured in
METRIC_NAMES = {"kernel": "GPU kernel time", "span": "CUDA-event span (mean)"}
