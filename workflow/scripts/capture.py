"""Capture one op with one backend: nsys and cupti take every implementation in one session (kernels), ncu one
implementation at a time (counters)."""
from fieldnote.core.io import write_table
from fieldnote.core.progress import log as progress
from fieldnote.core.progress import step
from fieldnote.measure import gpu
from fieldnote.registry.subjects import attributes, describe
from fieldnote.script import entry

import os
import tempfile
from pathlib import Path


def raw_copy(w, name: str) -> Path | None:
    """Where to keep the profiler's own report too, when FIELDNOTE_KEEP_RAW names a folder (fixtures, debugging)."""
    folder = os.environ.get("FIELDNOTE_KEEP_RAW")
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder) / f"{w.ns}-{w.backend}-{name}"


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    name = "-".join([w.op, *p.subjects])
    gpu.require(f"capture ({w.backend}: {name})", f"results/{w.ns}")
    from fieldnote.measure import capture, sanitize
    from fieldnote.measure.capture import backends

    subjects = sanitize.gate(snakemake, p.subjects, f"{w.ns}: {w.op}")

    backend = backends.backend(w.backend)
    job = capture.Job(op=w.op, subjects=subjects, npz=snakemake.input.npz, shape=p.op["shape"],
                      iterations=p.capture["iterations"], warmup=p.capture["warmup"],
                      repeats=p.capture["repeats"] if w.backend != "ncu" else 1, tolerance=p.op["tolerance"],
                      namespace=w.ns,
                      caches=tuple(p.capture.get("cache", ["warm"])) if w.backend != "ncu" else ("warm",),
                      ceiling=p.capture["ceiling"] and w.backend != "ncu")
    with tempfile.TemporaryDirectory(prefix=f"capture-{w.backend}-") as workdir, step(
            f"capture {w.backend}: {name}, {job.repeats} x {job.iterations} iterations (profiler start to export)"):
        table = capture.session(backend, job, workdir, raw_copy(w, name))
    progress.info("captured %d kernel launches", len(table))
    table.insert(0, "backend_version", backend.version())
    table.insert(0, "backend", w.backend)
    table.insert(0, "op", w.op)
    write_table(snakemake.output[0], describe(table, attributes(w.op, subjects, p.op["shape"])))


main(snakemake)  # noqa: F821
