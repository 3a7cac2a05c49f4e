from fieldnote import kernels
from fieldnote.build import triton
from fieldnote.io import write_bytes, write_json
from fieldnote.progress import COMPILE, phase
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
