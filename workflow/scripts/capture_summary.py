import pandas as pd

from fieldnote.capture import range_name
from fieldnote.capture.summary import in_range, summarize
from fieldnote.io import write_table
from fieldnote.script import entry


@entry
def main(snakemake):
    kernels = pd.read_parquet(snakemake.input.kernels)
    groups = kernels.groupby(["op", "implementation"])
    ranged = pd.concat([in_range(g, range_name(op, impl)) for (op, impl), g in groups])
    summary = summarize(ranged)
    summary.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], summary)


main(snakemake)  # noqa: F821
