from fieldnote.core.io import write_json
from fieldnote.measure import gpu
from fieldnote.script import entry


@entry
def main(snakemake):
    gpu.require("gpu_probe, the first GPU stage (then check_gpu, time, capture, sweep)",
                f"results/{snakemake.wildcards.ns}")
    write_json(snakemake.output[0], gpu.describe())


main(snakemake)  # noqa: F821
