"""The peers at their best known (peers.py), on the shipped archives: h200-002 judged against what the archives
measured before it on the same GPU model."""
import pandas as pd
import pytest
from conftest import ROOT

from fieldnote.evidence.archive import Archive
from fieldnote.publish import note, peers, verdicts

EARLIER = ["h200-001", "mage-001", "mage-002", "mage-003", "mage-006"]  # measured before h200-002, on an H200


@pytest.fixture(scope="module")
def h200_002():
    gpu, (summary, sweep_table) = peers.from_archive(Archive(ROOT / "archives/h200-002.tar.gz"))
    wanted = set(zip(summary["op"], summary["shape"], strict=True)) | set(
        zip(sweep_table["op"], sweep_table["shape"], strict=True))
    known = peers.known(gpu, wanted, {n: Archive(ROOT / f"archives/{n}.tar.gz") for n in EARLIER})
    return {"summary": summary, "sweep": sweep_table, "known_peers": known}


def test_the_known_peers_are_each_peers_fastest_on_the_same_gpu_with_where_they_came_from(h200_002):
    known = h200_002["known_peers"]
    assert set(known["gpu_name"]) == {"NVIDIA H200"} and not known["implementation"].isin(["cuda", "ptx"]).any()
    assert not known.duplicated(["op", "shape", "cache", "implementation"]).any()
    gelu = known.set_index(["op", "shape", "cache", "implementation"]).loc[("gelu", "4096x768", "warm", "compiled")]
    assert gelu["source"] == "h200-001" and gelu["kernel_us"] < 5.5 and gelu["kernel_low_us"] <= gelu["kernel_us"]


def test_another_gpu_models_archive_gives_no_known_peer(h200_002):
    archive = Archive(ROOT / "archives/h200-001.tar.gz")
    assert peers.known("NVIDIA H100 80GB HBM3", {("gelu", "4096x768")}, {"h200-001": archive}).empty


def test_a_peer_time_recorded_without_its_interval_is_no_best_known():
    """h200-001's sweep kept a point of fewer captures than an interval needs: found on an H200 run of h200-001's
    shapes (the device run that showed it stopped at known_peers' plausibility check)."""
    archive = Archive(ROOT / "archives/h200-001.tar.gz")
    _, frames = peers.from_archive(archive)
    recorded = peers.rows_of(pd.concat(frames))
    wanted = set(zip(recorded["op"], recorded["shape"], strict=True))
    raw = pd.concat(frames)
    assert raw.loc[~raw["implementation"].isin(["cuda", "ptx"]), "kernel_low_us"].isna().any()  # the case is real
    known = peers.known("NVIDIA H200", wanted, {"h200-001": archive})
    assert not known.empty and known[["kernel_us", "kernel_low_us", "kernel_high_us"]].notna().all().all()


def test_a_verdict_takes_the_faster_known_peer_and_the_note_says_which_ratio_moved(h200_002):
    summary, _ = verdicts.judging(h200_002)
    gelu = summary.set_index(["op", "implementation"]).loc[("gelu", "compiled")]
    assert gelu["peer_source"] == "h200-001" and gelu["kernel_us"] < 5.5
    torch = summary.set_index(["op", "implementation"]).loc[("gelu", "torch")]
    this_run = h200_002["summary"].set_index(["op", "implementation"]).loc[("gelu", "torch")]
    assert torch["kernel_us"] <= this_run["kernel_us"]  # never slower than this run's
    moves = note.peer_moves(h200_002).set_index(["Operation", "Shape", "Verdict at", "L2"])
    assert not moves.index.duplicated().any()
    row = moves.loc[("Bias + GELU", "4096x768", "seed shape", "warm")]
    assert row["Ours / best peer this run"] == "0.65" and float(row["Ours / best known"]) > 1
    assert row["Best known"] == "torch.compile (in h200-001)"


def test_without_known_peers_the_verdicts_are_this_runs(h200_002):
    tables = {k: v for k, v in h200_002.items() if k != "known_peers"}
    summary, sweep_table = verdicts.judging(tables)
    pd.testing.assert_frame_equal(summary, h200_002["summary"])
    empty = {**h200_002, "known_peers": h200_002["known_peers"].iloc[:0]}
    assert note.peer_moves(empty).empty
    assert (verdicts.judging(empty)[0]["peer_source"] == "").all()
