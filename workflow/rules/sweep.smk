# The size sweep (namespaces with `sweep:`): every implementation at each listed shape, checked, then captured in
# one profiled session per op; the sweep table sets the kernel times against the roofline.


def sweep_points(ns, op):
    from fieldnote.sweep import subjects

    return subjects(op, ns.sweep[op], subjects_of(ns, op, ns.implementations), ns.seed)


def sweep_check_priority(wildcards):
    """The sweeps with the most arithmetic first (torch.compile autotunes a matrix product the longest: 170 s for
    the matmul's five sizes on the H200, 75 s for the neighbor's), so the longest does not start last."""
    from fieldnote.ops import OPS

    sweep = ns_of(wildcards).sweep
    flops = {op: sum(OPS[op].work(shape)[1] for shape in shapes) for op, shapes in sweep.items()}
    return PRIORITY_SWEEP_CHECK + sorted(flops, key=flops.get).index(wildcards.op)


def sweep_inputs(wildcards):
    """A sweep of an op runs after the op passed its checks at the seed shape, on the same kernels."""
    files = gpu_workload_inputs(wildcards, ns_of(wildcards).implementations)
    files.pop("npz"), files.pop("hashes")
    files["code"] = module("sweep", "check", "capture/__init__", "capture/run", "capture/_process",
                           *(f"capture/{b}" for b in ns_of(wildcards).capture_backends()[:1]))
    return files


rule sweep_check:
    output:
        "work/{ns}/sweep/{op}/checks.parquet",
    input:
        unpack(sweep_inputs),
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        points=lambda w: sweep_points(ns_of(w), w.op)[0],
        tolerance=lambda w: ns_of(w).tolerance,
    resources:
        gpu=1,
    priority: sweep_check_priority
    script:
        "../scripts/sweep_check.py"


rule sweep_capture:
    output:
        "work/{ns}/sweep/{op}/kernels.parquet",
    input:
        unpack(sweep_inputs),
        checks="work/{ns}/sweep/{op}/checks.parquet",
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        points=lambda w: sweep_points(ns_of(w), w.op)[0],
        capture=lambda w: ns_of(w).capture,
        backend=lambda w: ns_of(w).capture_backends()[0],
    resources:
        gpu=GPU_SLOTS,
    script:
        "../scripts/sweep_capture.py"


rule sweep_collect:
    output:
        "work/{ns}/sweep_{table}.parquet",
    input:
        lambda w: expand("work/{ns}/sweep/{op}/{table}.parquet", ns=w.ns, op=ns_of(w).sweep, table=w.table),
    wildcard_constraints:
        table="checks|kernels",
    script:
        "../scripts/collect_reports.py"


rule sweep:
    output:
        "work/{ns}/sweep.parquet",
    input:
        kernels=lambda w: evidence_table(w.ns, "sweep_kernels"),
        checks=lambda w: evidence_table(w.ns, "sweep_checks"),
        code=module("sweep", "capture/summary"),
    params:
        roofline=lambda w: ns_of(w).roofline,
        skipped=lambda w: [row for op in ns_of(w).sweep for row in sweep_points(ns_of(w), op)[1]],
    script:
        "../scripts/sweep_table.py"
