from fieldnote.measure import inputs
from fieldnote.registry.ops import OPS
from fieldnote.script import entry


@entry
def main(snakemake):
    op, w = OPS[snakemake.wildcards.op], snakemake.wildcards
    inputs.write(op.name, op.parse_label(w.shape), int(w.seed), snakemake.output.npz, snakemake.output.hashes)


main(snakemake)  # noqa: F821
