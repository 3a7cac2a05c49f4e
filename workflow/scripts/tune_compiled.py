"""torch.compile's tunes of one op at its seed shape, each in a fresh cache of its own (fieldnote/measure/tune.py)."""
from fieldnote.measure import gpu
from fieldnote.script import entry

from pathlib import Path


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    gpu.require(f"tune_compiled ({w.op})", f"results/{w.ns}")
    from fieldnote.core.io import write_table
    from fieldnote.measure import tune
    from fieldnote.registry.ops import OPS

    request = {"op": w.op, "shape": p.op["shape"], "label": OPS[w.op].label(p.op["shape"]), "npz": snakemake.input.npz,
               "tolerance": p.op["tolerance"], "iterations": p.timing["iterations"], "warmup": p.timing["warmup"]}
    write_table(snakemake.output.tunes, tune.tunes(request, Path(snakemake.output.cache), p.timing["compiled_tunes"]))


main(snakemake)  # noqa: F821
