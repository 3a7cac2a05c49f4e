"""Capture every sweep point of one op (each implementation at each shape) that passed its check, in one profiled
session."""
from fieldnote.core.io import write_table
from fieldnote.core.progress import step
from fieldnote.measure import gpu
from fieldnote.registry.subjects import attributes, describe
from fieldnote.script import entry

import tempfile


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    gpu.require(f"sweep_capture ({w.op})", f"results/{w.ns}")
    from fieldnote.evidence.sweep import passed
    from fieldnote.measure import capture
    from fieldnote.measure.capture import backends

    import pandas as pd

    backend = backends.backend(p.backend)
    points = passed(p.points, pd.concat(map(pd.read_parquet, snakemake.input.checks)))
    job = capture.Job(op=w.op, subjects=points, npz="", shape={}, iterations=p.capture["sweep_iterations"],
                      warmup=p.capture["sweep_warmup"], repeats=p.capture["repeats"], tolerance=p.tolerance,
                      namespace=w.ns)
    with tempfile.TemporaryDirectory(prefix=f"sweep-{p.backend}-") as workdir, step(
            f"sweep capture {p.backend}: {len(points)} points of {w.op} (profiler start to export)"):
        table = capture.session(backend, job, workdir)
    table.insert(0, "backend_version", backend.version())
    table.insert(0, "backend", p.backend)
    table.insert(0, "op", w.op)
    write_table(snakemake.output[0], describe(table, attributes(w.op, points)))


main(snakemake)  # noqa: F821
