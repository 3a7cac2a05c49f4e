# The bundle results/<ns>/: what the namespace's evidence holds so far, assembled last and atomically.


def all_input_hashes(wildcards):
    ns = ns_of(wildcards)
    return [input_files(ns, op)["hashes"] for op in ns.ops]


rule bundle:
    output:
        directory("results/{ns}"),
    input:
        checks="work/{ns}/checks.parquet",
        resources="work/{ns}/resources.parquet",
        census="work/{ns}/census.parquet",
        spans="work/{ns}/spans.parquet",
        gpu_state="work/{ns}/gpu_state.parquet",
        kernels="work/{ns}/kernels.parquet",
        capture_summary="work/{ns}/capture_summary.parquet",
        counters=lambda w: ["work/{ns}/counters.parquet".format(ns=w.ns)] if ns_of(w).capture["ncu"] else [],
        hashes=all_input_hashes,
        code=module("bundle"),
    params:
        resolved=lambda w: ns_of(w).to_dict(),
    script:
        "../scripts/bundle.py"
