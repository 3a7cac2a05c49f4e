"""The cluster profile on a real Slurm: a single-node cluster from Debian's packages on this machine
(tools/slurm-local.sh: munge, MariaDB, slurmdbd, slurmctld, slurmd, one GPU slot with no GPU behind it). Through
profiles/slurm, a shipped archive's replay gives a bundle byte-identical to a local run's, and a measured namespace
runs its CPU stages through sbatch up to the GPU stop; sacct shows the jobs."""
import os
import re
import shutil
import subprocess

import pytest
from conftest import ROOT, SMALL, copy_project, measured_mage_006, snakemake

SLURM_PYTHON = ROOT / ".venv-slurm" / "bin" / "python"  # .venv and the executor plugins (envs/setup-slurm.sh)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not shutil.which("slurmctld") or os.geteuid() != 0,
                                 reason="needs Debian's slurm-wlm, slurmdbd, munge and mariadb-server, as root"),
              pytest.mark.skipif(not SLURM_PYTHON.exists(), reason="needs .venv-slurm (bash envs/setup-slurm.sh)")]


@pytest.fixture(scope="module")
def cluster():
    started = subprocess.run(["bash", str(ROOT / "tools" / "slurm-local.sh"), "start"], capture_output=True, text=True,
                             timeout=300)
    assert started.returncode == 0, started.stdout + started.stderr
    print(started.stdout)
    yield
    subprocess.run(["bash", str(ROOT / "tools" / "slurm-local.sh"), "stop"], capture_output=True, timeout=120)


def on_slurm(project, *targets, timeout=1800):
    return snakemake(project, "--workflow-profile", "profiles/slurm", *targets, timeout=timeout,
                     python=str(SLURM_PYTHON))


def submitted(log: str) -> list[str]:
    """The Slurm job ids Snakemake's log reports submitting."""
    return re.findall(r"has been submitted with SLURM jobid (\d+)", log)


def accounted(job_ids: list[str]) -> dict[str, tuple[str, str]]:
    """sacct's (state, rule) of each job id: what the cluster itself recorded (the plugin's comment names the
    rule: `rule_<name>` or `rule_<name>_wildcards_<...>`)."""
    out = subprocess.run(["sacct", "-n", "-X", "-P", "-j", ",".join(job_ids), "-o", "JobID,State,Comment"],
                         capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        job, state, comment = line.split("|")[:3]
        found[job] = (state, re.match(r"rule_(.+?)(?:_wildcards_.*)?$", comment).group(1))
    return found


def files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_replay_through_slurm_is_byte_identical_to_a_local_one(cluster, tmp_path):
    (tmp_path / "local").mkdir()
    (tmp_path / "slurm").mkdir()
    local, remote = copy_project(tmp_path / "local"), copy_project(tmp_path / "slurm")
    ran = snakemake(local, "--cores", "2", "results/mage-001")
    assert ran.returncode == 0, ran.stderr
    ran = on_slurm(remote, "results/mage-001")
    assert ran.returncode == 0, ran.stderr
    ids = submitted(ran.stderr + ran.stdout)
    states = accounted(ids)
    print("\n".join(f"sbatch job {i}: {s} ({rule})" for i, (s, rule) in states.items()))
    assert len(states) == len(ids) >= 4 and {s for s, _ in states.values()} == {"COMPLETED"}
    assert {rule for _, rule in states.values()} >= {"summary", "note", "figures", "page"}
    assert files(remote / "results" / "mage-001") == files(local / "results" / "mage-001")


def test_a_measured_namespace_runs_its_cpu_stages_through_slurm_up_to_the_gpu_stop(cluster, tmp_path):
    project = copy_project(tmp_path)
    measured_mage_006(project, SMALL)
    ran = on_slurm(project, "results/mage-006")
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert [line for line in ran.stderr.splitlines() if line.startswith("fieldnote: no GPU here")]
    states = accounted(submitted(ran.stderr + ran.stdout))
    print("\n".join(f"sbatch job {i}: {s} ({rule})" for i, (s, rule) in states.items()))
    assert {"check_cpu", "build_cuda", "build_triton", "inputs", "gpu_probe"} <= {r for _, r in states.values()}
    assert {s for s, rule in states.values() if rule != "gpu_probe"} == {"COMPLETED"}
    assert [s for s, rule in states.values() if rule == "gpu_probe"] == ["FAILED"]
    work = project / "work" / "mage-006"
    assert len(list((work / "check" / "cpu").rglob("*.parquet"))) == 10 and (work / "resources.parquet").exists()
