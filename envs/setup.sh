#!/usr/bin/env bash
# Create .venv with the pinned dependencies and the fieldnote package (editable). Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r envs/requirements.txt
.venv/bin/python -m pip install -q --no-build-isolation --no-deps -e .
