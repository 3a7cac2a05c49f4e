"""Only stale stages rerun: proven with Snakemake's own dry run on a namespace that needs no GPU."""
import re
import shutil
from pathlib import Path

import pytest
from conftest import SEED_EVIDENCE, copy_project, snakemake
from test_workflow import job_counts

pytestmark = pytest.mark.skipif(not (SEED_EVIDENCE / "mage-006").exists(), reason="../shared/seed-evidence absent")


@pytest.fixture(scope="module")
def rendered_once(tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("rendered"))
    for path in (project / "config" / "namespaces").glob("original-*.yaml"):
        path.write_text(path.read_text().replace("../shared/seed-evidence", str(SEED_EVIDENCE)))
    run = snakemake(project, "--cores", "2", "results/original-mage-006")
    assert run.returncode == 0, run.stderr
    return project


@pytest.fixture
def rendered(rendered_once: Path, tmp_path: Path) -> Path:
    """A copy of the rendered project, times and Snakemake's records included, for one test to edit."""
    return Path(shutil.copytree(rendered_once, tmp_path / "project", symlinks=True))


def planned(project: Path) -> dict[str, list[str]]:
    """rule -> wildcards of each job the dry run would run (empty when nothing is to be done)."""
    run = snakemake(project, "-n", "--cores", "1", "results/original-mage-006")
    assert run.returncode == 0, run.stderr
    if "Nothing to be done" in run.stdout + run.stderr:
        return {}
    jobs: dict[str, list[str]] = {}
    for rule, wildcards in re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)$", run.stdout,
                                      re.MULTILINE):
        jobs.setdefault(rule, []).append(wildcards)
    assert set(jobs) == set(job_counts(run.stdout))
    return jobs


def edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited\n")


def test_a_second_run_does_nothing(rendered):
    assert planned(rendered) == {}


def test_editing_the_plotting_code_reruns_only_figures_and_bundle(rendered):
    edit(rendered / "src" / "fieldnote" / "figures.py")
    assert planned(rendered) == {"figures": ["ns=original-mage-006"], "bundle": ["ns=original-mage-006"]}


def test_editing_the_note_code_reruns_only_note_and_bundle(rendered):
    edit(rendered / "src" / "fieldnote" / "note.py")
    assert planned(rendered) == {"note": ["ns=original-mage-006"], "bundle": ["ns=original-mage-006"]}


def test_editing_the_import_reruns_the_namespaces_that_import(rendered):
    edit(rendered / "src" / "fieldnote" / "original.py")
    jobs = planned(rendered)
    assert sorted(jobs["import_original"]) == [f"ns=original-mage-00{i}" for i in (1, 2, 3, 6)]
    assert set(jobs) == {"import_original", "capture_summary", "summary", "note", "figures", "bundle"}
