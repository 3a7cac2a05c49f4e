# Imported evidence: a namespace with `evidence.original` reads the original project's published files instead
# of measuring, into the same tables the measured stages write; everything after that is shared.


rule import_original:
    input:
        original=original_files,
        code=code_of("import_original"),
    output:
        spans="work/{ns}/original/spans.parquet",
        checks="work/{ns}/original/checks.parquet",
        kernels="work/{ns}/original/kernels.parquet",
        environment="work/{ns}/original/environment.json",
    log:
        log_of("import_original", "ns"),
    params:
        folder=lambda w: ns_of(w).evidence["original"],
    script:
        "../scripts/import_original.py"
