# Stage 4, time: CUDA-event spans per op, all implementations in one job (their order rotates each round),
# plus CUDA-graph replay of the same calls. Takes every implementation's passed GPU check as input.


rule time:
    input:
        unpack(gpu_workload_inputs),
        code=lambda w: code_of("time", w.op),
    output:
        spans="work/{ns}/time/{op}/spans.parquet",
        state="work/{ns}/time/{op}/gpu_state.parquet",
    log:
        log_of("time", "ns", "op"),
    benchmark:
        benchmark_of("time", "ns", "op")
    priority: PRIORITY_MEASUREMENT
    resources:
        **gpu_slot(RANK_TIME),  # a slot, as a check: the measurement window takes its GPU alone (gpulock.py)
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        op=lambda w: ns_of(w).op_params(w.op),
        timing=lambda w: ns_of(w).timing,
        subjects=lambda w: subjects_of(ns_of(w), w.op),
    script:
        "../scripts/time.py"


rule spans:
    input:
        code=code_of("collect_reports"),
        reports=lambda w: expand("work/{ns}/time/{op}/{table}.parquet", ns=w.ns, op=ns_of(w).ops, table=w.table),
    output:
        "work/{ns}/{table}.parquet",
    log:
        log_of("spans", "ns", "table"),
    wildcard_constraints:
        table="spans|gpu_state",
    script:
        "../scripts/collect_reports.py"
