from fieldnote.core.io import write_bytes
from fieldnote.publish import page
from fieldnote.script import entry

from pathlib import Path


@entry
def main(snakemake):
    i = snakemake.input
    text = page.render(Path(i.note).read_text(), Path(i.figures), f"{snakemake.wildcards.ns}: field note",
                       snakemake.params.provenance)
    write_bytes(snakemake.output[0], text.encode())


main(snakemake)  # noqa: F821
