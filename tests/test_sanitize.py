"""The sanitizer's gate on the CPU: what a timing job times, given the sanitizer's table of its op."""
from types import SimpleNamespace

import pandas as pd
import pytest

from fieldnote.core.errors import PipelineError
from fieldnote.measure import sanitize

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


def _free(lock) -> bool:
    """Whether no process holds the GPU lock (a window could take it at once)."""
    import fcntl
    import os

    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_each_sanitized_launch_holds_the_gpu_shared_and_the_tools_start_without_it(tmp_path, monkeypatch):
    """The tools' processes start, import and instrument with the lock free; the sanitized workload takes it,
    shared, around each launch alone (a waiting window then waits for one small launch, not a tool's whole run)."""
    from fieldnote.measure import gpulock, implementations
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    monkeypatch.setenv("FIELDNOTE_GPU_TRACE", str(tmp_path / "trace.jsonl"))
    launches = []

    def launch(run, spec, case):
        launches.append((case.name, _free(lock)))
        with gpulock.shared():  # another holder's shared request passes beside it
            pass

    monkeypatch.setattr(implementations, "runner", lambda *args: None)
    monkeypatch.setattr(sanitize, "_launch", launch)
    job = {"op": "gelu", "variants": {"gelu_bias_tanh": "x.cubin", "gelu_bias_sigmoid_vec4": "y.cubin"}, "seed": 7}
    sanitize.workload(job)
    assert len(launches) == sanitize.expected_launches(job) and not any(free for _, free in launches)
    trace = pd.read_json(tmp_path / "trace.jsonl", lines=True)
    assert (trace["mode"] == "shared").all() and len(trace) == 2 * len(launches)
    assert _free(lock)

    monkeypatch.setattr(sanitize, "executable", lambda: "compute-sanitizer")
    seen = []
    monkeypatch.setattr(sanitize, "_run_tools", lambda *args: seen.append(_free(lock)) or {})
    sanitize.sanitize(job, tmp_path)
    assert seen == [True]
