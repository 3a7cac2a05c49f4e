"""Hostile input cannot hurt: every case an attacker or a careless user tried, on a throw-away copy of the checkout
with a folder beside it. Each asserts the promise: rc non-zero, one line naming the file, key or value, no
traceback, and nothing outside results/ and work/ touched (the checkout, archives/ included, and the folder beside
it hash the same before and after)."""
import gzip
import hashlib
import importlib.util
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import SEED_EVIDENCE, SMALL, copy_project, snakemake

from fieldnote.core import io as fio
from fieldnote.core.errors import PipelineError
from fieldnote.evidence.archive import MAX_MEMBER_BYTES, Archive, pack_members, read_members
from fieldnote.evidence.bundle import manifest
from fieldnote.evidence.plausible import check_plausible

SKIP = {"results", "work", ".snakemake", "__pycache__"}


def tree(root: Path, skip=SKIP) -> dict[str, str]:
    """Every file under `root` but Snakemake's and our outputs, by its SHA-256 (a symlink by its target)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if skip & set(path.relative_to(root).parts):
            continue
        if path.is_symlink():
            found[str(path.relative_to(root))] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def checkout(tmp_path) -> Path:
    project = tmp_path / "checkout"
    project.mkdir()
    copy_project(project)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("not the workflow's\n")
    return project


def refused(project: Path, *args: str, says: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run Snakemake; it must fail with one line holding `says` and leave everything outside results/, work/ as
    it was."""
    inside, beside = tree(project), tree(project.parent, SKIP | {"checkout"})
    run = snakemake(project, *args, timeout=timeout)
    text = run.stdout + run.stderr
    assert run.returncode != 0, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    lines = [line for line in run.stderr.splitlines() if line.startswith("fieldnote:") and says in line]
    assert lines, text[-3000:]
    assert tree(project) == inside, "the checkout changed"
    assert tree(project.parent, SKIP | {"checkout"}) == beside, "something beside the checkout changed"
    return run


def members_of(path: Path) -> tuple[str, dict[str, bytes]]:
    return read_members(path)


def forge(source: Path, dest: Path, edit, namespace: str | None = None) -> Path:
    """An archive made from `source` with `edit(members)` applied and everything re-hashed (manifest and index):
    a forgery consistent with itself, as an attacker would make it."""
    ns, members = members_of(source)
    if namespace:
        edit_resolved(lambda d: d.update(name=namespace))(members)
    edit(members)
    bundle = dest.parent / f"forge-{dest.name}"
    for name, data in members.items():
        if name.startswith("bundle/"):
            (bundle / name).parent.mkdir(parents=True, exist_ok=True)
            (bundle / name).write_bytes(data)
    (bundle / "bundle" / "evidence" / "MANIFEST.sha256").write_text(manifest(bundle / "bundle"))
    members["bundle/evidence/MANIFEST.sha256"] = (bundle / "bundle" / "evidence" / "MANIFEST.sha256").read_bytes()
    pack_members(namespace or ns, members, dest)
    return dest


def edit_table(name: str, change):
    def edit(members):
        frame = pd.read_parquet(io.BytesIO(members[f"bundle/evidence/{name}.parquet"]))
        buffer = io.BytesIO()
        change(frame).to_parquet(buffer, index=False)
        members[f"bundle/evidence/{name}.parquet"] = buffer.getvalue()
    return edit


def edit_resolved(change):
    def edit(members):
        data = json.loads(members["bundle/config.resolved.json"])
        change(data)
        members["bundle/config.resolved.json"] = json.dumps(data).encode()
    return edit


def raw_archive(dest: Path, entries: list[tuple[str, bytes]]) -> Path:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dest.write_bytes(gzip.compress(raw.getvalue()))
    return dest


def namespace_file(project: Path, name: str, text: str) -> Path:
    path = project / "config" / "namespaces" / f"{name}.yaml"
    path.write_text(text)
    return path


def small_namespace(project: Path, name: str, **extra) -> Path:
    data = {"ops": list(SMALL), "implementations": ["torch", "triton"], "variants": {}, "shapes": SMALL, **extra}
    return namespace_file(project, name, yaml.safe_dump(data))


# Names and paths


def test_a_namespace_named_dot_dot_is_refused_and_the_checkout_stays(checkout):
    namespace_file(checkout, "..", "evidence: {original: ../shared/seed-evidence/mage-006}\n")
    before = tree(checkout)
    refused(checkout, "--cores", "1", says="'..' is not a valid name")
    assert (checkout / ".git").exists() or (checkout / "Snakefile").exists()
    assert tree(checkout) == before


@pytest.mark.parametrize("top", ["..", ".", "x.tar.gz", "a b"])
def test_an_archive_whose_top_folder_is_not_a_name_is_refused(checkout, tmp_path, top):
    archive = raw_archive(checkout / "archives" / "evil.tar.gz", [(f"{top}/INDEX.json", b"{}")])
    refused(checkout, "--cores", "1", "--config", f"replay={archive}", says="is not a valid name")


