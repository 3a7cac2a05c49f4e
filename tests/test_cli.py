"""The `fieldnote` command and the errors a newcomer meets first: one line, or the usage, and a non-zero status."""
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, copy_config, has_gpu, snakemake

from fieldnote.cli import new
from fieldnote.core.errors import PipelineError
from fieldnote.registry.config import load_defaults, load_namespaces


def fieldnote(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fieldnote.cli", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("args, says", [
    (["show"], "the following arguments are required: bundle"),
    (["show", "results/no-such-namespace"], "results/no-such-namespace is not a bundle"),
    (["new", "x.y", "--from", "h200-001"], "'x.y' is not a valid name"),
    (["new", "fresh", "--from", "mage-0066"], "unknown namespace 'mage-0066' (did you mean 'mage-006'? known: "),
    (["new", "mage-006", "--from", "h200-001"], "mage-006.yaml exists already"),
])
def test_a_bad_command_line_says_why_and_fails(args, says):
    run = fieldnote(*args)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert says in run.stderr, run.stderr


def test_show_given_a_namespace_says_which_bundle_was_meant(tmp_path):
    (tmp_path / "results" / "mage-006" / "evidence").mkdir(parents=True)
    run = subprocess.run([sys.executable, "-m", "fieldnote.cli", "show", "mage-006"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode != 0 and run.stderr.strip().endswith(
        "mage-006 is not a bundle (no mage-006/evidence/): did you mean results/mage-006?"), run.stderr


@pytest.mark.skipif(has_gpu(), reason="the machine has a GPU")
def test_bench_without_a_gpu_is_one_line():
    run = fieldnote("bench", "gelu", "torch")
    assert run.returncode == 1 and run.stderr.strip().splitlines() == [
        "fieldnote: no GPU here: bench times kernels on an NVIDIA GPU (torch.cuda.is_available() is False); run it "
        "on a machine with one"]


def test_a_new_namespace_is_the_old_one_to_measure_last_in_its_progression(tmp_path):
    project = copy_project_config(tmp_path)
    path = new("h200-002-try", "h200-001", project / "config")
    data = yaml.safe_load(path.read_text())
    assert "archived" not in data and data["progression"]["namespaces"][-1] == "h200-002-try"
    resolved = load_namespaces(project / "config", load_defaults(project / "config" / "config.yaml"))["h200-002-try"]
    original = load_namespaces(ROOT / "config", load_defaults(ROOT / "config" / "config.yaml"))["h200-001"]
    assert (resolved.variants, resolved.shapes, resolved.sweep) == (original.variants, original.shapes, original.sweep)
    with pytest.raises(PipelineError, match="exists already"):
        new("h200-002-try", "h200-001", project / "config")


def copy_project_config(tmp_path):
    return copy_config(tmp_path)


def test_an_unknown_namespace_is_one_line_with_the_likeliest_and_the_known_ones(project):
    run = snakemake(project, "--cores", "1", "results/mage-066")
    assert run.returncode != 0 and "Traceback" not in run.stderr
    known = "h100-002r, h100-003, h200-001, h200-002, mage-001, mage-002, mage-003, mage-006"
    said = [line for line in run.stderr.splitlines() if line.startswith("fieldnote:")]
    assert said == [line for line in said if line.startswith(
        f"fieldnote: unknown namespace 'mage-066' (did you mean 'mage-006'? known: {known}")] and len(said) == 1, said
    assert "Error in rule" not in run.stderr and "RuleException" not in run.stderr, run.stderr
    assert not (project / "results" / "mage-066").exists()


@pytest.mark.slow
def test_a_job_logs_what_it_prints_and_a_line_per_subject_and_phase(project):
    import yaml
    from conftest import SMALL

    (project / "config" / "namespaces" / "toy.yaml").write_text(
        yaml.safe_dump({"ops": list(SMALL), "implementations": ["torch"], "variants": {}, "shapes": SMALL}))
    run = snakemake(project, "--cores", "1", "work/toy/check/cpu/gelu/torch.parquet")
    assert run.returncode == 0, run.stderr
    log = (project / "work" / "logs" / "check_cpu" / "toy" / "gelu" / "torch.log").read_text()
    assert "check gelu torch on cpu: case full at 16x768 ..." in log
    assert "check gelu torch on cpu: case small at 3x257 done in" in log


def test_a_new_namespace_leaves_the_source_runs_predictions_targets_and_note_unless_asked(tmp_path):
    """The targets too: h200-001's, copied into a run on an H200 that missed them, stopped its note for want of
    their limits (key 'targets.limits.matmul'), which only the run that set them can state."""
    from datetime import date

    project = copy_project_config(tmp_path)
    source = yaml.safe_load((project / "config" / "namespaces" / "h200-002.yaml").read_text())
    assert {"predictions", "targets", "note"} <= set(source)
    path = new("plain", "h200-002", project / "config")
    data, header = yaml.safe_load(path.read_text()), path.read_text().splitlines()[:2]
    assert not {"predictions", "targets", "note"} & set(data) and data["variants"] == source["variants"]
    assert header == [f"# Made on {date.today().isoformat()} by `fieldnote new plain --from h200-002`: to be measured "
                      "(snakemake results/plain, on a GPU).",
                      "# Left out, being of h200-002's run: predictions, targets, note (`--with-note` keeps them)."]
    kept = yaml.safe_load(new("noted", "h200-002", project / "config", with_note=True).read_text())
    assert (kept["predictions"], kept["targets"], kept["note"]) == (source["predictions"], source["targets"],
                                                                     source["note"])


def test_fieldnote_new_writes_into_the_project_it_runs_in_not_beside_the_package(tmp_path):
    project = copy_project_config(tmp_path / "project")
    (project / "notes").mkdir()
    run = subprocess.run([sys.executable, "-m", "fieldnote.cli", "new", "mine", "--from", "mage-006"],
                         capture_output=True, text=True, cwd=project / "notes")
    assert run.returncode == 0, run.stderr
    assert (project / "config" / "namespaces" / "mine.yaml").is_file()
    assert not (ROOT / "config" / "namespaces" / "mine.yaml").exists()
    (tmp_path / "elsewhere").mkdir()
    run = subprocess.run([sys.executable, "-m", "fieldnote.cli", "new", "mine", "--from", "mage-006"],
                         capture_output=True, text=True, cwd=tmp_path / "elsewhere")
    assert run.returncode == 1 and run.stderr.strip() == (
        f"fieldnote: {tmp_path / 'elsewhere'} is in no project (no config/namespaces/ here or above): "
        "run it in the checkout")
