"""What a run prints (src/snakemake_logger_plugin_fieldnote, named by the profiles): each job's data, not the package
modules it depends on, unless --verbose; one `fieldnote:` line for a refusal or a target nothing makes, never a
traceback or a repeated line."""
import re
from pathlib import Path

import pytest
from conftest import snakemake


def inputs_listed(stdout: str) -> list[list[str]]:
    return [line.split(", ") for line in re.findall(r"^    input: (.*)$", stdout, re.MULTILINE)]


def test_a_jobs_package_modules_are_counted_unless_verbose(project: Path):
    quiet = snakemake(project, "-n", "--cores", "1", "results/mage-006")
    verbose = snakemake(project, "-n", "--verbose", "--cores", "1", "results/mage-006")
    assert quiet.returncode == 0 and verbose.returncode == 0, quiet.stderr
    code = re.compile(r"^src/.*\.py$")
    assert not any(code.match(f) for listed in inputs_listed(quiet.stdout) for f in listed)
    assert any(f.endswith("package modules: --verbose lists them)") for f in inputs_listed(quiet.stdout)[0])
    assert any(code.match(f) for f in inputs_listed(verbose.stdout)[0])
    listed = sum(len(f) for names in inputs_listed(verbose.stdout) for f in names if code.match(f))
    assert len(quiet.stdout) < len(verbose.stdout) - listed / 2  # the modules' names are what the quiet one saves


def test_a_target_no_rule_makes_is_one_line_with_the_likeliest(project: Path):
    run = snakemake(project, "--cores", "1", "results/mage-006/note")
    assert run.returncode != 0
    said = [line for line in run.stderr.splitlines() if line.startswith("fieldnote:")]
    assert len(said) == 1 and said[0].startswith(
        "fieldnote: no rule makes 'results/mage-006/note' (did you mean 'results/mage-006'?"), run.stderr
    assert "MissingRuleException" not in run.stderr and "Traceback" not in run.stderr


def test_a_refusal_is_one_line_said_last(project: Path):
    """A GPU job of an archived namespace refuses (script.refuse_archived): its line once, after Snakemake's own
    summary lines, and neither the failed script's CalledProcessError nor an error block."""
    run = snakemake(project, "--cores", "1", "work/mage-006/check/gpu/gelu/torch.parquet")
    assert run.returncode != 0
    said = [line for line in run.stderr.splitlines() if line.startswith("fieldnote:")]
    assert len(said) == 1 and "is archived" in said[0], run.stderr
    for noise in ("RuleException", "CalledProcessError", "Error in rule", "Traceback"):
        assert noise not in run.stderr, run.stderr
    tail = run.stderr.strip().splitlines()
    assert tail.index(said[0]) > tail.index("Exiting because a job execution failed. Look above for error messages")


@pytest.mark.slow
def test_the_report_carries_the_note_figures_and_tables_or_says_what_to_build(project: Path):
    built = snakemake(project, "--cores", "2", "results/mage-006")
    assert built.returncode == 0, built.stderr
    report = snakemake(project, "--report", "report.html", "results/mage-006")
    assert report.returncode == 0, report.stderr
    page = (project / "report.html").read_text(errors="replace")
    for shown in ('"Note"', "Figures", "Evidence tables", "note.html", "kernel-and-span.svg", "summary.parquet"):
        assert shown in page, shown
    everything = snakemake(project, "--report", "all.html")  # every namespace: the others are not built here
    said = [line for line in everything.stderr.splitlines() if line.startswith("fieldnote:")]
    assert everything.returncode != 0 and len(said) == 1 and "is not built yet" in said[0], everything.stderr


@pytest.mark.slow
def test_a_ctrl_c_while_jobs_run_is_one_line(project: Path):
    """A terminal's Ctrl-C reaches Snakemake and every job it runs (one process group): wherever it lands in a job's
    life (Snakemake's script preamble, the imports, the work), the run ends with the console's one line and
    Snakemake's summary, no job's traceback or error block, but for CPython's own in a job's first instants. Two runs
    of mage-006's CPU stages, stopped early and later, so that jobs are caught at different points."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import to_measure

    to_measure(project, "mage-006")
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "FIELDNOTE_ROOT": str(project)}
    for delay in (9, 16):
        run = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "2", "results/mage-006"], cwd=project,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(delay)
        os.killpg(run.pid, signal.SIGINT)  # what a terminal sends: the whole foreground group
        out, err = run.communicate(timeout=300)
        said = [line for line in (out + err).splitlines() if line.startswith("fieldnote:")]
        assert run.returncode != 0 and said == [
            "fieldnote: interrupted (Ctrl-C): the running jobs are stopped; what they were writing was a temporary "
            "file, never published, and the next run starts them again"], err
        for noise in ("Error in rule", "CalledProcessError", "RuleException"):
            assert noise not in out + err, err
        # The one traceback no code of ours can reach: a job's Python interrupted while it starts, before it runs
        # any (CPython's own fatal error, a few hundredths of a second of each job's life).
        startup = "Fatal Python error: init_import_site"
        assert (out + err).count("Traceback") == (out + err).count(startup), err


SCRIPTS = sorted((Path(__file__).parents[1] / "workflow" / "scripts").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_a_job_imports_the_package_before_anything_slow(script):
    """A Ctrl-C while a job imports pandas or torch was a traceback: the package's first import makes it one line
    (fieldnote/__init__.py), so it comes first (workflow/scripts/ruff.toml orders it so)."""
    import ast

    imports = [n for n in ast.parse(script.read_text()).body if isinstance(n, ast.Import | ast.ImportFrom)]
    first = imports[0]
    assert (first.module if isinstance(first, ast.ImportFrom) else first.names[0].name).split(".")[0] == "fieldnote"


# A Ctrl-C that lands in an exit handler as the process ends (torch's library finalizers, CI at 41165bf).
AT_EXIT = "import atexit; exec('def stop(): raise KeyboardInterrupt'); atexit.register(stop); "


def test_a_ctrl_c_once_the_package_is_imported_is_one_line():
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", AT_EXIT + "import fieldnote; raise KeyboardInterrupt"],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [
        "fieldnote: interrupted (Ctrl-C); what was being written is a temporary file, never published"]


def test_a_job_s_python_is_silent_on_ctrl_c_and_runs_the_sitecustomize_it_shadows(tmp_path):
    """workflow/site/sitecustomize.py, first on every job's PYTHONPATH: its hook set before any code of the job, the
    distribution's own sitecustomize (here one further on the path) still run, and the package keeps the job's hook."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    (tmp_path / "sitecustomize.py").write_text("import builtins; builtins.SHADOWED_RAN = True\n")
    path = os.pathsep.join([str(ROOT / "workflow" / "site"), str(tmp_path), str(ROOT / "src")])
    probe = AT_EXIT + ("import builtins, sys, fieldnote; print(builtins.SHADOWED_RAN, sys.excepthook.__name__); "
                       "raise KeyboardInterrupt")
    run = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONPATH": path}, capture_output=True,
                         text=True)
    assert run.stdout.split() == ["True", "_silent_on_ctrl_c"] and run.returncode != 0
    assert run.stderr == "", run.stderr
