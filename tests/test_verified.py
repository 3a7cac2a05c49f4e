"""Every timed call verified (verified.py), on the CPU: honest runners pass; runners that cheat in the ways the
kernel-benchmark write-ups document fail on the call where they cheat, with one line naming the subject, the
call and what differed. The same classes of cheat as CUDA kernels, and work left on another stream, are caught on
the GPU in test_gpu.py."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fieldnote import timing
from fieldnote.errors import PipelineError
from fieldnote.verified import Measured

SHAPE = {"rows": 8, "cols": 16}
TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


def honest(t, s):
    t["out"].copy_(F.gelu(t["x"] + t["bias"], approximate="tanh"))
    return t["out"]


def kept_from_the_first_call():
    done = []

    def run(t, s):
        if not done:
            honest(t, s)
            done.append(True)
        return t["out"]
    return run


def one_launch_for_four_calls():
    calls = []

    def run(t, s):
        if len(calls) % 4 == 0:
            honest(t, s)
        calls.append(True)
        return t["out"]
    return run


def cached_by_pointer():
    cache = {}

    def run(t, s):
        key = t["x"].data_ptr()
        if key not in cache:
            cache[key] = honest(t, s).clone()
        t["out"].copy_(cache[key])
        return t["out"]
    return run


def below_the_precision_contract(t, s):
    t["out"].copy_(F.gelu((t["x"] + t["bias"]).half(), approximate="tanh").float())
    return t["out"]


def inputs_changed_so_the_output_is_trivial(t, s):
    t["x"].zero_()
    t["bias"].zero_()
    t["out"].zero_()
    return t["out"]


def measured(run):
    rng = np.random.default_rng(7)
    tensors = {"x": torch.from_numpy(rng.standard_normal((8, 16), dtype=np.float32)),
               "bias": torch.from_numpy(rng.standard_normal(16, dtype=np.float32)),
               "out": torch.empty(8, 16)}
    return Measured(run, tensors, SHAPE, "gelu", "demo: gelu / cheat at 8x16", TOLERANCE)


def spans(run):
    return timing.spans({"cheat": measured(run)}, rounds=2, iterations=5, warmup=2, clock=timing.HostClock())


def test_an_honest_runner_is_verified_on_every_timed_call():
    fn = measured(honest)
    timing.spans({"honest": fn}, rounds=2, iterations=5, warmup=2, clock=timing.HostClock())
    fn.checksum()
    assert fn.calls == 10


@pytest.mark.parametrize("cheat, call, why", [
    (kept_from_the_first_call(), 1, "output elements not finite"),
    (one_launch_for_four_calls(), 1, "output elements not finite"),
    (cached_by_pointer(), 2, "outside the tolerance"),
    (below_the_precision_contract, 1, "outside the tolerance"),
    (inputs_changed_so_the_output_is_trivial, 1, "input 'x' was changed by the call"),
])
def test_a_cheat_fails_on_the_call_where_it_cheats(cheat, call, why):
    with pytest.raises(PipelineError) as e:
        spans(cheat)
    message = str(e.value)
    assert message.startswith(f"demo: gelu / cheat at 8x16: timed call {call} computed a wrong result: ")
    assert why in message and "\n" not in message


@pytest.mark.parametrize("changed, value", [(0, 1.0), (1, 1.0), (0, float("nan")), (1, float("nan"))])
def test_an_input_set_changed_behind_the_measurement_fails_its_checksum(changed, value):
    fn = measured(honest)
    fn.sets[changed]["x"][0, 0] += value
    with pytest.raises(PipelineError, match=f"input set {changed} changed during the measurement .input 'x'"):
        fn.checksum()


def test_the_checksum_compares_bytes_so_even_the_sign_of_a_zero_counts():
    """A kernel that writes +0.0 where set 1 holds -0.0 changed the bytes: == would not see it, the checksum does."""
    fn = measured(honest)
    fn.host["x"][1, 2] = fn.sets[0]["x"][1, 2] = 0.0
    fn.sets[1]["x"][1, 2] = -0.0
    fn.checksum()
    fn.sets[1]["x"][1, 2] = 0.0
    with pytest.raises(PipelineError, match="input set 1 changed during the measurement .input 'x'"):
        fn.checksum()


def drawn(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((8, 16), dtype=np.float32), "bias": rng.standard_normal(16, dtype=np.float32)}


def prepared(run, host: dict) -> Measured:
    """A call prepared from a drawing, as workload.prepare_drawn prepares each implementation of a sweep point."""
    tensors = {n: torch.from_numpy(a).clone() for n, a in host.items()} | {"out": torch.empty(8, 16)}
    return Measured(run, tensors, SHAPE, "gelu", "demo: gelu / shared at 8x16", TOLERANCE, host=host)


def test_the_implementations_of_one_drawing_share_its_input_sets_and_references_and_each_is_still_verified():
    """A sweep point's implementations are prepared from one drawing: one copy of its two input sets and their
    float64 references for all of them (four copies held 65 GB of the GPU in a GELU sweep capture), each call still
    verified against them, a cheat among them still caught; another drawing has its own."""
    drawing = drawn(11)
    first, second, cheat = (prepared(run, drawing) for run in (honest, honest, below_the_precision_contract))
    other = prepared(honest, {n: a.copy() for n, a in drawing.items()})
    assert first.sets is second.sets is cheat.sets and first.bounds is second.bounds is cheat.bounds
    assert other.sets is not first.sets and other.bounds is not first.bounds
    timing.spans({"first": first, "second": second}, rounds=2, iterations=3, warmup=1, clock=timing.HostClock())
    first.checksum(), second.checksum()
    assert first.calls == second.calls == 6
    with pytest.raises(PipelineError, match="timed call 1 computed a wrong result: outside the tolerance"):
        timing.spans({"cheat": cheat}, rounds=1, iterations=2, warmup=1, clock=timing.HostClock())


def test_a_drawings_input_sets_are_checksummed_once_for_all_its_implementations(tmp_path, monkeypatch):
    """After a window, the input sets the implementations of one drawing share are checked once (a gigabyte a set at a
    sweep's largest point, four implementations), another drawing's on their own, each in a shared hold."""
    from fieldnote import workload

    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    drawing = drawn(12)
    first, second = prepared(honest, drawing), prepared(honest, drawing)
    other = prepared(honest, {n: a.copy() for n, a in drawing.items()})
    checked = []
    monkeypatch.setattr(Measured, "checksum", lambda self: checked.append(self))
    workload.checksummed({"first": first, "second": second, "other": other})
    assert checked == [first, other]
