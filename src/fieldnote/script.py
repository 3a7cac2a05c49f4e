"""What every workflow/scripts entry point shares: one clear line on a PipelineError or a Ctrl-C, never a
traceback, and the refusal to measure an archived namespace, held in the job itself whatever the DAG allowed."""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
from functools import wraps
from pathlib import Path

from .core.progress import START, add, report_phases, since_process_start
from .core.progress import log as progress
from .measure.devices import pin


class _Tee:
    """stderr as it was, and a copy of every line in the job's log."""

    def __init__(self, stream, log):
        self.stream, self.log = stream, log

    def write(self, text):
        with contextlib.suppress(OSError):  # a full disk must not silence the line that says so
            self.log.write(text)
        return self.stream.write(text)

    def flush(self):
        with contextlib.suppress(OSError):
            self.log.flush()
        self.stream.flush()

    def __getattr__(self, name):  # fileno, isatty, encoding: the terminal's
        return getattr(self.stream, name)


def _log_to(snakemake) -> None:
    """The job's `log:` file receives what it prints on stderr and its progress lines (tail -f to follow it)."""
    if not getattr(snakemake, "log", None):
        return
    os.environ["FIELDNOTE_JOB"] = str(Path(snakemake.log[0]).with_suffix(""))  # names it in the GPU lock's trace
    log = open(snakemake.log[0], "a", buffering=1)  # noqa: SIM115 (held for the job's life)
    sys.stderr = _Tee(sys.stderr, log)
    logging.raiseExceptions = False  # a log that cannot be written (a full disk) is no reason for a traceback
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    progress.addHandler(handler)
    progress.setLevel(logging.INFO)
    progress.propagate = False


def refuse_archived(snakemake) -> None:
    """A GPU job carries `params.archived` (the archive its namespace's evidence lives in): it measures nothing."""
    from .core.errors import PipelineError

    archived = snakemake.params.get("archived") if hasattr(snakemake.params, "get") else None
    if archived:
        w = snakemake.wildcards
        raise PipelineError(f"namespace {w.ns} is archived ({archived}): its evidence is never measured again nor "
                            f"overwritten, so rule {snakemake.rule} is refused. results/{w.ns} is rebuilt from the "
                            "archive; to measure again, declare a new namespace.")


def _compile_from_kept(snakemake) -> None:
    """A job of an op whose torch.compile was tuned (its input `tune`) compiles from the kept cache (tune.py)."""
    tunes = snakemake.input.get("tune") if hasattr(getattr(snakemake, "input", None), "get") else None
    if tunes:
        from .measure.tune import use_kept

        use_kept(tunes)


STORAGE = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG}  # the disk, not the code


def refuse(line: str, status: int) -> None:
    """End a job with its one line: in its log, and kept for the onerror hook, which prints it after everything
    else (so it is the run's last word, once, whatever else was printing); outside a workflow, on stderr."""
    from .core.errors import record_refusal

    kept = False
    if isinstance(sys.stderr, _Tee):
        with contextlib.suppress(OSError):  # the log on a full disk: the hook still has the line
            sys.stderr.log.write(line + "\n")
        with contextlib.suppress(OSError):  # .snakemake/ on a full disk: said now instead
            record_refusal(line)
            kept = True
    if not kept:
        print(line, file=sys.stderr)
    sys.exit(status)


def entry(main):
    """Run `main(snakemake)`; a PipelineError becomes one line, in the job's log and kept for the workflow's onerror
    hook to print last, and exit status REFUSED (the console leaves the failed script's traceback out:
    snakemake_logger_plugin_fieldnote); a Ctrl-C a line in the job's log and status INTERRUPTED (what the job was
    writing is a temporary file, never published; the console says it once for the run)."""
    from .core.errors import INTERRUPTED, REFUSED, PipelineError

    @wraps(main)
    def wrapped(snakemake):
        try:
            _log_to(snakemake)
            add(START, since_process_start())
            refuse_archived(snakemake)
            pin(getattr(snakemake, "resources", None) or {})
            _compile_from_kept(snakemake)
            main(snakemake)
            report_phases()
        except PipelineError as e:
            refuse(f"fieldnote: {e}", REFUSED)
        except OSError as e:
            if e.errno not in STORAGE and "No space left" not in str(e):  # pyarrow's carry no errno
                raise
            refuse(f"fieldnote: rule {snakemake.rule}: cannot write {e.filename or 'its output'}: {e.strerror}; "
                   "what it was writing was a temporary file, and nothing was published", REFUSED)
        except KeyboardInterrupt:  # said in the job's log; the console says it once for the run
            progress.warning(f"fieldnote: interrupted: rule {snakemake.rule} stopped before it finished and "
                             "published nothing")
            sys.exit(INTERRUPTED)
    return wrapped
