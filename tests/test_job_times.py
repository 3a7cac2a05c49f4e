"""Where a job's time goes: every job ends its log with its wall time and phases (progress.report_phases), and
tools/job_times.py gathers them per job kind."""
import json
import subprocess
import sys

import yaml
from conftest import ROOT, SMALL, copy_project, snakemake


def test_every_job_logs_its_phases_and_the_tool_tables_them(tmp_path):
    project = copy_project(tmp_path)
    path = project / "config" / "namespaces" / "times.yaml"
    path.write_text(yaml.safe_dump({"implementations": ["torch", "cuda"], "ops": ["gelu"],
                                    "variants": {"gelu": "gelu_bias_sigmoid_vec4"}, "shapes": {"gelu": SMALL["gelu"]}}))
    targets = ["work/times/check/cpu/gelu/torch.parquet", "work/build/sm_90/cuda/gelu/gelu_bias_sigmoid_vec4.cubin"]
    ran = snakemake(project, "--cores", "2", *targets)
    assert ran.returncode == 0, ran.stderr
    logs = project / "work" / "logs"
    check = (logs / "check_cpu" / "times" / "gelu" / "torch.log").read_text().splitlines()
    phases = json.loads(check[-1].split(" phases: ", 1)[1])
    assert phases["checks"] > 0 and phases["start and imports"] > 0
    assert phases["wall"] >= phases["checks"] + phases["start and imports"]
    build = (logs / "build_cuda" / "sm_90" / "gelu" / "gelu_bias_sigmoid_vec4.log").read_text().splitlines()
    assert json.loads(build[-1].split(" phases: ", 1)[1])["compile"] > 0
    (tmp_path / "snakemake.log").write_text(ran.stderr)
    table = subprocess.run([sys.executable, str(ROOT / "tools" / "job_times.py"), str(logs), "--snakemake-log",
                            str(tmp_path / "snakemake.log")], capture_output=True, text=True, check=True).stdout
    phases_table, course = table.split("| job kind | jobs | first started")
    rows = {line.split(" | ")[0].strip("| "): line for line in phases_table.splitlines()[2:]}
    assert {"check_cpu", "build_cuda", "inputs", "all jobs"} <= set(rows)
    course = {line.split(" | ")[0].strip("| "): line.strip("| ").split(" | ")[1:] for line in course.splitlines()[2:]}
    assert set(course) == {"check_cpu", "build_cuda", "inputs"}
    jobs, first, last, longest = map(float, course["check_cpu"])
    assert jobs == 1 and 0 <= first <= last and longest == last - first
    assert float(course["inputs"][2]) <= first  # the check read the input file the inputs job wrote


def test_the_lock_table_finds_the_drains_and_who_held_the_gpu_during_them(tmp_path):
    """A window held alone 1 s; a second asked at 3 and waited to 5 for a sweep check's shared hold (2.5 to 5): 2 s
    of drain, all of it the sweep check's; a check held shared beside nothing waiting."""
    import importlib.util

    import pandas as pd

    spec = importlib.util.spec_from_file_location("job_times", ROOT / "tools" / "job_times.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    frame = pd.DataFrame([
        {"rule": "time", "mode": "alone", "asked": 1.0, "taken": 1.0, "released": 2.0},
        {"rule": "check_gpu", "mode": "shared", "asked": 0.0, "taken": 0.0, "released": 0.5},
        {"rule": "sweep_check", "mode": "shared", "asked": 2.5, "taken": 2.5, "released": 5.0},
        {"rule": "capture", "mode": "alone", "asked": 3.0, "taken": 5.0, "released": 6.0},
    ])
    (tmp_path / "gpulock.jsonl").write_text("".join(
        json.dumps({"job": job, "mode": "shared", "asked": 0, "taken": 0, "released": 1}) + "\n"
        for job in ("work/logs/time/ns/gelu", "pid 7")))
    assert list(tool.holds(tmp_path)["rule"]) == ["time", "other"]
    table, run = tool.lock_table(frame)
    assert run == {"span": 6.0, "alone": 2.0, "drain": 2.0}
    assert table.loc["sweep_check", "held shared during drains (s)"] == 2.0
    assert table.loc["check_gpu", "held shared during drains (s)"] == 0.0
    assert table.loc["capture", "waited (s)"] == 2.0 and table.loc["time", "held alone (s)"] == 1.0


def test_the_cpu_table_says_how_many_cores_were_busy_in_each_half_minute(tmp_path):
    """Samples of /proc/stat's first line every 10 s on a host of 4 cores: all four busy for the first 30 s, one
    for the next 30 (idle and I/O wait are not busy), and a last line cut short by the sampler's stop ignored."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("job_times", ROOT / "tools" / "job_times.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    lines, user, idle = ["cores 4"], 0, 0
    for step in range(7):  # at 0, 10, ... 60 s; each 10 s is 40 core-seconds, 4000 jiffies
        lines.append(f"{1000 + 10 * step} cpu {user} 0 0 {idle} 0 0 0 0 0 0")
        user, idle = (user + 4000, idle) if step < 3 else (user + 1000, idle + 3000)
    (tmp_path / "cpu.txt").write_text("\n".join([*lines, "1070 cpu 1"]) + "\n")
    frame = tool.cpu_busy(tmp_path / "cpu.txt")
    assert list(frame["from (s)"]) == [0, 30] and list(frame["cores busy"]) == [4.0, 1.0]
    assert "| 30 | 60 | 1.0 |" in tool.cpu_markdown(frame)
    (tmp_path / "cpu.txt").write_text("\n".join(lines[:2]) + "\n")  # a run stopped before the second sample
    assert tool.cpu_busy(tmp_path / "cpu.txt").empty


def test_the_benchmark_records_give_the_cpu_of_each_job_kind(tmp_path):
    """Snakemake's `benchmark:` files beside the logs (work/benchmarks/RULE/...): their wall and CPU time summed per
    job kind, heaviest first; none, no table."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("job_times", ROOT / "tools" / "job_times.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    (tmp_path / "logs").mkdir()
    assert tool.benchmarked(tmp_path / "logs").empty
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for path, wall, cpu in [("sanitize/ns/gelu/a.tsv", 10.0, 15.0), ("sanitize/ns/gelu/b.tsv", 10.0, 5.0),
                            ("time/ns/gelu.tsv", 40.0, 4.0), ("time/ns/short.tsv", 0.5, "NA")]:
        (tmp_path / "benchmarks" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "benchmarks" / path).write_text(header + f"{wall}\t0:00:10\t1\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    frame = tool.benchmarked(tmp_path / "logs")
    assert list(frame.index) == ["sanitize", "time", "all benchmarked jobs"]
    assert frame.loc["sanitize", "CPU (s)"] == 20.0 and frame.loc["time", "CPU per wall second"] == 0.1
    assert frame.loc["all benchmarked jobs", "jobs"] == 3
    assert "| sanitize | 2 | 20.0 | 20.0 | 1.00 |" in tool.benchmarked_markdown(frame)
