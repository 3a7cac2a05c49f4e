from pathlib import Path

from fieldnote.archive import Archive
from fieldnote.io import write_bytes
from fieldnote.script import entry


@entry
def main(snakemake):
    archive = Archive(snakemake.input.archive)
    archive.verify()
    for path in snakemake.output.tables:
        write_bytes(path, archive.bundle_file(f"evidence/{Path(path).name}"))
    for path in snakemake.output.history:
        write_bytes(path, archive.bundle_file(f"evidence/history/{Path(path).name}"))
    write_bytes(snakemake.output.environment, archive.bundle_file("evidence/environment.json"))


main(snakemake)  # noqa: F821
