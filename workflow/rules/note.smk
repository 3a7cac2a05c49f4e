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
    built = not NAMESPACES[ns].imported and (not NAMESPACES[ns].replay or "census" in REPLAY.tables())
    return ("summary", "spans", "kernels", "checks") + (("resources", "census") if built else ())


rule note:
    output:
        "work/{ns}/note.md",
    input:
        unpack(lambda w: {name: evidence_table(w.ns, name) for name in note_tables(w.ns)}),
        environment=lambda w: environment_file(w.ns),
        code=module("note"),
    params:
        description=lambda w: ns_of(w).description,
        tables=lambda w: list(note_tables(w.ns)),
    script:
        "../scripts/note.py"
