from fieldnote.evidence.archive import pack, sha256_of
from fieldnote.script import entry

import sys
from pathlib import Path


@entry
def main(snakemake):
    dest = Path(snakemake.output[0])
    replayed = snakemake.params.replayed
    pack(snakemake.wildcards.ns, Path(snakemake.input.bundle), Path("."), dest, Path(replayed) if replayed else None)
    print(f"fieldnote: packed {dest}; to rebuild {snakemake.wildcards.ns} from it from now on, move it to archives/ "
          f"and pin it in its namespace file: archived: {{archive: archives/{dest.name}, sha256: {sha256_of(dest)}}}",
          file=sys.stderr)


main(snakemake)  # noqa: F821
