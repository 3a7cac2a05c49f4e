# The summary table and note.md, from the evidence tables alone (measured or imported alike).


rule summary:
    output:
        "work/{ns}/summary.parquet",
    input:
        capture_summary=lambda w: evidence_table(w.ns, "capture_summary"),
        spans=lambda w: evidence_table(w.ns, "spans"),
        code=module("measurements"),
    params:
        implementations=lambda w: list(ns_of(w).implementations),
        attempts=None,
    script:
        "../scripts/summary.py"


use rule summary as attempts with:
    output:
        "work/{ns}/attempts.parquet",
    params:
        implementations=None,
        attempts=lambda w: list(ns_of(w).attempts),


def note_tables(ns):
    """The tables the note draws on: the build's resources, census and counters only where the namespace has them."""
    n = NAMESPACES[ns]
    built = not n.imported and (not n.replay or "census" in ARCHIVES[ns].tables())
    # the counters beside the standing against the roofline, in the namespaces that sweep against it
    counted = n.sweep and ("counters" in ARCHIVES[ns].tables() if n.replay else bool(n.capture["ncu"]))
    return (("summary", "spans", "kernels", "checks", "capture_summary") + (("resources", "census") if built else ())
            + (("attempts",) if n.attempts else ()) + (("sweep",) if n.sweep else ())
            + (("counters",) if counted else ()))


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
        # the standing against peers and roofline, where the namespace sweeps against that roofline
        shapes=lambda w: ns_of(w).shapes,
        roofline=lambda w: ns_of(w).roofline if ns_of(w).sweep else None,
        targets=lambda w: ns_of(w).targets,
        namespace_file=lambda w: ns_of(w).file,
        provenance=lambda w: provenance(ns_of(w)),
    script:
        "../scripts/note.py"
