"""The correctness gate at the sweep points of one op at one shape: each implementation on inputs drawn at that
shape. A point that fails is recorded and never captured; the op's other points go on."""
from fieldnote.core.progress import PREPARE, phase
from fieldnote.core.progress import log as progress
from fieldnote.measure import gpu
from fieldnote.script import entry


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    gpu.require(f"sweep_check ({w.op})", f"results/{w.ns}")
    from fieldnote.core.io import write_table
    from fieldnote.measure import check, gpulock
    from fieldnote.measure.implementations import runner
    from fieldnote.registry.ops import OPS
    from fieldnote.registry.subjects import attributes, describe

    from pathlib import Path

    import pandas as pd

    spec, tables, cases = OPS[w.op], [], {}
    for number, (name, s) in enumerate(p.points.items(), 1):
        progress.info("sweep point %d of %d: %s", number, len(p.points), name)
        with phase(PREPARE):
            label = spec.label(s["shape"])
            if label not in cases:  # the inputs drawn once per shape, for every implementation
                cases = {label: check.Case("sweep", s["shape"], s["seed"], spec.inputs(s["shape"], s["seed"]))}
            run = runner(w.op, s["implementation"], spec.variant(s["variant"]) if s["variant"] else None,
                         Path(s["cubin"]) if s["cubin"] else None)
        impl = s["implementation"]  # torch.compile's timings at a sweep point alone: the point is measured
        tables.append(check.run_checks(run, w.op, name, "cuda", [cases[label]], p.tolerance,
                                       hold=gpulock.per_case(impl)))
        tables[-1]["gpu_alone"] = gpulock.alone(impl, "cuda", cases[label].measured)
        failed = check.failures(tables[-1])
        if failed:
            print(f"fieldnote: {failed} (recorded; this point is not captured)", flush=True)
    write_table(snakemake.output[0], describe(pd.concat(tables, ignore_index=True), attributes(w.op, p.points)))


main(snakemake)  # noqa: F821
