"""The sanitizer's gate on the CPU: what a timing job times, given the sanitizer's table of its op."""
from types import SimpleNamespace

import pandas as pd
import pytest

from fieldnote import sanitize
from fieldnote.errors import PipelineError

SUBJECTS = {
    "torch": {"implementation": "torch", "variant": None, "cubin": None},
    "cuda": {"implementation": "cuda", "variant": "matmul_3xtf32_wgmma_tma_padded", "cubin": "padded.cubin"},
    "matmul_3xtf32_wgmma_cpasync_64x128": {"implementation": "cuda", "variant": "matmul_3xtf32_wgmma_cpasync_64x128",
                                           "cubin": "cpasync.cubin"},
}
WAR = "Error: Potential WAR hazard detected at __shared__ 0x4404 in block (0,0,0) :"


def job_with(tmp_path, flagged: str | None):
    rows = [{"variant": s["variant"], "tool": tool, "shape": "small 64x128x520",
             "errors": 100 if s["variant"] == flagged and tool == "racecheck" else 0,
             "first_message": WAR if s["variant"] == flagged and tool == "racecheck" else ""}
            for s in SUBJECTS.values() if s["variant"] for tool in sanitize.TOOLS]
    paths = []
    for variant in {r["variant"] for r in rows}:
        path = tmp_path / f"{variant}.parquet"
        pd.DataFrame([r for r in rows if r["variant"] == variant]).to_parquet(path)
        paths.append(str(path))
    return SimpleNamespace(input=SimpleNamespace(sanitized=paths))


def test_an_attempt_the_sanitizer_reported_is_left_out_and_the_rest_is_timed(tmp_path, capsys):
    timed = sanitize.gate(job_with(tmp_path, "matmul_3xtf32_wgmma_cpasync_64x128"), SUBJECTS, "h200-002: matmul")
    assert list(timed) == ["torch", "cuda"]
    said = capsys.readouterr().out
    assert "the attempt matmul_3xtf32_wgmma_cpasync_64x128 is left out: compute-sanitizer racecheck" in said


def test_an_implementation_the_sanitizer_reported_stops_the_job(tmp_path):
    with pytest.raises(PipelineError, match="matmul_3xtf32_wgmma_tma_padded is not timed: compute-sanitizer racecheck"):
        sanitize.gate(job_with(tmp_path, "matmul_3xtf32_wgmma_tma_padded"), SUBJECTS, "h200-002: matmul")


def test_a_clean_table_times_every_subject_and_gives_no_reasons(tmp_path):
    job = job_with(tmp_path, None)
    assert sanitize.gate(job, SUBJECTS, "h200-002: matmul") == SUBJECTS
    table = pd.concat(map(pd.read_parquet, job.input.sanitized))
    assert sanitize.refusals(table) == {} and sanitize.refusals(None) == {}
    flagged = table.assign(errors=(table["variant"] == "matmul_3xtf32_wgmma_cpasync_64x128") * 3)
    assert list(sanitize.refusals(flagged)) == ["matmul_3xtf32_wgmma_cpasync_64x128"]
