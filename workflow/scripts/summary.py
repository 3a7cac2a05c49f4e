"""The summary table, per op and implementation of the namespace; with `attempts`, the attempts table from the same
values (every subject's), and the sanitizer's reasons for any attempt its gate left out."""
from fieldnote.core.io import write_table
from fieldnote.evidence.measurements import attempts, summary
from fieldnote.measure.sanitize import refusals
from fieldnote.registry.subjects import adopted
from fieldnote.script import entry

import pandas as pd


@entry
def main(snakemake):
    i, p = snakemake.input, snakemake.params
    table = summary(pd.read_parquet(i.capture_summary), pd.read_parquet(i.spans), pd.read_parquet(i.kernels))
    table.insert(0, "namespace", snakemake.wildcards.ns)
    if p.attempts is None:
        write_table(snakemake.output[0], adopted(table).drop(columns="subject"))
    else:
        found = list(i.sanitizer) if "sanitizer" in i.keys() else []
        sanitizer = pd.read_parquet(found[0]) if found else None
        write_table(snakemake.output[0], attempts(table, p.attempts, refusals(sanitizer)))


main(snakemake)  # noqa: F821
