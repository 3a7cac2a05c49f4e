"""Only stale stages rerun: proven with Snakemake's own dry run on a namespace that needs no GPU."""
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, SEED_EVIDENCE, SMALL, copy_project, measured_mage_006, snakemake
from test_workflow import job_counts

from fieldnote.evidence.bundle import manifest

pytestmark = pytest.mark.slow  # the workflow end to end
needs_seed = pytest.mark.skipif(not (SEED_EVIDENCE / "mage-006").exists(),
                                reason="imports the original project's evidence from ../shared/seed-evidence, absent")


@pytest.fixture
def rendered(replayed_original: Path, tmp_path: Path) -> Path:
    """A copy of the project with original-mage-006 rebuilt from its archive, times and Snakemake's records
    included, for one test to edit."""
    return Path(shutil.copytree(replayed_original, tmp_path / "project", symlinks=True))


@pytest.fixture
def imported(imported_original: Path, tmp_path: Path) -> Path:
    """As `rendered`, the original namespaces imported from the seed evidence instead of replayed."""
    return Path(shutil.copytree(imported_original, tmp_path / "project", symlinks=True))


def planned(project: Path, target: str = "results/original-mage-006") -> dict[str, list[str]]:
    """rule -> wildcards of each job the dry run would run (empty when nothing is to be done)."""
    run = snakemake(project, "-n", "--cores", "1", target)
    assert run.returncode == 0, run.stderr
    if "Nothing to be done" in run.stdout + run.stderr:
        return {}
    jobs: dict[str, list[str]] = {}
    for rule, wildcards in re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)$", run.stdout,
                                      re.MULTILINE):
        jobs.setdefault(rule, []).append(wildcards)
    for rule in set(job_counts(run.stdout)) - set(jobs) - {"all"}:  # a rule without wildcards (replay_unpack_<ns>)
        jobs[rule] = [""]
    assert set(jobs) == set(job_counts(run.stdout)) - {"all"}
    return jobs


def edit(path: Path, line: str = "# edited\n") -> None:
    path.write_text(path.read_text() + "\n" + line)


def test_a_second_run_does_nothing(rendered):
    assert planned(rendered) == {}


ONE = ["ns=original-mage-006"]


def test_editing_the_plotting_code_reruns_only_figures_page_and_bundle(rendered):
    edit(rendered / "src" / "fieldnote" / "publish" / "figures.py")
    assert planned(rendered) == {"figures": ONE, "page": ONE, "bundle": ONE}


def test_editing_the_note_code_reruns_only_note_page_and_bundle(rendered):
    """The note words the verdicts; it makes none (verdicts.py), so its verdicts stand."""
    edit(rendered / "src" / "fieldnote" / "publish" / "note.py")
    assert planned(rendered) == {"note": ONE, "page": ONE, "bundle": ONE}


def test_editing_the_verdicts_code_reruns_the_verdicts_and_the_note(rendered):
    edit(rendered / "src" / "fieldnote" / "publish" / "verdicts.py")
    assert planned(rendered) == {"verdicts": ONE, "note": ONE, "page": ONE, "bundle": ONE}


def test_editing_the_note_s_template_reruns_only_note_page_and_bundle(rendered):
    edit(rendered / "notes" / "field-note-004.md", "{# edited #}\n")
    assert planned(rendered) == {"note": ONE, "page": ONE, "bundle": ONE}


def test_editing_a_template_helper_reruns_only_note_page_and_bundle(rendered):
    edit(rendered / "src" / "fieldnote" / "publish" / "authored.py")
    assert planned(rendered) == {"note": ONE, "page": ONE, "bundle": ONE}


def test_editing_the_quotations_of_a_replay_reruns_nothing(rendered):
    """A replay's quoted values are its archive's evidence."""
    edit(rendered / "notes" / "quoted" / "field-note-004.yaml")
    assert planned(rendered) == {}


@needs_seed
def test_editing_the_quotations_reruns_the_quoted_table_and_the_note(imported):
    edit(imported / "notes" / "quoted" / "field-note-004.yaml")
    assert planned(imported) == {"quoted": ONE, "note": ONE, "page": ONE, "bundle": ONE}


