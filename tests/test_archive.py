"""Archive and replay: the same bytes from the same bundle, a manifest that catches tampering, and a replay
that rebuilds the bundle without a GPU and then has nothing left to do."""
import gzip
import hashlib
import io
import json
import re
import shutil
import tarfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import SEED_EVIDENCE, import_from_seed, resolved_config, snakemake

from fieldnote.core.errors import PipelineError
from fieldnote.evidence.archive import Archive, pack, source_files
from fieldnote.evidence.bundle import manifest


def toy_bundle(root: Path) -> Path:
    bundle = root / "results" / "toy"
    (bundle / "evidence").mkdir(parents=True)
    pd.DataFrame({"op": ["gelu"], "kernel_us": [1.5]}).to_parquet(bundle / "evidence" / "summary.parquet")
    (bundle / "evidence" / "environment.json").write_text("{}")
    (bundle / "config.resolved.json").write_text(json.dumps(resolved_config("mage-001", "toy")))
    (bundle / "note.md").write_text("# toy\n")
    (bundle / "figures").mkdir()
    (bundle / "figures" / ".snakemake_timestamp").write_text("")
    (bundle / "evidence" / "MANIFEST.sha256").write_text(manifest(bundle))
    (root / "Snakefile").write_text("# workflow\n")
    return bundle


def test_packing_twice_gives_the_same_bytes(tmp_path):
    bundle = toy_bundle(tmp_path)
    pack("toy", bundle, tmp_path, tmp_path / "a.tar.gz")
    pack("toy", bundle, tmp_path, tmp_path / "b.tar.gz")
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()
    archive = Archive(tmp_path / "a.tar.gz")
    archive.verify()
    assert archive.namespace == "toy" and archive.tables() == ["summary"]
    assert "source/Snakefile" in archive.files and "bundle/figures/.snakemake_timestamp" not in archive.files


def test_the_sources_an_archive_keeps_leave_out_what_tools_cache_beside_them(tmp_path):
    """ruff, pytest and Python write caches into the source folders; in the archive's sources they would make the
    same commit pack differently on two machines."""
    folder = "kernels"
    for rel in ["a.py", ".ruff_cache/0.1/x", "sub/__pycache__/a.pyc", ".pytest_cache/v/y", "sub/b.py"]:
        (tmp_path / folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / rel).write_text("x")
    kept = {p.relative_to(tmp_path / folder).as_posix() for p in source_files(tmp_path)}
    assert kept == {"a.py", "sub/b.py"}


def test_a_changed_table_fails_verification_naming_it(tmp_path):
    bundle = toy_bundle(tmp_path)
    pack("toy", bundle, tmp_path, tmp_path / "a.tar.gz")
    with tarfile.open(tmp_path / "a.tar.gz", "r:gz") as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for member, data in members:
            if member.name.endswith("summary.parquet"):
                data = data[:-20] + bytes(20)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    (tmp_path / "bad.tar.gz").write_bytes(gzip.compress(raw.getvalue()))
    with pytest.raises(PipelineError, match="bundle/evidence/summary.parquet does not match its index checksum"):
        Archive(tmp_path / "bad.tar.gz").verify()


def test_not_an_archive_is_one_clear_error(tmp_path):
    (tmp_path / "x.tar.gz").write_text("not a tar")
    with pytest.raises(PipelineError, match="x.tar.gz is not a readable archive"):
        Archive(tmp_path / "x.tar.gz")


@pytest.mark.slow
@pytest.mark.skipif(not (SEED_EVIDENCE / "mage-006").exists(), reason="../shared/seed-evidence absent")
def test_replay_rebuilds_the_bundle_identically_then_does_nothing(project: Path, tmp_path):
    for other in (project / "config" / "namespaces").glob("original-*.yaml"):
        import_from_seed(other)
    path = project / "config" / "namespaces" / "original-mage-006.yaml"
    made = snakemake(project, "--cores", "1", "results/original-mage-006.tar.gz")
    assert made.returncode == 0, made.stderr
    archive = project / "incoming" / "original-mage-006.tar.gz"  # a replay reads an archive inside the checkout
    archive.parent.mkdir()
    archive.write_bytes((project / "results" / "original-mage-006.tar.gz").read_bytes())
    published = (project / "results" / "original-mage-006" / "evidence" / "MANIFEST.sha256").read_text()
    for leftover in ("results", "work", ".snakemake"):  # as on a fresh clone
        shutil.rmtree(project / leftover, ignore_errors=True)
    path.unlink()  # the archive alone says what the namespace was
    replay = snakemake(project, "--cores", "1", "results/original-mage-006", "--config", f"replay={archive}")
    assert replay.returncode == 0, replay.stderr
    assert "import_original" not in replay.stderr and "replay_unpack" in replay.stderr
    # nobody pinned this archive: the bundle is the published one, but for the note and the provenance that say so
    # (the note the generated one: the template it was rendered from is code, not rendered, and not bundled)
    rebuilt = project / "results" / "original-mage-006"
    differ = {line.split("  ")[1] for line in set(published.splitlines())
              ^ set((rebuilt / "evidence" / "MANIFEST.sha256").read_text().splitlines())}
    assert differ == {"note.md", "note.html", "evidence/provenance.json", "evidence/claims.parquet", "note.template.md"}
    assert not (rebuilt / "note.template.md").exists()
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert f"**Unverified archive.** This note is rebuilt from original-mage-006.tar.gz (SHA-256 `{digest}`)" in (
        rebuilt / "note.md").read_text()
    assert json.loads((rebuilt / "evidence" / "provenance.json").read_text())["sha256"] == digest
    again = snakemake(project, "-n", "--cores", "1", "results/original-mage-006", "--config", f"replay={archive}")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_loading_a_bundle_names_the_failing_table_and_row(tmp_path):
    from fieldnote.evidence.validate import load, validate_tables

    bundle = toy_bundle(tmp_path)
    assert set(load(bundle)) == {"summary"}
    (bundle / "note.md").write_text("edited by hand\n")
    with pytest.raises(PipelineError, match="note.md does not match MANIFEST.sha256"):
        load(bundle)
    checks = pd.DataFrame({"op": ["gelu", "matmul"], "subject": ["torch", "cuda"], "shape": ["4x4", "8x8x8"],
                           "case": ["full", "full"], "passed": [True, False]})
    with pytest.raises(PipelineError, match=r"checks: row 1 \(op=matmul, subject=cuda, shape=8x8x8"):
        validate_tables({"checks": checks}, None)
    summary = pd.DataFrame({"op": ["gelu"], "subject": ["torch"], "backend": ["nsys"], "capture": [0],
                            "launches": [150], "iterations": [100]})
    with pytest.raises(PipelineError, match="capture_summary: row 0 .*not a whole number"):
        validate_tables({"capture_summary": summary}, None)
    spans = pd.DataFrame({"op": ["gelu"] * 299, "subject": ["cuda"] * 299, "mode": ["eager"] * 299})
    with pytest.raises(PipelineError, match="spans: row 0 \\(op=gelu, subject=cuda\\): not 300 eager samples"):
        validate_tables({"spans": spans}, 300)


