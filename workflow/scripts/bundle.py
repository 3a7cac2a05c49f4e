from fieldnote.evidence.bundle import assemble
from fieldnote.script import entry


@entry
def main(snakemake):
    i, p = snakemake.input, snakemake.params
    assemble(snakemake.output[0], {name: i[name] for name in p.tables}, list(i.hashes), p.resolved, note=i.note,
             environment=i.environment, figures=i.figures, samples=p.samples, provenance=p.provenance,
             history=dict(zip(p.history, i.history, strict=True)), page=i.page,
             template=i.template if isinstance(i.template, str) else None)


main(snakemake)  # noqa: F821
