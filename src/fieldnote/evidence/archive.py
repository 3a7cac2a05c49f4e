"""Archive and replay: a namespace's bundle with the sources that produced it, in one reproducible tar.gz,
and the way back from it to results/<ns>/ on a machine without a GPU.

Layout inside the archive: `<ns>/INDEX.json` first (every other member's path, size and SHA-256), then
`<ns>/bundle/...` (the bundle as published, MANIFEST included) and `<ns>/source/...` (Snakefile, config,
workflow, kernels, the package, pins). Entries are sorted with zeroed owners and times, and gzip carries no
timestamp, so the same bundle and sources give the same bytes.

Reading one trusts nothing in it: the gzip stream is read to its end (its CRC and length checked), each
member's size is checked against the index and the limits below before it is read, each member's hash against
the index, the bundle against its manifest, and the recorded configuration against the namespace schema. A
verified archive is remembered by its SHA-256 under work/, so a Snakemake start hashes it and reads no further;
that record is signed under a per-user key kept outside the checkout, so an edited record is verified anew.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import hmac
import io
import json
import os
import secrets
import tarfile
import tempfile
import zlib
from pathlib import Path

from ..core.errors import PipelineError
from ..core.io import write_bytes, write_json
from ..core.paths import ROOT, SCHEMAS
from ..registry import names
from ..registry.config import Namespace, contradicts, read_when_archived, reading, validate_resolved
from ..registry.ops import OPS
from .bundle import bundle_files
from .tables import TABLES
from .validate import parse_manifest

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
# A GNU long-name or long-link header, or a pax header, is read whole by tarfile before the member it describes:
# its declared size is checked first. Our own archives hold none (their names are at most 87 characters); a
# longer name is a pax header of a few hundred bytes. Nor do they chain headers or hold sparse files.
MAX_HEADER_BYTES = 64 << 10
MAX_HEADERS_IN_A_ROW = 4
EXTENDED = {tarfile.GNUTYPE_LONGNAME: "GNU long-name", tarfile.GNUTYPE_LONGLINK: "GNU long-link",
            tarfile.XHDTYPE: "pax", tarfile.XGLTYPE: "pax global", tarfile.SOLARIS_XHDTYPE: "Solaris pax"}
# A table's Parquet metadata is checked before the table is decoded: a few hundred KB of Parquet can say 50
# million rows of zeros. The largest shipped table (h200-002's kernels, measured over archives/*.tar.gz with
# read_members) holds 36,000 rows and 27 columns, 807,213 bytes uncompressed, 15.9 MB decoded (8 bytes a cell
# and 7.9 MB of text), in one row group with a footer of at most 20,923 bytes; these leave about two orders of
# magnitude. Decoded counts the cells and the text as pandas receives it: one long dictionary value that a
# million rows repeat is a few bytes in the file.
MAX_TABLE_ROWS = 4_000_000
MAX_TABLE_BYTES = 96 << 20
MAX_DECODED_BYTES = 1 << 30
MAX_TABLE_FOOTER = 2 << 20
MAX_TABLE_COLUMNS = 256
MAX_ROW_GROUPS = 1024
CACHE = Path("work/.cache/archives")


TOOL_CACHES = {"__pycache__", ".ruff_cache", ".pytest_cache"}  # what tools leave beside sources: never a source


def source_files(root: Path) -> list[Path]:
    files = []
    for name in SOURCES:
        path = root / name
        files += [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                     and not TOOL_CACHES.intersection(p.parts))
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


class _Refused(Exception):
    """A tar header refused while tarfile reads it (tarfile swallows its own HeaderError after the first member)."""


class _Header(tarfile.TarInfo):
    """A tar header that tarfile processes only once its type and declared size are ones our archives could
    hold: an extended header (long name, pax) small and not one of a chain, no sparse file."""

    def _proc_member(self, tar):
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise _Refused(f"member {self.name!r} is a sparse file, not a regular one")
        if self.type not in EXTENDED:
            return super()._proc_member(tar)
        if self.size > MAX_HEADER_BYTES:
            raise _Refused(f"a {EXTENDED[self.type]} header at byte {self.offset:,} of its tar declares "
                           f"{self.size:,} bytes, above the limit of {MAX_HEADER_BYTES:,}: refused before it is read")
        depth = getattr(tar, "_extended_depth", 0)  # each extended header reads the next one in a nested call
        if depth >= MAX_HEADERS_IN_A_ROW:
            raise _Refused(f"more than {MAX_HEADERS_IN_A_ROW} extended headers in a row at byte {self.offset:,} "
                           "of its tar")
        tar._extended_depth = depth + 1
        try:
            return super()._proc_member(tar)
        finally:
            tar._extended_depth = depth

    def _sparse(self, *args):
        raise _Refused(f"a pax header at byte {self.offset:,} of its tar describes a sparse file")

    _proc_gnusparse_00 = _proc_gnusparse_01 = _proc_gnusparse_10 = _sparse


def read_members(path: Path) -> tuple[str, dict[str, bytes]]:
    """(namespace, {path under <ns>/: bytes}) of an archive, every member checked against the index."""
    where = f"archive {path}"
    files: dict[str, bytes] = {}
    index = None
    try:
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            with tarfile.open(fileobj=gz, mode="r|", tarinfo=_Header) as tar:
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
    except _Refused as e:
        raise PipelineError(f"{where}: {e}") from None
    except (OSError, EOFError, tarfile.TarError, zlib.error) as e:
        raise PipelineError(f"{where} is not a readable archive ({e})") from None
    if index is None:
        raise PipelineError(f"{where} is not a readable archive (it holds nothing)")
    missing = sorted(set(index) - set(files))
    if missing:
        raise PipelineError(f"{where}: {len(missing)} members its {INDEX} lists are missing: {missing[:3]}")
    return namespace, files


def read_table(data: bytes, where: str):
    """One of an archive's Parquet tables in pandas, once what it would decode to is within the limits above:
    its footer's length (the file's last 8 bytes), then from the footer its rows, columns, row groups and
    uncompressed bytes, its columns flat (no list, map or struct), then its text decoded as dictionaries."""
    import pandas as pd
    import pyarrow.parquet as pq

    if len(data) < 12 or data[-4:] != b"PAR1":
        raise PipelineError(f"{where} is not a readable table (no Parquet footer)")
    footer = int.from_bytes(data[-8:-4], "little")
    if footer > MAX_TABLE_FOOTER:
        raise PipelineError(f"{where}: its Parquet footer is {footer:,} bytes, above the limit of "
                            f"{MAX_TABLE_FOOTER:,}")
    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        _within(parquet.metadata, where)
        _flat(parquet.schema_arrow, where)
        _decoded(data, parquet, where)
        return pd.read_parquet(io.BytesIO(data))
    except PipelineError:
        raise
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise PipelineError(f"{where} is not a readable table ({e})") from None


def _within(meta, where: str) -> None:
    """Rows, columns, row groups and uncompressed bytes as the footer declares them, before anything is decoded."""
    if meta.num_columns > MAX_TABLE_COLUMNS or meta.num_row_groups > MAX_ROW_GROUPS:
        raise PipelineError(f"{where}: {meta.num_columns:,} columns in {meta.num_row_groups:,} row groups, above "
                            f"the limits of {MAX_TABLE_COLUMNS:,} columns and {MAX_ROW_GROUPS:,} row groups")
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    rows = max(meta.num_rows, sum(g.num_rows for g in groups))
    if rows > MAX_TABLE_ROWS:
        raise PipelineError(f"{where}: {rows:,} rows, above the limit of {MAX_TABLE_ROWS:,} for one table")
    uncompressed = max(sum(g.total_byte_size for g in groups),
                       sum(g.column(j).total_uncompressed_size for g in groups for j in range(g.num_columns)))
    if uncompressed > MAX_TABLE_BYTES:
        raise PipelineError(f"{where}: {uncompressed:,} bytes uncompressed, above the limit of "
                            f"{MAX_TABLE_BYTES:,} for one table")
    if 8 * rows * meta.num_columns > MAX_DECODED_BYTES:
        raise PipelineError(f"{where}: {rows:,} rows of {meta.num_columns} columns decode to "
                            f"{8 * rows * meta.num_columns:,} bytes, above the limit of {MAX_DECODED_BYTES:,}")


def _flat(schema, where: str) -> None:
    """Evidence is flat: a column of lists or structs is no column of ours, and its nesting is unbounded."""
    for field in schema:
        if getattr(field.type, "num_fields", 0):
            raise PipelineError(f"{where}: column {field.name!r} is {field.type}, not a column of single values")


def _decoded(data: bytes, parquet, where: str) -> None:
    """The text columns read as dictionaries (what the file holds) and their decoded length summed from them,
    so a long value repeated over many rows is refused before pandas receives it repeated."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def is_text(kind) -> bool:
        kind = kind.value_type if pa.types.is_dictionary(kind) else kind
        return any(test(kind) for test in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                                           pa.types.is_large_binary))

    text = [f.name for f in parquet.schema_arrow if is_text(f.type)]
    meta = parquet.metadata
    size = 8 * meta.num_rows * meta.num_columns
    if text:
        for column in pq.ParquetFile(io.BytesIO(data), read_dictionary=text).read(columns=text).columns:
            for chunk in column.chunks:
                lengths = pc.binary_length(chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk)
                if pa.types.is_dictionary(chunk.type):
                    lengths = pc.take(lengths, chunk.indices)
                size += pc.sum(lengths).as_py() or 0
    if size > MAX_DECODED_BYTES:
        raise PipelineError(f"{where}: decodes to {size:,} bytes (its text repeated over its rows), above the "
                            f"limit of {MAX_DECODED_BYTES:,} for one table")


