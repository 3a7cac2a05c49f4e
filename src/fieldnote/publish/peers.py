"""The peers at their best known: a verdict holds ours against the fastest time each peer is known to reach at that
op, shape and L2 state on this GPU model, in this run or in a pinned archive (issue 41: torch.compile's autotune
differs from one run to the next, and a ratio against its worse choice flatters ours).

A measured namespace records, before its note, the peers' kernel times the pinned archives hold on its GPU model
at its seed shapes and sweep points (`known`, the known_peers table); archives pinned later never change it, so a
replay judges as the run did. Its verdicts (the standing, the targets, the sweep's worst points) take each peer's
time as the lower of this run's and the known one (`at_best`), and the note says which ratios that moves
(note.peer_moves).
"""
from __future__ import annotations

import io
import json

import pandas as pd

from ..registry.vocabulary import HAND_WRITTEN

COLUMNS = ["op", "shape", "cache", "implementation", "kernel_us", "kernel_low_us", "kernel_high_us", "source",
           "source_sha256", "gpu_name"]
# a table's time columns by L2 state: (time, low, high)
WARM = ("kernel_us", "kernel_low_us", "kernel_high_us")
COLD = ("kernel_cold_us", "kernel_cold_low_us", "kernel_cold_high_us")
SOURCE = {"warm": "peer_source", "cold": "peer_cold_source"}  # where at_best took a peer's time from


def from_archive(archive) -> tuple[str, list[pd.DataFrame]]:
    """The GPU an archive was measured on, and its summary and sweep as recorded."""
    gpu = json.loads(archive.bundle_file("evidence/environment.json")).get("gpu", "")
    frames = [pd.read_parquet(io.BytesIO(archive.bundle_file(f"evidence/{t}.parquet")))
              for t in ("summary", "sweep") if t in archive.tables()]
    return gpu, frames


def rows_of(frame: pd.DataFrame) -> pd.DataFrame:
    """A summary's or a sweep's peer times as (op, shape, cache, implementation, time, low, high) rows, warm and,
    where captured, cold. A time recorded without its interval (a sweep point of fewer than
    sweep.INTERVAL_CAPTURES captures) is left out: a verdict is drawn from the interval."""
    peers = frame[~frame["implementation"].isin(HAND_WRITTEN)]
    parts = []
    for cache, columns in (("warm", WARM), ("cold", COLD)):
        if columns[0] not in peers:
            continue
        part = peers.reindex(columns=["op", "shape", "implementation", *columns]).dropna(subset=list(columns))
        part = part.rename(columns=dict(zip(columns, WARM, strict=True)))
        parts.append(part.assign(cache=cache))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS[:7])


def known(gpu: str, wanted: set[tuple[str, str]], archives: dict) -> pd.DataFrame:
    """Per op, shape, L2 state and peer, the fastest kernel time the pinned `archives` ({namespace: Archive})
    measured on `gpu` at the (op, shape) pairs `wanted`, with the namespace and archive it came from."""
    found = []
    for name in sorted(archives):
        archive = archives[name]
        their_gpu, frames = from_archive(archive)
        if their_gpu != gpu:
            continue
        for frame in frames:
            rows = rows_of(frame)
            rows = rows[[pair in wanted for pair in zip(rows["op"], rows["shape"], strict=True)]]
            found.append(rows.assign(source=name, source_sha256=archive.sha256, gpu_name=gpu))
    table = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=COLUMNS)
    table = table.sort_values(["op", "shape", "cache", "implementation", "kernel_us", "source"], kind="stable")
    return table.drop_duplicates(["op", "shape", "cache", "implementation"]).reindex(columns=COLUMNS).reset_index(
        drop=True)


def at_best(frame: pd.DataFrame, known_peers: pd.DataFrame | None) -> pd.DataFrame:
    """A summary or sweep whose peer rows carry the lower of this run's time and the best known one, with its
    interval and, in `peer_source` (warm) and `peer_cold_source`, the namespace it came from (empty: this run)."""
    frame = frame.copy()
    for cache, columns in (("warm", WARM), ("cold", COLD)):
        if columns[0] not in frame:
            continue
        named = SOURCE[cache]
        frame[named] = ""
        if known_peers is None or known_peers.empty:
            continue
        best = known_peers[known_peers["cache"] == cache].set_index(["op", "shape", "implementation"])
        for i, row in frame[~frame["implementation"].isin(HAND_WRITTEN)].iterrows():
            key = (row["op"], row["shape"], row["implementation"])
            if key not in best.index or not best.loc[key, "kernel_us"] < row[columns[0]]:
                continue
            other = best.loc[key]
            for mine, theirs in zip(columns, WARM, strict=True):
                if mine in frame:
                    frame.at[i, mine] = other[theirs]
            frame.at[i, named] = other["source"]
    return frame

