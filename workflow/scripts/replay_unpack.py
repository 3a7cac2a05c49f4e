import io
from pathlib import Path

import pandas as pd

from fieldnote.archive import Archive
from fieldnote.errors import PipelineError
from fieldnote.evidence import check_plausible
from fieldnote.io import write_bytes
from fieldnote.script import entry


@entry
def main(snakemake):
    archive = Archive(snakemake.input.archive)
    archive.verify()
    files = {path: f"evidence/{Path(path).name}" for path in snakemake.output.tables}
    files.update({path: f"evidence/history/{Path(path).name}" for path in snakemake.output.history})
    files[snakemake.output.environment] = "evidence/environment.json"
    files.update({path: "note.template.md" for path in snakemake.output.template})
    contents = {path: archive.bundle_file(name) for path, name in files.items()}
    for path, name in files.items():  # every table plausible before any is written
        if name.endswith(".parquet"):
            try:
                frame = pd.read_parquet(io.BytesIO(contents[path]))
            except Exception as e:  # pyarrow raises several types for a damaged file
                raise PipelineError(f"archive {archive.path}: {name} is not a readable table ({e})") from None
            check_plausible(f"archive {archive.path}: {name}", frame)
    for path, data in contents.items():
        write_bytes(path, data)


main(snakemake)  # noqa: F821
