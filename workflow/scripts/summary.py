import pandas as pd

from fieldnote.io import write_table
from fieldnote.measurements import summary
from fieldnote.script import entry


@entry
def main(snakemake):
    i = snakemake.input
    table = summary(pd.read_parquet(i.capture_summary), pd.read_parquet(i.spans))
    table.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], table)


main(snakemake)  # noqa: F821
