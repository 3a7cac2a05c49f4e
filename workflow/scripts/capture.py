"""Capture one (op, implementation) with one backend; nsys/cupti give kernels, ncu gives counters."""
import os
import tempfile
from pathlib import Path

from fieldnote import gpu
from fieldnote.io import write_table
from fieldnote.script import entry


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    gpu.require(f"capture ({w.backend}: {w.op}, {w.impl})", f"results/{w.ns}")
    from fieldnote import capture

    backend = capture.backend(w.backend)
    job = capture.Job(op=w.op, implementation=w.impl, npz=snakemake.input.npz, shape=p.op["shape"],
                      variant=p.op["variant"] if w.impl == "cuda" else None, cubin=snakemake.input.get("cubin"),
                      iterations=p.capture["iterations"], warmup=p.capture["warmup"])
    keep = os.environ.get("FIELDNOTE_KEEP_RAW")  # a folder: keep the raw report there too (fixtures, debugging)
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        keep = Path(keep) / f"{w.ns}-{w.backend}-{w.op}-{w.impl}"
    with tempfile.TemporaryDirectory(prefix=f"capture-{w.backend}-") as workdir:
        table = backend.capture(job, Path(workdir), keep)
    for column, value in reversed(list({"op": w.op, "implementation": w.impl, "backend": w.backend,
                                        "backend_version": backend.version(), "capture": 0,
                                        "iterations": job.iterations}.items())):
        table.insert(0, column, value)
    write_table(snakemake.output[0], table)


main(snakemake)  # noqa: F821
