"""The capture parsers on real captures from the H200 (tests/fixtures), and the per-iteration validation."""
from pathlib import Path

import pandas as pd
import pytest

from fieldnote.capture import nsys, resolve
from fieldnote.capture.summary import in_range, per_iteration, summarize
from fieldnote.errors import PipelineError

FIXTURES = Path(__file__).parent / "fixtures"


def test_nsys_sqlite_of_fifty_cublas_launches():
    kernels = nsys.parse_sqlite(FIXTURES / "h200-cublas-matmul-50-launches.nsys.sqlite")
    assert len(kernels) == 50 and kernels["kernel"].nunique() == 1
    assert kernels["range"].eq("matmul/python").all() and list(kernels["iteration"]) == list(range(50))
    assert kernels["duration_us"].between(20, 200).all()
    first = kernels.iloc[0]
    assert (first["grid"], first["block"], first["registers"]) == ("8,16,1", "128,1,1", 224)
    assert first["shared_bytes"] == first["static_shared_bytes"] + first["dynamic_shared_bytes"]
    summary = per_iteration(in_range(kernels, "matmul/python"), 50, "fixture")
    assert summary["launches_per_iteration"] == 1
    assert summary["kernel_us_per_iteration"] == pytest.approx(kernels["duration_us"].mean())


def test_a_fractional_launch_count_is_one_clear_error():
    kernels = pd.DataFrame({"kernel": ["k"] * 150, "duration_us": [1.0] * 150})
    with pytest.raises(PipelineError, match="150 kernel launches over 100 iterations is not a whole number"):
        per_iteration(kernels, 100, "capture nsys/gelu/torch")


def test_summary_per_op_implementation_backend():
    rows = [{"op": "gelu", "implementation": "torch", "backend": "nsys", "capture": 0, "iterations": 2,
             "kernel": name, "duration_us": us} for name, us in [("add", 1.0), ("gelu", 3.0)] * 2]
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
