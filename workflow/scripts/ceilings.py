"""The ceilings table: the copies of each op's traffic and the probes of its precision contract's unit timed in its
capture session, per cache and configuration, each with the floor it sets for the op (floors.table)."""
from fieldnote.core.io import write_table
from fieldnote.evidence.floors import table
from fieldnote.script import entry

import pandas as pd


@entry
def main(snakemake):
    p = snakemake.params
    ceilings = table(pd.read_parquet(snakemake.input.kernels), p.shapes, p.backend)
    ceilings.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], ceilings)


main(snakemake)  # noqa: F821