def test_editing_a_display_name_reruns_the_note_and_the_figures(rendered):
    """The display names have one home, vocabulary.py, which the note and the figures both import (an edit of
    them in note.py used to leave the figures as they were)."""
    path = rendered / "src" / "fieldnote" / "registry" / "vocabulary.py"
    path.write_text(path.read_text().replace('"Triton", "#DD8452"', '"Triton (OpenAI)", "#DD8452"'))
    # and the verdicts, which word each target as the targets table shows it; in a replay also the unpacking and
    # the summary, which read the implementation registry to bring an old archive's tables into today's layout
    # (migrate.py)
    assert planned(rendered) == {"replay_unpack_original_mage_006": [""], "summary": ONE, "verdicts": ONE,
                                 "note": ONE, "figures": ONE, "page": ONE, "bundle": ONE}


def test_editing_a_variant_s_design_text_reruns_the_note(rendered):
    """The note prints the variants' design texts from ops/<op>.py (it used to stay as it was)."""
    path = rendered / "src" / "fieldnote" / "registry" / "ops" / "layernorm.py"
    text = path.read_text()
    assert "behind a single barrier" in text  # the edit below must change something
    path.write_text(text.replace("behind a single barrier", "behind one barrier", 1))
    assert "note" in planned(rendered)


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("swept"))
    run = snakemake(project, "--cores", "2", "results/h200-001")
    assert run.returncode == 0, run.stderr
    return project


def test_editing_an_op_s_work_reruns_the_sweep_table_and_the_note(swept):
    """work() gives the bytes and FLOPs the sweep table divides by (the table and the note used to stay)."""
    edit(swept / "src" / "fieldnote" / "registry" / "ops" / "matmul.py")
    jobs = planned(swept, "results/h200-001")
    assert jobs["sweep"] == ["ns=h200-001"] and jobs["note"] == ["ns=h200-001"]


@needs_seed
def test_editing_the_import_reruns_the_namespaces_that_import(imported):
    edit(imported / "src" / "fieldnote" / "evidence" / "original.py")
    jobs = planned(imported)
    assert sorted(jobs["import_original"]) == [f"ns=original-mage-00{i}" for i in (1, 2, 3, 6)]
    assert set(jobs) == {"import_original", "capture_summary", "summary", "verdicts", "note", "page", "figures",
                         "bundle"}


@pytest.fixture(scope="module")
def measured_once(tmp_path_factory) -> Path:
    """mage-006 (its attempts included, its history left out) after a real run of every CPU stage, with its GPU
    stages' outputs present as empty stand-ins marked done by `snakemake --touch`. A dry run decides from files'
    times and Snakemake's records alone, so its plan here is the plan after a full GPU run."""
    project = copy_project(tmp_path_factory.mktemp("measured"))
    measured_mage_006(project, SMALL)
    snakemake(project, "--cores", "2", "results/mage-006")  # stops at gpu_probe: no GPU here
    plan = snakemake(project, "-n", "--cores", "1", "results/mage-006")
    for line in re.findall(r"^    output: (.*)$", plan.stdout, re.MULTILINE):
        for name in line.split(", "):
            name = name.removesuffix(" (update)")  # the bundle: Snakemake keeps it until the new one is in
            out = project / name
            if name == "results/mage-006":  # a stand-in a run takes as complete: a note under its manifest
                (out / "evidence").mkdir(parents=True, exist_ok=True)
                (out / "note.md").write_text("# stand-in\n")
                (out / "evidence" / "MANIFEST.sha256").write_text(manifest(out))
            elif name == "work/mage-006/figures":
                out.mkdir(parents=True, exist_ok=True)
            else:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.touch()
    touched = snakemake(project, "--touch", "--cores", "1", "results/mage-006")
    assert touched.returncode == 0, touched.stderr
    return project


@pytest.fixture
def measured(measured_once: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(measured_once, tmp_path / "project", symlinks=True))


def test_after_a_full_run_nothing_is_left(measured):
    assert planned(measured, "results/mage-006") == {}


def test_editing_one_layernorm_variant_reruns_that_variant_and_what_derives_from_it(measured):
    edit(measured / "kernels" / "cuda" / "layernorm" / "layernorm_block192_one_quad.cu", "// edited\n")
    jobs = planned(measured, "results/mage-006")
    variant = "layernorm_block192_one_quad"
    assert jobs["build_cuda"] == [f"arch=sm_90, op=layernorm, variant={variant}"]
    assert jobs["check_gpu"] == [f"ns=mage-006, op=layernorm, subject={variant}"]
    assert jobs["time"] == ["ns=mage-006, op=layernorm"]
    assert sorted(jobs["capture"]) == ["ns=mage-006, backend=cupti, op=layernorm",
                                       "ns=mage-006, backend=nsys, op=layernorm"]
    assert "capture_counters" not in jobs  # ncu reads the adopted cuda kernel, which did not change
    assert not [w for ws in jobs.values() for w in ws if "matmul" in w]


