"""One namespace table of kernels from its captures' tables, of each only what ran inside a measurement range
(capture/evidence.py); the captures' own tables in work/ keep the rest."""
from fieldnote.core.io import write_table
from fieldnote.core.progress import log as progress
from fieldnote.evidence.selection import measured
from fieldnote.script import entry

import pandas as pd


@entry
def main(snakemake):
    captured = pd.concat([pd.read_parquet(p) for p in snakemake.input.reports], ignore_index=True)
    table = measured(captured)
    progress.info("kept %d of %d kernels: the others ran outside every measurement range", len(table), len(captured))
    table.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], table)


main(snakemake)  # noqa: F821
