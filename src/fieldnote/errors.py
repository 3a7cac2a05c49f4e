"""The one error type the pipeline raises for bad input or a failed gate: a message, never a traceback."""


class PipelineError(Exception):
    """A problem the user can act on; its message names the file, key, op, implementation or shape."""
