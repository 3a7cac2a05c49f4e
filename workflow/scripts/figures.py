from fieldnote.publish import figures
from fieldnote.script import entry

from pathlib import Path

import pandas as pd


@entry
def main(snakemake):
    folder, ns = Path(snakemake.output[0]), snakemake.wildcards.ns
    figures.draw_all(pd.read_parquet(snakemake.input.summary), ns, folder)
    if snakemake.params.progression:
        summaries = {name: pd.read_parquet(path) for name, path in zip(snakemake.params.progression,
                                                                      snakemake.input.progression, strict=True)}
        stages = figures.stage_rows(summaries)
        figures.save(figures.progression(stages, namespace=ns), folder, "progression", figures.stage_values(stages))
    if snakemake.input.sweep:
        table = pd.read_parquet(snakemake.input.sweep[0]).dropna(subset=["kernel_us"])
        for op in table["op"].unique():
            figures.save(figures.sweep(table, op, snakemake.params.roofline, ns), folder, f"sweep-{op}",
                         figures.sweep_values(table, op))


main(snakemake)  # noqa: F821
