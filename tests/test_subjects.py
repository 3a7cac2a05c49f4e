"""Subjects (issue 14): a measurement's name (`cuda`, an attempt's variant, `cuda@1024x768`) beside what it is, in
columns of their own (implementation, variant, shape); and evidence archived before subjects, read into that
layout. The fixture tests/fixtures/pre-subjects-mage-006.tar.gz is archives/mage-006.tar.gz as shipped before
subjects: the same measurement, the name alone in `implementation`."""
import io
import json
import tarfile

import pandas as pd
import pytest
from conftest import ROOT, archived_bundle, copy_project, same_claims, snakemake

from fieldnote.evidence.migrate import migrate
from fieldnote.registry.subjects import adopted, attributes, describe

OLD = ROOT / "tests" / "fixtures" / "pre-subjects-mage-006.tar.gz"
CUDA = {"implementation": "cuda", "variant": "gelu_bias_tanh", "cubin": "g.cubin"}
TORCH = {"implementation": "torch", "variant": None, "cubin": None}
ATTEMPT = {"implementation": "cuda", "variant": "gelu_bias_erf", "cubin": "e.cubin"}


def old_bundle() -> dict[str, bytes]:
    with tarfile.open(OLD) as tar:
        return {m.name.removeprefix("mage-006/bundle/"): tar.extractfile(m).read() for m in tar.getmembers()
                if m.isfile() and m.name.startswith("mage-006/bundle/")}


def table(files: dict[str, bytes], name: str) -> pd.DataFrame:
    return pd.read_parquet(io.BytesIO(files[f"evidence/{name}.parquet"]))


def test_a_subject_is_described_by_its_implementation_variant_and_shape():
    named = attributes("gelu", {"cuda": CUDA, "torch": TORCH, "gelu_bias_erf": ATTEMPT},
                       {"rows": 4096, "cols": 768})
    assert named["torch"] == {"implementation": "torch", "variant": "torch", "shape": "4096x768"}
    assert named["gelu_bias_erf"] == {"implementation": "cuda", "variant": "gelu_bias_erf", "shape": "4096x768"}
    point = attributes("gelu", {"cuda@64x32": {**CUDA, "shape": {"rows": 64, "cols": 32}}})
    assert point["cuda@64x32"] == {"implementation": "cuda", "variant": "gelu_bias_tanh", "shape": "64x32"}
    rows = pd.DataFrame({"op": "gelu", "subject": ["cuda", "gelu_bias_erf", "torch", None], "span_us": 1.0})
    out = describe(rows, named)
    assert list(out.columns) == ["op", "subject", "implementation", "variant", "shape", "span_us"]
    assert out["implementation"].tolist()[:3] == ["cuda", "cuda", "torch"] and out["variant"].isna().tolist()[3]
    assert adopted(out)["subject"].tolist() == ["cuda", "torch"]  # not the attempt, not a row outside a range


def test_a_check_keeps_the_shape_of_each_case():
    checks = pd.DataFrame({"op": "gelu", "subject": "cuda", "shape": ["4096x768", "3x257"], "case": ["full", "edge"]})
    out = describe(checks, attributes("gelu", {"cuda": CUDA}, {"rows": 4096, "cols": 768}))
    assert out["shape"].tolist() == ["4096x768", "3x257"] and set(out["variant"]) == {"gelu_bias_tanh"}


def test_an_archive_from_before_subjects_reads_as_the_archive_shipped_since():
    """The pre-subjects mage-006 archive's tables, migrated with its own configuration, are the shipped archive's
    tables: the attempts' variants are CUDA subjects, the namespace's implementations carry their variant."""
    old, new = old_bundle(), archived_bundle("mage-006")
    config = json.loads(old["config.resolved.json"])
    names = [n.removeprefix("evidence/").removesuffix(".parquet") for n in old
             if n.startswith("evidence/") and n.endswith(".parquet") and n.count("/") == 1]
    migrated = 0
    for name in names:
        before = table(old, name)
        after = migrate(before, config["variants"], config["shapes"])
        if after is before:
            assert "implementation" not in before or "subject" in before or name in ("summary", "sweep"), name
            continue
        migrated += 1
        assert after.equals(table(new, name)), name
    assert migrated >= 4  # checks, spans, kernels, capture_summary, gpu_state, counters
    kernels = migrate(table(old, "kernels"), config["variants"], config["shapes"])
    attempts = {a["variant"] for a in config["attempts"]}
    rows = kernels[kernels["subject"].isin(attempts)]
    assert not rows.empty and set(rows["implementation"]) == {"cuda"} and set(rows["variant"]) == attempts & set(
        rows["subject"])
    ours = adopted(kernels)
    assert set(ours["subject"]) == set(config["implementations"]) and not ours["subject"].isin(attempts).any()


