"""The table registry (fieldnote/evidence/tables.py) against the evidence the repository ships: every table of every
shipped archive's bundle is registered, and each of its columns documented; the generated reference is current."""
import io
import tarfile

import pandas as pd
import pytest
from conftest import ROOT

from fieldnote.evidence import tables
from fieldnote.publish import docs

ARCHIVES = sorted((ROOT / "archives").glob("*.tar.gz"))
FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("h200-*-kernels.parquet"))


def bundled(archive):
    """(table name, columns) of each evidence table in an archive's bundle, history views left out."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if parts[1:3] == ["bundle", "evidence"] and len(parts) == 4 and member.name.endswith(".parquet"):
                frame = pd.read_parquet(io.BytesIO(tar.extractfile(member).read()))
                yield parts[3].removesuffix(".parquet"), set(frame.columns)


@pytest.mark.parametrize("archive", ARCHIVES, ids=lambda p: p.name)
def test_every_shipped_table_and_column_is_in_the_registry(archive):
    seen = list(bundled(archive))
    assert seen
    for name, columns in seen:
        assert name in tables.TABLES, f"{archive.name}: table {name} is not registered"
        assert columns <= tables.TABLES[name].column_names, (
            f"{archive.name}: {name} has undocumented columns {sorted(columns - tables.TABLES[name].column_names)}")


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_captures_from_the_h200_carry_only_documented_kernel_columns(fixture):
    assert set(pd.read_parquet(fixture).columns) - {"namespace"} <= tables.TABLES["kernels"].column_names


def test_the_reference_in_the_docs_is_the_registry_s():
    page = (ROOT / "docs" / "reference.md").read_text()
    assert docs.reference(page) == page, "docs/reference.md is stale: run python -m fieldnote.publish.docs"
    for name in tables.TABLES:
        assert f"`{name}` (one row per" in page


def test_the_tables_measured_since_the_last_archive_are_documented_too():
    """The ceilings table and the summary's cold columns, made from a real H200 capture (tests/test_ceiling.py)."""
    from fieldnote.evidence import floors
    from fieldnote.evidence.measurements import kernel_interval
    from fieldnote.registry.config import load_defaults

    kernels = pd.read_parquet(ROOT / "tests" / "fixtures" / "h200-ceiling-kernels.parquet")
    shapes = load_defaults(ROOT / "config" / "config.yaml")["shapes"]
    assert set(floors.table(kernels, shapes, "nsys").columns) <= tables.TABLES["ceilings"].column_names
    cold = kernel_interval(kernels, "nsys", "cold").rename(columns=lambda n: n.replace("kernel_", "kernel_cold_"))
    assert set(cold.columns) - {"subject"} <= tables.TABLES["summary"].column_names  # summary: no attempts
