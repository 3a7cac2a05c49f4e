"""Hostile data inside an archive nobody pinned (`--config replay=PATH`): tar headers, Parquet tables, table and
column names, values and the verification cache. Each is refused with one PipelineError naming the archive, file,
table, column or value, from what declares the size before anything of that size is read or decoded. Most cases
call the code directly (read_members, Archive, read_table, replay_unpack's functions): they run in seconds."""
import gzip
import io
import json
import re
import runpy
import subprocess
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import test_hostile
from conftest import ROOT, shipped_table
from test_hostile import edit_table, forge, refused

from fieldnote.core.errors import PipelineError
from fieldnote.evidence import archive as module
from fieldnote.evidence.archive import Archive, read_members
from fieldnote.evidence.plausible import check_plausible
from fieldnote.evidence.tables import OPTIONAL, TABLES

MAGE = ROOT / "archives" / "mage-006.tar.gz"
checkout = test_hostile.checkout  # the fixture: a throw-away copy of the checkout, with a folder beside it


@pytest.fixture
def key_home(tmp_path, monkeypatch) -> Path:
    """The per-user cache key's home for this test only (the key lies under $XDG_CACHE_HOME/fieldnote)."""
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture(scope="module")
def replay_unpack() -> dict:
    """workflow/scripts/replay_unpack.py's functions (it runs its main only under Snakemake)."""
    return runpy.run_path(str(ROOT / "workflow" / "scripts" / "replay_unpack.py"))


