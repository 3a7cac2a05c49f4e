"""The sweep table: kernel time per call at each point against the roofline, plus the points left out."""
import pandas as pd

from fieldnote.capture.summary import summarize
from fieldnote.io import write_table
from fieldnote.script import entry
from fieldnote.sweep import table


@entry
def main(snakemake):
    p = snakemake.params
    rows = table(summarize(pd.read_parquet(snakemake.input.kernels)), p.roofline)
    skipped = pd.DataFrame(p.skipped, columns=["op", "implementation", "shape", "reason"])
    write_table(snakemake.output[0], pd.concat([rows.assign(reason=None), skipped], ignore_index=True))


main(snakemake)  # noqa: F821
