# Stage 2, build: every hand-written variant through NVRTC, every Triton kernel offline; resources and census.


rule build_cuda:
    input:
        source="kernels/cuda/{op}/{variant}.cu",
        headers=family_headers,  # the kernel family's .cuh files it includes: an edit of one rebuilds it
        code=code_of("build_variant"),
    output:
        cubin="work/build/{arch}/cuda/{op}/{variant}.cubin",
        ptx="work/build/{arch}/cuda/{op}/{variant}.ptx",
        report="work/build/{arch}/cuda/{op}/{variant}.json",
    log:
        log_of("build_cuda", "arch", "op", "variant"),
    priority: 10
    script:
        "../scripts/build_variant.py"


use rule build_cuda as build_ptx with:
    input:
        source="kernels/ptx/{op}/{variant}.ptx",
        code=code_of("build_variant"),
    output:
        cubin="work/build/{arch}/ptx/{op}/{variant}.cubin",
        ptx="work/build/{arch}/ptx/{op}/{variant}.ptx",
        report="work/build/{arch}/ptx/{op}/{variant}.json",
    log:
        log_of("build_ptx", "arch", "op", "variant"),


rule build_triton:
    input:
        sources=lambda w: list(cached_sources("triton", w.op, Path(workflow.basedir))),
        code=code_of("build_triton"),
    output:
        cubin="work/build/{arch}/triton/{op}.cubin",
        ptx="work/build/{arch}/triton/{op}.ptx",
        report="work/build/{arch}/triton/{op}.json",
    log:
        log_of("build_triton", "arch", "op"),
    priority: 10
    script:
        "../scripts/build_triton.py"


rule resources:
    input:
        code=code_of("collect_reports"),
        reports=lambda w: [
            s["cubin"].replace(".cubin", ".json")
            for op in ns_of(w).ops
            for s in subjects_of(ns_of(w), op).values()
            if s["cubin"]
        ],
    output:
        "work/{ns}/resources.parquet",
    log:
        log_of("resources", "ns"),
    priority: 10
    script:
        "../scripts/collect_reports.py"


rule census:
    input:
        code=code_of("collect_reports"),
        reports=lambda w: expand(
            "work/build/{arch}/triton/{op}.json",
            arch=ns_of(w).census or [ns_of(w).arch],
            op=holdings.triton_ops(ns_of(w)),
        ),
    output:
        "work/{ns}/census.parquet",
    log:
        log_of("census", "ns"),
    priority: 10
    script:
        "../scripts/collect_reports.py"
