"""Nsight Compute's counters at the sweep points a target of the namespace names (ours, and the peer it is held
against), each point alone: what limits a kernel where the note judges it."""
from fieldnote.core.io import write_table
from fieldnote.core.progress import step
from fieldnote.measure import gpu
from fieldnote.registry.subjects import attributes, describe
from fieldnote.script import entry

import tempfile


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    gpu.require(f"sweep_counters ({w.op})", f"results/{w.ns}")
    from fieldnote.evidence.sweep import passed
    from fieldnote.measure.capture import ncu
    from fieldnote.measure.capture.ncu import counters_at

    import pandas as pd

    points = passed(p.points, pd.concat(map(pd.read_parquet, snakemake.input.checks)))
    with tempfile.TemporaryDirectory(prefix="sweep-ncu-") as workdir, step(
            f"sweep counters: {len(points)} points of {w.op}, one ncu process each"):
        table = counters_at(w.op, points, p.capture, p.tolerance, w.ns, workdir)
    table.insert(0, "backend_version", ncu.version())
    table.insert(0, "backend", "ncu")
    table.insert(0, "op", w.op)
    write_table(snakemake.output[0], describe(table, attributes(w.op, points)))


main(snakemake)  # noqa: F821
