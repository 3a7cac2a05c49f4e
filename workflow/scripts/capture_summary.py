from fieldnote.core.io import write_table
from fieldnote.evidence.measurements import control_band
from fieldnote.evidence.summary import summarize
from fieldnote.script import entry

import pandas as pd


@entry
def main(snakemake):
    summary = control_band(summarize(pd.read_parquet(snakemake.input.kernels)), snakemake.params.margin)
    summary.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], summary)


main(snakemake)  # noqa: F821
