from fieldnote.errors import PipelineError
from fieldnote.gpu import STOP_MESSAGE
from fieldnote.script import entry


@entry
def main(snakemake):
    w = snakemake.wildcards
    message = (f"namespace {w.ns} is archived ({snakemake.params.archived}): its evidence is never measured "
               f"again nor overwritten, so work/{w.ns}/{w.measurement} is refused. results/{w.ns} is rebuilt "
               f"from the archive; to measure again, declare a new namespace.")
    STOP_MESSAGE.parent.mkdir(exist_ok=True)
    STOP_MESSAGE.write_text(f"fieldnote: {message}\n")
    raise PipelineError(message)


main(snakemake)  # noqa: F821
