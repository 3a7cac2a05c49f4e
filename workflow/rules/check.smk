# Stage 3, check: the correctness gate. A failed check fails its job, and nothing downstream of it runs.


def subject_of(wildcards):
    """The implementation, variant and cubin behind a checked name (an implementation, or an attempt's variant)."""
    subjects = subjects_of(ns_of(wildcards), wildcards.op, [wildcards.impl])
    if wildcards.impl not in subjects:
        raise ValueError(f"{wildcards.impl} is not measured for {wildcards.op} in namespace {wildcards.ns}")
    return subjects[wildcards.impl]


def check_inputs(wildcards):
    ns, subject = ns_of(wildcards), subject_of(wildcards)
    files = input_files(ns, wildcards.op)
    files["code"] = module("check", "implementations", "kernels", "launch", "triton_compat", f"ops/{wildcards.op}")
    files["kernel"] = (triton_sources(wildcards.op) if subject["implementation"] == "triton"
                       else f"kernels/torch/{wildcards.op}.py")
    if subject["cubin"]:
        files["cubin"] = subject["cubin"]
    return files


rule check_cpu:
    output:
        "work/{ns}/check/cpu/{op}/{impl}.parquet",
    input:
        unpack(check_inputs),
    params:
        op=lambda w: ns_of(w).op_params(w.op),
        subject=subject_of,
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
    params:
        archived=archived_of,
    script:
        "../scripts/gpu_probe.py"


rule check_gpu:
    output:
        "work/{ns}/check/gpu/{op}/{impl}.parquet",
    input:
        unpack(check_inputs),
        # ancient: the probe reruns whenever a CPU stage does (a rebuilt variant), and that must not rerun the
        # checks of everything else; its record of the GPU reaches the bundle through the environment instead
        gpu=ancient("work/{ns}/gpu.json"),
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        op=lambda w: ns_of(w).op_params(w.op),
        subject=subject_of,
        device="cuda",
    wildcard_constraints:
        impl="[A-Za-z0-9_]+",  # an implementation, or the variant of an attempt
    resources:
        # one slot: checks may share the GPU with each other, never with a measurement. The compiled check is
        # also where torch.compile autotunes (max-autotune benchmarks its candidate kernels, and the inductor
        # cache keeps the choice for the timing and the captures): it has the GPU to itself, as a measurement.
        gpu=lambda w: GPU_SLOTS if w.impl == "compiled" else 1,
    priority: lambda w: PRIORITY_COMPILED_CHECK if w.impl == "compiled" else PRIORITY_CHECK
    script:
        "../scripts/check.py"


def all_checks(wildcards):
    ns = ns_of(wildcards)
    cpu = [i for i in ns.implementations if i in CPU_IMPLEMENTATIONS]
    return (expand("work/{ns}/check/cpu/{op}/{impl}.parquet", ns=ns.name, op=ns.ops, impl=cpu)
            + [f"work/{ns.name}/check/gpu/{op}/{name}.parquet" for op in ns.ops for name in ns.subjects(op)])


rule checks:
    output:
        "work/{ns}/checks.parquet",
    input:
        all_checks,
    script:
        "../scripts/collect_reports.py"
