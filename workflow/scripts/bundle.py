from fieldnote.bundle import assemble
from fieldnote.script import entry


@entry
def main(snakemake):
    i = snakemake.input
    assemble(snakemake.output[0], {"checks": i.checks, "resources": i.resources, "census": i.census},
             list(i.hashes), snakemake.params.resolved)


main(snakemake)  # noqa: F821
