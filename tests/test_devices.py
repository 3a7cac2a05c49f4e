"""Which GPU a job runs on: the count of GPUs, and the pinning of a job to the GPU whose slot it holds."""
import pytest
import yaml
from conftest import ROOT

from fieldnote.core.errors import PipelineError
from fieldnote.measure import devices
from fieldnote.publish import authored

note_of = authored.generated_note  # the note of a namespace that names no template


def test_the_count_is_the_configuration_s_else_the_visible_gpus(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,7")
    assert devices.count({}) == 3
    assert devices.count({"gpus": 2}) == 2
    assert devices.count({"gpus": 64}) == devices.MAX
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert devices.count({}) == 1  # no GPU: the jobs stop at gpu_probe, with one line


def test_a_job_is_pinned_to_the_gpu_whose_slot_it_holds(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    assert devices.pin({"_cores": 1, "gpu_share_0": 0, "gpu_share_1": 1}) == "6"
    import os

    assert os.environ["CUDA_VISIBLE_DEVICES"] == "6"


def test_a_job_without_a_slot_or_under_slurm_is_left_as_it_is(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    assert devices.pin({"_cores": 1}) is None
    monkeypatch.setenv("SLURM_JOB_ID", "17")
    assert devices.pin({"gpu_share_1": 1}) is None
    import os

    assert os.environ["CUDA_VISIBLE_DEVICES"] == "4,6"


def test_a_slot_of_a_gpu_the_host_lacks_is_one_clear_error(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    with pytest.raises(PipelineError, match="GPU 1, and this host shows 1"):
        devices.pin({"gpu_share_1": 1})


def test_the_profile_holds_slots_for_every_gpu_the_workflow_may_spread_over():
    profile = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())
    assert {k for k in profile["resources"] if k.startswith(devices.SLOT)} == {
        f"{devices.SLOT}{d}" for d in range(devices.MAX)}


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_every_op_s_jobs_of_one_kind_fall_on_each_gpu_in_turn(gpus):
    from fieldnote.registry.ops import OPS

    placed = [devices.of(gpus, op, rank=0) for op in OPS]
    assert placed == [i % gpus for i in range(len(OPS))]


# What the evidence says about the GPUs


def two_gpu_kernels():
    """The mage-006 capture fixture as if its GELU had run on a second GPU of the host."""
    import pandas as pd
    from test_note import FIXTURES

    kernels = pd.read_parquet(FIXTURES / "h200-mage-006-kernels.parquet")
    second = kernels["op"] == "gelu"
    return kernels.assign(gpu_index=second.astype(int), gpu_uuid=second.map({False: "GPU-a", True: "GPU-b"}),
                          gpu_name="NVIDIA H200")


def test_the_note_says_when_the_measurements_ran_on_several_gpus():
    from test_note import h200_tables


    tables = h200_tables()
    assert "GPUs of one host" not in note_of("x", "", {"gpu": "NVIDIA H200"}, tables)
    one = tables["kernels"].assign(gpu_index=0, gpu_uuid="GPU-a", gpu_name="NVIDIA H200")
    assert "GPUs of one host" not in note_of("x", "", {"gpu": "NVIDIA H200"}, {**tables, "kernels": one})
    text = note_of("x", "", {"gpu": "NVIDIA H200"}, {**tables, "kernels": two_gpu_kernels()})
    assert "The measurements ran on 2 GPUs of one host (2 x NVIDIA H200)" in text


def test_the_capture_summary_keeps_each_capture_s_gpu():
    from fieldnote.evidence.summary import summarize

    summary = summarize(two_gpu_kernels())
    assert set(summary.groupby("op")["gpu_uuid"].agg(frozenset)) == {frozenset({"GPU-a"}), frozenset({"GPU-b"})}


def test_the_control_band_compares_captures_of_one_gpu_model_only():
    import pandas as pd

    from fieldnote.evidence.measurements import control_band

    rows = pd.DataFrame({"op": "gelu", "subject": "cuda", "backend": "nsys", "capture": range(4),
                         "kernel_us_per_iteration": [5.0, 5.0, 5.0, 9.0],
                         "gpu_name": ["NVIDIA H200"] * 3 + ["NVIDIA H100"]})
    assert not control_band(rows, 0.05)["under_load"].any()  # the H100's capture has no band of its model
    assert control_band(rows.drop(columns="gpu_name"), 0.05)["under_load"].tolist() == [False] * 3 + [True]


def test_drift_compares_an_op_only_between_captures_on_one_gpu_model():
    from test_note import h200_tables

    from fieldnote.evidence import history
    tables = h200_tables()
    base = (tables["summary"], tables["kernels"].assign(gpu_name="NVIDIA H200"))
    same = history.drift(base, (tables["summary"], tables["kernels"].assign(gpu_name="NVIDIA H200")))
    other = tables["kernels"].assign(gpu_name=tables["kernels"]["op"].map(lambda op: "NVIDIA H100" if op == "gelu"
                                                                          else "NVIDIA H200"))
    moved = history.drift(base, (tables["summary"], other))
    assert "gelu" in set(same["op"]) and set(moved["op"]) == set(same["op"]) - {"gelu"}
    unrecorded = history.drift((tables["summary"], tables["kernels"]), (tables["summary"], other))
    assert set(unrecorded["op"]) == set(same["op"])  # where one side does not record its GPU, nothing to compare


def test_a_capture_session_puts_its_gpu_on_every_row_and_refuses_one_without(tmp_path):
    import json

    import pandas as pd

    from fieldnote.measure import capture
    class Backend:
        @staticmethod
        def capture(job, workdir, keep):
            return pd.DataFrame({"kernel": ["k", "k"], "duration_us": [1.0, 2.0]})

    with pytest.raises(PipelineError, match="recorded no GPU"):
        capture.session(Backend, None, tmp_path)
    gpu = {"gpu_index": 1, "gpu_uuid": "GPU-b", "gpu_name": "NVIDIA H200", "session_sm_clock_mhz": 1980,
           "session_memory_clock_mhz": 3201}
    (tmp_path / "job.json.gpu.json").write_text(json.dumps(gpu))
    table = capture.session(Backend, None, tmp_path)
    assert table[list(gpu)].drop_duplicates().to_dict("records") == [gpu]


@pytest.mark.parametrize("raw", ["58a1d0b2-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "58A1D0B2-3C4D-4E5F-8A9B-0C1D2E3F4A5B",
                                 "GPU-58a1d0b2-3c4d-4e5f-8a9b-0c1d2e3f4a5b"])
def test_torch_s_uuid_reads_as_nvml_names_the_gpu(raw):
    from fieldnote.measure.gpu import _nvml_uuid

    assert _nvml_uuid(raw) == "GPU-58a1d0b2-3c4d-4e5f-8a9b-0c1d2e3f4a5b"


def test_a_uuid_given_as_its_bytes_reads_too_and_anything_else_as_none():
    from types import SimpleNamespace
    from uuid import UUID

    from fieldnote.measure.gpu import _nvml_uuid

    raw = SimpleNamespace(bytes=UUID("58a1d0b2-3c4d-4e5f-8a9b-0c1d2e3f4a5b").bytes)
    assert _nvml_uuid(raw) == "GPU-58a1d0b2-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
    assert _nvml_uuid("not a uuid") is None


class _Memory:
    """NVML as seen on a host whose GPUs have these totals, in GiB."""

    def __init__(self, *gib):
        self.gib = gib

    def nvmlDeviceGetCount(self):
        return len(self.gib)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetMemoryInfo(self, i):
        return type("Info", (), {"total": int(self.gib[i] * (1 << 30))})


@pytest.mark.parametrize("gib, taken", [((139.8,), 1), ((79.2,), 2), ((139.8, 79.2), 2), ((39.4,), 4), ((), 1)])
def test_a_gpu_job_takes_more_slots_on_a_gpu_with_less_memory_than_the_slots_were_sized_on(monkeypatch, gib, taken):
    from fieldnote.measure import gpu

    monkeypatch.setattr(gpu, "nvml", lambda: _Memory(*gib) if gib else None)
    devices.weight.cache_clear()
    try:
        held = devices.slots(1, 0)[f"{devices.SLOT}0"](type("W", (), {"op": "gelu"}))
    finally:
        devices.weight.cache_clear()
    assert held == taken
