"""Declared code dependencies: a rule's package modules follow from its script's imports, so editing any module a
job runs reruns that job (the dry runs of the three holes that had stayed open are in test_staleness.py)."""
import re

import pytest
from conftest import ROOT

from fieldnote import deps
from fieldnote.deps import closure, for_op

RULES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))


def test_the_closure_follows_imports_at_any_depth():
    note = closure("workflow/scripts/note.py")
    assert "src/fieldnote/publish/note.py" in note and "src/fieldnote/evidence/history.py" in note
    assert "src/fieldnote/registry/ops/layernorm.py" in note  # the variants' design texts the note prints
    sweep = closure("workflow/scripts/sweep_table.py")
    assert "src/fieldnote/registry/ops/matmul.py" in sweep  # work(): the bytes and FLOPs the sweep table divides by
    figures = closure("workflow/scripts/figures.py")
    assert "src/fieldnote/registry/vocabulary.py" in figures and "src/fieldnote/registry/vocabulary.py" in note
    assert "src/fieldnote/publish/note.py" not in figures


def test_a_job_for_one_op_depends_on_that_op_s_module_only():
    files = for_op(closure("workflow/scripts/check.py"), "gelu")
    ops = {f for f in files if "/ops/" in f}
    assert ops == {f"src/fieldnote/registry/ops/{m}.py" for m in ("__init__", "base", "gelu")}


def test_every_rule_that_runs_a_script_declares_its_code():
    """Every script rule but the refusals (which run no package code worth a rerun) takes code_of(its script)."""
    for path in RULES:
        for block in re.split(r"(?=^(?:use )?rule )", path.read_text(), flags=re.M):
            script = re.search(r'script:\n\s+"\.\./scripts/(\w+)\.py"', block)
            if not script or script[1] == "refuse":
                continue
            named = re.search(r'code_of\("(\w+)"', block)
            if named is None and re.search(r"unpack\((check_inputs)\)", block):
                continue  # check_inputs adds code_of("check", op)
            assert named and named[1] == script[1], f"{path.name}: {block.splitlines()[0]}"


def fresh_process(monkeypatch, known):
    """deps as a new Snakemake process finds it: nothing cached in memory, `known` the file kept between runs."""
    monkeypatch.setattr(deps, "KNOWN", known)
    deps._found_now.clear()
    for cached in (deps._known, deps._imports, deps.closure):
        cached.cache_clear()


def core(module: str) -> tuple[str, ...]:
    """The closure of a script importing one module of the core: it, its package and the root's."""
    return ("src/fieldnote/__init__.py", "src/fieldnote/core/__init__.py", f"src/fieldnote/core/{module}.py")


def test_imports_found_once_are_kept_between_runs_and_a_changed_source_is_read_anew(tmp_path, monkeypatch):
    script, known = tmp_path / "job.py", tmp_path / "known.json"
    script.write_text("from fieldnote.core import errors\n")
    fresh_process(monkeypatch, known)
    assert deps.closure(str(script)) == core("errors") and known.exists()
    fresh_process(monkeypatch, known)
    monkeypatch.setattr(deps, "_parsed", lambda *a: pytest.fail("parsed again, unchanged"))
    assert deps.closure(str(script)) == core("errors")
    monkeypatch.undo()
    script.write_text("from fieldnote.core import paths\n")
    fresh_process(monkeypatch, known)
    assert deps.closure(str(script)) == core("paths")
    known.write_text("not json")
    fresh_process(monkeypatch, known)
    assert deps.closure(str(script)) == core("paths")
    for cached in (deps._known, deps._imports, deps.closure):
        cached.cache_clear()
