# The summary table and note.md, from the evidence tables alone (measured or imported alike).


rule summary:
    input:
        capture_summary=lambda w: evidence_table(w.ns, "capture_summary"),
        spans=lambda w: evidence_table(w.ns, "spans"),
        code=code_of("summary"),
    output:
        "work/{ns}/summary.parquet",
    log:
        log_of("summary", "ns"),
    params:
        implementations=lambda w: list(ns_of(w).implementations),
        attempts=None,
    script:
        "../scripts/summary.py"


use rule summary as attempts with:
    output:
        "work/{ns}/attempts.parquet",
    log:
        log_of("attempts", "ns"),
    params:
        implementations=None,
        attempts=lambda w: list(ns_of(w).attempts),


rule note:
    input:
        unpack(lambda w: {name: evidence_table(w.ns, name) for name in note_tables(w.ns)}),
        unpack(lambda w: history_inputs(w.ns)),
        environment=lambda w: environment_file(w.ns),
        code=code_of("note"),
    output:
        "work/{ns}/note.md",
    log:
        log_of("note", "ns"),
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
