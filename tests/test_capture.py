"""The capture parsers on real captures from the H200 (tests/fixtures), and the per-iteration validation."""
import json
from pathlib import Path

import pandas as pd
import pytest

from fieldnote.core.errors import PipelineError
from fieldnote.evidence.selection import measured
from fieldnote.evidence.summary import in_ranges, per_iteration, summarize
from fieldnote.measure.capture import nsys
from fieldnote.registry.config import backends as resolve

FIXTURES = Path(__file__).parent / "fixtures"


def test_nsys_sqlite_of_fifty_cublas_launches():
    kernels = nsys.parse_sqlite(FIXTURES / "h200-cublas-matmul-50-launches.nsys.sqlite")
    assert len(kernels) == 50 and kernels["kernel"].nunique() == 1
    assert kernels["range"].eq("matmul/python").all() and list(kernels["iteration"]) == list(range(50))
    assert kernels["duration_us"].between(20, 200).all()
    first = kernels.iloc[0]
    assert (first["grid"], first["block"], first["registers"]) == ("8,16,1", "128,1,1", 224)
    assert first["shared_bytes"] == first["static_shared_bytes"] + first["dynamic_shared_bytes"]
    summary = per_iteration(kernels[kernels["range"] == "matmul/python"], 50, "fixture")
    assert summary["launches_per_iteration"] == 1
    assert summary["kernel_us_per_iteration"] == pytest.approx(kernels["duration_us"].mean())


def test_a_kernel_whose_launch_was_not_traced_is_placed_by_its_own_start(tmp_path, monkeypatch):
    """Every kernel of a real session (three implementations, 900 ranges) lands in the same range and iteration
    when its launch call is dropped from the query: the workload synchronizes after each iteration."""
    traced = nsys.parse_sqlite(gelu_session("h200-mage-006-gelu-3x100.nsys.sqlite.gz", tmp_path))
    monkeypatch.setattr(nsys, "KERNELS", nsys.KERNELS.replace("r.start AS api_start", "NULL AS api_start"))
    placed = nsys.parse_sqlite(tmp_path / "h200-mage-006-gelu-3x100.nsys.sqlite")
    assert traced["range"].notna().sum() == 1200 and traced.equals(placed)


@pytest.mark.parametrize("launches", ["traced", "not traced"])
def test_a_library_s_own_range_inside_the_call_s_leaves_its_kernels_the_call_s(tmp_path, monkeypatch, launches):
    """A range of the library's own around each launch, inside the call's (cuEquivariance's Triton launches): the
    real session's kernels land in the same range and iteration as without it. The innermost range took them away
    from the call, and a peer's kernel time lost most of its kernels."""
    import sqlite3

    if launches == "not traced":
        monkeypatch.setattr(nsys, "KERNELS", nsys.KERNELS.replace("r.start AS api_start", "NULL AS api_start"))
    path = gelu_session("h200-mage-006-gelu-3x100.nsys.sqlite.gz", tmp_path)
    alone = nsys.parse_sqlite(path)
    with sqlite3.connect(path) as db:
        db.execute("""INSERT INTO NVTX_EVENTS (start, "end", eventType, text, globalTid)
                      SELECT start + 1, "end" - 1, eventType, 'library_kernel_wrapper', globalTid FROM NVTX_EVENTS
                      WHERE text LIKE 'gelu:%'""")
    wrapped = nsys.parse_sqlite(path)
    placed = ["range", "iteration"]
    assert alone["range"].notna().sum() == 1200 and wrapped[placed].equals(alone[placed])


def test_a_fractional_launch_count_is_one_clear_error():
    kernels = pd.DataFrame({"kernel": ["k"] * 150, "duration_us": [1.0] * 150})
    with pytest.raises(PipelineError, match="150 kernel launches over 100 iterations is not a whole number"):
        per_iteration(kernels, 100, "capture nsys/gelu/torch")


