"""Namespaces are validated before any job runs: one line naming the file and the key, nothing touched."""
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, snakemake

from fieldnote.core.errors import PipelineError
from fieldnote.registry.config import load_defaults, load_namespaces, resolve

DEFAULTS = load_defaults(ROOT / "config" / "config.yaml")
MAGE_006 = {k: v for k, v in yaml.safe_load((ROOT / "config" / "namespaces" / "mage-006.yaml").read_text()).items()
            if k != "archived"}  # as a namespace to measure


def test_mage_006_resolves_with_the_defaults():
    ns = load_namespaces(ROOT / "config", DEFAULTS)["mage-006"]
    assert ns.implementations == ("torch", "triton", "cuda")
    assert ns.variants["matmul"] == "matmul_cpasync_2buf_64x64"
    assert ns.shapes["triangle"] == {"n": 128, "channels": 32}
    assert (ns.seed, ns.arch, ns.timing["rounds"], ns.tolerance["rtol"]) == (20260910, "sm_90", 3, 1e-4)


def bad(tmp_path, **change) -> str:
    data = {**MAGE_006, **change}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(PipelineError) as error:
        resolve("bad", path, DEFAULTS)
    message = str(error.value)
    assert message.startswith(str(path)) and "\n" not in message
    return message


def test_unknown_op(tmp_path):
    assert "key 'variants.matmull' is not allowed" in bad(tmp_path, variants={**MAGE_006["variants"], "matmull": "x"})


def test_unknown_variant(tmp_path):
    message = bad(tmp_path, variants={**MAGE_006["variants"], "layernorm": "layernorm_fast"})
    assert "key 'variants.layernorm': unknown variant 'layernorm_fast'" in message


def test_negative_shape(tmp_path):
    message = bad(tmp_path, shapes={"matmul": {"m": -1, "n": 4, "k": 4}})
    assert "key 'shapes.matmul.m'" in message and "minimum" in message


def test_misspelt_key(tmp_path):
    data = dict(MAGE_006)
    data["implementatons"] = data.pop("implementations")
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(PipelineError, match="key 'implementatons' is not allowed"):
        resolve("bad", path, DEFAULTS)


def test_unknown_implementation(tmp_path):
    assert "key 'implementations.1'" in bad(tmp_path, implementations=["torch", "rust"])


def test_missing_cuda_variant(tmp_path):
    variants = {k: v for k, v in MAGE_006["variants"].items() if k != "gelu"}
    assert "key 'variants.gelu' is missing" in bad(tmp_path, variants=variants)


def test_bad_namespace_stops_snakemake_before_any_job(project: Path):
    (project / "results" / "mage-006").mkdir()
    (project / "results" / "mage-006" / "kept.txt").write_text("earlier evidence")
    path = project / "config" / "namespaces" / "mage-006.yaml"
    path.write_text(path.read_text().replace("layernorm: layernorm_block_row_1pass", "layernorm: nope"))
    run = snakemake(project, "--cores", "1", "results/mage-006")
    assert run.returncode != 0
    assert "config/namespaces/mage-006.yaml: key 'variants.layernorm': unknown variant 'nope'" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert (project / "results" / "mage-006" / "kept.txt").read_text() == "earlier evidence"
    assert not (project / "work").exists()


def test_attempts_add_their_variants_and_what_they_are_compared_with():
    ns = load_namespaces(ROOT / "config", DEFAULTS)["mage-006"]
    subjects = ns.subjects("layernorm")
    assert list(subjects)[:3] == ["torch", "triton", "cuda"]
    assert subjects["cuda"] == {"implementation": "cuda", "variant": "layernorm_block_row_1pass"}
    assert subjects["layernorm_2warp_row_shared"] == {"implementation": "cuda", "variant": "layernorm_2warp_row_shared"}
    assert len(subjects) == 3 + 5 + 1 and list(ns.subjects("matmul")) == ["torch", "triton", "cuda"]


def test_an_attempt_must_be_a_known_variant_compared_with_something_measured(tmp_path):
    attempt = {"variant": "layernorm_block96_rsqrt_rn", "metric": "kernel", "compared_with": "triton"}
    assert "key 'attempts.0.variant': unknown variant 'ln_fast'" in bad(
        tmp_path, attempts=[{**attempt, "variant": "ln_fast"}])
    assert "key 'attempts.0.compared_with': 'matmul_tiled_16x16' is neither" in bad(
        tmp_path, attempts=[{**attempt, "compared_with": "matmul_tiled_16x16"}])
    assert "key 'attempts.0.metric'" in bad(tmp_path, attempts=[{**attempt, "metric": "fast"}])


def test_targets_are_checked_key_by_key(tmp_path):
    assert "key 'targets.best_peer_ratio'" in bad(tmp_path, targets={"best_peer_ratio": 0})
    assert "key 'targets.kernel_us.conv'" in bad(tmp_path, targets={"kernel_us": {"conv": 10}})
    assert "key 'targets.roof_fraction'" in bad(tmp_path, targets={"roof_fraction": 1.5})


