"""fieldnote: the reproducible evidence pipeline for GPU-kernel field notes."""
import os
import sys

# A build exists for its ptxas report, and a compile answered from the CUDA compute cache (~/.nv/ComputeCache,
# which NVRTC 12.9 and later consult) skips ptxas and leaves an empty log. Set here, when the package is first
# imported, as early as the package can: set by the build module, it came too late for GPU tests that had run
# torch's kernels before their first build (docs/h200-runbook.md).
os.environ["CUDA_CACHE_DISABLE"] = "1"

__version__ = "0.1.0"


def _one_line_on_ctrl_c(kind, value, traceback, default=sys.excepthook):
    """A Ctrl-C that reaches the top of a process (Snakemake's parsing, a command) is one line, not a traceback.
    Python still exits as killed by SIGINT."""
    if issubclass(kind, KeyboardInterrupt):
        print("fieldnote: interrupted (Ctrl-C); what was being written is a temporary file, never published",
              file=sys.stderr)
    else:
        default(kind, value, traceback)


def _silent_on_ctrl_c_at_exit(unraisable, default=sys.unraisablehook):
    """A Ctrl-C landing in an exit handler (torch's library finalizers) while the process ends anyway: the line
    above, or the run's console, has said it; CPython would add a traceback ("Exception ignored in atexit
    callback")."""
    if not issubclass(unraisable.exc_type, KeyboardInterrupt):
        default(unraisable)


# A job's Python has silent hooks already (workflow/site/sitecustomize.py): the run's console says it once for all
# its jobs (snakemake_logger_plugin_fieldnote).
if not getattr(sys.excepthook, "fieldnote_job", False):
    sys.excepthook = _one_line_on_ctrl_c
    sys.unraisablehook = _silent_on_ctrl_c_at_exit
