"""The real workflow with Snakemake: the jobs it plans, and a full run on a machine without a GPU."""
import re
from pathlib import Path

import pytest
from conftest import SMALL, has_gpu, measured_mage_006, snakemake


def job_counts(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


def test_dry_run_plans_every_stage(project: Path):
    """h200-001, the namespace measured now: 5 ops x 4 implementations (torch.compile included) and 11 attempts,
    captured with nsys and its CUDA kernels with ncu, plus the size sweep (checked, then captured, per op). Its
    progression and drift baseline come from the four shipped archives: unpacked and summarized, never measured."""
    run = snakemake(project, "-n", "--cores", "1", "results/h200-001")
    assert run.returncode == 0, run.stderr
    assert job_counts(run.stdout) == {
        "inputs": 5, "build_cuda": 16, "build_triton": 5, "resources": 1, "census": 1, "check_cpu": 10,
        "gpu_probe": 1, "check_gpu": 31, "checks": 1, "attempts": 1, "time": 5, "spans": 2, "capture": 5,
        "capture_counters": 5, "kernels": 1, "counters": 1, "capture_summary": 1, "summary": 5,
        "sweep_check": 5, "sweep_capture": 5, "sweep_collect": 2, "sweep": 1,
        **{f"replay_unpack_mage_00{i}": 1 for i in (1, 2, 3, 6)}, "note": 1, "figures": 1, "bundle": 1}


@pytest.mark.skipif(has_gpu(), reason="shows the behaviour of a machine without a GPU")
def test_without_a_gpu_the_cpu_stages_run_then_one_message(project: Path):
    measured_mage_006(project, SMALL)
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
