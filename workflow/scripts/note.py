from fieldnote.core.errors import PipelineError
from fieldnote.core.io import write_bytes, write_table
from fieldnote.evidence import history
from fieldnote.publish import authored, note, verdicts
from fieldnote.script import entry

import json
from pathlib import Path

import pandas as pd


@entry
def main(snakemake):
    i, p = snakemake.input, snakemake.params
    tables = {name: pd.read_parquet(i[name]) for name in p.tables}
    environment = json.loads(open(i.environment).read())
    roofline = (p.shapes, p.roofline) if p.roofline else None
    authored.refuse_typed_prose(p.namespace_file, p.description, p.progression, p.targets, p.attempts)
    views = history.views(p.progression, p.drift, i.get("progression", ()), i.get("drift", ()))
    predictions = tuple((p.config or {}).get("predictions") or ())
    try:
        judged = verdicts.judged(tables, p.targets, predictions)  # the targets' and predictions' comparisons
        rows = pd.read_parquet(i.verdicts)  # what the note words: made by the verdicts job
        made = note.generated(snakemake.wildcards.ns, tables, views, roofline, p.targets, predictions, rows)
        if p.template:
            past = {Path(name).name.removesuffix(".parquet"): pd.read_parquet(path)
                    for name, path in zip(p.history, i.history, strict=True)}
            evidence = authored.Evidence(snakemake.wildcards.ns, tables, environment,
                                         authored.history_tables(past), p.config)
            rendered = authored.render(Path(i.template), evidence, made, p.figures, (p.config or {}).get("note"),
                                       judged)
            text, claims = rendered.text, rendered.claims  # never an unpinned archive's: its note is generated
        else:
            text = authored.generated_note(snakemake.wildcards.ns, p.description, environment, tables, views,
                                           roofline, p.targets, p.provenance, p.figures, made=made)
            placed = authored.Claims(p.namespace_file, judged=judged)
            for name in list(judged):  # the generated note places every table that makes verdicts
                placed.placed(name)
            claims = placed.table(snakemake.wildcards.ns)
    except PipelineError as e:  # a target missed and not explained: the namespace file is where to say why
        raise PipelineError(e.args[0] if p.template else f"{p.namespace_file}: {e}") from None
    write_table(snakemake.output.claims, claims)
    write_bytes(snakemake.output.note, text.encode())


main(snakemake)  # noqa: F821