def test_names_in_a_replayed_progression_cannot_climb_out(checkout, tmp_path):
    climb = "../../../outside/x"
    forged = forge(checkout / "archives" / "mage-006.tar.gz", checkout / "archives" / "p.tar.gz",
                   edit_resolved(lambda d: d["progression"]["namespaces"].append(climb)), namespace="mage-106")
    refused(checkout, "--cores", "1", "results/mage-106", "--config", f"replay={forged}",
            says="key 'progression.namespaces.4': '../../../outside/x' does not match")
    assert not (tmp_path / "outside" / "x").exists()


@pytest.mark.parametrize("path", ["../outside/x", "work/../../x", "/tmp/x", "results/../Snakefile"])
def test_a_written_path_outside_results_and_work_is_refused(tmp_path, path):
    from fieldnote.registry.names import check_written

    (tmp_path / "results").mkdir()
    with pytest.raises(PipelineError, match="outside"):
        check_written(path, "rule x", tmp_path)
    check_written("results/mage-006", "rule x", tmp_path)
    check_written("work/x/y.parquet", "rule x", tmp_path)


def test_a_rule_writing_outside_results_and_work_stops_the_run_before_any_job(checkout):
    with open(checkout / "workflow" / "rules" / "bundle.smk", "a") as snakefile:
        snakefile.write('\n\nrule rogue:\n    output:\n        "../outside/x",\n    shell:\n        "touch {output}"\n')
    refused(checkout, "-n", "--cores", "1", says="rule rogue: writes ../outside/x")


# Pinned archives


@pytest.mark.slow
def test_a_second_namespace_cannot_substitute_another_s_archive(checkout, tmp_path):
    forged = forge(checkout / "archives" / "mage-006.tar.gz", checkout / "archives" / "forged.tar.gz",
                   edit_table("summary", lambda f: f.assign(kernel_us=f["kernel_us"] / 2)))
    digest = hashlib.sha256(forged.read_bytes()).hexdigest()
    namespace_file(checkout, "evil", f"archived: {{archive: {forged}, sha256: {digest}}}\n")
    refused(checkout, "--cores", "1", "results/evil", says="records namespace 'mage-006', not 'evil'")
    good = snakemake(checkout, "--cores", "1", "results/mage-006")  # blocked only itself: mage-006 is the genuine one
    assert good.returncode == 0, good.stderr
    shipped = dict(line.split("  ")[::-1] for line in members_of(checkout / "archives" / "mage-006.tar.gz")[1][
        "bundle/evidence/MANIFEST.sha256"].decode().splitlines())
    rebuilt = checkout / "results" / "mage-006" / "evidence" / "kernels.parquet"
    assert hashlib.sha256(rebuilt.read_bytes()).hexdigest() == shipped["evidence/kernels.parquet"]


def test_an_edited_archive_with_a_regenerated_manifest_is_refused_by_its_pin(checkout, tmp_path):
    shipped = checkout / "archives" / "mage-006.tar.gz"
    forged = forge(shipped, tmp_path / "forged.tar.gz",
                   edit_table("spans", lambda f: f.assign(span_us=f["span_us"] * 0.5)))
    pin = yaml.safe_load((checkout / "config" / "namespaces" / "mage-006.yaml").read_text())["archived"]["sha256"]
    shipped.write_bytes(forged.read_bytes())
    run = refused(checkout, "--cores", "1", "results/mage-006", says=f"not the {pin[:8]}")
    assert "config/namespaces/mage-006.yaml: key 'archived'" in run.stderr
    touched = snakemake(checkout, "--cores", "1", "--touch", "results/mage-006.tar.gz")
    assert touched.returncode != 0 and not (checkout / "results" / "mage-006.tar.gz").exists()


def test_two_namespace_files_cannot_pin_one_archive(checkout):
    pin = yaml.safe_load((checkout / "config" / "namespaces" / "mage-001.yaml").read_text())["archived"]
    namespace_file(checkout, "copy", yaml.safe_dump({"archived": pin}))
    refused(checkout, "-n", "--cores", "1", says="archives/mage-001.tar.gz is already the archive of")


def test_a_namespace_drifting_over_a_broken_archive_is_refused_there(checkout):
    (checkout / "archives" / "mage-001.tar.gz").write_bytes(b"not an archive")
    small_namespace(checkout, "toy", drift={"baseline": "mage-001"})
    plan = snakemake(checkout, "-n", "--cores", "1", "results/toy")
    assert plan.returncode == 0, plan.stderr
    assert "rule unusable_archive_evidence:" in plan.stdout and "ns=mage-001" in plan.stdout


