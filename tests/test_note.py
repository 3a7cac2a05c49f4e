"""note.md for a measured namespace, rendered from real H200 tables (tests/fixtures, see test_capture.py)."""
from pathlib import Path

import pandas as pd

from fieldnote import note
from fieldnote.capture.summary import summarize
from fieldnote.measurements import summary

FIXTURES = Path(__file__).parent / "fixtures"


def h200_tables() -> dict[str, pd.DataFrame]:
    kernels = pd.read_parquet(FIXTURES / "h200-mage-006-kernels.parquet")
    spans = pd.read_parquet(FIXTURES / "h200-mage-006-spans.parquet")
    checks = pd.DataFrame({"op": ["matmul"], "implementation": ["cuda"], "passed": [True], "rtol": [1e-4],
                           "atol": [1e-4], "max_abs_error": [1.38e-5]})
    return {"summary": summary(summarize(kernels), spans), "spans": spans, "kernels": kernels, "checks": checks,
            "resources": pd.read_parquet(FIXTURES / "h200-mage-006-resources.parquet"),
            "census": pd.read_parquet(FIXTURES / "h200-mage-006-census.parquet")}


def test_measured_note_has_every_supported_table_with_two_decimals():
    tables = h200_tables()
    text = note.render("mage-006", "The load in flight.", {"gpu": "NVIDIA H200"}, tables)
    cuda = tables["summary"].set_index(["op", "implementation"]).loc[("matmul", "cuda")]
    assert f"| Matrix multiplication | {cuda['kernel_us']:.2f} | {cuda['span_mean_us']:.2f} |" in text
    for heading in ("## Kernel and span per operation (CUDA C++)", "## GPU kernel time, all implementations",
                    "## Kernel launches per iteration", "## The hand-written kernels as ptxas built them",
                    "## The Triton kernels, compiled offline for sm_90 and censused"):
        assert heading in text
    assert "| LayerNorm | `layernorm_row_kernel` | 4 | 32 | 16 | 24 / 0 | 0 | 8 / 0 | 5 |" in text
    assert "| `matmul_cpasync_2buf_64x64` | 79 | 0 / 0 | 33792 | 1 |" in text


def test_every_microsecond_in_the_note_has_two_decimals():
    import re

    text = note.render("mage-006", "", {"gpu": "NVIDIA H200"}, h200_tables())
    cells = [cell for table in re.findall(r"## [^\n]*µs[^\n]*\n\n((?:\|[^\n]*\n)+)", text)
             for cell in re.findall(r"\| ([0-9.]+) (?=\|)", table)]
    assert len(cells) >= 20
    assert all(re.fullmatch(r"\d+\.\d\d", cell) for cell in cells), cells
