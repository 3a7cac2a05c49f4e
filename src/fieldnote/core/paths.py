"""Where the project's pieces live, relative to its root (the folder holding the Snakefile and config/)."""
import os
from pathlib import Path


def project_root(here: Path) -> Path | None:
    """The nearest folder, `here` or above, holding a Snakefile and config/: the project a command runs in."""
    for folder in (here, *here.parents):
        if (folder / "Snakefile").is_file() and (folder / "config").is_dir():
            return folder
    return None


# FIELDNOTE_ROOT where set (a test's copy of the project); else the project the process runs in (Snakemake runs
# every job in it); else the checkout the package is installed from, for a command run outside any project.
ROOT = Path(os.environ.get("FIELDNOTE_ROOT") or project_root(Path.cwd().resolve())
            or Path(__file__).resolve().parents[3])
KERNELS = ROOT / "kernels"
CONFIG = ROOT / "config"
SCHEMAS = CONFIG / "schemas"