@pytest.mark.parametrize("edit, says", [
    (lambda d: d["shapes"].update(gelu={"rows": 8192, "cols": 768}),
     "key 'shapes.gelu.rows' is 8192, but archives/h200-001.tar.gz recorded 4096"),
    (lambda d: d["targets"].update(best_peer_ratio=2.0),
     "key 'targets.best_peer_ratio' is 2.0, but archives/h200-001.tar.gz recorded 0.8"),
    (lambda d: d["variants"].update(matmul="matmul_tiled_16x16"), "key 'variants.matmul' is 'matmul_tiled_16x16'"),
    (lambda d: d.update(implementations=["torch", "cuda"]), "key 'implementations' is ['torch', 'cuda']"),
    (lambda d: d["capture"].update(backends=["cupti"]), "key 'capture.backends' is ['cupti']"),
])
def test_editing_what_an_archive_fixed_is_refused_for_that_namespace(checkout, edit, says):
    path = checkout / "config" / "namespaces" / "h200-001.yaml"
    data = yaml.safe_load(path.read_text())
    data.setdefault("shapes", {}).setdefault("gelu", {"rows": 4096, "cols": 768})
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    refused(checkout, "--cores", "1", "results/h200-001", says=says)
    assert snakemake(checkout, "-n", "--cores", "1", "results/mage-006").returncode == 0


def test_an_archived_namespace_file_may_say_no_more_than_archived(checkout):
    path = checkout / "config" / "namespaces" / "mage-001.yaml"
    pin = yaml.safe_load(path.read_text())["archived"]
    path.write_text(yaml.safe_dump({"archived": pin}))
    plan = snakemake(checkout, "-n", "--cores", "1", "results/mage-001")
    assert plan.returncode == 0 and "warning" not in plan.stderr, plan.stderr


def test_a_replay_cannot_claim_a_pinned_namespace(checkout, tmp_path):
    forged = forge(checkout / "archives" / "mage-006.tar.gz", checkout / "archives" / "forged.tar.gz",
                   edit_table("spans", lambda f: f.assign(span_us=f["span_us"] * 0.5)))
    refused(checkout, "--cores", "1", "results/mage-006", "--config", f"replay={forged}",
            says="two archives cannot claim one namespace")


@pytest.mark.parametrize("value, says", [(-3.0, "span_us = -3.0 is not a finite positive number"),
                                         (float("nan"), "span_us = nan is not a finite positive number")])
def test_an_unpinned_archive_with_implausible_spans_is_refused_naming_the_row(checkout, tmp_path, value, says):
    def change(frame):
        frame.loc[7, "span_us"] = value
        return frame
    forged = forge(checkout / "archives" / "mage-006.tar.gz", checkout / "archives" / "f.tar.gz",
                   edit_table("spans", change), namespace="mage-106")
    run = refused(checkout, "--cores", "1", "results/mage-106", "--config", f"replay={forged}", says=says)
    assert "evidence/spans.parquet: row 7 (op=" in run.stderr
    assert not (checkout / "results" / "mage-106").exists()


# Limits and laziness


@pytest.mark.slow
def test_a_two_gib_member_is_refused_before_it_is_read(checkout, tmp_path):
    """2 GiB of zeros compress to 2 MB: refused from the index and the member's header, in bounded memory."""
    archive = checkout / "archives" / "big.tar.gz"
    size = 2 << 30
    index = {"format": 1, "namespace": "big", "files": {"bundle/note.md": {"size": size, "sha256": "0" * 64}}}
    with gzip.open(archive, "wb") as gz, tarfile.open(fileobj=gz, mode="w|") as tar:
        data = json.dumps(index).encode()
        info = tarfile.TarInfo("big/INDEX.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("big/bundle/note.md")
        info.size = size
        tar.addfile(info, _Zeros(size))
    assert archive.stat().st_size < 16 << 20
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    refused(checkout, "-n", "--cores", "1", "--config", f"replay={archive}",
            says=f"bundle/note.md is {size:,} bytes, above the limit of {MAX_MEMBER_BYTES:,}")
    assert max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) < 1 << 20  # KiB: under 1 GiB


class _Zeros(io.RawIOBase):
    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def read(self, n=-1):
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


def test_a_member_whose_header_disagrees_with_the_index_is_refused(tmp_path):
    index = json.dumps({"format": 1, "namespace": "x", "files": {"bundle/a": {"size": 3, "sha256": "0" * 64}}})
    archive = raw_archive(tmp_path / "x.tar.gz", [("x/INDEX.json", index.encode()), ("x/bundle/a", b"12345")])
    with pytest.raises(PipelineError, match="member 'x/bundle/a' is 5 bytes, its index says 3"):
        read_members(archive)


@pytest.mark.parametrize("index, says", [
    ({"format": 2, "namespace": "x", "files": {}}, "INDEX.json is not an index of format 1 for namespace x"),
    ({"format": 1, "namespace": "x", "files": {"bundle/a": {"size": "3"}}}, "is not an index of format 1"),
    ({"format": 1, "namespace": "x", "files": {"bundle/../../a": {"size": 1, "sha256": "0" * 64}}},
     "'bundle/../../a' is not a safe relative path"),
    ({"format": 1, "namespace": "x", "files": {"elsewhere/a": {"size": 1, "sha256": "0" * 64}}},
     "lists 'elsewhere/a', outside bundle/ and source/"),
])
def test_a_bad_index_is_one_line(tmp_path, index, says):
    archive = raw_archive(tmp_path / "x.tar.gz", [("x/INDEX.json", json.dumps(index).encode())])
    with pytest.raises(PipelineError, match=re.escape(says)):
        read_members(archive)


