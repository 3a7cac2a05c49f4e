"""fieldnote: the reproducible evidence pipeline for GPU-kernel field notes."""

__version__ = "0.1.0"
