# The summary table and note.md, from the evidence tables alone (measured or imported alike).


rule summary:
    input:
        unpack(summary_inputs),
        code=code_of("summary"),
    output:
        "work/{ns}/summary.parquet",
    log:
        log_of("summary", "ns"),
    params:
        attempts=None,
    script:
        "../scripts/summary.py"


use rule summary as attempts with:
    input:
        unpack(summary_inputs),
        # why an attempt has no value, where the sanitizer's gate left it out
        sanitizer=lambda w: [evidence_table(w.ns, "sanitizer")] if has_table(w.ns, "sanitizer") else [],
        code=code_of("summary"),
    output:
        "work/{ns}/attempts.parquet",
    log:
        log_of("attempts", "ns"),
    params:
        attempts=lambda w: list(ns_of(w).attempts),


rule verdicts:
    """Every judgment the note states beside a number (verdicts.py): made here, worded by the note."""
    input:
        unpack(lambda w: {name: evidence_table(w.ns, name) for name in verdict_tables(w.ns)}),
        unpack(lambda w: history_inputs(w.ns)),
        code=code_of("verdicts"),
    output:
        "work/{ns}/verdicts.parquet",
    log:
        log_of("verdicts", "ns"),
    params:
        tables=lambda w: list(verdict_tables(w.ns)),
        shapes=lambda w: ns_of(w).shapes,
        roofline=lambda w: ns_of(w).roofline if ns_of(w).sweep else None,
        targets=lambda w: ns_of(w).targets,
        config=lambda w: published_config(w.ns),
        progression=lambda w: ns_of(w).progression,
        drift=lambda w: ns_of(w).drift,
    script:
        "../scripts/verdicts.py"


rule note:
    input:
        unpack(lambda w: {name: evidence_table(w.ns, name) for name in note_tables(w.ns)}),
        unpack(lambda w: history_inputs(w.ns)),
        verdicts="work/{ns}/verdicts.parquet",
        history=lambda w: list(history_files(w.ns).values()),
        # the namespace's template, or the package's for a note generated whole
        template=lambda w: note_template(w.ns) or "src/fieldnote/publish/templates/generated.md",
        environment=lambda w: environment_file(w.ns),
        code=code_of("note"),
    output:
        note="work/{ns}/note.md",
        claims="work/{ns}/claims.parquet",
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
        attempts=lambda w: list(ns_of(w).attempts),
        namespace_file=lambda w: ns_of(w).file,
        provenance=lambda w: provenance(ns_of(w)),
        template=lambda w: note_template(w.ns),
        history=lambda w: list(history_files(w.ns)),
        figures=lambda w: figure_names(w.ns),
        config=lambda w: published_config(w.ns),
    script:
        "../scripts/note.py"


rule quoted:
    """The values an imported namespace's note quotes from elsewhere (evidence.quoted), as a table with each
    value's provenance."""
    input:
        quotations=lambda w: ns_of(w).evidence["quoted"],
        code=code_of("quoted"),
    output:
        "work/{ns}/original/quoted.parquet",
    log:
        log_of("quoted", "ns"),
    script:
        "../scripts/quoted.py"


rule page:
    """note.html: the note as one self-contained page, its figures inline with the values beneath each."""
    input:
        note="work/{ns}/note.md",
        figures="work/{ns}/figures",
        code=code_of("page"),
    output:
        "work/{ns}/note.html",
    log:
        log_of("page", "ns"),
    params:
        provenance=lambda w: provenance(ns_of(w)),
    script:
        "../scripts/page.py"
