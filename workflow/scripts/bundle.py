from fieldnote.bundle import assemble
from fieldnote.script import entry


@entry
def main(snakemake):
    i = snakemake.input
    assemble(snakemake.output[0], {name: i[name] for name in snakemake.params.tables}, list(i.hashes),
             snakemake.params.resolved, note=i.note, environment=i.environment, figures=i.figures,
             samples=snakemake.params.samples, provenance=snakemake.params.provenance,
             history=dict(zip(snakemake.params.history, i.history, strict=True)))


main(snakemake)  # noqa: F821