def test_changing_one_ops_shape_reruns_that_op_only(measured):
    import yaml

    path = measured / "config" / "namespaces" / "mage-006.yaml"
    data = yaml.safe_load(path.read_text())
    data["shapes"]["gelu"] = {"rows": 32, "cols": 768}
    path.write_text(yaml.safe_dump(data))
    jobs = planned(measured, "results/mage-006")
    per_op = [w for ws in jobs.values() for w in ws if "op=" in w]
    assert per_op and all("op=gelu" in w for w in per_op)
    assert len(jobs["check_gpu"]) == 3 and len(jobs["capture"]) == 2 and jobs["time"] == ["ns=mage-006, op=gelu"]


def carried_to_a_fresh_machine(measured: Path, tmp_path: Path, edit_there=None) -> Path:
    """The state of `measured` saved as tools/device_pipeline.sh saves it, and restored into a fresh copy of its
    sources whose every file is newer than the state (as a device machine receives them), `edit_there` applied to
    that copy first (an edit made between two calls)."""
    import os
    import subprocess
    import sys
    import time

    parts, fresh = tmp_path / "parts", tmp_path / "fresh"
    parts.mkdir()
    shutil.copytree(measured, fresh, ignore=shutil.ignore_patterns("work", "results", ".snakemake"))
    tool = [sys.executable, str(ROOT / "tools" / "device_state.py")]
    saved = subprocess.run([*tool, "save", str(parts)], cwd=measured, capture_output=True, text=True)
    assert saved.returncode == 0, saved.stderr
    now = time.time() + 60
    for path in fresh.rglob("*"):
        os.utime(path, (now, now))
    if edit_there:
        edit_there(fresh)
    restored = subprocess.run([*tool, "restore", str(parts)], cwd=fresh, capture_output=True, text=True)
    assert restored.returncode == 0, restored.stderr
    assert "inputs drawn again and matched" in restored.stdout and not list(parts.glob("*.npz"))
    return fresh


def test_a_run_carried_to_a_fresh_machine_goes_on_where_it_stopped(measured, tmp_path):
    fresh = carried_to_a_fresh_machine(measured, tmp_path)
    assert list((fresh / "work" / "inputs").rglob("*.npz"))  # drawn again, their hashes matched
    assert planned(fresh, "results/mage-006") == {}


def test_a_source_edited_between_two_calls_reruns_what_it_feeds_after_the_carry(measured, tmp_path):
    variant = "layernorm_block192_one_quad"
    fresh = carried_to_a_fresh_machine(
        measured, tmp_path, lambda p: edit(p / "kernels" / "cuda" / "layernorm" / f"{variant}.cu", "// edited\n"))
    jobs = planned(fresh, "results/mage-006")
    assert jobs["build_cuda"] == [f"arch=sm_90, op=layernorm, variant={variant}"]
    assert not [w for ws in jobs.values() for w in ws if "matmul" in w]


def test_a_run_killed_mid_job_leaves_no_partial_table_and_the_rerun_completes(tmp_path):
    """kill -9 of Snakemake and its job while a job writes; every table left readable, the rerun finishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import pandas as pd

    project = copy_project(tmp_path)
    measured_mage_006(project, SMALL)
    targets = [f"work/mage-006/check/cpu/{op}/{impl}.parquet" for op in SMALL for impl in ("torch", "triton")]
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    run = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", *targets], cwd=project, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    incomplete, checks = project / ".snakemake" / "incomplete", project / "work" / "mage-006" / "check" / "cpu"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:  # at least one check written, and another one running
        if list(checks.rglob("*.parquet")) and incomplete.exists() and any(incomplete.iterdir()):
            break
        time.sleep(0.2)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    written = list(checks.rglob("*.parquet"))
    assert 0 < len(written) < len(targets)
    for table in written:
        assert pd.read_parquet(table)["passed"].all()  # whole tables only: each is renamed into place
    assert snakemake(project, "--unlock", "--cores", "1").returncode == 0
    rerun = snakemake(project, "--cores", "1", *targets)
    assert rerun.returncode == 0, rerun.stderr
    assert all(pd.read_parquet(project / t)["passed"].all() for t in targets)
    again = snakemake(project, "-n", "--cores", "1", *targets)
    assert "Nothing to be done" in again.stdout + again.stderr
