"""Run a profiler command; a failure is one PipelineError carrying the tail of its output."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..errors import PipelineError


def workload_command(job, job_file: Path, *mode: str) -> list[str]:
    job_file.write_text(json.dumps(job.to_dict()))
    return [sys.executable, "-m", "fieldnote.capture.run", str(job_file), *mode]


def run(command: list[str], what: str, timeout: int = 900) -> str:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise PipelineError(f"{what} failed (exit {done.returncode}):\n{tail}")
    return done.stdout
