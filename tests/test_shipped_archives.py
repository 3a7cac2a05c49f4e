"""The archives the repository ships (archives/*.tar.gz: six H200 runs, two H100 runs and the original project's
four namespaces): a fresh checkout without ../shared rebuilds all twelve bundles from them with a plain `snakemake`, no
GPU, re-measures nothing, reproduces their tables and notes, and then has nothing left to do."""
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT, archived_bundle, copy_project, same_claims, snakemake
from test_workflow import job_counts

from fieldnote.evidence.archive import Archive
from fieldnote.evidence.validate import load

SHIPPED = sorted((ROOT / "archives").glob("*.tar.gz"))
NAMESPACES = [p.name.removesuffix(".tar.gz") for p in SHIPPED]
# recomputed on replay: the same values, maybe not the same bytes (another pyarrow may write them)
DERIVED = {"summary.parquet", "attempts.parquet", "sweep.parquet", "claims.parquet", "verdicts.parquet"}
# the manifest over the rebuilt bundle, and the page, which inlines the redrawn figures
REWRITTEN = {"MANIFEST.sha256", "note.html"}
REPLAY_RULES = re.compile(r"replay_unpack_\w+|summary|attempts|sweep|verdicts|note|page|figures|bundle")

pytestmark = pytest.mark.slow  # the workflow end to end


def targets() -> list[str]:
    """All are `archived:` in their namespace files: the plain targets rebuild them from the archives."""
    return [f"results/{ns}" for ns in NAMESPACES]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("fresh-clone"))
    plan = snakemake(project, "-n", "--cores", "1", *targets())
    assert plan.returncode == 0, plan.stderr
    measuring = [rule for rule in job_counts(plan.stdout) if not REPLAY_RULES.fullmatch(rule)]
    assert measuring == [], f"a replay planned {measuring}"
    assert not (project.parent / "shared").exists()
    run = snakemake(project, "--cores", "2")  # rule all: every namespace that needs no GPU
    assert run.returncode == 0, run.stderr
    return project


def test_eight_measured_namespaces_and_the_four_originals_are_shipped():
    assert NAMESPACES == ["h100-002r", "h100-003", "h200-001", "h200-002", "mage-001", "mage-002", "mage-003",
                          "mage-006", *(f"original-mage-00{i}" for i in (1, 2, 3, 6))]
    for path in SHIPPED:
        Archive(path).verify()
        # parsed tables, not raw profiler reports: h100-003's six ops, library peers and 52 sweep points take 3.1 MiB
        assert path.stat().st_size < 4 * 2**20


@pytest.mark.parametrize("ns", NAMESPACES)
def test_replay_reproduces_the_tables_and_the_note(replayed, ns):
    bundle, archived = replayed / "results" / ns, archived_bundle(ns)
    assert (bundle / "evidence" / "verdicts.parquet").is_file()  # an archive from before it has its verdicts too
    for name, data in archived.items():
        if name.startswith("figures/") or Path(name).name in REWRITTEN:
            assert (bundle / name).exists(), name
        elif Path(name).name == "claims.parquet":
            same_claims(pd.read_parquet(bundle / name), pd.read_parquet(io.BytesIO(data)), bundle / "note.md")
        elif Path(name).name in DERIVED:
            assert pd.read_parquet(bundle / name).equals(pd.read_parquet(io.BytesIO(data))), name
        else:
            assert (bundle / name).read_bytes() == data, name
    gpu = "RTX 4090" if ns.startswith("original-") else "H100 80GB" if ns.startswith("h100-") else "H200"
    assert gpu in (bundle / "note.md").read_text()
    tables = load(bundle, samples=300)  # the manifest, the checks, whole launch counts, 300 samples each
    assert tables["checks"]["passed"].all()


def test_after_the_replay_nothing_is_left_to_do(replayed):
    again = snakemake(replayed, "-n", "--cores", "1", *targets())
    assert "Nothing to be done" in again.stdout + again.stderr


def test_an_archived_note_is_held_to_its_archive_s_targets(project: Path):
    """The targets are the archive's, as its shapes are: left out of the namespace file, they still hold the rebuilt
    note. In the generated note (the namespace's template taken away) a miss they leave unexplained is named in the
    note and in the job's log, key and all: which targets a run misses is known only once it is measured. Edited
    after the archive, they are refused, naming the file and the key."""
    import yaml

    path = project / "config" / "namespaces" / "h200-001.yaml"
    data = yaml.safe_load(path.read_text())
    del data["note"]  # h200-001's limits are written in its template, bound to its counters
    targets = data.pop("targets")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run = snakemake(project, "--cores", "1", "work/h200-001/note.md")
    assert run.returncode == 0, run.stderr
    text = (project / "work" / "h200-001" / "note.md").read_text()
    assert "| Matrix multiplication | ours / best peer at most 0.80 | 0.83 | missed by 4% |" in text
    unstated = "Not stated: the namespace file has no `targets.limits.matmul`."
    assert f"- **Matrix multiplication.** {unstated}" in text
    assert ("fieldnote: note: Matrix multiplication misses a target and key 'targets.limits.matmul' is missing"
            in (project / "work" / "logs" / "note" / "h200-001.log").read_text())
    data["targets"] = {**targets, "best_peer_ratio": 2.0}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run = snakemake(project, "--cores", "1", "work/h200-001/note.md")
    assert run.returncode != 0
    assert ("h200-001.yaml: key 'targets.best_peer_ratio' is 2.0, but archives/h200-001.tar.gz recorded 0.8"
            in run.stderr)


def test_a_replay_without_the_namespace_file_holds_the_note_to_the_recorded_targets(project: Path):
    """The bundle records the targets its note was held to, so an archive replayed on its own (`--config
    replay=`, no namespace file) is held to them too. Nobody pins it then, so its template (code) is not rendered:
    the note is the generated one, with the shipped note's targets table."""
    (project / "config" / "namespaces" / "h200-001.yaml").unlink()
    for later in ("h200-002", "h100-002r", "h100-003"):  # their progressions name h200-001, or drift from h200-002
        (project / "config" / "namespaces" / f"{later}.yaml").unlink()
    archive = project / "archives" / "h200-001.tar.gz"
    run = snakemake(project, "work/h200-001/note.md", "--cores", "1", "--config", f"replay={archive}")
    assert run.returncode == 0, run.stderr
    shipped = archived_bundle("h200-001")["note.md"].decode()
    note = (project / "work" / "h200-001" / "note.md").read_text()
    assert note.split("\n\n")[1].startswith("**Unverified archive.** This note is rebuilt from h200-001.tar.gz")
    assert "The note is the generated one" in note and note != shipped
    targets = [line for line in shipped.splitlines() if line.startswith("| ") and line.endswith(("| met |",
                                                                                              "| missed |"))]
    assert targets and all(line in note for line in targets)
