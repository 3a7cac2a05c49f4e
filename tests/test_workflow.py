"""The real workflow with Snakemake: the jobs it plans, and a full run on a machine without a GPU."""
import re
from pathlib import Path

import pytest
from conftest import SMALL, has_gpu, measured_mage_006, snakemake, to_measure


def job_counts(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


def test_dry_run_plans_every_stage(project: Path):
    """h200-001, the namespace measured now: 5 ops x 4 implementations (torch.compile included) and 14 attempts,
    captured with nsys and its CUDA kernels with ncu, plus the size sweep (checked per shape, 30 shapes, then
    captured per op), torch.compile tuned in fresh caches per op first, and the peers' best known times read from the
    pinned archives. Its progression and drift baseline come from the shipped archives: unpacked and summarized, never
    measured."""
    to_measure(project, "h200-001")
    run = snakemake(project, "-n", "--cores", "1", "results/h200-001")
    assert run.returncode == 0, run.stderr
    assert job_counts(run.stdout) == {
        "inputs": 5, "build_cuda": 19, "build_triton": 5, "resources": 1, "census": 1, "check_cpu": 10,
        "gpu_probe": 1, "check_gpu": 34, "sanitize": 19, "sanitizer": 1, "checks": 1, "attempts": 1, "time": 5,
        "spans": 2, "capture": 5, "ceilings": 1,
        "capture_counters": 5, "kernels": 1, "counters": 1, "capture_summary": 1, "summary": 5,
        "sweep_check": 30, "sweep_capture": 5, "sweep_collect": 1, "sweep_kernels": 1, "sweep": 1,
        "tune_compiled": 5, "compiled_tunes": 1, "known_peers": 1,
        **{f"replay_unpack_mage_00{i}": 1 for i in (1, 2, 3, 6)}, "verdicts": 1, "note": 1, "page": 1, "figures": 1,
        "bundle": 1}


def planned_gpu_jobs(stdout: str) -> list[tuple[str, int, int]]:
    """(rule, priority, GPU slots) of every job of a dry run that takes a GPU slot (`gpu_share_<device>`)."""
    return [(rule, priority, sum(slots.values())) for rule, priority, slots in planned_slots(stdout)]


def planned_slots(stdout: str) -> list[tuple[str, int, dict[int, int]]]:
    """(rule, priority, slots by device) of every job of a dry run that takes a GPU slot."""
    jobs = []
    for block in re.split(r"^(?:local)?rule ", stdout, flags=re.MULTILINE)[1:]:
        resources = re.search(r"^\s+resources: (.*)$", block, re.MULTILINE)
        slots = {int(d): int(n) for d, n in re.findall(r"\bgpu_share_(\d+)=(\d+)", resources.group(1))} \
            if resources else {}
        if slots:
            priority = re.search(r"^\s+priority: (\d+)", block, re.MULTILINE)
            impl = re.search(r"^\s+wildcards: .*\bsubject=(\w+)", block, re.MULTILINE)
            rule = block.split(":")[0] + ("[compiled]" if impl and impl.group(1) == "compiled" else "")
            jobs.append((rule, int(priority.group(1)) if priority else 0, slots))
    return jobs


def test_gpu_jobs_start_in_the_order_that_keeps_the_gpu_busy(project: Path):
    """Every GPU job takes one slot: a measurement takes the GPU alone only for its window (gpulock.py). The compiled
    checks (autotuning alone, the longest) come first, or the sweep checks, each waiting only on its op's kernels and
    compiled check, take turns with the compiled checks one at a time (the h200-001 run of 2026-11-29: 1100 s and more);
    the sanitizer runs and the other checks, which gate the measurements and hold the GPU shared for seconds, before the
    measurements (behind them, a mage-006 copy's layer norm waited until 82 s of 176 for its sanitizer); a measurement
    before the sweep checks left (in the h200-002 run of 2026-12-02 they held every slot for minutes while the timings
    waited; ahead of the measurements, an h200-001 copy took 359.8 s instead of 336.5, 2026-12-03), a sweep capture
    first among them; and the sweep checks by the chain each starts: every op's largest point first, the ops whose
    sweep moves the most bytes (the longest sweep captures) before the others."""
    to_measure(project, "h200-001")
    run = snakemake(project, "-n", "--cores", "14", "results/h200-001")
    assert run.returncode == 0, run.stderr
    jobs = planned_gpu_jobs(run.stdout)
    assert {gpu for _, _, gpu in jobs} == {1}
    ranks = {}
    for rule, priority, _ in jobs:
        ranks.setdefault(rule, []).append(priority)
    others = [p for rule in ("time", "capture", "capture_counters") for p in ranks[rule]]
    measurements = others + ranks["sweep_capture"]
    assert min(ranks["check_gpu[compiled]"]) > max(ranks["check_gpu"] + ranks["sanitize"])
    assert min(ranks["check_gpu"] + ranks["sanitize"]) > max(measurements)
    assert min(ranks["sweep_capture"]) > max(others)
    assert min(measurements) > max(ranks["sweep_check"])
    sweeps = re.findall(r"^rule sweep_check:\n(?:    .*\n)*?    wildcards: .*op=(\w+), shape=([0-9x]+)\n"
                        r"    priority: (\d+)", run.stdout, re.MULTILINE)
    first = [(op, shape) for op, shape, _ in sorted(sweeps, key=lambda s: -int(s[2]))[:5]]
    assert first == [("layernorm", "65536x4096"), ("gelu", "65536x4096"), ("neighbor", "1048576x64x16777216"),
                     ("matmul", "4096x4096x4096"), ("triangle", "512x32")]
    rest = [(op, int(p)) for op, shape, p in sweeps if (op, shape) not in first]
    assert max(p for _, p in rest) < min(int(p) for op, shape, p in sweeps if (op, shape) in first)
    assert min(p for op, p in rest if op == "gelu") > max(p for op, p in rest if op == "triangle")


def test_a_sweep_check_waits_for_the_kernels_and_the_sweep_capture_for_every_check(project: Path):
    """A sweep check is a check and times nothing: it needs the op's kernels and its torch.compile check (which
    autotunes at the seed shape, a sweep point too, and keeps its choice for the measurements), not the op's other
    checks nor the sanitizer's, so it runs beside them; the sweep capture, which times, waits for all of them."""
    to_measure(project, "h200-001")
    run = snakemake(project, "-n", "--cores", "14", "results/h200-001")
    assert run.returncode == 0, run.stderr
    inputs = {rule: [] for rule in ("sweep_check", "sweep_capture")}
    for rule, listed in re.findall(r"^rule (sweep_check|sweep_capture):\n    input: (.*)$", run.stdout, re.MULTILINE):
        inputs[rule].append(listed.split(", "))
    assert len(inputs["sweep_check"]) == 30 and len(inputs["sweep_capture"]) == 5
    for files in inputs["sweep_check"]:
        assert any(f.endswith(".cubin") for f in files) and "work/h200-001/gpu.json" in files
        checks = [f for f in files if "/check/gpu/" in f]
        assert len(checks) == 1 and checks[0].endswith("/compiled.parquet"), files
        assert not any("/sanitize/" in f for f in files), files
    for files in inputs["sweep_capture"]:
        assert {"check", "sanitize", "sweep"} <= {f.split("/")[2] for f in files if f.startswith("work/h200-001/")}


@pytest.mark.parametrize("gpus", [1, 2, 3])
def test_the_gpu_jobs_spread_over_the_gpus_one_slot_of_one_each(project: Path, gpus: int):
    """`--config gpus=N` (a host of N GPUs, NVML not asked): every GPU job holds one slot of one GPU, and each kind
    of job spreads over all N, no GPU given much more than its share (an op's place plus a rank per kind)."""
    to_measure(project, "h200-001")
    run = snakemake(project, "-n", "--cores", "14", "results/h200-001", "--config", f"gpus={gpus}")
    assert run.returncode == 0, run.stderr
    jobs = planned_slots(run.stdout)
    assert jobs and all(set(slots) == set(range(gpus)) and sorted(slots.values()) == [0] * (gpus - 1) + [1]
                        for _, _, slots in jobs)
    by_kind = {}
    for rule, _, slots in jobs:
        by_kind.setdefault(rule.split("[")[0], []).append(next(d for d, n in slots.items() if n))
    for rule in ("time", "capture", "capture_counters", "sweep_capture", "check_gpu", "sanitize"):
        counts = [by_kind[rule].count(d) for d in range(gpus)]
        assert min(counts) >= 1 and max(counts) - min(counts) <= max(2, len(by_kind[rule]) // 4), (rule, counts)


@pytest.mark.slow
@pytest.mark.skipif(has_gpu(), reason="shows the behaviour of a machine without a GPU")
def test_without_a_gpu_the_cpu_stages_run_then_one_message(project: Path):
    measured_mage_006(project, SMALL)
    run = snakemake(project, "--cores", "2", "results/mage-006")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr + run.stdout
    stop = [line for line in run.stderr.splitlines() if line.startswith("fieldnote:")]
    assert len(stop) == 1 and stop[0].startswith("fieldnote: no GPU here") and "gpu_probe" in stop[0], run.stderr
    assert "replay" in stop[0] and "RuleException" not in run.stderr and "Error in rule" not in run.stderr
    work = project / "work" / "mage-006"
    assert (work / "resources.parquet").exists() and (work / "census.parquet").exists()
    assert len(list((work / "check" / "cpu").rglob("*.parquet"))) == 10
    assert not (work / "check" / "gpu").exists() and not (project / "results" / "mage-006").exists()
    again = snakemake(project, "-n", "--cores", "1", "results/mage-006")
    assert set(job_counts(again.stdout)) == {"gpu_probe", "check_gpu", "checks", "sanitize", "sanitizer", "time",
                                             "spans", "capture", "capture_counters", "summary", "attempts", "verdicts",
                                             "note", "page", "figures", "kernels", "counters", "capture_summary",
                                             "ceilings", "known_peers", "bundle"}


@pytest.mark.parametrize("visible", ["", "0"])
def test_gpu_probe_waits_for_the_cpu_stages_only_where_no_gpu_is_in_sight(project: Path, monkeypatch, visible):
    """Without a GPU the probe's one message comes after every CPU stage; with one (CUDA_VISIBLE_DEVICES names
    it), the probe runs beside the builds and the GPU checks start as soon as their own inputs are ready."""
    to_measure(project, "mage-006")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    run = snakemake(project, "-n", "--verbose", "--cores", "14", "results/mage-006")  # every input listed
    assert run.returncode == 0, run.stderr
    probe = re.search(r"^rule gpu_probe:\n    input: (.*)$", run.stdout, re.MULTILINE).group(1).split(", ")
    cpu_checks = [f for f in probe if "/check/cpu/" in f]
    if visible:
        assert not cpu_checks and all(f.endswith(".py") for f in probe), probe
    else:
        assert len(cpu_checks) == 10 and "work/mage-006/census.parquet" in probe


def test_a_namespace_whose_targets_name_sweep_points_profiles_them(project: Path):
    """h200-002 names a triangle and a neighbor sweep point in its targets: Nsight Compute profiles each there
    (a job per op), collected beside the sweep's checks and kernels."""
    to_measure(project, "h200-002")
    run = snakemake(project, "-n", "--cores", "14", "results/h200-002")
    assert run.returncode == 0, run.stderr
    counts = job_counts(run.stdout)
    assert counts["sweep_counters"] == 2 and counts["sweep_collect"] == 2 and counts["sweep_kernels"] == 1
    assert "work/h200-002/sweep_counters.parquet" in run.stdout


def test_a_sweep_check_at_a_shape_the_sweep_lacks_is_refused_by_name(project: Path):
    to_measure(project, "h200-001")
    run = snakemake(project, "-n", "--cores", "1", "work/h200-001/sweep/matmul/checks/12x4x4.parquet")
    assert run.returncode != 0
    assert "12x4x4 is not a shape of the matmul sweep of namespace h200-001" in run.stdout + run.stderr
