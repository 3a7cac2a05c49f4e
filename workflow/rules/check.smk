# Stage 3, check: the correctness gate. A failed check fails its job, and nothing downstream of it runs.


rule check_cpu:
    input:
        unpack(check_inputs),
    output:
        "work/{ns}/check/cpu/{op}/{subject}.parquet",
    log:
        log_of("check_cpu", "ns", "op", "subject"),
    wildcard_constraints:
        subject="|".join(CHECKED_ON_CPU),
    priority: 10
    params:
        op=lambda w: ns_of(w).op_params(w.op),
        subject=subject_of,
        device="cpu",
    script:
        "../scripts/check.py"


rule gpu_probe:
    input:
        probe_after,
        code=code_of("gpu_probe"),
    output:
        "work/{ns}/gpu.json",
    log:
        log_of("gpu_probe", "ns"),
    benchmark:
        benchmark_of("gpu_probe", "ns")
    # every GPU job waits for it: on a GPU host, before the builds (at priority 0 it started 8 s into a run)
    priority: PRIORITY_COMPILED_CHECK
    params:
        archived=archived_of,
    script:
        "../scripts/gpu_probe.py"


rule check_gpu:
    input:
        unpack(check_inputs),
        # ancient: the probe reruns whenever a CPU stage does (a rebuilt variant), and that must not rerun the
        # checks of everything else; its record of the GPU reaches the bundle through the environment instead
        gpu=ancient("work/{ns}/gpu.json"),
    output:
        "work/{ns}/check/gpu/{op}/{subject}.parquet",
    log:
        log_of("check_gpu", "ns", "op", "subject"),
    benchmark:
        benchmark_of("check_gpu", "ns", "op", "subject")
    wildcard_constraints:
        subject="[A-Za-z0-9_]+",  # an implementation, or the variant of an attempt (subjects.py)
    priority: lambda w: PRIORITY_COMPILED_CHECK if w.subject == "compiled" else PRIORITY_CHECK
    resources:
        # one slot of one GPU: checks share a GPU with each other, never with a measurement window (gpulock.py).
        # The compiled check is also where torch.compile autotunes (max-autotune times its candidate kernels, and
        # the inductor cache keeps the choice for the timing and the captures): its job takes the GPU alone inside.
        **gpu_slot(RANK_CHECK, lambda w: w.subject),
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        op=lambda w: ns_of(w).op_params(w.op),
        subject=subject_of,
        device="cuda",
    script:
        "../scripts/check.py"


rule checks:
    input:
        code=code_of("collect_reports"),
        reports=all_checks,
    output:
        "work/{ns}/checks.parquet",
    log:
        log_of("checks", "ns"),
    script:
        "../scripts/collect_reports.py"


rule tune_compiled:
    input:
        unpack(lambda w: input_files(ns_of(w), w.op)),
        gpu=ancient("work/{ns}/gpu.json"),  # as check_gpu's
        kernel="kernels/torch/{op}.py",
        code=lambda w: code_of("tune_compiled", w.op),
    output:
        tunes="work/{ns}/tune/{op}.parquet",
        # not evidence, and skipped as the shared cache is (io.SKIP): the kept tune's, for the op's later jobs
        cache=directory("work/inductor-cache/{ns}/{op}"),
    log:
        log_of("tune_compiled", "ns", "op"),
    benchmark:
        benchmark_of("tune_compiled", "ns", "op")
    priority: PRIORITY_COMPILED_CHECK
    resources:
        **gpu_slot(RANK_CHECK, lambda w: "compiled"),  # its tunes' timings take the GPU alone inside (gpulock.py)
    params:
        archived=archived_of,  # refused in the job itself when the namespace is archived
        op=lambda w: ns_of(w).op_params(w.op),
        timing=lambda w: ns_of(w).timing,
    script:
        "../scripts/tune_compiled.py"


rule compiled_tunes:
    input:
        code=code_of("collect_reports"),
        reports=lambda w: expand("work/{ns}/tune/{op}.parquet", ns=w.ns, op=holdings.tuned_ops(ns_of(w))),
    output:
        "work/{ns}/compiled_tunes.parquet",
    log:
        log_of("compiled_tunes", "ns"),
    script:
        "../scripts/collect_reports.py"
