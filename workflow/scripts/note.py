import json

import pandas as pd

from fieldnote import note
from fieldnote.io import write_bytes
from fieldnote.script import entry


@entry
def main(snakemake):
    i = snakemake.input
    tables = {name: pd.read_parquet(i[name]) for name in snakemake.params.tables}
    environment = json.loads(open(i.environment).read())
    text = note.render(snakemake.wildcards.ns, snakemake.params.description, environment, tables)
    write_bytes(snakemake.output[0], text.encode())


main(snakemake)  # noqa: F821
