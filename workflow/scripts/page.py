from pathlib import Path

from fieldnote import page
from fieldnote.io import write_bytes
from fieldnote.script import entry


@entry
def main(snakemake):
    i = snakemake.input
    text = page.render(Path(i.note).read_text(), Path(i.figures), f"{snakemake.wildcards.ns}: field note",
                       snakemake.params.provenance)
    write_bytes(snakemake.output[0], text.encode())


main(snakemake)  # noqa: F821
