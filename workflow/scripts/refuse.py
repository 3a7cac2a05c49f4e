from fieldnote.core.errors import PipelineError
from fieldnote.script import entry


@entry
def main(snakemake):
    raise PipelineError(snakemake.params.message)  # taken as it is: an archive's error may hold braces


main(snakemake)  # noqa: F821
