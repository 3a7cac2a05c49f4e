# Stage 3b, sanitize: compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over each hand-written variant
# at its op's small shapes and edge cases, before it is timed; the time and capture jobs refuse a variant the
# sanitizer reported an error for (sanitize.py).


rule sanitize:
    input:
        cubin=lambda w: cubin_of(ns_of(w), w.op, w.variant),
        gpu=ancient("work/{ns}/gpu.json"),
        code=lambda w: code_of("sanitize", w.op),
    output:
        "work/{ns}/sanitize/{op}/{variant}.parquet",
    log:
        log_of("sanitize", "ns", "op", "variant"),
    benchmark:
        benchmark_of("sanitize", "ns", "op", "variant")
    priority: PRIORITY_CHECK
    resources:
        **gpu_slot(RANK_CHECK, lambda w: w.variant),  # a check: beside other checks, never in a measurement
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        variants=lambda w: {s["variant"]: s["cubin"] for s in subjects_of(ns_of(w), w.op).values() if s["cubin"]},
        seed=lambda w: ns_of(w).seed,
    script:
        "../scripts/sanitize.py"


rule sanitizer:
    """The sanitizer table of a namespace: a row per (variant, tool, shape)."""
    input:
        code=code_of("collect_reports"),
        reports=lambda w: sanitized_files(w.ns),
    output:
        "work/{ns}/sanitizer.parquet",
    log:
        log_of("sanitizer", "ns"),
    script:
        "../scripts/collect_reports.py"
