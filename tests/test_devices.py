"""Which GPU a job runs on: the count of GPUs, and the pinning of a job to the GPU whose slot it holds."""
import pytest
import yaml
from conftest import ROOT

from fieldnote import devices
from fieldnote.errors import PipelineError


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
    from fieldnote.ops import OPS

    placed = [devices.of(gpus, op, rank=0) for op in OPS]
    assert placed == [i % gpus for i in range(len(OPS))]
