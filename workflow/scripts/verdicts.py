from fieldnote.core.io import write_table
from fieldnote.evidence import history
from fieldnote.publish import verdicts
from fieldnote.script import entry

import pandas as pd


@entry
def main(snakemake):
    i, p = snakemake.input, snakemake.params
    tables = {name: pd.read_parquet(i[name]) for name in p.tables}
    roofline = (p.shapes, p.roofline) if p.roofline else None
    predictions = tuple((p.config or {}).get("predictions") or ())
    views = history.views(p.progression, p.drift, i.get("progression", ()), i.get("drift", ()))
    rows = verdicts.verdict_table(snakemake.wildcards.ns, tables, roofline, p.targets, predictions, views)
    write_table(snakemake.output[0], rows)


main(snakemake)  # noqa: F821
