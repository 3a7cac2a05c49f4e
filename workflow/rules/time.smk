# Stage 4, time: CUDA-event spans per op, all implementations in one job (their order rotates each round),
# plus CUDA-graph replay of the same calls. Takes every implementation's passed GPU check as input.


def gpu_workload_inputs(wildcards, implementations):
    """What a GPU measurement of an op depends on: its inputs, its passed checks, kernels and the code."""
    ns, op = ns_of(wildcards), wildcards.op
    files = input_files(ns, op)
    files["checks"] = expand("work/{ns}/check/gpu/{op}/{impl}.parquet", ns=ns.name, op=op, impl=implementations)
    files["kernels"] = [f for impl in implementations if impl != "cuda"
                        for f in (triton_sources(op) if impl == "triton" else [f"kernels/torch/{op}.py"])]
    if "cuda" in implementations:
        files["cubin"] = cubin_of(ns, op)
    files["workload"] = module("workload", "implementations", "kernels", "launch", "inputs", f"ops/{op}")
    return files


rule time:
    output:
        spans="work/{ns}/time/{op}/spans.parquet",
        state="work/{ns}/time/{op}/gpu_state.parquet",
    input:
        unpack(lambda w: gpu_workload_inputs(w, ns_of(w).implementations)),
        code=module("timing", "gpu"),
    params:
        op=lambda w: ns_of(w).op_params(w.op),
        timing=lambda w: ns_of(w).timing,
        implementations=lambda w: list(ns_of(w).implementations),
    resources:
        gpu=1,
    script:
        "../scripts/time.py"


rule spans:
    output:
        "work/{ns}/{table}.parquet",
    input:
        lambda w: expand("work/{ns}/time/{op}/{table}.parquet", ns=w.ns, op=ns_of(w).ops, table=w.table),
    wildcard_constraints:
        table="spans|gpu_state",
    script:
        "../scripts/collect_reports.py"