def in_child(code: str, timeout: int = 120) -> dict:
    """`code` in a fresh Python (the package imported first): the PipelineError it raised, its seconds and how
    much its peak memory grew, in MiB."""
    script = f"""
import json, resource, sys, time
from pathlib import Path
from types import SimpleNamespace
import pandas, pyarrow.parquet
from fieldnote.evidence.archive import read_members
from fieldnote.core.errors import PipelineError
import runpy
unpack = runpy.run_path({str(ROOT / "workflow" / "scripts" / "replay_unpack.py")!r})
base, start, error = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.monotonic(), None
try:
{"".join("    " + line + chr(10) for line in code.strip().splitlines())}
except PipelineError as e:
    error = str(e)
print(json.dumps({{"error": error, "seconds": time.monotonic() - start,
                  "grew_mib": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024}}))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-3000:]
    print(run.stdout.splitlines()[-1])
    return json.loads(run.stdout.splitlines()[-1])


def parquet(frame_or_table, **options) -> bytes:
    buffer = io.BytesIO()
    table = frame_or_table if isinstance(frame_or_table, pa.Table) else pa.Table.from_pandas(frame_or_table,
                                                                                             preserve_index=False)
    pq.write_table(table, buffer, compression="zstd", **options)
    return buffer.getvalue()


# 1. Tar headers that tarfile reads whole before the member they describe


def _index_entry(gz, namespace: str = "bomb") -> None:
    index = json.dumps({"format": 1, "namespace": namespace, "files": {}}).encode()
    info = tarfile.TarInfo(f"{namespace}/INDEX.json")
    info.size = len(index)
    gz.write(info.tobuf(tarfile.USTAR_FORMAT) + index + bytes(-len(index) % 512))


def _extended(kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo("././@LongLink" if kind in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
                           else "bomb/PaxHeader")
    info.type, info.size = kind, size
    return info.tobuf(tarfile.USTAR_FORMAT)


@pytest.mark.slow
def test_a_one_gib_gnu_long_name_header_is_refused_from_its_header(tmp_path):
    """1 GiB of zeros as a GNU long name (4.7 MB of gzip): tarfile read it whole, and more (9 s, 2.9 GB of
    memory), before the member it names. Refused from the header, the memory not moving."""
    archive, size = tmp_path / "longname.tar.gz", 1 << 30
    with gzip.open(archive, "wb", compresslevel=1) as gz:
        _index_entry(gz)
        gz.write(_extended(tarfile.GNUTYPE_LONGNAME, size))
        chunk = bytes(1 << 20)
        for _ in range(size // len(chunk)):
            gz.write(chunk)
        gz.write(bytes(1024))
    got = in_child(f"read_members(Path({str(archive)!r}))")
    assert got["error"] == (f"archive {archive}: a GNU long-name header at byte 1,024 of its tar declares "
                            f"{size:,} bytes, above the limit of 65,536: refused before it is read")
    assert got["seconds"] < 5 and got["grew_mib"] < 64, got


@pytest.mark.parametrize("kind, says", [(tarfile.GNUTYPE_LONGNAME, "GNU long-name"),
                                        (tarfile.GNUTYPE_LONGLINK, "GNU long-link"), (tarfile.XHDTYPE, "pax"),
                                        (tarfile.XGLTYPE, "pax global"), (tarfile.SOLARIS_XHDTYPE, "Solaris pax")])
@pytest.mark.parametrize("first", [True, False])
def test_every_extended_header_above_the_limit_is_refused(tmp_path, kind, says, first):
    """From the header alone, whether it comes first (where tarfile raises its own errors) or later (where it
    takes a bad header for the end of the archive)."""
    archive = tmp_path / "x.tar.gz"
    with gzip.open(archive, "wb") as gz:
        if not first:
            _index_entry(gz)
        gz.write(_extended(kind, module.MAX_HEADER_BYTES + 1) + bytes(1024))
    with pytest.raises(PipelineError, match=rf"^archive {re.escape(str(archive))}: a {says} header at byte "
                                            rf"{0 if first else 1024:,} of its tar declares 65,537 bytes"):
        read_members(archive)


def test_a_chain_of_extended_headers_is_refused(tmp_path):
    """Each extended header reads the next in a nested call: a chain of a few thousand would be a RecursionError."""
    archive = tmp_path / "chain.tar.gz"
    name = b"bomb/" + b"a" * 100
    with gzip.open(archive, "wb") as gz:
        _index_entry(gz)
        for _ in range(3000):
            gz.write(_extended(tarfile.GNUTYPE_LONGNAME, len(name)) + name + bytes(-len(name) % 512))
        gz.write(bytes(1024))
    with pytest.raises(PipelineError, match="more than 4 extended headers in a row"):
        read_members(archive)


# 2. Parquet tables whose metadata says more than any of ours


def test_a_fifty_million_row_table_is_refused_from_its_metadata(tmp_path, replay_unpack):
    """50 million rows of ones in five columns are a few hundred KB of Parquet: before this limit, 14 s and 4.5 GB
    of memory to read it."""
    ones = pa.array(np.ones(50_000_000))
    table = pa.table({name: ones for name in ("round", "position", "iteration", "span_us", "sm_clock_mhz")})
    path = tmp_path / "spans.parquet"
    path.write_bytes(parquet(table))
    assert path.stat().st_size < 2 << 20
    got = in_child(f"unpack['readable'](SimpleNamespace(path='forged.tar.gz'), 'evidence/spans.parquet', "
                   f"Path({str(path)!r}).read_bytes())")
    assert got["error"] == (f"archive forged.tar.gz: evidence/spans.parquet: 50,000,000 rows, above the limit of "
                            f"{module.MAX_TABLE_ROWS:,} for one table")
    assert got["seconds"] < 5 and got["grew_mib"] < 64, got


@pytest.mark.parametrize("store_schema", [False, True])  # read as text, or as a category a reader's str() decodes
def test_a_long_text_repeated_over_a_million_rows_is_refused_before_it_is_decoded(tmp_path, store_schema):
    """One 2 KB kernel name in the dictionary, a million rows pointing at it: 0.2 MB of Parquet, 2 GB decoded
    (3.4 GB of memory before this limit)."""
    names = pa.DictionaryArray.from_arrays(pa.array(np.zeros(1_000_000, dtype=np.int32)), pa.array(["k" * 2000]))
    path = tmp_path / "kernels.parquet"
    path.write_bytes(parquet(pa.table({"kernel": names}), store_schema=store_schema))
    assert path.stat().st_size < 1 << 20
    got = in_child(f"unpack['readable'](SimpleNamespace(path='f.tar.gz'), 'evidence/kernels.parquet', "
                   f"Path({str(path)!r}).read_bytes())")
    assert got["error"] == ("archive f.tar.gz: evidence/kernels.parquet: decodes to 2,008,000,000 bytes (its "
                            "text repeated over its rows), above the limit of 1,073,741,824 for one table")
    assert got["seconds"] < 5 and got["grew_mib"] < 64, got


def test_a_table_above_the_uncompressed_limit_is_refused(replay_unpack):
    """Random bytes do not compress: the footer's uncompressed size is the table's."""
    blob = np.random.default_rng(0).bytes(module.MAX_TABLE_BYTES + (1 << 20))
    data = parquet(pa.table({"ptxas_log": [blob]}))
    with pytest.raises(PipelineError, match=rf"evidence/resources.parquet: [\d,]+ bytes uncompressed, above the "
                                            rf"limit of {module.MAX_TABLE_BYTES:,}"):
        replay_unpack["readable"](SimpleNamespace(path="f.tar.gz"), "evidence/resources.parquet", data)


def test_a_column_of_lists_is_refused(replay_unpack):
    data = parquet(pd.DataFrame({"op": ["gelu"], "round": [[1, 2, 3]]}))
    with pytest.raises(PipelineError, match=r"evidence/spans.parquet: column 'round' is list<element: int64>, not "
                                            "a column of single values"):
        replay_unpack["readable"](SimpleNamespace(path="f.tar.gz"), "evidence/spans.parquet", data)


# 3. Tables and columns the registry knows


def _added(name: str, data: bytes):
    def edit(members):
        members[f"bundle/{name}"] = data
    return edit


@pytest.mark.parametrize("name, says", [
    ("evidence/bogus.parquet", "evidence/bogus.parquet: 'bogus' is not a table of the registry"),
    ("evidence/Spans.parquet", "bundle files evidence/Spans.parquet and evidence/spans.parquet differ only in case"),
    ("evidence/history/mage-001.bogus.parquet",
     "evidence/history/mage-001.bogus.parquet: 'bogus' is not a table of the registry"),
])
def test_a_table_the_registry_does_not_know_is_refused(tmp_path, key_home, name, says):
    forged = forge(MAGE, tmp_path / "forged.tar.gz", _added(name, parquet(shipped_table("mage-006", "spans"))),
                   namespace="mage-106")
    with pytest.raises(PipelineError, match=f"^archive {re.escape(str(forged))}: {re.escape(says)}"):
        Archive(forged, cache=tmp_path / "cache")


def _unpack(replay_unpack, frame: pd.DataFrame, name: str = "evidence/spans.parquet") -> pd.DataFrame:
    archive = SimpleNamespace(path="forged.tar.gz")
    read = replay_unpack["readable"](archive, name, parquet(frame))
    return replay_unpack["in_layout"](archive, name, read, {})


def test_a_spans_table_that_is_a_kernels_table_is_refused(replay_unpack):
    with pytest.raises(PipelineError, match=r"^archive forged.tar.gz: evidence/spans.parquet: column 'backend' is "
                                            "not a column of table spans"):
        _unpack(replay_unpack, shipped_table("mage-006", "kernels"))


def test_a_table_missing_a_column_its_readers_need_is_refused(replay_unpack):
    spans = shipped_table("mage-006", "spans").drop(columns="span_us")
    with pytest.raises(PipelineError, match=r"^archive forged.tar.gz: evidence/spans.parquet: column 'span_us' is "
                                            "missing: table spans must have it"):
        _unpack(replay_unpack, spans)


def test_a_history_table_is_held_to_its_own_table(replay_unpack):
    summary = shipped_table("mage-006", "summary").drop(columns="kernel_us")
    with pytest.raises(PipelineError, match="evidence/history/mage-001.summary.parquet: column 'kernel_us' is "
                                            "missing: table summary"):
        _unpack(replay_unpack, summary, "evidence/history/mage-001.summary.parquet")


def test_a_round_column_of_strings_is_refused_naming_table_row_and_column(replay_unpack):
    spans = shipped_table("mage-006", "spans")
    spans["round"] = spans["round"].astype(str)
    with pytest.raises(PipelineError, match=r"^archive forged.tar.gz: evidence/spans.parquet: row 0 \(op=\w+.*\): "
                                            r"round = '0' is text, not a number$"):
        _unpack(replay_unpack, spans)


def test_every_optional_column_is_a_registry_column():
    for table, columns in OPTIONAL.items():
        assert columns <= TABLES[table].column_names, table


def test_a_replayed_round_of_strings_is_one_line(checkout, tmp_path):
    """Through the workflow: refused in replay_unpack, one line, before any table is written."""
    forged = forge(checkout / "archives" / "mage-006.tar.gz", checkout / "forged.tar.gz",
                   edit_table("spans", lambda f: f.assign(round=f["round"].astype(str))), namespace="mage-106")
    run = refused(checkout, "--cores", "1", "results/mage-106", "--config", f"replay={forged}",
                  says="evidence/spans.parquet: row 0")
    assert "round = '0' is text, not a number" in run.stderr
    assert not (checkout / "work" / "mage-106" / "replay" / "spans.parquet").exists()


# 4. Durations a GPU could have measured


@pytest.mark.parametrize("value", [1e308, 5e-324, 1e-4, 2e8])
def test_a_duration_outside_a_nanosecond_to_100_seconds_is_refused(value):
    frame = pd.DataFrame({"op": ["gelu", "gelu"], "implementation": ["cuda", "cuda"], "span_us": [5.0, value]})
    with pytest.raises(PipelineError, match=rf"^spans: row 1 \(op=gelu, implementation=cuda\): span_us = "
                                            rf"{re.escape(str(value))} is not a finite positive number of µs, "
                                            r"0.001 \(1 ns\) to 1e\+08 \(100 s\)$"):
        check_plausible("spans", frame)


def test_the_shortest_and_longest_shipped_durations_pass():
    check_plausible("kernels", pd.DataFrame({"op": ["gelu"] * 2, "duration_us": [0.768, 21150.27]}))


# 5. The verification cache is signed


def _record(cache: Path) -> Path:
    (record,) = cache.glob("*.v1.json")
    return record


def test_an_edited_cache_record_is_verified_again(tmp_path, key_home):
    cache = tmp_path / "cache"
    first = Archive(MAGE, cache=cache)
    seed = first.resolved()["seed"]
    record = _record(cache)
    text = record.read_text()
    edited = re.sub(rf'(seed\\?"\s*:\s*){seed}\b', r"\g<1>4242", text)
    assert edited != text
    record.write_text(edited)
    assert Archive(MAGE, cache=cache).resolved()["seed"] == seed
    assert Archive(MAGE, cache=cache).resolved()["seed"] == seed and f"{seed}" in _record(cache).read_text()


def test_a_record_another_key_signed_or_older_code_wrote_is_ignored(tmp_path, key_home, monkeypatch):
    cache = tmp_path / "cache"
    Archive(MAGE, cache=cache)
    calls = []
    verify = Archive.verify
    monkeypatch.setattr(Archive, "verify", lambda self: calls.append(1) or verify(self))
    Archive(MAGE, cache=cache)
    assert calls == []  # signed and current: trusted
    monkeypatch.setattr(module, "_code", lambda: "0" * 64)
    Archive(MAGE, cache=cache)
    assert calls == [1]  # the code changed: verified again
    (key_home / "fieldnote" / "archive-cache.key").write_bytes(bytes(32))
    Archive(MAGE, cache=cache)
    assert calls == [1, 1]  # another key


def test_the_key_is_private_and_without_one_no_cache_is_used(tmp_path, key_home, monkeypatch):
    Archive(MAGE, cache=tmp_path / "cache")
    key = key_home / "fieldnote" / "archive-cache.key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    monkeypatch.setenv("HOME", str(tmp_path / "file"))
    Archive(MAGE, cache=tmp_path / "nocache")
    assert not (tmp_path / "nocache").exists()
