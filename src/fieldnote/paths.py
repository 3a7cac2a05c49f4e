"""Where the project's pieces live, relative to its root (the folder holding the Snakefile)."""
import os
from pathlib import Path

ROOT = Path(os.environ.get("FIELDNOTE_ROOT", Path(__file__).resolve().parents[2]))
KERNELS = ROOT / "kernels"
CONFIG = ROOT / "config"
SCHEMAS = CONFIG / "schemas"