class Archive:
    """A packed namespace, read without unpacking to disk. Opening one verifies it completely, unless an archive
    with the same SHA-256 was verified before (work/.cache/archives)."""

    def __init__(self, path: str | Path, cache: Path = CACHE):
        self.path = Path(path)
        self.sha256 = sha256_of(self.path)
        self._files: dict[str, bytes] | None = None
        record, key = cache / f"{self.sha256}.v{FORMAT}.json", _cache_key()
        known = _remembered(record, key, self.sha256) if key else None
        if known:
            self.namespace, self._tables, self._resolved = known["namespace"], known["tables"], known["resolved"]
            self._members = set(known["members"])
        else:
            self.verify()
            if key:
                _remember(record, key, self.sha256, {"namespace": self.namespace, "tables": self._tables,
                                                     "resolved": self._resolved, "members": sorted(self._members)})

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
        self._tables = _tables(listed, where)
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


def _tables(listed, where: str) -> list[str]:
    """The bundle's tables (evidence/<table>.parquet; evidence/history/<ns>.<table>.parquet, another namespace's),
    each one the registry knows (tables.py), and no two of its files one name but for case (one file where
    macOS or Windows unpacks them)."""
    folded: dict[str, str] = {}
    for name in sorted(listed):
        other = folded.setdefault(name.casefold(), name)
        if other != name:
            raise PipelineError(f"{where}: bundle files {other} and {name} differ only in case")
    tables = []
    for name in sorted(listed):
        folder, _, file = name.rpartition("/")
        if folder not in ("evidence", "evidence/history") or not file.endswith(".parquet"):
            continue
        table = file.removesuffix(".parquet")
        if folder == "evidence/history":
            other, _, table = table.partition(".")
            names.check(other, f"{where}: {name}: the namespace it is from")
        names.check(table, f"{where}: table")
        if table not in TABLES:
            raise PipelineError(f"{where}: {name}: {table!r} is not a table of the registry "
                                f"(fieldnote.evidence.tables: {', '.join(TABLES)})")
        if folder == "evidence":
            tables.append(table)
    return tables


