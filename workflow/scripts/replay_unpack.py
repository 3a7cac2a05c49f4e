import io
from pathlib import Path

import pandas as pd

from fieldnote.archive import Archive
from fieldnote.errors import PipelineError
from fieldnote.io import write_bytes, write_table
from fieldnote.migrate import migrate
from fieldnote.plausible import check_plausible
from fieldnote.script import entry


def readable(archive: Archive, name: str, data: bytes) -> pd.DataFrame:
    try:
        return pd.read_parquet(io.BytesIO(data))
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise PipelineError(f"archive {archive.path}: {name} is not a readable table ({e})") from None


@entry
def main(snakemake):
    archive = Archive(snakemake.input.archive)
    archive.verify()
    files = {path: f"evidence/{Path(path).name}" for path in snakemake.output.tables}
    files.update({path: f"evidence/history/{Path(path).name}" for path in snakemake.output.history})
    files[snakemake.output.environment] = "evidence/environment.json"
    contents = {path: archive.bundle_file(name) for path, name in files.items()}
    own = archive.resolved()
    layouts = {**snakemake.params.layouts, own["name"]: {"variants": own["variants"], "shapes": own["shapes"]}}
    migrated = {}
    for path, name in files.items():  # every table plausible before any is written
        if name.endswith(".parquet"):
            frame = readable(archive, name, contents[path])
            check_plausible(f"archive {archive.path}: {name}", frame)
            # evidence archived before subjects (subjects.py) is read into today's layout; the rest as it is
            layout = layouts.get(Path(name).name.split(".")[0] if "/history/" in name else own["name"], {})
            new = migrate(frame, layout.get("variants", {}), layout.get("shapes", {}))
            if not new.equals(frame):  # a summary comes back anew even in this layout: keep the archive's bytes
                migrated[path] = new
    for path, data in contents.items():
        if path in migrated:
            write_table(path, migrated[path])
        else:
            write_bytes(path, data)


main(snakemake)  # noqa: F821
