"""Atomic writes: a reader (or an interrupted run) never sees half a file, and what a killed job left behind is
removed by the next run (`remove_leftovers`)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

# A temporary file or folder names the host and process writing it, `.<name>.<host>-<pid>-<random>.<kind>`, so
# the next run removes only what a dead process of this host left (not a live job's, not another node's).
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
_LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[^.]+\.(?P<kind>tmp|partial|old)")
SKIP = {"inductor-cache"}  # torch's own cache: many files, none of ours


def _writer() -> str:
    return f"{_HOST}-{os.getpid()}-"


def temporary_name(path: Path, kind: str) -> str:
    return f".{path.name}.{_writer()}{secrets.token_hex(4)}.{kind}"


@contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside `path`; on success it replaces `path` in one rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_writer()}", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 is for the temporary file, not for what we publish
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_bytes(path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_json(path, obj) -> None:
    write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n").encode())


def write_table(path, frame: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        pass
    return True


def remove_leftovers(*folders: Path) -> list[Path]:
    """Temporary files and folders whose writer is gone (a job killed mid-write): removed, except a bundle a swap
    had moved aside when it was killed, which goes back to its place. Returns what was removed or restored."""
    done = []
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d not in SKIP]
            for name in [*files, *dirs]:
                match = _LEFTOVER.fullmatch(name)
                if not match or match["host"] != _HOST or _alive(int(match["pid"])):
                    continue
                path = Path(root) / name
                original = path.with_name(match["name"])
                try:
                    if match["kind"] == "old" and not original.exists():
                        os.replace(path, original)
                    elif path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink(missing_ok=True)
                except OSError as e:  # not ours to remove after all: say so, and go on
                    print(f"fieldnote: warning: {path} left by a killed job could not be removed ({e})",
                          file=sys.stderr)
                    continue
                done.append(path)
                if name in dirs:
                    dirs.remove(name)
    return done
