"""fieldnote: the reproducible evidence pipeline for GPU-kernel field notes."""
import sys

__version__ = "0.1.0"


def _one_line_on_ctrl_c(kind, value, traceback, default=sys.excepthook):
    """A Ctrl-C that reaches the top of a job (or of Snakemake's parsing) is one line, not a traceback; Python
    still exits as killed by SIGINT."""
    if issubclass(kind, KeyboardInterrupt):
        print("fieldnote: interrupted (Ctrl-C); what was being written is a temporary file, never published",
              file=sys.stderr)
    else:
        default(kind, value, traceback)


sys.excepthook = _one_line_on_ctrl_c
