"""compute-sanitizer over one hand-written variant (sanitize.py): the table, whatever it found; the
timing and capture jobs refuse a variant with an error."""
from fieldnote.core.io import write_table
from fieldnote.core.progress import SANITIZE, phase, step
from fieldnote.measure import gpu
from fieldnote.script import entry

import tempfile
from pathlib import Path


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    gpu.require(f"sanitize ({w.op})", f"results/{w.ns}")
    from fieldnote.measure import sanitize
    job = {"op": w.op, "variants": {w.variant: snakemake.input.cubin}, "seed": p.seed}
    with tempfile.TemporaryDirectory(prefix="sanitize-") as workdir, step(
            f"sanitize {w.op}/{w.variant} under {', '.join(sanitize.TOOLS)}"), phase(SANITIZE):
        table = sanitize.sanitize(job, Path(workdir))
    table.insert(0, "op", w.op)
    write_table(snakemake.output[0], table)


main(snakemake)  # noqa: F821
