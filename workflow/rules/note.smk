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


rule note:
    output:
        "work/{ns}/note.md",
    input:
        unpack(lambda w: {name: evidence_table(w.ns, name) for name in ("summary", "spans", "kernels", "checks")}),
        environment=lambda w: environment_file(w.ns),
        code=module("note"),
    params:
        description=lambda w: ns_of(w).description,
    script:
        "../scripts/note.py"