def test_summary_per_op_implementation_backend():
    rows = [{"op": "gelu", "subject": "torch", "backend": "nsys", "capture": 0, "iterations": 2,
             "range": "gelu:torch", "kernel": name, "duration_us": us}
            for name, us in [("add", 1.0), ("gelu", 3.0)] * 2]
    rows.append({**rows[0], "range": None, "kernel": "stray"})  # outside every range: not this op's work
    summary = summarize(pd.DataFrame(rows)).iloc[0]
    assert (summary["launches_per_iteration"], summary["kernel_us_per_iteration"]) == (2, 4.0)
    assert summary["kernel_names"] == "add | gelu"


def test_not_an_nsys_export_names_the_file(tmp_path):
    import sqlite3
    bad = tmp_path / "empty.sqlite"
    sqlite3.connect(bad).close()
    with pytest.raises(PipelineError, match="empty.sqlite: not an nsys SQLite export"):
        nsys.parse_sqlite(bad)


def test_auto_backend_is_nsys_only_where_found(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert resolve(["auto"]) == ["cupti"] and resolve(["nsys", "cupti"]) == ["nsys", "cupti"]


# Parsed tables of a real mage-006 run on the H200 (2026-11-29), stopped by its time limit after 13 of the
# 15 (op, implementation) captures per backend: real data for the summaries, kept small.
H200_KERNELS = FIXTURES / "h200-mage-006-kernels.parquet"
H200_SPANS = FIXTURES / "h200-mage-006-spans.parquet"


def h200_summary() -> pd.DataFrame:
    return summarize(pd.read_parquet(H200_KERNELS))


def test_h200_captures_give_whole_launch_counts_and_backends_agree_within_3_percent():
    summary = h200_summary()
    assert (summary["launches"] == summary["launches_per_iteration"] * 100).all()
    wide = summary.pivot_table(index=["op", "subject"], columns="backend", values="kernel_us_per_iteration")
    both = wide.dropna()
    assert len(both) >= 10
    assert ((both["cupti"] / both["nsys"] - 1).abs() < 0.03).all(), both
    launches = summary.set_index(["op", "subject", "backend"])["launches_per_iteration"]
    assert launches[("triangle", "torch", "nsys")] == 3 and launches[("matmul", "cuda", "cupti")] == 1


def test_h200_measurement_table_joins_spans_kernels_and_launch_shapes():
    from fieldnote.evidence.measurements import table

    rows = table(pd.read_parquet(H200_SPANS), h200_summary(), pd.read_parquet(H200_KERNELS))
    matmul = rows.set_index(["op", "subject"]).loc[("matmul", "cuda")]
    assert matmul["samples"] == 300 and matmul["grid_x_block"] == "(16,16,1)x(256,1,1)"
    assert matmul["registers"] == "79" and matmul["shared_bytes"] == "33792"
    assert matmul["graph_span_median_us"] < matmul["span_median_us"]


def test_label_splits_one_session_into_implementations_and_captures():
    from fieldnote.measure.capture import Job, label

    subjects = {"torch": {"implementation": "torch", "variant": None, "cubin": None},
                "cuda": {"implementation": "cuda", "variant": "gelu_bias_tanh", "cubin": "g.cubin"}}
    job = Job("gelu", subjects, "x.npz", {}, iterations=2, warmup=0, repeats=2)
    kernels = pd.DataFrame({"range": ["gelu:torch"] * 4 + ["gelu:cuda"] * 4 + [None],
                            "iteration": pd.array([0, 1, 2, 3] * 2 + [None], dtype="Int64")})
    out = label(kernels, job)
    assert list(out["subject"][:8]) == ["torch"] * 4 + ["cuda"] * 4 and pd.isna(out["subject"][8])
    assert list(out["capture"][:4]) == [0, 0, 1, 1] and list(out["iteration"][:4]) == [0, 1, 0, 1]
    assert in_ranges(out.assign(op="gelu").dropna(subset=["subject"])).shape[0] == 8


def test_a_sweep_job_is_measured_a_point_at_a_time_and_a_seed_job_whole():
    """A sweep capture holds one point's inputs on the GPU at a time (run.measured_window): its points, each with
    every implementation at that shape and seed, in the job's order."""
    from fieldnote.evidence.sweep import subjects
    from fieldnote.measure.capture import Job

    implementations = {"torch": {"implementation": "torch", "variant": None, "cubin": None},
                       "cuda": {"implementation": "cuda", "variant": "gelu_bias_tanh", "cubin": "g.cubin"}}
    shapes = [{"rows": 1024, "cols": 768}, {"rows": 4099, "cols": 770}, {"rows": 16411, "cols": 3001}]
    points, _ = subjects("gelu", shapes, implementations, 7)
    job = Job("gelu", points, "", {}, iterations=2, warmup=0, repeats=2, namespace="test")
    parts = job.points()
    assert [sorted(p.subjects) for p in parts] == [sorted(n for n in points if n.endswith(f"@{label}"))
                                                   for label in ("1024x768", "4099x770", "16411x3001")]
    assert all(p.iterations == 2 and p.repeats == 2 and p.namespace == "test" for p in parts)
    assert [n for p in parts for n in p.subjects] == list(points)
    whole = Job("gelu", implementations, "x.npz", {"rows": 8, "cols": 768}, iterations=2, warmup=0)
    assert whole.points() == [whole]


def test_a_capture_outside_the_band_of_the_others_is_labelled_under_load_and_kept():
    from fieldnote.evidence.measurements import control_band

    captures = pd.DataFrame({"op": "matmul", "subject": ["triton"] * 4 + ["cuda"] * 3, "backend": "nsys",
                             "capture": [0, 1, 2, 3, 0, 1, 2], "launches_per_iteration": 1,
                             "kernel_us_per_iteration": [79.8, 80.2, 100.8, 81.0, 75.0, 75.2, 74.9]})
    band = control_band(captures, margin=0.05).set_index(["subject", "capture"])
    assert band["under_load"].tolist() == [False, False, True, False, False, False, False]
    assert (band.loc[("triton", 2), "band_min_us"], band.loc[("triton", 2), "band_max_us"]) == (79.8, 81.0)
    assert not band.loc[("triton", 0), "under_load"]  # 79.8 against 80.2-100.8: inside
    assert len(band) == len(captures)


def test_h200_captures_carry_a_band():
    from fieldnote.evidence.measurements import control_band

    band = control_band(h200_summary(), margin=0.05)
    assert band["band_min_us"].isna().all()  # one capture per implementation there: no band to leave
    assert not band["under_load"].any()


def gelu_session(name: str, tmp_path: Path) -> Path:
    """One profiled session of the H200 mage-006 run: gelu's torch, triton and cuda, 3 captures x 100 calls."""
    import gzip

    out = tmp_path / name.removesuffix(".gz")
    out.write_bytes(gzip.decompress((FIXTURES / name).read_bytes()))
    return out


@pytest.mark.parametrize("backend", ["nsys", "cupti"])
def test_h200_session_of_three_implementations_three_captures(tmp_path, backend):
    from fieldnote.measure.capture import Job, cupti, label

    subjects = {i: {"implementation": i, "variant": None, "cubin": None} for i in ("torch", "triton", "cuda")}
    job = Job("gelu", subjects, "x.npz", {}, iterations=100, warmup=25, repeats=3)
    if backend == "nsys":
        raw = nsys.parse_sqlite(gelu_session("h200-mage-006-gelu-3x100.nsys.sqlite.gz", tmp_path))
    else:
        raw = cupti.parse_trace(gelu_session("h200-mage-006-gelu-3x100.cupti.json.gz", tmp_path))
    summary = summarize(label(raw, job).assign(op="gelu", backend=backend)).set_index(["subject", "capture"])
    assert len(summary) == 9 and set(summary.index.get_level_values("capture")) == {0, 1, 2}
    assert summary.xs("torch", level="subject")["launches_per_iteration"].tolist() == [2, 2, 2]
    assert (summary.drop(index="torch", level="subject")["launches_per_iteration"] == 1).all()
    per_impl = summary.groupby(level="subject")["kernel_us_per_iteration"].median()
    assert 8 < per_impl["triton"] < per_impl["cuda"] < per_impl["torch"] < 20  # 8.69, 11.19, 14.6 us there


def test_h200_nsys_and_cupti_captures_of_one_run_agree_within_3_percent(tmp_path):
    from fieldnote.measure.capture import Job, cupti, label

    subjects = {i: {"implementation": i, "variant": None, "cubin": None} for i in ("torch", "triton", "cuda")}
    job = Job("gelu", subjects, "x.npz", {}, iterations=100, warmup=25, repeats=3)
    runs = {"nsys": nsys.parse_sqlite(gelu_session("h200-mage-006-gelu-3x100.nsys.sqlite.gz", tmp_path)),
            "cupti": cupti.parse_trace(gelu_session("h200-mage-006-gelu-3x100.cupti.json.gz", tmp_path))}
    times = {b: summarize(label(k, job).assign(op="gelu", backend=b)).groupby("subject")
             ["kernel_us_per_iteration"].median() for b, k in runs.items()}
    assert ((times["cupti"] / times["nsys"] - 1).abs() < 0.03).all()



def test_cupti_places_each_kernel_in_the_range_around_its_launch_and_leaves_the_rest_outside(tmp_path):
    """The warm-up's and verification's kernels between the ranges belong to none; a range on another thread
    does not take a launch it overlaps; a kernel whose launch was not traced goes to the range it ran after."""
    from fieldnote.measure.capture import cupti

    events = []

    def kernel(name, at, tid=1, traced=True):
        correlation = len(events)
        if traced:
            events.append({"cat": "cuda_runtime", "ts": at, "dur": 1, "tid": tid, "args": {"correlation": correlation}})
        events.append({"cat": "kernel", "name": name, "ts": at + 2, "dur": 3, "args": {"correlation": correlation}})

    for start, name in [(100, "gelu:cuda"), (200, "gelu:torch"), (300, "gelu:cuda")]:
        events.append({"cat": "user_annotation", "name": name, "ts": start, "dur": 20, "tid": 1})
        kernel("verify", start - 50)
        kernel(f"in {name}", start + 5)
    events.append({"cat": "user_annotation", "name": "elsewhere", "ts": 390, "dur": 50, "tid": 2})
    kernel("other thread", 400)
    kernel("untraced", 305, traced=False)
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    placed = cupti.parse_trace(trace).set_index("kernel")[["range", "iteration"]]
    assert placed["range"].isna()[["verify", "other thread"]].all()
    assert placed.loc["in gelu:cuda", "iteration"].tolist() == [0, 1]
    assert placed.loc["in gelu:torch"].tolist() == ["gelu:torch", 0]
    assert placed.loc["untraced"].tolist() == ["gelu:cuda", 1]


@pytest.mark.parametrize("inner, here, profiler", [
    ({"wall": 6.0, "measurement": 2.0}, 0.0, 4.0),  # nsys, ncu: the profiled process is one of its own
    (None, 3.0, 7.0),  # CUPTI: the session ran in this process, whose phases hold 3 s of its 10 already
])
def test_a_session_s_time_is_counted_once(tmp_path, monkeypatch, inner, here, profiler):
    import json

    from fieldnote.core import progress
    from fieldnote.measure import capture
    monkeypatch.setattr(progress, "_spent", {})
    if inner is not None:
        (tmp_path / "job.json.phases.json").write_text(json.dumps(inner))
    capture.account(tmp_path, 10.0, here)
    own = {k: v for k, v in (inner or {}).items() if k != "wall"}
    assert progress.spent() == pytest.approx({**own, progress.PROFILER: profiler})


def test_the_evidence_keeps_the_measured_kernels_and_their_summary_is_unchanged():
    """The first of three captures of the GELU's nsys session in the H200 h200-002 run (2026-12-02): 18 ranges of
    100 calls, warm and cold, the ceiling's copies among them; the profiler also recorded the warm-up and the
    verification between the calls, outside every range."""
    captured = pd.read_parquet(FIXTURES / "h200-002-gelu-capture0.parquet")
    kept = measured(captured)
    assert (len(captured), len(kept)) == (24096, 2000)
    assert set(kept["range"]) == set(captured["range"].dropna()) and len(set(kept["range"])) == 18
    pd.testing.assert_frame_equal(summarize(kept), summarize(captured))
