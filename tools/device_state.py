"""A run's state carried from one device machine to the next, so that a run of several calls survives a machine
given back between them (a fresh one starts bare): `save` packs what Snakemake needs to resume (work/ and results/
with their times, its own records) into parts small enough to come back from $OUT; `restore` unpacks them on the
next machine. Inputs are not packed (they are large and deterministic): `restore` draws each again and keeps it only
if its SHA-256 matches the hashes file written beside it. The checkout arrives with new file times, which would make
every output older than its sources: `restore` gives each source the time it had when the state was saved if its
content is unchanged, so that only what an edit between the calls touched runs again.

    python tools/device_state.py save OUTDIR       # OUTDIR/state.tar.gz.part-00, -01, ... (15 MiB each)
    python tools/device_state.py restore DIR       # DIR holding those parts (carried as .resume)
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tarfile
from pathlib import Path

PACKED = ["work", "results", ".snakemake/metadata", ".snakemake/incomplete"]
CACHES = {"work/inductor-cache"}  # torch's compile cache: hundreds of MiB, no output of a rule
SKIPPED_DIRS = {".git", ".gpu", ".resume", ".venv", ".snakemake", "work", "results", "__pycache__", ".pytest_cache",
                ".ruff_cache"}
PART = 15 * 2**20  # under the 16 MiB a file from $OUT may have
MANIFEST = "device-state-sources.json"


def sources(root: Path) -> dict[str, list]:
    """Every file of the checkout outside the run's own folders: its SHA-256 and modification time."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        for name in files:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = [hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime]
    return found


def save(root: Path, out: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        manifest = json.dumps(sources(root)).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
        for top in PACKED:
            if (root / top).exists():
                tar.add(root / top, arcname=top, filter=packed)
    data = buffer.getvalue()
    for k in range(0, len(data), PART):
        (out / f"state.tar.gz.part-{k // PART:02d}").write_bytes(data[k:k + PART])
    print(f"device_state: saved {len(data) / 2**20:.1f} MiB in {-(-len(data) // PART)} part(s)")


def packed(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if member.name.endswith(".npz") or member.name in CACHES else member


def restore(root: Path, parts_dir: Path) -> None:
    parts = sorted(parts_dir.glob("state.tar.gz.part-*"))
    if not parts:
        print(f"device_state: no state under {parts_dir}: starting from nothing")
        return
    with tarfile.open(fileobj=io.BytesIO(b"".join(p.read_bytes() for p in parts)), mode="r:gz") as tar:
        saved = json.loads(tar.extractfile(MANIFEST).read())
        members = [m for m in tar.getmembers() if m.name != MANIFEST]
        tar.extractall(root, members=members, filter="tar")  # keeps each file's time
    kept = changed = 0
    for name, (digest, mtime) in saved.items():
        path = root / name
        if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == digest:
            os.utime(path, (mtime, mtime))
            kept += 1
        else:
            changed += 1
    drawn = redraw_inputs(root)
    print(f"device_state: restored {len(members)} entries; {kept} sources given their saved times, {changed} changed "
          f"or gone since (what they feed runs again); {drawn} inputs drawn again and matched")


def redraw_inputs(root: Path) -> int:
    """Each input whose hashes file came back without it, drawn again, kept only if every array's SHA-256 matches,
    and given the hashes file's time (the two were written together)."""
    sys.path.insert(0, str(root / "src"))
    from fieldnote.measure import inputs
    from fieldnote.registry.ops import OPS

    drawn = 0
    for hashes_path in sorted((root / "work" / "inputs").glob("*/*.sha256.json")):
        expected = json.loads(hashes_path.read_text())
        shape = OPS[expected["op"]].parse_label(expected["shape"])
        npz = root / inputs.path_for(expected["op"], shape, expected["seed"])
        if npz.exists():
            continue
        spare = hashes_path.with_suffix(".redrawn")
        got = inputs.write(expected["op"], shape, expected["seed"], str(npz), str(spare))
        spare.unlink()
        if got != expected["sha256"]:  # left to Snakemake, which draws it and runs all it feeds again
            npz.unlink()
            print(f"device_state: {npz} drawn again differs from {hashes_path}; not kept")
            continue
        mtime = hashes_path.stat().st_mtime
        os.utime(npz, (mtime, mtime))
        drawn += 1
    return drawn


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "restore"):
        raise SystemExit(__doc__)
    {"save": save, "restore": restore}[sys.argv[1]](Path.cwd(), Path(sys.argv[2]))
