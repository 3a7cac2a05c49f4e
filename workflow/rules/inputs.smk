# Stage 1, inputs: deterministic per (op, shape, seed), so namespaces with equal shapes share the files.


rule inputs:
    input:
        lambda w: code_of("inputs", w.op),
    output:
        npz="work/inputs/{op}/{shape}-seed{seed}.npz",
        hashes="work/inputs/{op}/{shape}-seed{seed}.sha256.json",
    log:
        log_of("inputs", "op", "shape", "seed"),
    priority: 10
    script:
        "../scripts/inputs.py"
