# Imported evidence: a namespace with `evidence.original` reads the original project's published files instead
# of measuring, into the same tables the measured stages write; everything after that is shared.


def original_files(wildcards):
    """The two JSON files, when present; when absent the import job says where it looked (one message)."""
    folder = Path(ns_of(wildcards).evidence["original"])
    return [str(folder / f) for f in ("comparison-results.json", "comparison-profiles.json")
            if (folder / f).exists()]


rule import_original:
    output:
        spans="work/{ns}/original/spans.parquet",
        checks="work/{ns}/original/checks.parquet",
        kernels="work/{ns}/original/kernels.parquet",
        environment="work/{ns}/original/environment.json",
    input:
        original=original_files,
        code=module("original"),
    params:
        folder=lambda w: ns_of(w).evidence["original"],
    script:
        "../scripts/import_original.py"
