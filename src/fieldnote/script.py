"""What every workflow/scripts entry point shares: one clear line on a PipelineError or a Ctrl-C, never a
traceback, and the refusal to measure an archived namespace, held in the job itself whatever the DAG allowed."""
from __future__ import annotations

import sys
from functools import wraps


def refuse_archived(snakemake) -> None:
    """A GPU job carries `params.archived` (the archive its namespace's evidence lives in): it measures nothing."""
    from .errors import PipelineError

    archived = snakemake.params.get("archived") if hasattr(snakemake.params, "get") else None
    if archived:
        w = snakemake.wildcards
        raise PipelineError(f"namespace {w.ns} is archived ({archived}): its evidence is never measured again nor "
                            f"overwritten, so rule {snakemake.rule} is refused. results/{w.ns} is rebuilt from the "
                            "archive; to measure again, declare a new namespace.")


def entry(main):
    """Run `main(snakemake)`; a PipelineError becomes one message on stderr and exit status 1, a Ctrl-C one line
    and status 130 (what the job was writing is a temporary file, never published)."""
    from .errors import PipelineError

    @wraps(main)
    def wrapped(snakemake):
        try:
            refuse_archived(snakemake)
            main(snakemake)
        except PipelineError as e:
            print(f"fieldnote: {e}", file=sys.stderr)
            sys.exit(1)
        except KeyboardInterrupt:
            print(f"fieldnote: interrupted: rule {snakemake.rule} stopped before it finished and published nothing",
                  file=sys.stderr)
            sys.exit(130)
    return wrapped
