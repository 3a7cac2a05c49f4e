"""Progress of a long job, a line per subject and phase, written to the job's log (script.entry attaches it):
`tail -f work/logs/<rule>/...` follows a run. Outside a job the lines go nowhere."""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager

log = logging.getLogger("fieldnote.core.progress")
log.addHandler(logging.NullHandler())


@contextmanager
def step(what: str):
    """`what` started, then done (or failed) with its seconds."""
    log.info("%s ...", what)
    start = time.perf_counter()
    try:
        yield
    except BaseException:
        log.info("%s failed after %.1f s", what, time.perf_counter() - start)
        raise
    log.info("%s done in %.1f s", what, time.perf_counter() - start)


# Where a job's time goes (docs/pipeline-time.md): each job sums the seconds of its phases and logs them, with
# its wall time since the process started, as its last line (`phases: {...}`); tools/job_times.py reads them.
START, FIRST, WARMUP, MEASURE, VERIFY, FLUSH, PROFILER = (
    "start and imports", "first call (compile, autotune, JIT)", "warm-up", "measurement", "verification",
    "L2 flush", "profiler start and export")
COMPILE, CHECK, SANITIZE = "compile", "checks", "compute-sanitizer"
PREPARE = "preparation (imports, inputs, kernels loaded or compiled)"  # before a check or a measurement
WAIT = "waiting for the GPU"  # queued for a measurement window, or for one to end (gpulock.py)
_spent: dict[str, float] = {}


@contextmanager
def phase(name: str):
    """Add the block's seconds to phase `name` of this job."""
    start = time.perf_counter()
    try:
        yield
    finally:
        add(name, time.perf_counter() - start)


def add(name: str, seconds: float) -> None:
    _spent[name] = _spent.get(name, 0.0) + seconds


def spent() -> dict[str, float]:
    return dict(_spent)


def since_process_start() -> float:
    """Seconds since this process was created (Linux: /proc), imports and interpreter start included."""
    import os

    with open("/proc/self/stat") as f:
        started_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return uptime - started_ticks / os.sysconf("SC_CLK_TCK")


def report_phases() -> None:
    """The job's last progress line: its wall time and each phase's seconds, as JSON."""
    import json

    log.info("phases: %s", json.dumps({"wall": round(since_process_start(), 3),
                                       **{k: round(v, 3) for k, v in _spent.items()}}))
