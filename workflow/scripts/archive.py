from pathlib import Path

from fieldnote.archive import pack
from fieldnote.script import entry


@entry
def main(snakemake):
    pack(snakemake.wildcards.ns, Path(snakemake.input.bundle), Path("."), Path(snakemake.output[0]))


main(snakemake)  # noqa: F821