def test_a_corrupt_archive_blocks_only_its_own_namespace(checkout):
    path = checkout / "archives" / "mage-001.tar.gz"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    ok = snakemake(checkout, "-n", "--cores", "1", "results/mage-006")
    assert ok.returncode == 0, ok.stderr
    assert "warning: results/mage-001 cannot be rebuilt" in ok.stderr
    refused(checkout, "--cores", "1", "results/mage-001", says="is not a readable archive (Compressed file ended")


def test_a_flipped_byte_fails_the_gzip_crc(tmp_path, checkout):
    data = bytearray((checkout / "archives" / "mage-001.tar.gz").read_bytes())
    data[-6] ^= 0xFF  # inside the CRC-32 trailer: every member reads, the stream's end does not
    (tmp_path / "crc.tar.gz").write_bytes(bytes(data))
    with pytest.raises(PipelineError, match="not a readable archive .*CRC check failed"):
        read_members(tmp_path / "crc.tar.gz")


def test_verification_is_cached_by_the_archive_s_hash(tmp_path, checkout, monkeypatch):
    from fieldnote.evidence import archive as module
    path = checkout / "archives" / "mage-001.tar.gz"
    first = Archive(path, cache=tmp_path / "cache")
    monkeypatch.setattr(module, "read_members", lambda p: pytest.fail("the archive was read again"))
    again = Archive(path, cache=tmp_path / "cache")
    assert (again.namespace, again.tables(), again.resolved()) == (first.namespace, first.tables(), first.resolved())


# Plausible evidence


@pytest.mark.parametrize("column, value, says", [
    ("duration_us", float("nan"), "duration_us = nan is not a finite positive number"),
    ("duration_us", -1.0, "duration_us = -1.0 is not a finite positive number"),
    ("launch", 2.5, "launch = 2.5 is not a whole number"),
    ("registers", -4, "registers = -4.0 is not a whole number"),
])
def test_implausible_kernels_are_one_line_naming_table_row_and_value(column, value, says):
    frame = pd.DataFrame({"op": ["gelu", "gelu"], "implementation": ["cuda", "cuda"], "duration_us": [1.0, 2.0],
                          "launch": [0.0, 1.0], "registers": [32, 32]})
    frame[column] = frame[column].astype(float)
    frame.loc[1, column] = value
    with pytest.raises(PipelineError, match=rf"kernels: row 1 \(op=gelu, implementation=cuda\): {re.escape(says)}"):
        check_plausible("kernels", frame)


@pytest.mark.parametrize("column, value", [("sm_clock_mhz", 0), ("sm_clock_mhz", 99999), ("utilization_gpu_pct", 140)])
def test_clocks_and_percentages_out_of_range_are_refused(column, value):
    frame = pd.DataFrame({"op": ["gelu"], "sm_clock_mhz": [1980], "utilization_gpu_pct": [12]})
    frame[column] = value
    with pytest.raises(PipelineError, match=f"{column} = {value} is not"):
        check_plausible("gpu_state", frame)


