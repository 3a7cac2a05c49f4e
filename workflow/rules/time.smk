# Stage 4, time: CUDA-event spans per op, all implementations in one job (their order rotates each round),
# plus CUDA-graph replay of the same calls. Takes every implementation's passed GPU check as input.


def gpu_workload_inputs(wildcards, names=None):
    """What a GPU measurement of an op depends on: its inputs, the passed check of every subject it measures,
    their kernels and the code."""
    ns, op = ns_of(wildcards), wildcards.op
    subjects = subjects_of(ns, op, names)
    files = input_files(ns, op)
    files["checks"] = [f"work/{ns.name}/check/gpu/{op}/{name}.parquet" for name in subjects]
    implementations = {s["implementation"] for s in subjects.values()}
    files["kernels"] = [f for impl in sorted(implementations - {"cuda"})
                        for f in (triton_sources(op) if impl == "triton" else [f"kernels/torch/{op}.py"])]
    files["cubins"] = [s["cubin"] for s in subjects.values() if s["cubin"]]
    files["workload"] = module("workload", "implementations", "kernels", "launch", "inputs", f"ops/{op}")
    return files


rule time:
    output:
        spans="work/{ns}/time/{op}/spans.parquet",
        state="work/{ns}/time/{op}/gpu_state.parquet",
    input:
        unpack(gpu_workload_inputs),
        code=module("timing", "gpu"),
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        op=lambda w: ns_of(w).op_params(w.op),
        timing=lambda w: ns_of(w).timing,
        subjects=lambda w: subjects_of(ns_of(w), w.op),
    resources:
        gpu=GPU_SLOTS,  # the whole GPU: nothing else runs during a measurement
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
