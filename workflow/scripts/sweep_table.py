"""The sweep table: kernel time per call at each point against the roofline, plus the points left out (a launch
contract that does not take the shape, or a failed check)."""
from fieldnote.core.io import write_table
from fieldnote.evidence.summary import summarize
from fieldnote.evidence.sweep import failed_points, table
from fieldnote.script import entry

import pandas as pd


@entry
def main(snakemake):
    p = snakemake.params
    kernels = pd.read_parquet(snakemake.input.kernels)
    rows = table(summarize(kernels), p.roofline, kernels)
    failed = failed_points(pd.read_parquet(snakemake.input.checks))
    skipped = pd.DataFrame(p.skipped + failed, columns=["op", "implementation", "variant", "shape", "reason"])
    write_table(snakemake.output[0], pd.concat([rows.assign(reason=None), skipped], ignore_index=True))


main(snakemake)  # noqa: F821
