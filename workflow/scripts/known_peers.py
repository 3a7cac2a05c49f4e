"""The known_peers table: each peer's fastest kernel time the pinned archives recorded on this GPU model at this
namespace's shapes (peers.known)."""
from fieldnote.core.io import write_table
from fieldnote.evidence.archive import Archive
from fieldnote.publish.peers import known
from fieldnote.script import entry

import json


@entry
def main(snakemake):
    gpu = json.load(open(snakemake.input.gpu))["gpu"]
    archives = {name: Archive(path) for name, path in snakemake.params.archives.items()}
    table = known(gpu, {tuple(pair) for pair in snakemake.params.shapes}, archives)
    table.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], table)


main(snakemake)  # noqa: F821
