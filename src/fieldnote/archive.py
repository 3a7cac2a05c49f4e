"""Archive and replay: a namespace's bundle with the sources that produced it, in one reproducible tar.gz,
and the way back from it to results/<ns>/ on a machine without a GPU.

Layout inside the archive: `<ns>/INDEX.json` first (every other member's path, size and SHA-256), then
`<ns>/bundle/...` (the bundle as published, MANIFEST included) and `<ns>/source/...` (Snakefile, config,
workflow, kernels, the package, pins). Entries are sorted with zeroed owners and times, and gzip carries no
timestamp, so the same bundle and sources give the same bytes.

Reading one trusts nothing in it: the gzip stream is read to its end (its CRC and length checked), each
member's size is checked against the index and the limits below before it is read, each member's hash against
the index, the bundle against its manifest, and the recorded configuration against the namespace schema. A
verified archive is remembered by its SHA-256 under work/, so a Snakemake start hashes it and reads no further.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import zlib
from pathlib import Path

from . import names
from .bundle import bundle_files
from .config import Namespace, differs, read_when_archived, reading, validate_resolved
from .errors import PipelineError
from .evidence import parse_manifest
from .io import write_bytes, write_json
from .ops import OPS

SOURCES = ("Snakefile", "pyproject.toml", "config", "workflow", "kernels", "src/fieldnote", "envs", "profiles", "notes")
FORMAT = 1  # INDEX.json's layout; a cached verification is valid for one format only
INDEX = "INDEX.json"
# Limits, checked before a byte of a member is read. The largest shipped archive (h200-001) holds 181 members,
# 2.3 MB in all, none above 0.3 MB: these leave two orders of magnitude and still bound what a forged archive
# can make a dry run allocate.
MAX_MEMBER_BYTES = 64 << 20
MAX_ARCHIVE_BYTES = 256 << 20
MAX_MEMBERS = 20_000
MAX_INDEX_BYTES = 8 << 20
CACHE = Path("work/.cache/archives")


def source_files(root: Path) -> list[Path]:
    files = []
    for name in SOURCES:
        path = root / name
        files += [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                     and "__pycache__" not in p.parts)
    return files


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    tar.addfile(info, io.BytesIO(data))


def pack_members(namespace: str, members: dict[str, bytes], dest: Path) -> None:
    """`members`: {path under <ns>/ (bundle/..., source/...): bytes}, written after the index that lists them."""
    names.check(namespace, "archive")
    index = {"format": FORMAT, "namespace": namespace,
             "files": {name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                       for name, data in sorted(members.items())}}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, f"{namespace}/{INDEX}", (json.dumps(index, indent=1, sort_keys=True) + "\n").encode())
        for name, data in sorted(members.items()):
            _add(tar, f"{namespace}/{name}", data)
    write_bytes(dest, gzip.compress(raw.getvalue(), mtime=0))


def pack(namespace: str, bundle: Path, root: Path, dest: Path, replayed: Path | None = None) -> None:
    """The bundle with the sources that produced it: this checkout's, or for a bundle replayed from an archive
    that archive's own source/, so its provenance stays true."""
    members = {f"bundle/{p.relative_to(bundle)}": p.read_bytes() for p in bundle_files(bundle)}
    if replayed:
        members.update({n: data for n, data in read_members(replayed)[1].items() if n.startswith("source/")})
    else:
        members.update({f"source/{p.relative_to(root)}": p.read_bytes() for p in source_files(root)})
    pack_members(namespace, members, dest)


