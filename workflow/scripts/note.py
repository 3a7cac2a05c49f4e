import json

import pandas as pd

from fieldnote import note
from fieldnote.errors import PipelineError
from fieldnote.io import write_bytes
from fieldnote.script import entry


def history(snakemake) -> dict:
    i, p = snakemake.input, snakemake.params
    views = {}
    if p.progression:
        summaries = {ns: pd.read_parquet(path) for ns, path in zip(p.progression["namespaces"], i.progression,
                                                                    strict=True)}
        views["progression"] = (summaries, p.progression.get("changes", {}))
    if p.drift:
        summary, kernels = (pd.read_parquet(path) for path in i.drift)
        views["drift"] = (p.drift["baseline"], (summary, kernels))
    return views


@entry
def main(snakemake):
    i = snakemake.input
    tables = {name: pd.read_parquet(i[name]) for name in snakemake.params.tables}
    environment = json.loads(open(i.environment).read())
    p = snakemake.params
    roofline = (p.shapes, p.roofline) if p.roofline else None
    try:
        text = note.render(snakemake.wildcards.ns, p.description, environment, tables, history(snakemake), roofline,
                           p.targets, p.provenance)
    except PipelineError as e:  # a target missed and not explained: the namespace file is where to say why
        raise PipelineError(f"{p.namespace_file}: {e}") from None
    write_bytes(snakemake.output[0], text.encode())


main(snakemake)  # noqa: F821
