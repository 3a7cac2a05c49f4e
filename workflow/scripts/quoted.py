from fieldnote.core.io import write_table
from fieldnote.evidence.quotations import quoted_table
from fieldnote.script import entry

from pathlib import Path


@entry
def main(snakemake):
    write_table(snakemake.output[0], quoted_table(Path(snakemake.input.quotations)))


main(snakemake)  # noqa: F821
