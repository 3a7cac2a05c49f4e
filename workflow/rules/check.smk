# Stage 3, check: the correctness gate. A failed check fails its job, and nothing downstream of it runs.


def check_inputs(wildcards):
    ns = ns_of(wildcards)
    files = input_files(ns, wildcards.op)
    files["code"] = module("check", "implementations", "kernels", "launch", "triton_compat", f"ops/{wildcards.op}")
    files["kernel"] = (triton_sources(wildcards.op) if wildcards.impl == "triton"
                       else f"kernels/torch/{wildcards.op}.py")
    if wildcards.impl == "cuda":
        files["cubin"] = cubin_of(ns, wildcards.op)
    return files


rule check_cpu:
    output:
        "work/{ns}/check/cpu/{op}/{impl}.parquet",
    input:
        unpack(check_inputs),
    params:
        op=lambda w: ns_of(w).op_params(w.op),
        device="cpu",
    wildcard_constraints:
        impl="torch|triton",
    priority: 10
    script:
        "../scripts/check.py"


def cpu_stages(wildcards):
    """Everything a namespace needs no GPU for: run first, so a machine without one still gets all of it."""
    ns = ns_of(wildcards)
    cpu = [i for i in ns.implementations if i in CPU_IMPLEMENTATIONS]
    return ([input_files(ns, op)["hashes"] for op in ns.ops]
            + expand("work/{ns}/{table}.parquet", ns=ns.name, table=("resources", "census"))
            + expand("work/{ns}/check/cpu/{op}/{impl}.parquet", ns=ns.name, op=ns.ops, impl=cpu))


rule gpu_probe:
    output:
        "work/{ns}/gpu.json",
    input:
        cpu_stages,
        code=module("gpu"),
    script:
        "../scripts/gpu_probe.py"


rule check_gpu:
    output:
        "work/{ns}/check/gpu/{op}/{impl}.parquet",
    input:
        unpack(check_inputs),
        gpu="work/{ns}/gpu.json",
    params:
        op=lambda w: ns_of(w).op_params(w.op),
        device="cuda",
    resources:
        gpu=1,
    script:
        "../scripts/check.py"


def all_checks(wildcards):
    ns = ns_of(wildcards)
    cpu = [i for i in ns.implementations if i in CPU_IMPLEMENTATIONS]
    return (expand("work/{ns}/check/cpu/{op}/{impl}.parquet", ns=ns.name, op=ns.ops, impl=cpu)
            + expand("work/{ns}/check/gpu/{op}/{impl}.parquet", ns=ns.name, op=ns.ops, impl=ns.implementations))


rule checks:
    output:
        "work/{ns}/checks.parquet",
    input:
        all_checks,
    script:
        "../scripts/collect_reports.py"
