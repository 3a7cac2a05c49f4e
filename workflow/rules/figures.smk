# Stage 7, figures: drawn from the summary table alone, PNG and SVG.


rule figures:
    output:
        report(directory("work/{ns}/figures"), patterns=["{name}.png"], caption="../report/figures.rst",
               category="Figures", subcategory="{ns}"),
    input:
        summary="work/{ns}/summary.parquet",
        code=module("figures"),
    script:
        "../scripts/figures.py"
