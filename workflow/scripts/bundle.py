from fieldnote.bundle import assemble
from fieldnote.script import entry

TABLES = ("checks", "resources", "census", "spans", "gpu_state", "kernels", "capture_summary")


@entry
def main(snakemake):
    i = snakemake.input
    tables = {name: i[name] for name in TABLES}
    if i.counters:
        tables["counters"] = i.counters[0]
    assemble(snakemake.output[0], tables, list(i.hashes), snakemake.params.resolved)


main(snakemake)  # noqa: F821
