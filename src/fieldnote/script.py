"""What every workflow/scripts entry point shares: one clear line on a PipelineError, never a traceback."""
from __future__ import annotations

import sys
from functools import wraps


def entry(main):
    """Run `main(snakemake)`; a PipelineError becomes one message on stderr and exit status 1."""
    from .errors import PipelineError

    @wraps(main)
    def wrapped(snakemake):
        try:
            main(snakemake)
        except PipelineError as e:
            print(f"fieldnote: {e}", file=sys.stderr)
            sys.exit(1)
    return wrapped
