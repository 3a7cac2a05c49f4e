from fieldnote.core.io import write_bytes, write_json
from fieldnote.core.progress import COMPILE, phase
from fieldnote.measure import kernels
from fieldnote.measure.build import triton
from fieldnote.script import entry


@entry
def main(snakemake):
    w, out = snakemake.wildcards, snakemake.output
    with phase(COMPILE):
        cubin, ptx, report = triton.census(kernels.load("triton", w.op), w.arch)
    write_bytes(out.cubin, cubin)
    write_bytes(out.ptx, ptx.encode())
    write_json(out.report, {"op": w.op, **report})


main(snakemake)  # noqa: F821
