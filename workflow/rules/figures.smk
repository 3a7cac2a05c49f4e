# Stage 7, figures: drawn from the summary table alone, PNG and SVG.


rule figures:
    input:
        summary="work/{ns}/summary.parquet",
        progression=lambda w: history_inputs(w.ns).get("progression", []),
        sweep=lambda w: [evidence_table(w.ns, "sweep")] if ns_of(w).sweep else [],
        code=code_of("figures"),
    output:
        directory("work/{ns}/figures"),  # in the report as the bundle's (bundle.smk)
    log:
        log_of("figures", "ns"),
    params:
        progression=lambda w: (ns_of(w).progression or {}).get("namespaces", []),
        roofline=lambda w: ns_of(w).roofline,
    script:
        "../scripts/figures.py"
