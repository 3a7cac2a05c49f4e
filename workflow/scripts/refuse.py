from fieldnote.errors import PipelineError
from fieldnote.gpu import STOP_MESSAGE
from fieldnote.script import entry


@entry
def main(snakemake):
    message = snakemake.params.message  # taken as it is: an archive's error may hold braces
    STOP_MESSAGE.parent.mkdir(exist_ok=True)
    STOP_MESSAGE.write_text(f"fieldnote: {message}\n")
    raise PipelineError(message)


main(snakemake)  # noqa: F821
