# Stage 7, figures: drawn from the summary table alone, PNG and SVG.


rule figures:
    output:
        directory("work/{ns}/figures"),
    input:
        summary="work/{ns}/summary.parquet",
        code=module("figures"),
    script:
        "../scripts/figures.py"
