#!/usr/bin/env bash
# Create .venv-slurm: the pinned dependencies, the fieldnote package (editable) and the Slurm executor plugins, for
# the cluster profile (profiles/slurm) and its test. A venv of its own, not .venv with the plugins added
# (envs/requirements-slurm.txt says why). Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv-slurm/bin/python ] || python3 -m venv .venv-slurm
.venv-slurm/bin/python -m pip install -q --upgrade pip
.venv-slurm/bin/python -m pip install -q -r envs/requirements.txt -r envs/requirements-slurm.txt
.venv-slurm/bin/python -m pip install -q --no-build-isolation --no-deps -e .