def sha256_of(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as e:
        raise PipelineError(f"archive {path}: cannot be read ({e.strerror or e})") from None


def _index(member: tarfile.TarInfo, tar: tarfile.TarFile, where: str) -> tuple[str, dict]:
    """The first member, <ns>/INDEX.json: what every other member must be."""
    namespace, _, name = member.name.partition("/")
    if name != INDEX or not member.isfile():
        raise PipelineError(f"{where}: its first member is {member.name!r}, not <namespace>/{INDEX} (an archive "
                            "packed before archives were indexed, or not one of ours)")
    names.check(namespace, f"{where}: the namespace it records")
    if member.size > MAX_INDEX_BYTES:
        raise PipelineError(f"{where}: {INDEX} is {member.size:,} bytes, above the limit of {MAX_INDEX_BYTES:,}")
    try:
        index = json.loads(tar.extractfile(member).read())
    except ValueError:
        index = None
    files = index.get("files") if isinstance(index, dict) else None
    if (not isinstance(files, dict) or index.get("format") != FORMAT or index.get("namespace") != namespace
            or not all(isinstance(f, dict) and type(f.get("size")) is int and isinstance(f.get("sha256"), str)
                       for f in files.values())):
        raise PipelineError(f"{where}: {INDEX} is not an index of format {FORMAT} for namespace {namespace}")
    sizes = [f["size"] for f in files.values()]
    for name, entry in files.items():
        names.safe_relative(name, f"{where}: {INDEX}")
        if not name.startswith(("bundle/", "source/")):
            raise PipelineError(f"{where}: {INDEX} lists {name!r}, outside bundle/ and source/")
        if not 0 <= entry["size"] <= MAX_MEMBER_BYTES:
            raise PipelineError(f"{where}: {name} is {entry['size']:,} bytes, above the limit of "
                                f"{MAX_MEMBER_BYTES:,} for one member")
    if len(files) > MAX_MEMBERS or sum(sizes) > MAX_ARCHIVE_BYTES:
        raise PipelineError(f"{where}: {len(files):,} members, {sum(sizes):,} bytes, above the limits of "
                            f"{MAX_MEMBERS:,} members and {MAX_ARCHIVE_BYTES:,} bytes")
    return namespace, files


def _member(member: tarfile.TarInfo, namespace: str, index: dict, seen: dict, where: str) -> str:
    """A member's path under <ns>/, once its header agrees with the index (before any of its bytes is read)."""
    prefix, _, name = member.name.partition("/")
    if prefix != namespace or name not in index:
        raise PipelineError(f"{where}: member {member.name!r} is not in its {INDEX}")
    if not member.isfile():
        raise PipelineError(f"{where}: member {member.name!r} is not a regular file")
    if name in seen:
        raise PipelineError(f"{where}: member {member.name!r} appears twice")
    if member.size != index[name]["size"]:
        raise PipelineError(f"{where}: member {member.name!r} is {member.size:,} bytes, its index says "
                            f"{index[name]['size']:,}")
    return name


def read_members(path: Path) -> tuple[str, dict[str, bytes]]:
    """(namespace, {path under <ns>/: bytes}) of an archive, every member checked against the index."""
    where = f"archive {path}"
    files: dict[str, bytes] = {}
    index = None
    try:
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            with tarfile.open(fileobj=gz, mode="r|") as tar:
                for member in tar:
                    if index is None:
                        namespace, index = _index(member, tar, where)
                        continue
                    name = _member(member, namespace, index, files, where)
                    data = tar.extractfile(member).read()
                    if hashlib.sha256(data).hexdigest() != index[name]["sha256"]:
                        raise PipelineError(f"{where}: {name} does not match its index checksum")
                    files[name] = data
            while gz.read(1 << 20):  # the tar's padding, to the end of the stream: gzip checks CRC and length there
                pass
    except PipelineError:
        raise
    except (OSError, EOFError, tarfile.TarError, zlib.error) as e:
        raise PipelineError(f"{where} is not a readable archive ({e})") from None
    if index is None:
        raise PipelineError(f"{where} is not a readable archive (it holds nothing)")
    missing = sorted(set(index) - set(files))
    if missing:
        raise PipelineError(f"{where}: {len(missing)} members its {INDEX} lists are missing: {missing[:3]}")
    return namespace, files


class Archive:
    """A packed namespace, read without unpacking to disk. Opening one verifies it completely, unless an archive
    with the same SHA-256 was verified before (work/.cache/archives)."""

    def __init__(self, path: str | Path, cache: Path = CACHE):
        self.path = Path(path)
        self.sha256 = sha256_of(self.path)
        self._files: dict[str, bytes] | None = None
        record = cache / f"{self.sha256}.v{FORMAT}.json"
        try:
            known = json.loads(record.read_text())
            self.namespace, self._tables, self._resolved = known["namespace"], known["tables"], known["resolved"]
            self._members = set(known["members"])
        except (OSError, ValueError, KeyError):
            self.verify()
            try:  # the cache only saves time: a read-only work/ costs a full verification at every start
                write_json(record, {"namespace": self.namespace, "tables": self._tables, "resolved": self._resolved,
                                    "members": sorted(self._members)})
            except OSError:
                pass

    @property
    def files(self) -> dict[str, bytes]:
        if self._files is None:
            self.namespace, self._files = read_members(self.path)
        return self._files

    def bundle_file(self, relative: str) -> bytes:
        name = f"bundle/{relative}"
        if name not in self.files:
            raise PipelineError(f"archive {self.path} has no {relative}")
        return self.files[name]

    def verify(self) -> None:
        """The index (read_members), then: every file the bundle's manifest names is there with its SHA-256 and
        nothing else is in the bundle, its tables have valid names, its configuration is a valid namespace."""
        where = f"archive {self.path}"
        listed = parse_manifest(self.bundle_file("evidence/MANIFEST.sha256").decode(errors="replace"),
                                f"{where}: evidence/MANIFEST.sha256")
        self._members = set(self.files)
        present = {n.removeprefix("bundle/") for n in self.files if n.startswith("bundle/")}
        present.discard("evidence/MANIFEST.sha256")
        if present != set(listed):
            raise PipelineError(f"{where}: manifest and bundle differ: {sorted(present ^ set(listed))[:5]}")
        for name, digest in listed.items():
            if hashlib.sha256(self.bundle_file(name)).hexdigest() != digest:
                raise PipelineError(f"{where}: {name} does not match its manifest checksum")
        self._tables = sorted(names.check(n.removeprefix("evidence/").removesuffix(".parquet"), f"{where}: table")
                              for n in listed if n.startswith("evidence/") and n.endswith(".parquet")
                              and n.count("/") == 1)
        try:
            resolved = json.loads(self.bundle_file("config.resolved.json"))
        except ValueError as e:
            raise PipelineError(f"{where}: config.resolved.json is not JSON ({e})") from None
        self._resolved = validate_resolved(resolved, f"{where}: config.resolved.json")
        if resolved["name"] != self.namespace:
            raise PipelineError(f"{where}: config.resolved.json is namespace {resolved['name']!r}, the archive "
                                f"{self.namespace!r}")

    def tables(self) -> list[str]:
        return list(self._tables)

    def has(self, relative: str) -> bool:
        return f"bundle/{relative}" in self._members  # known without reading the archive again

    def resolved(self) -> dict:
        return json.loads(json.dumps(self._resolved))  # a copy: callers set the targets on theirs


def _replayed(archive: Archive, declared, pinned: bool):
    """The namespace an archive recorded, read back, with the targets of its namespace file where there is one
    (the reading of the evidence, not the measurement)."""
    resolved = archive.resolved()
    if declared is not None:
        resolved = read_when_archived(resolved, declared)
    return Namespace.from_dict(resolved, replay=str(archive.path), replay_sha256=archive.sha256, replay_pinned=pinned,
                               archived=declared.archived if declared else None,
                               archived_sha256=declared.archived_sha256 if declared else None)


def _pinned(ns) -> Archive:
    archive = Archive(ns.archived)
    if archive.sha256 != ns.archived_sha256:
        raise PipelineError(f"{ns.file}: key 'archived': {ns.archived} has SHA-256 {archive.sha256}, not the "
                            f"{ns.archived_sha256} this file pins: the archive was changed or replaced, and nothing "
                            "in it is read")
    if archive.namespace != ns.name:
        raise PipelineError(f"{ns.file}: key 'archived': {ns.archived} records namespace {archive.namespace!r}, "
                            f"not {ns.name!r}")
    stated = reading(ns.stated or {})
    recorded = archive.resolved()
    shapes = recorded.get("shapes", {})
    recorded.setdefault("ops", [op for op in OPS if op in shapes])  # what it measured, in the registry's order
    found = differs(stated, {k: v for k, v in recorded.items() if k in stated})
    if found:
        key, value, recorded = found
        raise PipelineError(f"{ns.file}: key '{key}' is {value!r}, but {ns.archived} measured {recorded!r}: an "
                            "archived namespace's measurement is fixed by its archive (its prose, `targets` "
                            "and `note` are read from this file); to measure anew, "
                            f"`fieldnote new <name> --from {ns.name}`")
    return archive


def resolve_archived(namespaces: dict, replay: str | None) -> tuple[dict[str, Archive], dict[str, str]]:
    """Swap every `archived:` namespace, and the one `--config replay=PATH` names, for the namespace its archive
    recorded (in `namespaces`, in place). Returns the archives by namespace, and the archived namespaces whose
    archive cannot be used, with why: they block only themselves."""
    archives, broken = {}, {}
    for ns in [n for n in namespaces.values() if n.archived]:
        try:
            archives[ns.name] = _pinned(ns)
        except PipelineError as e:
            broken[ns.name] = str(e)
            del namespaces[ns.name]
            continue
        namespaces[ns.name] = _replayed(archives[ns.name], ns, pinned=True)
    if replay:
        archive = Archive(replay)
        declared = namespaces.get(archive.namespace)
        owner = declared.archived if declared else None
        if archive.namespace in broken or (owner and declared.replay_sha256 != archive.sha256):
            raise PipelineError(f"replay: {replay} records namespace {archive.namespace}, whose namespace file pins "
                                f"another archive ({owner or 'one that cannot be used'}): two archives cannot claim "
                                "one namespace")
        if not owner:
            archives[archive.namespace] = archive
            namespaces[archive.namespace] = _replayed(archive, declared, pinned=False)
    return archives, broken


def provenance(ns) -> dict | None:
    """What a bundle and its note say of an archive nobody pinned; None for a pinned or a measured namespace."""
    if not ns.replay or ns.replay_pinned:
        return None
    return {"archive": Path(ns.replay).name, "sha256": ns.replay_sha256, "verified": False,
            "why": "no namespace file pins this SHA-256 (key 'archived'), so nothing vouches for the evidence"}
