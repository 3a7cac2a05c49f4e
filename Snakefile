# The evidence pipeline for GPU-kernel field notes: `snakemake --cores 1 results/<namespace>`.
from snakemake.logging import logger
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/inputs.smk"
include: "workflow/rules/build.smk"
include: "workflow/rules/check.smk"
include: "workflow/rules/sanitize.smk"
include: "workflow/rules/time.smk"
include: "workflow/rules/capture.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/original.smk"
include: "workflow/rules/note.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/archive.smk"
include: "workflow/rules/bundle.smk"


# On a cluster (profiles/slurm), the rules that only gather, copy or pack what other jobs wrote run in the
# main Snakemake process; everything else is a cluster job.
localrules:
    all,
    unknown_namespace,
    resources,
    census,
    kernels,
    counters,
    checks,
    spans,
    compiled_tunes,
    sanitizer,
    sweep_collect,
    quoted,
    archive,
    bundle,


onstart:
    STOP_MESSAGE.unlink(missing_ok=True)
    remove_leftovers(Path("results"), Path("work"))  # what jobs killed mid-write left behind


onerror:
    # Each job that refused (no GPU, an archived namespace, bad input) said why in one line: those lines, last,
    # through Snakemake's logger, whose console writes from a thread of its own (a print would split its lines)
    for line in refusals():
        logger.error(line)


rule all:
    input:
        expand("results/{ns}", ns=[*REBUILT, *BROKEN]),


check_outputs(workflow.rules)