def _code() -> str:
    """What a cached verification depends on: the package (the reading of an archive, the manifest, names, the
    table and op registries the checks use) and the schemas its configuration is validated by. The package
    changing costs one verification per archive."""
    return _code_digest(Path(__file__).resolve().parents[1], SCHEMAS.resolve())


@functools.cache  # one per process: a Snakemake start opens ten archives
def _code_digest(package: Path, schemas: Path) -> str:
    digest = hashlib.sha256()
    files = [p for p in package.rglob("*.py") if "__pycache__" not in p.parts] + list(schemas.glob("*.yaml"))
    for path in sorted(files):
        data = path.read_bytes()
        digest.update(f"{path.name}\0{path.parent.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def key_path() -> Path:
    """The per-user secret that signs the verification cache: outside the checkout (so neither it nor an archive
    can carry a record the key signed), where $XDG_CACHE_HOME (or ~/.cache) says."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "fieldnote" / "archive-cache.key"


def _cache_key() -> bytes | None:
    """The key, created on first use (0600, 32 random bytes); None, so no cache is read or written, where it
    cannot be made or read, is not the user's own and private, or lies inside the checkout."""
    try:
        path = key_path()
        if path.resolve().is_relative_to(ROOT.resolve()):
            return None
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not path.exists():
            _create_key(path)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            private = st.st_uid == os.geteuid() and not st.st_mode & 0o077 and st.st_size == 32
            return f.read(33) if private else None
    except (OSError, RuntimeError):  # RuntimeError: no home directory
        return None


def _create_key(path: Path) -> None:
    """Written whole, then linked into place: two starts at once agree on one key, and none reads half of one."""
    fd, tmp = tempfile.mkstemp(prefix=".archive-cache.key.", dir=path.parent)  # mkstemp: 0600
    try:
        os.write(fd, secrets.token_bytes(32))
        os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)


