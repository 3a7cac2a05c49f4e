"""Run a profiler command; a failure is one PipelineError carrying the tail of its output."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ...core.errors import PipelineError


def workload_command(job, job_file: Path, *mode: str) -> list[str]:
    job_file.write_text(json.dumps(job.to_dict()))
    return [sys.executable, "-m", "fieldnote.measure.capture.run", str(job_file), *mode]


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run(command: list[str], what: str, expect: Path | None = None, timeout: int = 900) -> str:
    """Run a profiler; fail with the tail of its output if it exits non-zero or leaves no `expect` file."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        ours = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("fieldnote: ")]
        if ours:  # the workload's own verdict (a timed call that computed a wrong result): that line alone
            raise PipelineError(f"{what}: {ours[-1].removeprefix('fieldnote: ')}")
        raise PipelineError(f"{what} failed (exit {done.returncode}):\n{_tail(done.stdout + done.stderr)}")
    if expect is not None and not expect.exists():
        raise PipelineError(f"{what} wrote no {expect.name}:\n{_tail(done.stdout + done.stderr)}")
    return done.stdout
