"""Hostile configuration: YAML bombs, numbers beyond any sane range, paths that leave the checkout, and a Snakemake
killed mid-rebuild. Each refusal is one line naming the file, key or value, within seconds, and loses nothing."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_hostile
import yaml
from conftest import ROOT, SMALL, snakemake
from test_hostile import bundle_hashes, refused

from fieldnote import cli
from fieldnote.core.errors import PipelineError
from fieldnote.evidence.bundle import manifest, recover_backup
from fieldnote.registry.config import MAX_YAML_BYTES, check_config, load_defaults, resolve

checkout = test_hostile.checkout  # the fixture: a throw-away copy of the checkout, with a folder beside it
DEFAULTS = load_defaults(ROOT / "config" / "config.yaml")
TOY = {"ops": list(SMALL), "implementations": ["torch", "triton"], "variants": {}, "shapes": SMALL}


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """A bare checkout root (the working directory, as Snakemake's is) with notes/, and a folder beside it."""
    (tmp_path / "checkout" / "notes").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    monkeypatch.chdir(tmp_path / "checkout")
    return tmp_path / "checkout"


def refusal(path: Path, text: str, name: str = "toy") -> tuple[str, float]:
    """Resolve a namespace file holding `text`: the one-line refusal it must end in, and the seconds it took."""
    path.write_text(text)
    start = time.monotonic()
    with pytest.raises(PipelineError) as error:
        resolve(name, path, DEFAULTS)
    message = str(error.value)
    assert "\n" not in message and len(message) < 500, message[:1000]
    return message, time.monotonic() - start


# YAML bombs


def bomb(levels: int, indent: str = "") -> str:
    """Each level an anchored list of nine aliases of the one before: 9**levels values from a few lines."""
    lines = [f"{indent}l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_under_predictions_is_refused_at_once(tmp_path):
    """Nine levels under `predictions` took 287 s and ended in a MemoryError stack blocking every target."""
    text = yaml.safe_dump(TOY) + "predictions:\n  - variant: x\n" + bomb(9, "    ")
    message, seconds = refusal(tmp_path / "toy.yaml", text)
    line = text[:text.index("&l0")].count("\n") + 1
    assert message == (f"{tmp_path / 'toy.yaml'}: line {line}: an anchor (&l0) is not allowed (anchors and aliases "
                       "can expand a few lines into gigabytes): write the value out")
    assert seconds < 1


def test_an_alias_bomb_in_config_yaml_is_refused_at_every_start(tmp_path):
    """Nine levels in config/config.yaml took 235 s at every start."""
    path = tmp_path / "config.yaml"
    path.write_text((ROOT / "config" / "config.yaml").read_text() + bomb(9))
    start = time.monotonic()
    with pytest.raises(PipelineError, match=r"config.yaml: line \d+: an anchor \(&l0\) is not allowed"):
        load_defaults(path)
    assert time.monotonic() - start < 1


def test_an_alias_repeating_a_value_on_the_command_line_is_refused(tmp_path):
    """--config's values are YAML too: a bomb there made a 28 MB error line, or ran for minutes."""
    config = {**DEFAULTS, "seed": yaml.load("[" + bomb(9).replace("\n", ", ") + "]", Loader=yaml.BaseLoader)}
    start = time.monotonic()
    with pytest.raises(PipelineError, match=r"^--config: key 'seed\.[\w.]+': a YAML alias is not allowed"):
        check_config(config, ROOT / "config" / "config.yaml")
    assert time.monotonic() - start < 1


def test_a_namespace_file_above_a_mebibyte_is_not_read(tmp_path):
    text = yaml.safe_dump(TOY) + "# padding\n" * (MAX_YAML_BYTES // 10 + 1)
    message, seconds = refusal(tmp_path / "toy.yaml", text)
    assert message.endswith("toy.yaml: larger than 1,048,576 bytes, more than any configuration needs (the largest "
                            "shipped namespace file is 8 kB): not read")
    assert seconds < 1


def test_no_shipped_configuration_uses_an_anchor_or_an_alias():
    for path in [ROOT / "config" / "config.yaml", *(ROOT / "config" / "namespaces").glob("*.yaml")]:
        events = yaml.parse(path.read_text(), Loader=yaml.SafeLoader)
        assert not [e for e in events if isinstance(e, yaml.NodeEvent) and e.anchor], path


# Every number bounded


def predicted(**change) -> dict:
    return {"predictions": [{"variant": "x", "metric": "kernel", "low_us": 4, "high_us": 5, "made": "2026-12-01",
                             "source": "issue 18", **change}]}


@pytest.mark.parametrize("change, key", [
    ({"tolerance": {"rtol": 1e300}}, "tolerance.rtol"),
    ({"tolerance": {"atol": 2.0}}, "tolerance.atol"),
    ({"timing": {"rounds": 1000}}, "timing.rounds"),
    ({"timing": {"iterations": 10**15}}, "timing.iterations"),
    ({"timing": {"warmup": 10**6}}, "timing.warmup"),
    ({"timing": {"graph_replays": 10**6}}, "timing.graph_replays"),
    ({"capture": {"iterations": 10**15}}, "capture.iterations"),
    ({"capture": {"warmup": 10**6}}, "capture.warmup"),
    ({"capture": {"repeats": 10**9}}, "capture.repeats"),
    ({"capture": {"band_margin": 5.0}}, "capture.band_margin"),
    ({"seed": 2**32}, "seed"),
    ({"roofline": {"bandwidth_gbs": 1e9, "fp32_tflops": 67, "l2_bytes": 1}}, "roofline.bandwidth_gbs"),
    ({"roofline": {"bandwidth_gbs": 4300, "fp32_tflops": 1e9, "l2_bytes": 1}}, "roofline.fp32_tflops"),
    ({"roofline": {"bandwidth_gbs": 4300, "fp32_tflops": 67, "l2_bytes": 2**40}}, "roofline.l2_bytes"),
    ({"targets": {"best_peer_ratio": 1e300}}, "targets.best_peer_ratio"),
    ({"targets": {"cold_best_peer_ratio": 1e6}}, "targets.cold_best_peer_ratio"),
    ({"targets": {"sweep_best_peer_ratio": 1e6}}, "targets.sweep_best_peer_ratio"),
    ({"targets": {"warm_ceiling_margin": 1e6}}, "targets.warm_ceiling_margin"),
    ({"targets": {"kernel_us": {"gelu": 1e300}}}, "targets.kernel_us.gelu"),
    ({"targets": {"points": [{"op": "gelu", "shape": "16x768", "versus": "torch", "at_most": 1e9}]}},
     "targets.points.0.at_most"),
    ({"targets": {"tflops": [{"op": "matmul", "shape": "70x66x40", "at_least": 1e9}]}}, "targets.tflops.0.at_least"),
    (predicted(low_us=1e300), "predictions.0.low_us"),
    (predicted(high_us=1e300), "predictions.0.high_us"),
    ({"sweep": {"gelu": [{"rows": 16, "cols": 8 + i} for i in range(65)]}}, "sweep.gelu"),
])
def test_a_number_beyond_its_bound_is_refused_naming_the_key(tmp_path, change, key):
    message, seconds = refusal(tmp_path / "toy.yaml", yaml.safe_dump({**TOY, **change}))
    assert message.startswith(f"{tmp_path / 'toy.yaml'}: key '{key}': ") and seconds < 1
    assert "is greater than the maximum of" in message or message.endswith("65 items, more than the 64 it may have")


def test_every_shipped_number_is_within_its_bound():
    from fieldnote.registry.config import load_namespaces

    assert len(load_namespaces(ROOT / "config", DEFAULTS)) >= 10  # validated, each by the bounded schema


def test_more_gpus_than_the_profile_declares_slots_for_is_refused():
    with pytest.raises(PipelineError, match=r"^--config: key 'gpus': 1000 is greater than the maximum of 8"):
        check_config({**DEFAULTS, "gpus": 1000}, ROOT / "config" / "config.yaml")


@pytest.mark.parametrize("line, says", [
    ("tolerance: {rtol: 1e-4}", "key 'tolerance.rtol': '1e-4' is a string: write 1.0e-4"),
    ("tolerance: {atol: 1.0e5}", "key 'tolerance.atol': '1.0e5' is a string: write 1.0e+5"),
    ("timing: {iterations: 1e3}", "key 'timing.iterations': '1e3' is a string: write 1000"),
])
def test_a_number_yaml_reads_as_a_string_says_how_to_write_it(tmp_path, line, says):
    message, _ = refusal(tmp_path / "toy.yaml", yaml.safe_dump(TOY) + line + "\n")
    assert message == f"{tmp_path / 'toy.yaml'}: {says}"


# Paths confined to the checkout


@pytest.mark.parametrize("key, value, says", [
    ("note", "/etc/hostname", "key 'note': /etc/hostname is outside the checkout's notes/"),
    ("note", "../outside/t.md", "key 'note': ../outside/t.md is outside the checkout's notes/"),
    ("note", "config.yaml", "key 'note': config.yaml is outside the checkout's notes/"),  # in the checkout, not notes/
    ("note", "notes/link.md", "key 'note': notes/link.md is outside the checkout's notes/"),  # a link out of it
    ("evidence", {"original": "../outside", "quoted": "../outside/q.yaml"},
     "key 'evidence.quoted': ../outside/q.yaml is outside the checkout"),
    ("archived", {"archive": "../outside/x.tar.gz", "sha256": "0" * 64},
     "key 'archived.archive': ../outside/x.tar.gz is outside the checkout"),
])
def test_a_path_outside_the_checkout_is_refused_naming_the_key(root, key, value, says):
    for name in ("t.md", "q.yaml", "x.tar.gz"):
        (root.parent / "outside" / name).write_text("{{ outside }}\n")
    (root / "config.yaml").write_text("")
    (root / "notes" / "link.md").symlink_to(root.parent / "outside" / "t.md")
    message, _ = refusal(root / "toy.yaml", yaml.safe_dump({**TOY, key: value}))
    assert message.startswith(f"{root / 'toy.yaml'}: {says} ({root.resolve()}")


def test_a_note_template_inside_notes_is_taken(root):
    (root / "notes" / "toy.md").write_text("# toy\n")
    path = root / "toy.yaml"
    path.write_text(yaml.safe_dump({**TOY, "note": "notes/toy.md"}))
    assert resolve("toy", path, DEFAULTS).note == "notes/toy.md"


def test_a_replay_from_outside_the_checkout_is_refused_saying_where_to_copy_it(root):
    archive = root.parent / "outside" / "m.tar.gz"
    archive.write_bytes(b"")
    with pytest.raises(PipelineError) as error:
        check_config({**DEFAULTS, "replay": str(archive)}, ROOT / "config" / "config.yaml")
    assert str(error.value) == (f"--config replay: {archive} is outside the checkout ({root.resolve()}): copy the "
                                "archive into the checkout, for instance under archives/, and replay it from there")


def test_a_replay_from_outside_is_one_line_from_snakemake(checkout, tmp_path):
    archive = tmp_path / "outside" / "mage-006.tar.gz"
    archive.write_bytes((checkout / "archives" / "mage-006.tar.gz").read_bytes())
    refused(checkout, "-n", "--cores", "1", "--config", f"replay={archive}",
            says=f"--config replay: {archive} is outside the checkout")


def test_a_bad_value_on_the_command_line_is_blamed_on_the_command_line(checkout):
    refused(checkout, "-n", "--cores", "1", "results/mage-006", "--config", "gpus=abc",
            says="--config: key 'gpus': 'abc' is not of type 'integer'")


# fieldnote new --from


@pytest.fixture
def namespaces(root) -> Path:
    folder = root / "config" / "namespaces"
    folder.mkdir(parents=True)
    shutil.copytree(ROOT / "config" / "schemas", root / "config" / "schemas")
    (folder / "ok.yaml").write_text(yaml.safe_dump(TOY))
    return folder


def made(root: Path, source: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FIELDNOTE_ROOT": str(root), "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "fieldnote.cli", "new", "copy", "--from", source], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("source, text, says", [
    ("../../../outside", None, "fieldnote: --from: '../../../outside' is not a valid name"),
    ("link", None, "fieldnote: --from: {folder}/link.yaml is a link to {outside}, outside the checkout"),
    ("listed", "- a\n- b\n", "fieldnote: --from: {folder}/listed.yaml is a list, not a namespace"),
    ("empty", "", "fieldnote: --from: {folder}/empty.yaml is empty, not a namespace"),
    ("broken", "implementations: [torch\n", "fieldnote: {folder}/broken.yaml: not valid YAML ("),
])
def test_fieldnote_new_from_a_bad_source_is_one_line(namespaces, source, text, says):
    outside = namespaces.parents[2] / "outside.yaml"  # beside the checkout: what `../../../outside` names
    outside.write_text(yaml.safe_dump(TOY))
    (namespaces / "link.yaml").symlink_to(outside)
    if text is not None:
        (namespaces / f"{source}.yaml").write_text(text)
    run = made(namespaces.parents[1], source)
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.splitlines() == [run.stderr.strip()] and run.stderr.startswith(
        says.format(folder=namespaces, outside=outside)), run.stderr
    assert not (namespaces / "copy.yaml").exists()


def test_fieldnote_new_from_a_good_source_still_copies_it(namespaces):
    path = cli.new("copy", "ok", namespaces.parent)
    assert yaml.safe_load(path.read_text()) == TOY


# A Snakemake killed with SIGKILL mid-rebuild


def bundle_in(folder: Path, text: str) -> Path:
    (folder / "evidence").mkdir(parents=True)
    (folder / "note.md").write_text(text)
    (folder / "evidence" / "MANIFEST.sha256").write_text(manifest(folder))
    return folder


@pytest.mark.parametrize("case", ["complete", "gone", "damaged", "running"])
def test_snakemake_s_copy_of_a_bundle_a_killed_run_left_is_dropped_or_put_back(tmp_path, monkeypatch, case):
    monkeypatch.chdir(tmp_path)  # Snakemake's backups are named by the output's path from the working directory
    backups, bundle = Path(".snakemake") / "backups", Path("results") / "toy"
    copy = bundle_in(backups / bundle, "# before\n")
    if case != "gone":
        bundle_in(bundle, "# now\n")
    if case == "damaged":
        (bundle / "note.md").write_text("# half\n")
    if case == "running":  # a Snakemake holding the checkout: the copy may be its job's
        (backups.parent / "locks").mkdir()
        (backups.parent / "locks" / "0.output.lock").write_text(str(bundle))
    recover_backup(bundle, backups)
    note = {"complete": "# now\n", "gone": "# before\n", "damaged": "# before\n", "running": "# now\n"}[case]
    assert (bundle / "note.md").read_text() == note
    assert copy.exists() == (case == "running")


def test_a_bundle_rebuild_killed_with_sigkill_does_not_wedge_the_next_run(checkout):
    """Snakemake copies an update() output to .snakemake/backups before its job and removes the copy after; killed
    in between, it left the copy, and every later rebuild stopped on `FileExistsError` until it was removed."""
    built = snakemake(checkout, "--cores", "1", "results/mage-006")
    assert built.returncode == 0, built.stderr
    before = bundle_hashes(checkout)
    env = {**os.environ, "PYTHONPATH": str(checkout / "src"), "FIELDNOTE_ROOT": str(checkout)}
    run = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", "--forcerun", "bundle",
                            "results/mage-006"], cwd=checkout, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and run.poll() is None and not list(checkout.glob("results/.mage-006.*.partial")):
        time.sleep(0.005)
    assert run.poll() is None, "the rebuild ended before its .partial folder was seen"
    os.killpg(run.pid, signal.SIGKILL)  # Snakemake and its job, as the OOM killer or a scancel would
    run.wait()
    assert (checkout / ".snakemake" / "backups" / "results" / "mage-006").is_dir()  # what wedged every later run
    # Snakemake's own lock is left too, and it says to --unlock (it cannot tell a killed run from a live one)
    assert snakemake(checkout, "--unlock").returncode == 0
    again = snakemake(checkout, "--cores", "1", "results/mage-006")
    assert again.returncode == 0 and "Traceback" not in again.stdout + again.stderr, again.stderr[-3000:]
    assert bundle_hashes(checkout) == before
    assert not (checkout / ".snakemake" / "backups" / "results" / "mage-006").exists()
    assert not list(checkout.glob("results/.mage-006.*"))
