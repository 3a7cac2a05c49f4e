"""The real workflow with Snakemake: the jobs it plans, and a full run on a machine without a GPU."""
import re
from pathlib import Path

import pytest
import yaml
from conftest import has_gpu, snakemake

SMALL = {"matmul": {"m": 70, "n": 66, "k": 40}, "gelu": {"rows": 16, "cols": 768},
         "layernorm": {"rows": 16, "cols": 768}, "triangle": {"n": 12, "channels": 4},
         "neighbor": {"nodes": 64, "features": 64, "edges": 400}}


def job_counts(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


def test_dry_run_plans_every_stage(project: Path):
    """mage-006 measures 5 ops x 3 implementations, captured with nsys, cupti and ncu, plus its 5 layernorm
    attempts and the 2-warp kernel they are compared with (11 CUDA builds, 21 GPU checks). Its progression
    reads mage-001..003 from their shipped archives: unpacked and summarized, never measured."""
    run = snakemake(project, "-n", "--cores", "1", "results/mage-006")
    assert run.returncode == 0, run.stderr
    assert job_counts(run.stdout) == {
        "inputs": 5, "build_cuda": 5 + 6, "build_triton": 5, "resources": 1, "census": 1, "check_cpu": 10,
        "gpu_probe": 1, "check_gpu": 15 + 6, "checks": 1, "time": 5, "spans": 2, "capture": 10,
        "capture_counters": 5, "kernels": 1, "counters": 1, "capture_summary": 1, "summary": 4, "attempts": 1,
        "replay_unpack_mage_001": 1, "replay_unpack_mage_002": 1, "replay_unpack_mage_003": 1,
        "note": 1, "figures": 1, "bundle": 1}


@pytest.mark.skipif(has_gpu(), reason="shows the behaviour of a machine without a GPU")
def test_without_a_gpu_the_cpu_stages_run_then_one_message(project: Path):
    path = project / "config" / "namespaces" / "mage-006.yaml"
    alone = {k: v for k, v in yaml.safe_load(path.read_text()).items() if k not in ("progression", "drift")}
    path.write_text(yaml.safe_dump({**alone, "shapes": SMALL}))
    run = snakemake(project, "--cores", "2", "results/mage-006")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr + run.stdout
    stop = [line for line in run.stderr.splitlines() if line.startswith("fieldnote: no GPU here")]
    assert stop and len(set(stop)) == 1 and "gpu_probe" in stop[0] and "replay" in stop[0]
    work = project / "work" / "mage-006"
    assert (work / "resources.parquet").exists() and (work / "census.parquet").exists()
    assert len(list((work / "check" / "cpu").rglob("*.parquet"))) == 10
    assert not (work / "check" / "gpu").exists() and not (project / "results" / "mage-006").exists()
    again = snakemake(project, "-n", "--cores", "1", "results/mage-006")
    assert set(job_counts(again.stdout)) == {"gpu_probe", "check_gpu", "checks", "time", "spans", "capture",
                                             "capture_counters", "summary", "attempts", "note", "figures",
                                             "kernels", "counters", "capture_summary", "bundle"}
