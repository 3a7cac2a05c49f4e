"""Progress of a long job, a line per subject and phase, written to the job's log (script.entry attaches it):
`tail -f work/logs/<rule>/...` follows a run. Outside a job the lines go nowhere."""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager

log = logging.getLogger("fieldnote.progress")
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
