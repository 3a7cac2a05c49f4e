"""The reference pages drawn from the schemas are current: a schema edit without `python -m fieldnote.publish.docs`
fails."""
from conftest import ROOT

from fieldnote.publish.docs import config_readme, reference


def test_config_readme_is_generated_from_the_schemas():
    assert (ROOT / "config" / "README.md").read_text() == config_readme()


def test_the_module_table_of_the_reference_is_current():
    page = (ROOT / "docs" / "reference.md").read_text()
    assert page == reference(page) and "`fieldnote/evidence/archive.py`" in page
