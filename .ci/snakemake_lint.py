"""`snakemake --lint`, failing on any lint but one: "Specify a conda environment or container for each rule".
The workflow's software is the pinned virtual environment (envs/setup.sh, envs/requirements.txt); a conda
environment is not offered because none could be built and tested here (no conda channel is reachable)."""
import re
import subprocess
import sys

ALLOWED = "Specify a conda environment or container for each rule."
run = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], capture_output=True, text=True)
lints = re.findall(r"^    \* (.+?)(?: in line \d+)?\.?:$", run.stdout + run.stderr, re.MULTILINE)
software = [lint for lint in lints if lint.rstrip(".") == ALLOWED.rstrip(".")]
others = sorted(set(lints) - set(software))
print(f"snakemake --lint: {len(lints)} lints, {len(software)} of them '{ALLOWED}'")
if others:
    print(run.stdout + run.stderr)
    sys.exit(f"snakemake --lint: {len(others)} kinds of lint besides the software one: {others}")