@pytest.mark.slow
@pytest.mark.skipif(not (SEED_EVIDENCE / "mage-006").exists(), reason="../shared/seed-evidence absent")
def test_an_archived_namespace_is_rebuilt_from_its_archive_and_never_measured(project: Path, tmp_path):
    for other in (project / "config" / "namespaces").glob("original-*.yaml"):
        import_from_seed(other)
    assert snakemake(project, "--cores", "1", "results/original-mage-006.tar.gz").returncode == 0
    archive = project / "incoming" / "original-mage-006.tar.gz"  # a replay reads an archive inside the checkout
    archive.parent.mkdir()
    archive.write_bytes((project / "results" / "original-mage-006.tar.gz").read_bytes())
    published = (project / "results" / "original-mage-006" / "evidence" / "MANIFEST.sha256").read_text()
    path = project / "config" / "namespaces" / "original-mage-006.yaml"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    path.write_text(path.read_text() + f"archived: {{archive: {archive}, sha256: {digest}}}\n")
    shutil.rmtree(project / "results" / "original-mage-006")
    rebuilt = snakemake(project, "--cores", "1", "results/original-mage-006")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert (project / "results" / "original-mage-006" / "evidence" / "MANIFEST.sha256").read_text() == published
    refused = snakemake(project, "--cores", "1", "work/original-mage-006/time/matmul/spans.parquet")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "fieldnote: namespace original-mage-006 is archived" in refused.stderr
    assert not (project / "work" / "original-mage-006" / "time").exists()


@pytest.mark.slow
def test_repacking_a_replayed_archive_keeps_its_own_sources(project: Path):
    """The sources are provenance: a bundle rebuilt from an archive is packed with the archive's source/, not with
    the checkout that replayed it (edited here on purpose)."""
    (project / "src" / "fieldnote" / "publish" / "figures.py").write_text(
        (project / "src" / "fieldnote" / "publish" / "figures.py").read_text() + "\n# edited after the measurement\n")
    run = snakemake(project, "--cores", "1", "results/mage-001.tar.gz")
    assert run.returncode == 0, run.stderr
    shipped = Archive(project / "archives" / "mage-001.tar.gz", cache=project / "cache").files
    repacked = Archive(project / "results" / "mage-001.tar.gz", cache=project / "cache").files
    sources = {n: d for n, d in shipped.items() if n.startswith("source/")}
    assert sources and {n: d for n, d in repacked.items() if n.startswith("source/")} == sources
    assert not [n for n, d in repacked.items() if n.startswith("source/") and b"edited after the measurement" in d]


@pytest.mark.parametrize("ops, refused", [("[matmul, gelu, layernorm, triangle, neighbor]", False),
                                          ("[matmul, gelu]", True)])
def test_a_pinned_namespace_may_list_the_ops_its_archive_measured(tmp_path, monkeypatch, ops, refused):
    """A namespace file lists its ops; an archive records them as its shapes, not as a key `ops`: listing what was
    measured replays, listing otherwise is refused by name."""
    from fieldnote.core.errors import PipelineError
    from fieldnote.evidence.archive import _pinned
    from fieldnote.registry.config import load_defaults, resolve

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    path = tmp_path / "h200-001.yaml"
    stated = (root / "config" / "namespaces" / "h200-001.yaml").read_text()
    path.write_text(re.sub(r"^ops: .*$", f"ops: {ops}", stated, count=1, flags=re.MULTILINE))
    ns = resolve("h200-001", path, load_defaults(root / "config" / "config.yaml"))
    if refused:
        with pytest.raises(PipelineError, match="key 'ops'"):
            _pinned(ns)
    else:
        assert _pinned(ns).namespace == "h200-001"
