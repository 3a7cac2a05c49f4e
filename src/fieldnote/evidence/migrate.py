"""Evidence written before subjects (archives up to 2026-12-01): the name its `implementation` column carried read
into the subjects layout (subjects.py), so an old archive replays unchanged. A module of its own: it reads the
implementation registry, which the writers of today's tables do not need."""
from __future__ import annotations

import pandas as pd

from ..registry.ops import OPS
from ..registry.subjects import COLUMNS, SWEEP
from .tables import TABLES


def migrate(frame: pd.DataFrame, variants: dict, shapes: dict, table: str | None = None) -> pd.DataFrame:
    """A table written before subjects, in this layout: the name its `implementation` column carried becomes the
    subject. `variants` and `shapes` are the namespace's (its resolved configuration), to say which variant an
    implementation ran and at which shape; an empty mapping leaves a hand-written implementation's variant as
    its own name and the shape empty. A table already in this layout, or with no subjects, is returned as it is;
    so is one the registry (`table`, its name) lays out with no variant, whose `implementation` names a peer, not
    a subject (known_peers, a table younger than subjects)."""
    if "subject" in frame or "implementation" not in frame or "op" not in frame:
        return frame
    if table in TABLES and "variant" not in TABLES[table].column_names:
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
    from ..registry.config import variant_of
    from ..registry.vocabulary import IMPLEMENTATION_REGISTRY

    implementation, _, label = name.partition(SWEEP)
    spec = OPS.get(op)
    if not label and op in shapes and spec:
        label = spec.label(shapes[op])
    if implementation in IMPLEMENTATION_REGISTRY:
        chosen = variant_of(variants, op, implementation) if spec and op in variants else None
        return {"implementation": implementation, "variant": chosen or implementation, "shape": label or None}
    known = spec.kernel_variants.get(implementation) if spec else None
    return {"implementation": known.toolchain if known else "cuda", "variant": implementation, "shape": label or None}
