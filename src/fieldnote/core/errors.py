"""The one error type the pipeline raises for bad input or a failed gate: a message, never a traceback; and how a
job that stops on one reports it."""
from __future__ import annotations

from pathlib import Path

REFUSED = 3  # a job's exit status when it stopped with its one `fieldnote:` line (the console leaves out the rest)
INTERRUPTED = 130  # a job stopped by Ctrl-C, also with its one line
STOP_MESSAGE = Path(".snakemake/fieldnote-stop-message")  # each refusal's line, which the onerror hook prints last


class PipelineError(Exception):
    """A problem the user can act on; its message names the file, key, op, implementation or shape."""


def record_refusal(line: str) -> None:
    """Keep a job's refusal for the workflow's onerror hook, which prints each one once, after everything else."""
    STOP_MESSAGE.parent.mkdir(exist_ok=True)
    with STOP_MESSAGE.open("a") as out:
        out.write(line.rstrip("\n") + "\n")


def refusals() -> list[str]:
    """The refusals recorded in this run, each once, in their order."""
    if not STOP_MESSAGE.exists():
        return []
    return list(dict.fromkeys(line for line in STOP_MESSAGE.read_text().splitlines() if line.strip()))