def test_a_pre_subjects_summary_gets_its_variant_and_shape_and_no_name():
    old = table(old_bundle(), "summary")
    config = json.loads(old_bundle()["config.resolved.json"])
    out = migrate(old, config["variants"], config["shapes"])
    assert "subject" not in out and list(out.columns[:5]) == ["namespace", "op", "implementation", "variant", "shape"]
    cuda = out[(out["op"] == "layernorm") & (out["implementation"] == "cuda")].iloc[0]
    assert cuda["variant"] == config["variants"]["layernorm"] and cuda["shape"] == "4096x768"


def test_an_old_sweep_point_name_is_split_into_implementation_and_shape():
    old = pd.DataFrame({"op": "gelu", "implementation": ["cuda@1024x768", "torch@1024x768"], "passed": True,
                        "variant": ["gelu_bias_tanh", "torch"], "shape": "1024x768"})
    out = migrate(old, {"gelu": "gelu_bias_tanh"}, {})
    assert out[["subject", "implementation", "variant", "shape"]].values.tolist() == [
        ["cuda@1024x768", "cuda", "gelu_bias_tanh", "1024x768"], ["torch@1024x768", "torch", "torch", "1024x768"]]


def test_a_table_whose_implementation_names_a_peer_is_read_as_written():
    """known_peers names a peer in `implementation` and has no variant: read as a pre-subjects table, a replay
    rewrote it with a variant column (found replaying h100-002r's archive)."""
    peers = pd.DataFrame({"namespace": "h100-002r", "op": ["gelu", "matmul"], "shape": ["4096x768", "1024x1024x1024"],
                          "cache": "warm", "implementation": ["compiled", "torch"], "kernel_us": [7.09, 57.14],
                          "kernel_low_us": [7.08, 56.22], "kernel_high_us": [7.09, 57.42], "source": "h200-002",
                          "source_sha256": "0" * 64, "gpu_name": "NVIDIA H100 80GB HBM3"})
    for frame in (peers, peers.iloc[:0]):
        assert migrate(frame, {"gelu": "gelu_bias_sigmoid_flat4"}, {"gelu": {}}, "known_peers") is frame
    assert "variant" in migrate(peers, {}, {})  # without its name it is taken for an old summary


@pytest.mark.slow  # the workflow end to end
def test_the_pre_subjects_archive_replays_into_the_bundle_shipped_since(tmp_path):
    """Pinned in place of the shipped archive, the pre-subjects one rebuilds the same note and the same tables."""
    import hashlib

    project = copy_project(tmp_path)
    (project / "archives" / "mage-006.tar.gz").write_bytes(OLD.read_bytes())
    path = project / "config" / "namespaces" / "mage-006.yaml"
    digest = hashlib.sha256(OLD.read_bytes()).hexdigest()
    text = path.read_text()
    pinned = next(line for line in text.splitlines() if line.startswith("  sha256: "))
    path.write_text(text.replace(pinned, f"  sha256: {digest}"))
    run = snakemake(project, "--cores", "2", "results/mage-006")
    assert run.returncode == 0, run.stderr
    shipped, bundle = archived_bundle("mage-006"), project / "results" / "mage-006"
    assert (bundle / "note.md").read_bytes() == shipped["note.md"]
    for name, data in shipped.items():
        if name.endswith("claims.parquet"):  # today's beside the archived ones: the targets' verdicts
            same_claims(pd.read_parquet(bundle / name), pd.read_parquet(io.BytesIO(data)), bundle / "note.md")
        elif name.endswith(".parquet"):
            assert pd.read_parquet(bundle / name).equals(pd.read_parquet(io.BytesIO(data))), name
