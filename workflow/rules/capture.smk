# Stage 5, capture: per-kernel GPU time from a profiler, every implementation of an op in one session (nsys,
# or cupti where nsys is missing), and Nsight Compute counters for the implementations a namespace lists.
# Each job runs after the passed GPU checks of what it captures.


rule capture:
    input:
        unpack(gpu_workload_inputs),
        code=lambda w: code_of("capture", w.op),
        ceiling=lambda w: CEILING_SOURCE if ns_of(w).capture["ceiling"] else [],
    output:
        "work/{ns}/capture/{backend}/{op}.parquet",
    log:
        log_of("capture", "ns", "backend", "op"),
    benchmark:
        benchmark_of("capture", "ns", "backend", "op")
    wildcard_constraints:
        backend="nsys|cupti",
    priority: PRIORITY_MEASUREMENT
    resources:
        **gpu_slot(RANK_CAPTURE),  # a slot, as a check: the measurement window takes its GPU alone
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        op=lambda w: ns_of(w).op_params(w.op),
        capture=lambda w: ns_of(w).capture,
        subjects=lambda w: subjects_of(ns_of(w), w.op),
    script:
        "../scripts/capture.py"


rule capture_counters:
    input:
        unpack(lambda w: gpu_workload_inputs(w, [w.subject])),
        code=lambda w: code_of("capture", w.op),
    output:
        "work/{ns}/capture/{backend}/{op}/{subject}.parquet",
    log:
        log_of("capture_counters", "ns", "backend", "op", "subject"),
    benchmark:
        benchmark_of("capture_counters", "ns", "backend", "op", "subject")
    wildcard_constraints:
        backend="ncu",
        subject="|".join(MEASURED),  # an implementation the namespace lists under capture.ncu
    priority: PRIORITY_MEASUREMENT
    resources:
        **gpu_slot(RANK_COUNTERS, lambda w: w.subject),  # a measurement window takes its GPU alone
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        op=lambda w: ns_of(w).op_params(w.op),
        capture=lambda w: ns_of(w).capture,
        subjects=lambda w: subjects_of(ns_of(w), w.op, [w.subject]),
    script:
        "../scripts/capture.py"


rule kernels:
    input:
        code=code_of("collect_kernels"),
        reports=lambda w: expand(
            "work/{ns}/capture/{backend}/{op}.parquet", ns=w.ns, backend=ns_of(w).capture_backends(), op=ns_of(w).ops
        ),
    output:
        "work/{ns}/kernels.parquet",
    log:
        log_of("kernels", "ns"),
    script:
        "../scripts/collect_kernels.py"


rule counters:
    input:
        code=code_of("collect_reports"),
        reports=lambda w: expand(
            "work/{ns}/capture/ncu/{op}/{subject}.parquet", ns=w.ns, op=ns_of(w).ops, subject=ns_of(w).capture["ncu"]
        ),
    output:
        "work/{ns}/counters.parquet",
    log:
        log_of("counters", "ns"),
    script:
        "../scripts/collect_reports.py"


rule capture_summary:
    input:
        kernels=lambda w: evidence_table(w.ns, "kernels"),
        code=code_of("capture_summary"),
    output:
        "work/{ns}/capture_summary.parquet",
    log:
        log_of("capture_summary", "ns"),
    params:
        margin=lambda w: ns_of(w).capture["band_margin"],
    script:
        "../scripts/capture_summary.py"


rule ceilings:
    """The memory floor measured beside each op: its copies' kernel times, warm and cold (ceiling.py)."""
    input:
        kernels=lambda w: evidence_table(w.ns, "kernels"),
        code=code_of("ceilings"),
    output:
        "work/{ns}/ceilings.parquet",
    log:
        log_of("ceilings", "ns"),
    params:
        shapes=lambda w: ns_of(w).shapes,
        backend=lambda w: ns_of(w).capture_backends()[0],
    script:
        "../scripts/ceilings.py"


rule known_peers:
    """The peers' kernel times the pinned archives hold on this namespace's GPU model, at its shapes (peers.py)."""
    input:
        gpu="work/{ns}/gpu.json",
        archives=lambda w: list(known_archives(w.ns).values()),
        code=code_of("known_peers"),
    output:
        "work/{ns}/known_peers.parquet",
    log:
        log_of("known_peers", "ns"),
    params:
        archives=lambda w: known_archives(w.ns),
        shapes=lambda w: peer_shapes(ns_of(w)),
    script:
        "../scripts/known_peers.py"
