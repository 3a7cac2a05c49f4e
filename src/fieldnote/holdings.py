"""Which evidence tables a namespace has, and which of them each reading stage takes: the one home of the decision
(the workflow's input functions ask here). A replay has what its archive holds, and the tables recomputed from
them; an imported namespace, what the original project's evidence brings; a measured one, each table its
configuration asks for (tables.py says what each is)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

# what the note reads, where the namespace has it
NOTE_READS = ("summary", "spans", "kernels", "checks", "capture_summary", "quoted", "resources", "census",
              "attempts", "sweep", "sweep_checks", "counters", "sweep_counters", "sanitizer", "gpu_state", "ceilings",
              "compiled_tunes", "known_peers")
VERDICTS_READ = ("summary", "kernels", "sweep", "ceilings", "known_peers", "attempts")  # kernels: for the drift
NOTE_MAKES = ("claims", "verdicts")  # made from the others, in a replay too


def runs_hand_written(n) -> bool:
    """Whether a namespace measures a hand-written variant (its build's resources, its sanitizer runs)."""
    return any(s["variant"] for op in n.ops for s in n.subjects(op).values())


def tuned_ops(n) -> list[str]:
    """The ops whose torch.compile a measured namespace tunes in fresh caches first (`timing.compiled_tunes`)."""
    if n.replay or n.imported or not n.timing.get("compiled_tunes"):
        return []
    return [op for op in n.ops if any(s["implementation"] == "compiled" for s in n.subjects(op).values())]


def counted_points(n, subjects_of: Callable[[str], dict] | None = None) -> dict[str, dict]:
    """op -> the sweep points a target names, where the namespace captures counters (sweep.target_points).
    `subjects_of(op)`: the implementations the sweep measures (by default the namespace's, as it declares them)."""
    from .evidence.sweep import subjects, target_points

    if not n.sweep or not n.capture["ncu"]:
        return {}
    subjects_of = subjects_of or (lambda op: {k: s for k, s in n.subjects(op).items() if k in n.implementations})
    found = {op: target_points(op, subjects(op, n.sweep[op], subjects_of(op), n.seed)[0], n.targets)
             for op in n.sweep}
    return {op: points for op, points in found.items() if points}


def triton_ops(n) -> list[str]:
    """The namespace's ops measured as Triton kernels (those that have one): what the census reads."""
    return [op for op in n.ops if "triton" in n.implementations_of(op)]


def _measured(n) -> tuple[str, ...]:
    cuda = runs_hand_written(n)
    conditional = {"resources": cuda, "census": bool(triton_ops(n)), "sanitizer": cuda,
                   "ceilings": bool(n.capture.get("ceiling")), "compiled_tunes": bool(tuned_ops(n)),
                   "counters": bool(n.capture["ncu"]), "attempts": bool(n.attempts), "sweep_checks": bool(n.sweep),
                   "sweep_kernels": bool(n.sweep), "sweep": bool(n.sweep)}
    order = ("checks", "resources", "census", "spans", "gpu_state", "kernels", "capture_summary", "summary",
             *NOTE_MAKES, "sanitizer", "ceilings", "compiled_tunes", "known_peers", "counters", "attempts",
             "sweep_checks", "sweep_kernels", "sweep")
    found = tuple(t for t in order if conditional.get(t, True))
    return found + (("sweep_counters",) if counted_points(n) else ())


def _imported(n) -> tuple[str, ...]:
    quoted = ("quoted",) if (n.evidence or {}).get("quoted") else ()
    return ("spans", "checks", "kernels", *quoted, *(("census",) if n.census else ()), "capture_summary", "summary",
            *NOTE_MAKES)


def bundle(n, archived: Sequence[str] | None = None) -> tuple[str, ...]:
    """Every evidence table a namespace's bundle gathers, in the bundle's order (the bundle writes `inputs` itself,
    from the inputs' hashes). `archived`: the tables its archive holds, for a replay."""
    if n.replay:
        return tuple(dict.fromkeys([*(archived or ()), *NOTE_MAKES]))
    return _imported(n) if n.imported else _measured(n)


def has(n, table: str, archived: Sequence[str] | None = None) -> bool:
    return table in bundle(n, archived)


def built(n, archived: Sequence[str] | None = None) -> tuple[str, ...]:
    """The build's tables: resources where the namespace runs hand-written kernels, the census where Triton."""
    return tuple(t for t in ("resources", "census") if has(n, t, archived))


def note_reads(n, archived: Sequence[str] | None = None) -> tuple[str, ...]:
    """The tables the note draws on, where the namespace has them: the counters beside the standing against the
    roofline, so only in a namespace that sweeps against it."""
    held = bundle(n, archived)
    return tuple(t for t in NOTE_READS if t in held and (t != "counters" or n.sweep)
                 and (t not in ("sweep", "sweep_checks") or n.sweep) and (t != "attempts" or n.attempts))


def verdicts_read(n, archived: Sequence[str] | None = None) -> tuple[str, ...]:
    """The tables the verdicts are made from (verdicts.py), where the namespace has them."""
    return tuple(t for t in note_reads(n, archived) if t in VERDICTS_READ)
