from pathlib import Path

import pandas as pd

from fieldnote.figures import draw_all
from fieldnote.script import entry


@entry
def main(snakemake):
    draw_all(pd.read_parquet(snakemake.input.summary), snakemake.wildcards.ns, Path(snakemake.output[0]))


main(snakemake)  # noqa: F821