def test_a_roof_target_needs_a_sweep(tmp_path):
    message = bad(tmp_path, targets={"roof_fraction": 0.75})
    assert "key 'targets.roof_fraction': needs a sweep" in message


@pytest.mark.parametrize("path", sorted((ROOT / "config" / "namespaces").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_prose_a_note_prints_from_a_namespace_file_types_no_number(path):
    """Checked here, not first at the end of a GPU run: the note stage refuses a typed number in the description,
    the progression's changes or the limits (h200-002's description named its issue number until 2026-12-02)."""
    from fieldnote.publish.authored import refuse_typed_prose

    data = yaml.safe_load(path.read_text())
    refuse_typed_prose(str(path), data.get("description"), data.get("progression"), data.get("targets"),
                       data.get("attempts"))


def archived_namespace(tmp_path, monkeypatch, name: str, edit):
    """A shipped archived namespace's file with `edit` applied, resolved from the checkout's root (its archive is
    read from there)."""
    monkeypatch.chdir(ROOT)
    data = yaml.safe_load((ROOT / "config" / "namespaces" / f"{name}.yaml").read_text())
    edit(data)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return resolve(name, path, DEFAULTS), path


def test_what_limits_an_archived_namespace_s_ops_and_why_an_attempt_was_left_are_prose_it_may_reword(
        tmp_path, monkeypatch):
    """targets.limits and attempts[].why are the reading, not the measurement: reworded in the file, the archive is
    still the file's, and the note reads the new words."""
    from fieldnote.evidence.archive import _pinned
    from fieldnote.registry.config import read_when_archived

    def edit(d):
        d["targets"]["limits"]["gelu"] = "Memory, reworded."
        d["attempts"][0]["why"] = "reworded too"

    ns, _ = archived_namespace(tmp_path, monkeypatch, "h200-002", edit)
    archive = _pinned(ns)
    resolved = read_when_archived(archive.resolved(), ns)
    assert resolved["targets"]["limits"]["gelu"] == "Memory, reworded."
    assert resolved["attempts"][0]["why"] == "reworded too"


@pytest.mark.parametrize("name, edit, says", [
    ("h200-001", lambda d: d.setdefault("shapes", {}).update(gelu={"rows": 8192, "cols": 768}),
     "key 'shapes.gelu.rows' is 8192, but archives/h200-001.tar.gz recorded 4096"),
    ("h200-001", lambda d: d["targets"].update(best_peer_ratio=0.9),
     "key 'targets.best_peer_ratio' is 0.9, but archives/h200-001.tar.gz recorded 0.8"),
    ("h200-001", lambda d: d["targets"].pop("kernel_us"),
     "key 'targets.kernel_us' is not stated, but archives/h200-001.tar.gz recorded {'matmul': 44}"),
    ("h200-002", lambda d: d["targets"]["points"][1].update(at_most=0.75),
     "key 'targets.points' is [{'op': 'triangle'"),
    ("mage-001", lambda d: d.update(targets={"best_peer_ratio": 2.0}),
     "key 'targets' is {'best_peer_ratio': 2.0}, but archives/mage-001.tar.gz recorded None"),
])
def test_an_archived_namespace_s_targets_edited_are_refused_like_its_shapes(tmp_path, monkeypatch, name, edit, says):
    """Its targets are its archive's, as its shapes are: stated otherwise, or with one left out, the file is
    refused in one line naming it and the key."""
    from fieldnote.evidence.archive import _pinned

    ns, path = archived_namespace(tmp_path, monkeypatch, name, edit)
    with pytest.raises(PipelineError) as error:
        _pinned(ns)
    message = str(error.value)
    assert message.startswith(f"{path}: {says}") and "\n" not in message
    assert "fixed by its archive" in message


@pytest.mark.parametrize("name", ["h200-001", "h200-002"])
def test_an_archived_namespace_is_held_to_its_archive_s_targets(tmp_path, monkeypatch, name):
    """Stated as archived, or left out of the file, the targets the note is held to are the archive's, their
    ops in the registry's order (config.resolved.json sorts them): h200-002's limits are listed as its note lists
    them."""
    from fieldnote.evidence.archive import Archive, resolve_archived
    from fieldnote.registry.config import read_when_archived
    from fieldnote.registry.ops import OPS

    recorded = Archive(ROOT / "archives" / f"{name}.tar.gz").resolved()["targets"]
    for edit in (lambda d: None, lambda d: d.pop("targets")):
        ns, _ = archived_namespace(tmp_path, monkeypatch, name, edit)
        namespaces = {name: ns}
        archives, broken = resolve_archived(namespaces, None)
        assert not broken and namespaces[name].targets == recorded
        published = read_when_archived(archives[name].resolved(), ns)["targets"]
        for by_op in [v for v in published.values() if isinstance(v, dict)]:
            assert list(by_op) == [op for op in OPS if op in by_op]
