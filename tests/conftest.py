import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED_EVIDENCE = ROOT.parent / "shared" / "seed-evidence"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton's long-standing default; silences 3.9's warning
# Shapes small enough that a namespace's CPU stages (the Triton interpreter included) run in seconds.
SMALL = {"matmul": {"m": 70, "n": 66, "k": 40}, "gelu": {"rows": 16, "cols": 768},
         "layernorm": {"rows": 16, "cols": 768}, "triangle": {"n": 12, "channels": 4},
         "neighbor": {"nodes": 64, "features": 64, "edges": 400}}
PROJECT = ("Snakefile", "config", "workflow", "kernels", "src", "profiles", "archives", "notes")


def has_gpu() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def pytest_collection_modifyitems(config, items):
    for item in items:  # the hostile-input cases that run Snakemake on a copy of the checkout run with the slow suite
        if "checkout" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def copy_project(dest: Path) -> Path:
    """A copy of the workflow (no work/, no results/) to run Snakemake in without touching the checkout: the
    project as shipped, so a namespace of the user's own (`fieldnote new`) is left out."""
    for name in PROJECT:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=not_shipped)
        else:
            shutil.copy(src, dest / name)
    (dest / "results").mkdir()
    return dest


def copy_config(dest: Path) -> Path:
    """config/ as shipped (copy_project), alone."""
    shutil.copytree(ROOT / "config", dest / "config", ignore=not_shipped)
    return dest


def not_shipped(folder: str, names: list[str]) -> set[str]:
    """What a copy of the project leaves out: caches, and the namespace files not pinned to an archive (the ones
    shipped are all archived; one being measured is the user's)."""
    import yaml

    skipped = set(shutil.ignore_patterns("__pycache__", "*.egg-info")(folder, names))
    if Path(folder) == ROOT / "config" / "namespaces":
        skipped |= {n for n in names if n.endswith(".yaml")
                    and "archived" not in (yaml.safe_load((Path(folder) / n).read_text()) or {})}
    return skipped


def import_from_seed(path: Path) -> None:
    """An original namespace's file, made to import from ../shared/seed-evidence (wherever the copy lies) instead
    of replaying its shipped archive: the import is what rebuilds those archives."""
    text = path.read_text().replace("../shared/seed-evidence", str(SEED_EVIDENCE))
    path.write_text(re.sub(r"^archived:.*\n(?:  .*\n)*", "", text, flags=re.MULTILINE))


@pytest.fixture(scope="session")
def replayed_original(tmp_path_factory) -> Path:
    """A copy of the checkout with results/original-mage-006 rebuilt from its shipped archive: no GPU, nothing
    from outside the checkout (the import from ../shared/seed-evidence makes the same bundle: imported_original)."""
    project = copy_project(tmp_path_factory.mktemp("replayed-original"))
    run = snakemake(project, "--cores", "2", "results/original-mage-006")
    assert run.returncode == 0, run.stderr
    return project


@pytest.fixture(scope="session")
def imported_original(tmp_path_factory) -> Path:
    """A copy of the checkout whose original namespaces import from ../shared/seed-evidence, with
    results/original-mage-006 rendered once for the tests that read it (and copy it to edit)."""
    project = copy_project(tmp_path_factory.mktemp("imported-original"))
    for path in (project / "config" / "namespaces").glob("original-*.yaml"):
        import_from_seed(path)
    run = snakemake(project, "--cores", "2", "results/original-mage-006")
    assert run.returncode == 0, run.stderr
    return project


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path)


def snakemake(project: Path, *args: str, timeout: int = 900, python: str = sys.executable
              ) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "FIELDNOTE_ROOT": str(project)}
    return subprocess.run([python, "-m", "snakemake", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=timeout)


def to_measure(project: Path, ns: str) -> None:
    """`ns` as a namespace to measure, as before it was archived (a no-op for one not yet archived)."""
    import yaml

    path = project / "config" / "namespaces" / f"{ns}.yaml"
    data = yaml.safe_load(path.read_text())
    if "archived" in data:
        del data["archived"]
        path.write_text(yaml.safe_dump(data, sort_keys=False))


def measured_mage_006(project: Path, shapes: dict | None = None) -> None:
    """mage-006 as a namespace to measure (its archive, progression and drift left out), at `shapes` if given."""
    import yaml

    path = project / "config" / "namespaces" / "mage-006.yaml"
    data = {k: v for k, v in yaml.safe_load(path.read_text()).items() if k not in ("progression", "drift", "archived")}
    path.write_text(yaml.safe_dump({**data, **({"shapes": shapes} if shapes else {})}))


def archived_bundle(ns: str) -> dict[str, bytes]:
    """The files of a shipped archive's bundle (archives/<ns>.tar.gz), by their path inside the bundle."""
    import tarfile

    with tarfile.open(ROOT / "archives" / f"{ns}.tar.gz") as tar:
        prefix = f"{ns}/bundle/"
        return {m.name.removeprefix(prefix): tar.extractfile(m).read() for m in tar.getmembers()
                if m.isfile() and m.name.startswith(prefix)}


def resolved_config(ns: str, name: str | None = None) -> dict:
    """A shipped archive's config.resolved.json, renamed to `name` if given (a valid namespace to build toys on)."""
    import json

    data = json.loads(archived_bundle(ns)["config.resolved.json"])
    return {**data, "name": name or ns}


def shipped_table(ns: str, name: str):
    """One evidence table of a shipped archive, as measured on the H200."""
    import io

    import pandas as pd

    return pd.read_parquet(io.BytesIO(archived_bundle(ns)[f"evidence/{name}.parquet"]))


def same_claims(rebuilt, shipped, note: Path) -> None:
    """The claims as archived. An archive made before issue 41 has only the template's; beside them today's records
    the verdicts of the targets and predictions tables the note places (judged on unrounded values, with their
    margins), each a row of the note."""
    kinds = shipped["kind"].unique()
    kept = rebuilt[rebuilt["kind"].isin(kinds)][list(shipped.columns)].reset_index(drop=True)
    assert kept.equals(shipped.reset_index(drop=True))
    text = note.read_text()
    for claim in rebuilt.loc[rebuilt["kind"] == "target", "claim"]:
        operation, target = claim.split(": ", 1)
        assert f"| {operation} | {target} |" in text, claim
