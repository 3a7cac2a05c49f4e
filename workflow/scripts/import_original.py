from fieldnote.core.io import write_json, write_table
from fieldnote.evidence import original
from fieldnote.script import entry


@entry
def main(snakemake):
    tables = original.load(snakemake.params.folder)
    for name in ("spans", "checks", "kernels"):
        write_table(snakemake.output[name], tables[name])
    write_json(snakemake.output.environment, tables["environment"])


main(snakemake)  # noqa: F821
