from fieldnote.core.io import write_bytes, write_table
from fieldnote.evidence.archive import Archive, read_table
from fieldnote.evidence.migrate import migrate
from fieldnote.evidence.plausible import check_columns, check_plausible, check_required
from fieldnote.script import entry

from pathlib import Path

import pandas as pd


def table_of(name: str) -> str:
    """The registry's name of evidence/<table>.parquet, or of another namespace's evidence/history/<ns>.<table>
    .parquet (a name has no dots: Archive.verify checked both)."""
    return Path(name).name.removesuffix(".parquet").split(".")[-1]


def readable(archive: Archive, name: str, data: bytes) -> pd.DataFrame:
    """A table of the archive, decoded only within the limits (read_table), its columns its registry entry's,
    its values plausible."""
    where = f"archive {archive.path}: {name}"
    frame = read_table(data, where)
    check_columns(where, table_of(name), frame)
    check_plausible(where, frame)
    return frame


def in_layout(archive: Archive, name: str, frame: pd.DataFrame, layout: dict) -> pd.DataFrame:
    """The table in today's layout (evidence archived before subjects, subjects.py, is read into it; the rest is
    as it was), with every column its readers take."""
    new = migrate(frame, layout.get("variants", {}), layout.get("shapes", {}), table_of(name))
    check_required(f"archive {archive.path}: {name}", table_of(name), new)
    return new


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
            layout = layouts.get(Path(name).name.split(".")[0] if "/history/" in name else own["name"], {})
            new = in_layout(archive, name, frame, layout)
            if not new.equals(frame):  # a summary comes back anew even in this layout: keep the archive's bytes
                migrated[path] = new
    for path, data in contents.items():
        if path in migrated:
            write_table(path, migrated[path])
        else:
            write_bytes(path, data)


if "snakemake" in globals():  # run by Snakemake; imported by a test for its functions
    main(snakemake)  # noqa: F821
