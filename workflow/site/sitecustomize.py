"""Imported by every job's Python before its script (common.smk puts this folder first on the jobs' PYTHONPATH).

Snakemake runs a `script:` behind a preamble of its own that imports Snakemake, about a second a job: a Ctrl-C
landing there, before the package's own hook (fieldnote/__init__.py) is set, was a traceback per job. Here the
hook is set before any of it. A job says nothing of the interrupt: the run's console says it once
(snakemake_logger_plugin_fieldnote), and Python still exits as killed by SIGINT, so Snakemake reads it so.
A sitecustomize this one shadows (a distribution's own) is run after it.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _silent_on_ctrl_c(kind, value, traceback, default=sys.excepthook):
    if not issubclass(kind, KeyboardInterrupt):
        default(kind, value, traceback)


def _silent_on_ctrl_c_at_exit(unraisable, default=sys.unraisablehook):
    # A Ctrl-C landing in an exit handler (torch's library finalizers) is reported as "Exception ignored in atexit
    # callback" with a traceback, through this hook rather than the one above.
    if not issubclass(unraisable.exc_type, KeyboardInterrupt):
        default(unraisable)


_silent_on_ctrl_c.fieldnote_job = True  # fieldnote/__init__.py leaves a job's hooks in place
sys.excepthook = _silent_on_ctrl_c
sys.unraisablehook = _silent_on_ctrl_c_at_exit

_here = os.path.realpath(os.path.dirname(__file__))
_shadowed = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.realpath(p or ".") != _here])
if _shadowed is not None and _shadowed.loader is not None and os.path.realpath(_shadowed.origin or "") != \
        os.path.realpath(__file__):
    _shadowed.loader.exec_module(importlib.util.module_from_spec(_shadowed))
