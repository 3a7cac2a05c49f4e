"""Build one hand-written variant with its toolchain (toolchains.py): the cubin, its PTX and the resources report."""
from fieldnote.core.io import write_bytes, write_json
from fieldnote.core.progress import COMPILE, phase
from fieldnote.measure.build import builder
from fieldnote.registry.ops import OPS
from fieldnote.registry.toolchains import TOOLCHAINS
from fieldnote.script import entry

from pathlib import Path


@entry
def main(snakemake):
    w, out = snakemake.wildcards, snakemake.output
    variant = OPS[w.op].variant(w.variant)
    toolchain = TOOLCHAINS[variant.toolchain]
    with phase(COMPILE):
        cubin, ptx, report = builder(toolchain).build(Path(snakemake.input.source), variant.contract.entry,
                                                      variant.target(w.arch))
    write_bytes(out.cubin, cubin)
    write_bytes(out.ptx, ptx.encode())
    write_json(out.report, {"op": w.op, "variant": w.variant, "design": variant.design,
                            "toolchain": toolchain.name, "compiler": builder(toolchain).version(), **report})


main(snakemake)  # noqa: F821
