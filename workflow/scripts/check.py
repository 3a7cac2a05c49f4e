"""Run one (op, implementation) through the correctness gate; a failure fails the job, naming the case."""
from fieldnote.script import entry

import os
from pathlib import Path


@entry
def main(snakemake):
    w, params = snakemake.wildcards, snakemake.params
    device, impl = params.device, params.subject["implementation"]
    if device == "cuda":
        from fieldnote.measure import gpu
        gpu.require(f"check_gpu ({w.op}, {w.subject})", f"results/{w.ns}")
    elif impl == "triton":
        os.environ["TRITON_INTERPRET"] = "1"  # read when the kernel module is imported, so set it first

    from fieldnote.core.progress import PREPARE, phase

    with phase(PREPARE):
        from fieldnote.measure import check, gpulock, inputs
        if impl == "triton" and device == "cpu":
            from fieldnote.measure.triton_compat import fix_interpreter_scalar_index
            fix_interpreter_scalar_index()
        from fieldnote.core.io import write_table
        from fieldnote.measure.implementations import runner
        from fieldnote.registry.ops import OPS
        from fieldnote.registry.subjects import attributes, describe

        op = params.op
        variant = OPS[w.op].variant(params.subject["variant"]) if params.subject["variant"] else None
        run = runner(w.op, impl, variant, Path(snakemake.input.cubin) if variant else None)
        interpreted = device == "cpu" and impl == "triton"  # the interpreter is too slow for the full shapes
        cases = check.cases(w.op, op["shape"], op["seed"], inputs.read(snakemake.input.npz), small_only=interpreted,
                            implementation=impl)
    table = check.run_checks(run, w.op, w.subject, device, cases, op["tolerance"],
                             hold=gpulock.per_case(impl, device))
    table["gpu_alone"] = [gpulock.alone(impl, device, case.measured) for case in cases]  # a row per case
    table = describe(table, attributes(w.op, {w.subject: params.subject}, op["shape"]))
    if interpreted:
        table["device"] = "triton-interpreter"
    failed = check.failures(table)
    if failed:
        write_table(Path(snakemake.output[0]).with_suffix(".failed.parquet"), table)
    check.gate(table)
    if impl == "compiled":  # what Inductor chose at the namespace's shape is evidence (issue 17)
        from fieldnote.measure.implementations import inductor_choice

        with gpulock.for_check(impl, device):
            choice = inductor_choice(w.op, cases[0].inputs, device)
        if snakemake.input.get("tune"):
            from fieldnote.measure.tune import kept_choice

            kept_choice(snakemake.input.tune, choice, f"{w.ns}: {w.op} / compiled")
        table = table.assign(**{k: [v if c == "full" else None for c in table["case"]] for k, v in choice.items()})
    write_table(snakemake.output[0], table)


main(snakemake)  # noqa: F821
