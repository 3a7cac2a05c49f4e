from pathlib import Path

from fieldnote.build import cuda
from fieldnote.io import write_bytes, write_json
from fieldnote.ops import OPS
from fieldnote.script import entry


@entry
def main(snakemake):
    w, out = snakemake.wildcards, snakemake.output
    variant = OPS[w.op].variant(w.variant)
    cubin, ptx, report = cuda.build(Path(snakemake.input.source), variant.contract.entry, variant.target(w.arch))
    write_bytes(out.cubin, cubin)
    write_bytes(out.ptx, ptx.encode())
    write_json(out.report, {"op": w.op, "variant": w.variant, "design": variant.design,
                            "nvrtc_version": cuda.nvrtc_version(), **report})


main(snakemake)  # noqa: F821