@pytest.mark.skipif(not (SEED_EVIDENCE / "mage-001").exists(), reason="../shared/seed-evidence absent")
@pytest.mark.parametrize("damage, says", [
    ("nan", "duration_us = nan is not a finite positive number"),
    ("truncate", "comparison-profiles.json: not valid JSON"),
])
def test_imported_evidence_that_is_implausible_or_truncated_is_one_line(checkout, tmp_path, damage, says):
    folder = tmp_path / "outside" / "seed"
    folder.mkdir()
    (folder / "comparison-results.json").write_bytes((SEED_EVIDENCE / "mage-001" / "comparison-results.json")
                                                     .read_bytes())
    text = (SEED_EVIDENCE / "mage-001" / "comparison-profiles.json").read_text()
    if damage == "nan":
        profiles = json.loads(text)
        profiles["captures"][0]["kernel_metrics"][3]["duration_us"] = float("nan")
        text = json.dumps(profiles)
    else:
        text = text[: len(text) // 2]
    (folder / "comparison-profiles.json").write_text(text)
    namespace_file(checkout, "seedcopy", f"evidence: {{original: {folder}}}\n")
    refused(checkout, "--cores", "1", "results/seedcopy", says=says)


# The bundle never loses what it had


@pytest.fixture
def built(checkout) -> Path:
    run = snakemake(checkout, "--cores", "1", "results/mage-006")
    assert run.returncode == 0, run.stderr
    return checkout


def bundle_hashes(project: Path) -> dict[str, str]:
    return tree(project / "results" / "mage-006", {".snakemake_timestamp"})


@pytest.mark.slow
def test_a_bundle_failing_validation_leaves_the_previous_one(built):
    before = bundle_hashes(built)
    summary = built / "work" / "mage-006" / "summary.parquet"
    frame = pd.read_parquet(summary)
    frame.loc[0, "kernel_us"] = -1.0
    frame.to_parquet(summary, index=False)
    refused(built, "results/mage-006", "--cores", "1", "--forcerun", "bundle",
            says="kernel_us = -1.0 is not a finite positive number")
    assert bundle_hashes(built) == before
    assert [p.name for p in (built / "results").iterdir() if p.name.startswith(".")] == []
    again = snakemake(built, "-n", "--cores", "1", "results/mage-006")
    assert "Nothing to be done" not in again.stdout + again.stderr


@pytest.mark.slow
def test_a_bundle_that_cannot_be_written_leaves_the_previous_one(built):
    """As a full disk would: the assembly fails midway (a figure that cannot be copied)."""
    before = bundle_hashes(built)
    os.symlink(built / "nowhere.png", built / "work" / "mage-006" / "figures" / "broken.png")
    refused(built, "results/mage-006", "--cores", "1", "--forcerun", "bundle",
            says="results/mage-006: the new bundle could not be written")
    assert bundle_hashes(built) == before
    assert [p.name for p in (built / "results").iterdir() if p.name.startswith(".")] == []


@pytest.mark.slow
def test_an_emptied_bundle_is_not_taken_as_up_to_date(built):
    for path in (built / "results" / "mage-006").rglob("*"):
        if path.is_file() and path.name != ".snakemake_timestamp":
            path.unlink()
    plan = snakemake(built, "-n", "--cores", "1", "results/mage-006")
    assert "Nothing to be done" not in plan.stdout + plan.stderr and "bundle" in plan.stdout


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.slow
def test_what_killed_jobs_left_is_removed_by_the_next_run(built):
    leftover = f"{fio._HOST}-{dead_pid()}-abcd"
    tmp = built / "work" / "mage-006" / f".summary.parquet.{leftover}.tmp"
    tmp.write_bytes(bytes(1 << 20))
    partial = built / "results" / f".mage-006.{leftover}.partial"
    (partial / "evidence").mkdir(parents=True)
    live = built / "work" / "mage-006" / f".note.md.{fio._HOST}-{os.getpid()}-live.tmp"  # a writer still running
    live.write_text("")
    bundle = built / "results" / "mage-006"
    before = bundle_hashes(built)
    bundle.rename(built / "results" / f".mage-006.{leftover}.old")  # killed between the swap's two renames
    run = snakemake(built, "--cores", "1", "results/mage-006")
    assert run.returncode == 0, run.stderr
    assert not tmp.exists() and not partial.exists() and live.exists()
    assert bundle_hashes(built) == before


# One line for every bad input


@pytest.mark.parametrize("make, says", [
    (lambda p: p.mkdir(), "cannot be read (Is a directory)"),
    (lambda p: (os.symlink(p.name, p)), "cannot be read (Too many levels of symbolic links)"),
    (lambda p: p.write_bytes(b"description: caf\xe9\n"), "not UTF-8 text (byte 16)"),
    (lambda p: p.write_text("implementations: [torch]\nvariants: {}\nseed: 1\nseed: 2\n"),
     "not valid YAML (key 'seed' is given twice, line 4)"),
    (lambda p: p.write_text("implementations: [torch]\nvariants: {}\ntolerance: {rtol: .nan}\n"),
     "key 'tolerance.rtol': not a finite number"),
    (lambda p: p.write_text("implementations: [torch]\nvariants: {}\ntolerance: {atol: .inf}\n"),
     "key 'tolerance.atol': not a finite number"),
    (lambda p: p.write_text("ops: [gelu]\nimplementations: [torch]\nvariants: {}\nshapes: {gelu: {rows: 1000000000000, "
                            "cols: 768}}\n"), "key 'shapes.gelu': 1000000000000x768 needs 5,722,045.9 GiB"),
    (lambda p: p.write_text("- a list\n"), "a namespace file is a mapping of keys, not a list"),
])
def test_a_bad_namespace_file_is_one_line(checkout, make, says):
    path = checkout / "config" / "namespaces" / "bad.yaml"
    make(path)
    refused(checkout, "-n", "--cores", "1", says=f"config/namespaces/bad.yaml: {says}")


def test_a_malformed_manifest_is_one_line(checkout, tmp_path):
    def edit(members):
        members["bundle/evidence/MANIFEST.sha256"] += b"not a manifest line\n"
    ns, members = members_of(checkout / "archives" / "mage-001.tar.gz")
    edit(members)
    line = members["bundle/evidence/MANIFEST.sha256"].count(b"\n")  # the line appended last
    pack_members("mage-101", members, checkout / "archives" / "m.tar.gz")
    refused(checkout, "-n", "--cores", "1", "--config", f"replay={checkout / 'archives' / 'm.tar.gz'}",
            says=f"evidence/MANIFEST.sha256: line {line} is not '<sha256>  <path>'")


def test_an_extra_key_in_an_archive_s_config_is_one_line(checkout, tmp_path):
    forged = forge(checkout / "archives" / "mage-001.tar.gz", checkout / "archives" / "k.tar.gz",
                   edit_resolved(lambda d: d.update(surprise=1)), namespace="mage-101")
    refused(checkout, "-n", "--cores", "1", "--config", f"replay={forged}",
            says="config.resolved.json: key 'surprise' is not allowed")


def test_an_archive_recording_another_name_in_its_config_is_one_line(checkout, tmp_path):
    forged = forge(checkout / "archives" / "mage-001.tar.gz", checkout / "archives" / "n.tar.gz",
                   edit_resolved(lambda d: d.update(name="mage-006")), namespace="mage-101")
    refused(checkout, "-n", "--cores", "1", "--config", f"replay={forged}",
            says="config.resolved.json is namespace 'mage-006', the archive 'mage-101'")


def test_an_archive_without_an_index_is_one_line(checkout, tmp_path):
    archive = raw_archive(checkout / "archives" / "old.tar.gz", [("old/bundle/note.md", b"# old\n")])
    refused(checkout, "-n", "--cores", "1", "--config", f"replay={archive}",
            says="its first member is 'old/bundle/note.md', not <namespace>/INDEX.json")


def test_an_archived_namespace_is_refused_in_the_job_whatever_the_flags(checkout):
    """--allowed-rules check_gpu routes around refuse_archived; the job itself refuses, before it imports torch."""
    from fieldnote.measure.inputs import path_for
    from fieldnote.registry.config import load_defaults

    shapes = load_defaults(checkout / "config" / "config.yaml")["shapes"]
    npz = checkout / path_for("gelu", shapes["gelu"], 20260910)
    npz.parent.mkdir(parents=True)
    for path in (npz, Path(str(npz).replace(".npz", ".sha256.json")), checkout / "work" / "mage-006" / "gpu.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    refused(checkout, "work/mage-006/check/gpu/gelu/torch.parquet", "--cores", "1", "--allowed-rules", "check_gpu",
            says="namespace mage-006 is archived (archives/mage-006.tar.gz)")
    assert not (checkout / "work" / "mage-006" / "check" / "gpu" / "gelu" / "torch.parquet").exists()


@pytest.mark.slow
def test_ctrl_c_stops_a_job_with_one_line(checkout):
    from fieldnote.measure.inputs import path_for

    shape = {"m": 16384, "n": 16384, "k": 8192}  # drawing 2 x 512 MiB of inputs: seconds of work to interrupt
    small_namespace(checkout, "toy", shapes={**SMALL, "matmul": shape})
    target = path_for("matmul", shape, 20260910)
    env = {**os.environ, "PYTHONPATH": str(checkout / "src"), "FIELDNOTE_ROOT": str(checkout)}
    inside = tree(checkout)
    # a terminal's foreground job: SIGINT not ignored, as it is for anything started in the background (a CI
    # runner's `cmd &`), whose Pythons would then never see the Ctrl-C
    run = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", target], cwd=checkout, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the job's log is opened by the job itself (script.entry), inside the handler that turns Ctrl-C into a line:
    # waiting for the script file alone left a loaded machine signalling before Snakemake had started the job
    log = checkout / "work" / "logs" / "inputs" / "matmul" / f"{Path(target).stem.replace('-seed', '/')}.log"
    deadline = time.time() + 120
    while time.time() < deadline and not log.exists():
        time.sleep(0.1)
    assert log.exists(), f"no {log}"
    time.sleep(1)  # drawing the inputs (about nine seconds)
    os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole foreground group
    out, err = run.communicate(timeout=120)
    assert run.returncode != 0
    assert "Traceback" not in out + err and "KeyboardInterrupt" not in out + err, err[-3000:]
    said = [line for line in (out + err).splitlines() if line.startswith("fieldnote:")]
    assert said == ["fieldnote: interrupted (Ctrl-C): the running jobs are stopped; what they were writing was a "
                    "temporary file, never published, and the next run starts them again"], err[-3000:]
    assert log.read_text().rstrip().endswith(
        "fieldnote: interrupted: rule inputs stopped before it finished and published nothing")
    assert not (checkout / target).exists()
    folder = (checkout / target).parent
    assert not folder.exists() or not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert tree(checkout) == inside


# Templates are code: they run in the sandbox, within bounds


def sandboxed(tmp_path: Path, text: str, name: str = "note.md"):
    """Render `text` as a note template over a one-row summary; the PipelineError it stops with, and the seconds."""
    from fieldnote.publish.authored import Evidence, render

    template = tmp_path / name
    template.write_text(text)
    summary = pd.DataFrame({"op": ["gelu"], "implementation": ["cuda"], "kernel_us": [5.0], "launches": [1]})
    evidence = Evidence("demo", {"summary": summary}, {"gpu": "NVIDIA H200"}, {}, {})
    start = time.monotonic()
    with pytest.raises(PipelineError) as e:
        render(template, evidence, {}, {})
    return str(e.value), time.monotonic() - start


@pytest.mark.parametrize("expression", [
    "cycler.__init__.__globals__.os.system('touch {marker}')",
    "lipsum.__globals__['os'].system('touch {marker}')",
    "kernel.__self__.tables",
    "config.__class__.__mro__[1].__subclasses__()",
    "namespace.__class__.__mro__"])
def test_a_template_cannot_reach_python_s_internals(tmp_path, expression):
    marker = tmp_path / "ran"
    message, _ = sandboxed(tmp_path, "{{ " + expression.format(marker=marker) + " }}\n")
    assert message.startswith(f"{tmp_path / 'note.md'}: line 1: refused by the sandbox: access to attribute")
    assert "\n" not in message and not marker.exists()


def test_a_template_cannot_change_what_it_is_given(tmp_path):
    message, _ = sandboxed(tmp_path, "{{ config.update(seed=1) }}{{ stages.append('x') }}\n")
    assert "refused by the sandbox" in message and "update" in message


@pytest.mark.parametrize("include", ["/etc/passwd", "../outside/keep.txt", "../../etc/passwd"])
def test_a_template_cannot_read_a_file_outside_its_folder(tmp_path, include):
    (tmp_path / "notes").mkdir()
    message, _ = sandboxed(tmp_path / "notes", "{% include '" + include + "' %}\n")
    assert f"line 1: no template '{include}' in {tmp_path / 'notes'} (a note includes only files of its own" in message


def test_a_template_including_itself_or_a_macro_calling_itself_is_one_line(tmp_path):
    message, _ = sandboxed(tmp_path, "{% include 'note.md' %}\n")
    assert message.endswith("recurses without end (a macro calling itself, an include of itself)")
    message, _ = sandboxed(tmp_path, "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}\n")
    assert "recurses without end" in message


@pytest.mark.parametrize("expression, says", [
    ("'x' * 10000000000", "refused by the sandbox: a repetition of more than"),
    ("[1] * 100000000", "refused by the sandbox: a repetition of more than"),
    ("'%0999999999d' % 1", "refused by the sandbox: a %-format wider than"),
    ("'%.*f' % (999999999, 1)", "refused by the sandbox: a %-format wider than"),
    ("9 ** 99999999", "refused by the sandbox: a power above"),
    ("'x' | center(17179869184)", "takes more memory than a note may"),
])
def test_a_template_building_something_huge_is_stopped_at_once(tmp_path, expression, says):
    before, limit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrlimit(resource.RLIMIT_AS)
    message, seconds = sandboxed(tmp_path, "{{ " + expression + " }}\n")
    assert says in message and seconds < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 << 10  # KiB: nothing was built
    assert resource.getrlimit(resource.RLIMIT_AS) == limit  # and the cap is lifted after


def test_a_note_growing_without_bound_is_stopped(tmp_path):
    message, seconds = sandboxed(tmp_path, "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}\n")
    assert "the note grows past 4,194,304 characters: stopped" in message and seconds < 10


def test_a_template_looping_without_end_is_stopped_at_its_time_bound(tmp_path, monkeypatch):
    from fieldnote.publish import sandbox
    monkeypatch.setattr(sandbox, "MAX_RENDER_SECONDS", 1)
    message, seconds = sandboxed(
        tmp_path, "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n")
    assert "ran past 1 s: stopped (a loop without end?)" in message and seconds < 5


# The page shows what it did not write as text


HOSTILE_MARKDOWN = """# evil

<script>window.pwned = 1</script> a <img src=x onerror="window.pwned = 2"> b

<!-- the warning would hide in here

[a link](javascript:window.pwned=3), [spelt](&#106;avascript:window.pwned=4), [data](data:text/html,x),
[protocol-relative](//evil.example/x), ![image](javascript:x), <a href="javascript:x">raw</a>

[fine](figures/launches.svg), [also fine](https://example.org/x), [anchor](#evil)

| gpu | name |
|---|---|
| 0 | <iframe src="javascript:window.pwned=5"></iframe> |
"""


def tags_of(page_text: str) -> list[tuple[str, dict]]:
    from html.parser import HTMLParser

    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

        def handle_comment(self, data):
            found.append(("!--", {"text": data}))

    Tags().feed(page_text)
    return found


def test_the_page_escapes_every_tag_and_link_it_did_not_write(tmp_path):
    from fieldnote.publish import page
    text = page.render(HOSTILE_MARKDOWN, tmp_path, "evil: field note")
    tags = tags_of(text)
    assert {t for t, _ in tags} <= {"html", "head", "meta", "title", "style", "body", "h1", "p", "a", "img",
                                    "table", "thead", "tbody", "tr", "th", "td", "code", "em", "strong"}
    links = [a.get("href") or a.get("src") for t, a in tags if t in ("a", "img")]
    assert links == [None, None, None, None, None, "figures/launches.svg", "https://example.org/x", "#evil"]
    assert not any(k.startswith("on") for _, attrs in tags for k in attrs)
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in text and "&lt;!-- the warning" in text


def test_the_warning_of_an_unpinned_archive_is_drawn_by_the_page_above_the_note(tmp_path):
    from fieldnote.publish import page
    provenance = {"archive": "<b>x</b>.tar.gz", "sha256": "ab" * 32, "why": "nobody pins it"}
    text = page.render("<!--\n\n# evil\n", tmp_path, "evil: field note", provenance)
    body = text.split("<body>\n", 1)[1]
    assert body.startswith('<aside class="unverified" role="alert"><strong>Unverified archive.</strong> This page '
                           "is rebuilt from &lt;b&gt;x&lt;/b&gt;.tar.gz")
    assert [t for t, _ in tags_of(text) if t == "!--"] == []


@pytest.mark.slow
def test_an_unpinned_archive_runs_no_code_and_scripts_no_page(checkout, tmp_path):
    """A forged archive whose template runs a command and hides the warning in a comment, whose description,
    changes and GPU name carry script: it replays, its note is the generated one, and its page runs nothing."""
    marker = tmp_path / "outside" / "pwned"
    script = "<script>window.pwned = true</script>"

    def edit(members):
        edit_resolved(lambda d: d.update(
            description=f"{script} <!-- hide", progression={**d["progression"], "changes": {
                n: "[see](javascript:window.pwned=true)" for n in d["progression"]["namespaces"]}}))(members)
        members["bundle/note.template.md"] = (
            "<!--\n{{ cycler.__init__.__globals__.os.system('touch " + str(marker) + "') }}\n").encode()
        environment = json.loads(members["bundle/evidence/environment.json"])
        environment["gpu_name"] = '<img src=x onerror="window.pwned = true">'
        members["bundle/evidence/environment.json"] = json.dumps(environment).encode()

    incoming = checkout / "incoming"
    incoming.mkdir()
    forged = forge(checkout / "archives" / "mage-006.tar.gz", incoming / "evil.tar.gz", edit, namespace="mage-106")
    beside = tree(tmp_path / "outside")
    run = snakemake(checkout, "--cores", "1", "results/mage-106", "--config", f"replay={forged}")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not marker.exists() and tree(tmp_path / "outside") == beside
    bundle = checkout / "results" / "mage-106"
    note = (bundle / "note.md").read_text()
    assert "**Unverified archive.**" in note.split("\n\n")[1] and "The note is the generated one" in note
    assert not (bundle / "note.template.md").exists()
    page_text = (bundle / "note.html").read_text()
    assert script not in page_text and "onerror" not in {k for _, a in tags_of(page_text) for k in a}
    assert "javascript:" not in {a.get("href", "") for t, a in tags_of(page_text) if t == "a"}
    assert page_text.split("<body>\n", 1)[1].startswith('<aside class="unverified" role="alert">')
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium and importlib.util.find_spec("playwright"):
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            view = browser.new_page()
            view.goto((bundle / "note.html").as_uri())
            view.wait_for_timeout(300)
            assert view.evaluate("window.pwned") is None
            assert view.is_visible("aside.unverified")
            browser.close()


@pytest.mark.slow
def test_a_namespace_s_template_reaching_for_the_os_is_refused_in_one_line(checkout, tmp_path):
    marker = tmp_path / "outside" / "pwned"
    (checkout / "notes" / "evil.md").write_text(
        "# evil\n\n{{ cycler.__init__.__globals__.os.system('touch " + str(marker) + "') }}\n")
    path = checkout / "config" / "namespaces" / "mage-006.yaml"
    path.write_text(re.sub(r"(?m)^note: .*$", "note: notes/evil.md", path.read_text()))
    refused(checkout, "--cores", "1", "results/mage-006",
            says="notes/evil.md: line 3: refused by the sandbox: access to attribute '__init__' of 'type' object "
                 "is unsafe.")
    assert not marker.exists()


@pytest.mark.parametrize("size", ["256k", "1m"])
def test_a_full_work_folder_is_one_line_and_publishes_nothing(checkout, size):
    """work/ on a tmpfs of `size`: the job that meets the full disk says so in one line, whichever it is."""
    (checkout / "work").mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(checkout / "work")],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small file system is needed to fill (mount tmpfs: {mounted.stderr.strip()})")
    try:
        run = refused(checkout, "--cores", "1", "results/mage-006", says="No space left on device")
    finally:
        subprocess.run(["umount", str(checkout / "work")], check=True)
    assert re.search(r"fieldnote: rule \w+: cannot write .*: No space left on device; what it was writing was a "
                     "temporary file, and nothing was published", run.stderr)
    assert not (checkout / "results" / "mage-006").exists()


@pytest.mark.parametrize("table, says", [
    ("capture_summary", "capture_summary: no capture from any of nsys, cupti (the table has 0 rows)")])
def test_an_unpinned_archive_with_an_emptied_table_is_one_line(checkout, table, says):
    incoming = checkout / "incoming"
    incoming.mkdir()
    forged = forge(checkout / "archives" / "mage-006.tar.gz", incoming / "empty.tar.gz",
                   edit_table(table, lambda f: f.iloc[0:0]), namespace="mage-106")
    refused(checkout, "--cores", "1", "results/mage-106", "--config", f"replay={forged}", says=says)
