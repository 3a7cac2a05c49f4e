"""This workflow's console (profiles name it: `logger: fieldnote`): Snakemake's own handler, formatter and filter,
with two differences.

- A job's code dependencies (the package's modules, declared as inputs so that an edit reruns what it feeds) are
  counted, not listed, unless `--verbose`: a job's block then reads as its data.
- A target no rule makes is one line naming the targets there are, and the likeliest meant; a report asked for
  before its bundles are built, one line saying what to build.
- A job that refused (a `fieldnote:` line in its log, exit status `fieldnote.core.errors.REFUSED`) is not reported
  again: Snakemake's traceback of the failed script and its error block are left out, and the workflow's `onerror` hook
  prints each refusal's one line last (`fieldnote.core.errors.STOP_MESSAGE`).
- A Ctrl-C is one line where Snakemake says it terminates the jobs; the jobs it stopped are not reported as
  failures after it (a job killed by the signal, or one that said so itself with status INTERRUPTED).

Snakemake finds it by its module's name (snakemake-interface-logger-plugins); it is installed with the package.
"""
from __future__ import annotations

import copy
import difflib
import logging
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from snakemake.logging import ColorizingTextHandler, DefaultFilter, DefaultFormatter, get_event
from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent
from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

CODE = re.compile(r"^src/[A-Za-z0-9_/]+\.py$")  # the package's modules, as code_of declares them
PREFIX = "fieldnote: "


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    pass


def refused(record: logging.LogRecord) -> bool:
    """A failure whose one line was already given: a script's CalledProcessError with the refusal's exit status, or
    a job's error block whose log ends in a `fieldnote:` line."""
    from fieldnote.core.errors import INTERRUPTED, REFUSED

    event = get_event(record)
    if event == LogEvent.ERROR:
        text = str(record.msg)
        return any(f"returned non-zero exit status {status}." in text for status in (REFUSED, INTERRUPTED))
    if event == LogEvent.JOB_ERROR:
        return any(last_line(Path(log)).startswith(PREFIX) for log in getattr(record, "log", None) or ())
    return False


STOPPING = "Terminating processes on user request"  # Snakemake's word, once, when a Ctrl-C reaches its scheduler
# a job's script ended by the interrupt: killed by the signal, or failed (a Python interrupted while it starts,
# before any code can catch it, exits with status 1, and prints CPython's own word for it)
KILLED = ("died with <Signals.SIGINT", "died with <Signals.SIGTERM", "KeyboardInterrupt", "CalledProcessError")


def stopped(record: logging.LogRecord) -> bool:
    """After a Ctrl-C: a failure that is the interrupt's doing. A script killed by the signal; a job's error block,
    unless its log holds a traceback (a job that failed of itself while the run was stopping is still reported)."""
    if get_event(record) == LogEvent.JOB_ERROR:
        return not any("Traceback (most recent call last)" in log_text(Path(log))
                       for log in getattr(record, "log", None) or ())
    return get_event(record) == LogEvent.ERROR and any(k in str(record.msg) for k in KILLED)


def interrupt_line(record: logging.LogRecord) -> logging.LogRecord:
    record = copy.copy(record)
    record.msg = (f"{PREFIX}interrupted (Ctrl-C): the running jobs are stopped; what they were writing was a "
                  "temporary file, never published, and the next run starts them again")
    record.args = ()
    return record


def missing_target(record: logging.LogRecord) -> logging.LogRecord:
    """Snakemake's MissingRuleException for a target, as one line: what a target is, and the likeliest meant."""
    found = re.search(r"No rule to produce (\S+)", str(record.msg))
    if getattr(record, "exception", None) != "MissingRuleException" or not found:
        return record
    target = found.group(1)
    namespaces = sorted(p.stem for p in Path("config/namespaces").glob("*.yaml"))
    close = difflib.get_close_matches(target, [f"results/{ns}{end}" for ns in namespaces for end in ("", ".tar.gz")],
                                      n=1, cutoff=0.6)
    meant = f"did you mean '{close[0]}'? " if close else ""
    record = copy.copy(record)
    record.msg = (f"{PREFIX}no rule makes '{target}' ({meant}a target is results/<namespace>, its archive "
                  f"results/<namespace>.tar.gz, or a file under work/<namespace>/; the namespaces: "
                  f"{', '.join(namespaces)})")
    record.args = ()
    return record


def unbuilt_report(record: logging.LogRecord) -> logging.LogRecord:
    """`snakemake --report` before the bundle it reports is built: Snakemake's WorkflowError as one line."""
    found = re.search(r"File (results/[^/\s]+) marked for report but does not exist", str(record.msg))
    if not found:
        return record
    record = copy.copy(record)
    record.msg = (f"{PREFIX}{found.group(1)} is not built yet, so there is nothing to report: build it first "
                  f"(`snakemake --cores 2 {found.group(1)}`, or `snakemake --cores 2` for every namespace the report "
                  "takes when given no target), then ask for the report again")
    record.args = ()
    return record


def log_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def last_line(path: Path) -> str:
    return next((line for line in reversed(log_text(path).splitlines()) if line.strip()), "")


def without_code(record: logging.LogRecord) -> logging.LogRecord:
    """A job's block with its code inputs counted at the end of its inputs instead of listed."""
    inputs = list(getattr(record, "input", None) or ())
    data = [f for f in inputs if not CODE.match(f)]
    if len(data) == len(inputs):
        return record
    record = copy.copy(record)
    record.input = [*data, f"(and {len(inputs) - len(data)} package modules: --verbose lists them)"]
    return record


class LogHandler(LogHandlerBase):
    def __post_init__(self) -> None:
        s = self.common_settings
        self.console = ColorizingTextHandler(
            nocolor=s.nocolor, stream=sys.stdout if s.stdout else sys.stderr,
            formatter=DefaultFormatter(s.quiet, s.show_failed_logs),
            filter=DefaultFilter(s.quiet, s.debug_dag, s.verbose, s.dryrun, s.printshellcmds))
        self.stopping = False  # a Ctrl-C reached Snakemake's scheduler

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith(STOPPING):
            self.stopping, record = True, interrupt_line(record)
        if not self.console.filter(record) or refused(record) or (self.stopping and stopped(record)):
            return
        if get_event(record) == LogEvent.JOB_INFO and not self.common_settings.verbose:
            record = without_code(record)
        elif get_event(record) == LogEvent.ERROR:
            record = unbuilt_report(missing_target(record))
        self.console.emit(record)

    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False
