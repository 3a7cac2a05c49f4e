# The size sweep (namespaces with `sweep:`): every implementation at each listed shape, checked (a job per shape:
# torch.compile compiles and autotunes each shape, and the shapes compile side by side; it needs the op's kernels,
# not its checks at the seed shape, which gate the measurements), then captured in one profiled session per op; the
# sweep table sets the kernel times against the roofline.


rule sweep_check:
    input:
        unpack(sweep_check_inputs),
        gpu=ancient("work/{ns}/gpu.json"),  # as check_gpu's: without a GPU, the probe's one message stops the run
        code=lambda w: code_of("sweep_check", w.op),
    output:
        "work/{ns}/sweep/{op}/checks/{shape}.parquet",
    log:
        log_of("sweep_check", "ns", "op", "shape"),
    benchmark:
        benchmark_of("sweep_check", "ns", "op", "shape")
    priority: sweep_check_priority
    resources:
        **gpu_slot(RANK_SWEEP_CHECK, lambda w: w.shape),
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        points=lambda w: sweep_points_at(ns_of(w), w.op, w.shape),
        tolerance=lambda w: ns_of(w).tolerance,
    script:
        "../scripts/sweep_check.py"


rule sweep_capture:
    input:
        unpack(sweep_inputs),
        code=lambda w: code_of("sweep_capture", w.op),
        checks=sweep_check_files,
    output:
        "work/{ns}/sweep/{op}/kernels.parquet",
    log:
        log_of("sweep_capture", "ns", "op"),
    benchmark:
        benchmark_of("sweep_capture", "ns", "op")
    priority: PRIORITY_SWEEP_CAPTURE
    resources:
        **gpu_slot(RANK_SWEEP_CAPTURE),  # a slot, as a check: the measurement window takes its GPU alone
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        points=lambda w: sweep_points(ns_of(w), w.op)[0],
        capture=lambda w: ns_of(w).capture,
        backend=lambda w: ns_of(w).capture_backends()[0],
        tolerance=lambda w: ns_of(w).tolerance,  # every timed call verified at it
    script:
        "../scripts/sweep_capture.py"


rule sweep_counters:
    input:
        unpack(sweep_inputs),
        code=lambda w: code_of("sweep_counters", w.op),
        checks=sweep_check_files,
    output:
        "work/{ns}/sweep/{op}/counters.parquet",
    log:
        log_of("sweep_counters", "ns", "op"),
    benchmark:
        benchmark_of("sweep_counters", "ns", "op")
    priority: PRIORITY_MEASUREMENT
    resources:
        **gpu_slot(RANK_COUNTERS),  # a slot, as a check: each profiled launch takes its GPU alone
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        points=lambda w: counted_points(ns_of(w))[w.op],
        capture=lambda w: ns_of(w).capture,
        tolerance=lambda w: ns_of(w).tolerance,  # every profiled call verified at it
    script:
        "../scripts/sweep_counters.py"


rule sweep_collect:
    input:
        code=code_of("collect_reports"),
        reports=sweep_reports,
    output:
        "work/{ns}/sweep_{table}.parquet",
    log:
        log_of("sweep_collect", "ns", "table"),
    wildcard_constraints:
        table="checks|counters",
    script:
        "../scripts/collect_reports.py"


rule sweep_kernels:
    input:
        code=code_of("collect_kernels"),
        reports=lambda w: sweep_reports(w, "kernels"),
    output:
        "work/{ns}/sweep_kernels.parquet",
    log:
        log_of("sweep_kernels", "ns"),
    script:
        "../scripts/collect_kernels.py"


rule sweep:
    input:
        kernels=lambda w: evidence_table(w.ns, "sweep_kernels"),
        checks=lambda w: evidence_table(w.ns, "sweep_checks"),
        code=code_of("sweep_table"),
    output:
        "work/{ns}/sweep.parquet",
    log:
        log_of("sweep", "ns"),
    params:
        roofline=lambda w: ns_of(w).roofline,
        skipped=lambda w: [row for op in ns_of(w).sweep for row in sweep_points(ns_of(w), op)[1]],
    script:
        "../scripts/sweep_table.py"
