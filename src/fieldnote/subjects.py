"""A subject: what one measurement is of. A job, a file, an NVTX range and the `subject` column name it by one
word: `cuda` for the namespace's own CUDA implementation (a namespace's implementation is measured under the
implementation's name), `matmul_3xtf32_mma_64x64` for an attempt's variant, `cuda@65536x4096` for a point of the
sweep. What it is stands in three columns of its own beside the name: the `implementation` (a peer, or the
toolchain of a hand-written kernel), the `variant` it runs (a peer's own name) and the `shape` it runs at (in the
checks, the shape of each case).

Evidence written before subjects (archives up to 2026-12-01) carries the name alone in `implementation`;
`migrate` reads it into this layout, so an old archive replays unchanged.
"""
from __future__ import annotations

import pandas as pd

from .ops import OPS

COLUMNS = ("subject", "implementation", "variant", "shape")
SWEEP = "@"  # between a sweep point's implementation and its shape label


def point_name(implementation: str, label: str) -> str:
    """The name of a sweep point: the implementation at a shape."""
    return f"{implementation}{SWEEP}{label}"


def attributes(op: str, subjects: dict[str, dict], shape: dict | None = None) -> dict[str, dict]:
    """Each subject's implementation, variant and shape label, by name. `subjects`: name -> implementation,
    variant (None for a peer) and, for a sweep point, its own shape; `shape`: the op's shape otherwise."""
    spec = OPS[op]
    return {name: {"implementation": s["implementation"], "variant": s["variant"] or s["implementation"],
                   "shape": spec.label(s.get("shape") or shape)} for name, s in subjects.items()}


def describe(frame: pd.DataFrame, described: dict[str, dict]) -> pd.DataFrame:
    """`frame` with each row's subject (its `subject` column) described by implementation, variant and shape
    (`attributes`) in the columns after it; a `shape` the frame has already (a check's case) is kept. Rows
    outside every subject (a kernel outside its range) keep nulls."""
    out = frame.drop(columns=[c for c in ("implementation", "variant") if c in frame])
    at = out.columns.get_loc("subject") + 1
    for offset, column in enumerate(c for c in COLUMNS[1:] if c not in out):
        out.insert(at + offset, column, out["subject"].map(lambda n, c=column: described.get(n, {}).get(c)))
    return out


def adopted(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the namespace's own implementations (not attempts' variants, not sweep points)."""
    return frame[frame["subject"] == frame["implementation"]]


def migrate(frame: pd.DataFrame, variants: dict, shapes: dict) -> pd.DataFrame:
    """A table written before subjects, in this layout: the name its `implementation` column carried becomes the
    subject. `variants` and `shapes` are the namespace's (its resolved configuration), to say which variant an
    implementation ran and at which shape; an empty mapping leaves a hand-written implementation's variant as
    its own name and the shape empty. A table already in this layout, or with no subjects, is returned as it is."""
    if "subject" in frame or "implementation" not in frame or "op" not in frame:
        return frame
    summary = "kernel_us" in frame  # summary rows are the namespace's implementations, and carry no name
    described = {}
    for op, name in frame[["op", "implementation"]].drop_duplicates().itertuples(index=False):
        if pd.isna(name):
            continue
        described[op, name] = _old_name(op, name, variants, shapes)
    out = frame.rename(columns={"implementation": "subject"})
    at = out.columns.get_loc("subject") + 1
    for offset, column in enumerate(c for c in COLUMNS[1:] if c not in out):
        out.insert(at + offset, column, [described.get((o, n), {}).get(column)
                                         for o, n in zip(out["op"], out["subject"], strict=True)])
    return out.drop(columns="subject") if summary else out


def _old_name(op: str, name: str, variants: dict, shapes: dict) -> dict:
    from .config import variant_of
    from .vocabulary import IMPLEMENTATION_REGISTRY

    implementation, _, label = name.partition(SWEEP)
    spec = OPS.get(op)
    if not label and op in shapes and spec:
        label = spec.label(shapes[op])
    if implementation in IMPLEMENTATION_REGISTRY:
        chosen = variant_of(variants, op, implementation) if spec and op in variants else None
        return {"implementation": implementation, "variant": chosen or implementation, "shape": label or None}
    known = spec.cuda_variants.get(implementation) if spec else None
    return {"implementation": known.toolchain if known else "cuda", "variant": implementation, "shape": label or None}
