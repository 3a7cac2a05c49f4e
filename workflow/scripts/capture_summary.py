import pandas as pd

from fieldnote.capture.summary import summarize
from fieldnote.io import write_table
from fieldnote.script import entry


@entry
def main(snakemake):
    summary = summarize(pd.read_parquet(snakemake.input.kernels))
    summary.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], summary)


main(snakemake)  # noqa: F821
