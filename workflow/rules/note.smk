# The summary table and note.md, from the evidence tables alone (measured or imported alike).


rule summary:
    output:
        "work/{ns}/summary.parquet",
    input:
        capture_summary=lambda w: evidence_table(w.ns, "capture_summary"),
        spans=lambda w: evidence_table(w.ns, "spans"),
        code=module("measurements"),
    script:
        "../scripts/summary.py"


def note_tables(ns):
    """The tables the note draws on: the build's resources and census only where the namespace has them."""
    built = not NAMESPACES[ns].imported and (not NAMESPACES[ns].replay or "census" in ARCHIVES[ns].tables())
    return ("summary", "spans", "kernels", "checks") + (("resources", "census") if built else ())


def history_inputs(ns):
    """Other namespaces' evidence the note draws on: the progression's summaries, the drift baseline's kernels."""
    n, history = NAMESPACES[ns], history_files(ns)
    files = {}
    if n.progression:
        files["progression"] = [history[f"history/{other}.summary.parquet"] for other in n.progression["namespaces"]]
    if n.drift:
        base = n.drift["baseline"]
        files["drift"] = [history[f"history/{base}.summary.parquet"], history[f"history/{base}.kernels.parquet"]]
    return files


rule note:
    output:
        "work/{ns}/note.md",
    input:
        unpack(lambda w: {name: evidence_table(w.ns, name) for name in note_tables(w.ns)}),
        unpack(lambda w: history_inputs(w.ns)),
        environment=lambda w: environment_file(w.ns),
        code=module("note", "history"),
    params:
        description=lambda w: ns_of(w).description,
        tables=lambda w: list(note_tables(w.ns)),
        progression=lambda w: ns_of(w).progression,
        drift=lambda w: ns_of(w).drift,
    script:
        "../scripts/note.py"
