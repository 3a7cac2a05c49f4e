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
    table = subprocess.run([sys.executable, str(ROOT / "tools" / "job_times.py"), str(logs)], capture_output=True,
                           text=True, check=True).stdout
    rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines()[2:]}
    assert {"check_cpu", "build_cuda", "inputs", "all jobs"} <= set(rows)