def _signature(key: bytes, sha256: str, code: str, text: str) -> str:
    message = json.dumps({"archive": sha256, "code": code, "record": text}, sort_keys=True).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _remembered(path: Path, key: bytes, sha256: str) -> dict | None:
    """A cached verification, if this user's key signed it for this archive and this code; else None."""
    try:
        signed = json.loads(path.read_text())
        text, code = signed["record"], _code()
        if signed["code"] != code or not hmac.compare_digest(signed["hmac"], _signature(key, sha256, code, text)):
            return None
        return json.loads(text)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _remember(path: Path, key: bytes, sha256: str, record: dict) -> None:
    text, code = json.dumps(record, sort_keys=True), _code()
    try:  # the cache only saves time: a read-only work/ costs a full verification at every start
        write_json(path, {"code": code, "record": text, "hmac": _signature(key, sha256, code, text)})
    except OSError:
        pass


def _replayed(archive: Archive, declared, pinned: bool):
    """The namespace an archive recorded, read back (its targets too), with the prose and template of its namespace
    file where there is one (the reading of the evidence, not the measurement: config.READ_WHEN_ARCHIVED)."""
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
    recorded = reading(archive.resolved())  # its prose is not its measurement: the file may reword it
    shapes = recorded.get("shapes", {})
    recorded.setdefault("ops", [op for op in OPS if op in shapes])  # what it measured, in the registry's order
    found = contradicts(stated, recorded)
    if found:
        key, value, recorded = found
        stated = "not stated" if value is None else repr(value)
        raise PipelineError(f"{ns.file}: key '{key}' is {stated}, but {ns.archived} recorded {recorded!r}: an "
                            "archived namespace's measurement and targets are fixed by its archive (its prose, "
                            "`note` and `predictions` are read from this file); to measure anew, "
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
