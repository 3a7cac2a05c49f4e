# Stage 5, capture: per-kernel GPU time from a profiler (nsys or cupti), and counters from ncu where a
# namespace asks for them. One job per (backend, op, implementation), each after that implementation's check.


rule capture:
    output:
        "work/{ns}/capture/{backend}/{op}/{impl}.parquet",
    input:
        unpack(lambda w: gpu_workload_inputs(w, [w.impl])),
        code=module("capture/__init__", "capture/run", "capture/_process", "capture/{backend}"),
    params:
        op=lambda w: ns_of(w).op_params(w.op),
        capture=lambda w: ns_of(w).capture,
    wildcard_constraints:
        backend="nsys|cupti|ncu",
    resources:
        gpu=1,
    script:
        "../scripts/capture.py"


def captures(wildcards, backends, implementations=None):
    ns = ns_of(wildcards)
    return expand("work/{ns}/capture/{backend}/{op}/{impl}.parquet", ns=ns.name, backend=backends, op=ns.ops,
                  impl=implementations or ns.implementations)


rule kernels:
    output:
        "work/{ns}/kernels.parquet",
    input:
        lambda w: captures(w, ns_of(w).capture_backends()),
    script:
        "../scripts/collect_reports.py"


rule counters:
    output:
        "work/{ns}/counters.parquet",
    input:
        lambda w: captures(w, ["ncu"], ns_of(w).capture["ncu"]),
    script:
        "../scripts/collect_reports.py"


rule capture_summary:
    output:
        "work/{ns}/capture_summary.parquet",
    input:
        kernels="work/{ns}/kernels.parquet",
        code=module("capture/summary"),
    script:
        "../scripts/capture_summary.py"
