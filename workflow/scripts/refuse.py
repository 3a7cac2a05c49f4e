from fieldnote.errors import PipelineError
from fieldnote.gpu import STOP_MESSAGE
from fieldnote.script import entry


@entry
def main(snakemake):
    w = snakemake.wildcards
    message = snakemake.params.message.format(path=f"work/{w.ns}/{w.get('measurement', '')}")
    STOP_MESSAGE.parent.mkdir(exist_ok=True)
    STOP_MESSAGE.write_text(f"fieldnote: {message}\n")
    raise PipelineError(message)


main(snakemake)  # noqa: F821
