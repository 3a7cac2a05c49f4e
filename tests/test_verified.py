"""Every timed call verified (verified.py), on the CPU: honest runners pass; runners that cheat in the ways the
kernel-benchmark write-ups document fail on the call where they cheat, with one line naming the subject, the
call and what differed. The same classes of cheat as CUDA kernels, and work left on another stream, are caught on
the GPU in test_gpu.py."""
import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from fieldnote.core.errors import PipelineError
from fieldnote.measure import timing
from fieldnote.measure.verified import Measured

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


def memoized_by_content():
    """Results remembered by a few sampled elements of the inputs, as many as it meets; `misses` counts the calls
    that computed."""
    store = {}

    def run(t, s):
        key = t["x"].view(-1)[::5].numpy().tobytes() + t["bias"][::5].numpy().tobytes()
        if key not in store:
            run.misses += 1
            store[key] = honest(t, s).clone()
        t["out"].copy_(store[key])
        return t["out"]
    run.misses = 0
    return run


def below_the_precision_contract(t, s):
    # bfloat16, not half: half's rounding at these values is near the tolerance, so a draw of 128 elements could
    # all pass a call; bfloat16's (eight bits) leaves none of the draws inside it
    t["out"].copy_(F.gelu((t["x"] + t["bias"]).bfloat16(), approximate="tanh").float())
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
    (cached_by_pointer(), 1, "outside the tolerance"),  # the warm-up's inputs were the last it saw
    (below_the_precision_contract, 1, "outside the tolerance"),
    (inputs_changed_so_the_output_is_trivial, 1, "input 'x' was changed by the call"),
])
def test_a_cheat_fails_on_the_call_where_it_cheats(cheat, call, why):
    with pytest.raises(PipelineError) as e:
        spans(cheat)
    message = str(e.value)
    assert message.startswith(f"demo: gelu / cheat at 8x16: timed call {call} computed a wrong result: ")
    assert why in message and "\n" not in message


def test_every_timed_call_sees_inputs_no_call_saw_before():
    """Each prime draws a set never drawn before in the process (for this subject and any other), the same set is
    drawn again for the comparison, and the integer inputs are kept."""
    seen, first, second = [], measured(honest), measured(honest)
    for fn in (first, second, first):
        for call in range(3):
            fn.prime(call)
            assert not any(torch.equal(fn.tensors["x"], x) for x in seen)
            seen.append(fn.tensors["x"].clone())
            assert all(torch.equal(fn.truth()[n], fn.tensors[n]) for n in ("x", "bias"))


def neighbor_measured():
    from fieldnote.measure.check import reference
    from fieldnote.registry.ops import OPS

    shape = {"nodes": 16, "features": 4, "edges": 40}
    host = OPS["neighbor"].inputs(shape, 3)
    tensors = {n: torch.from_numpy(a).clone() for n, a in host.items()}
    tensors["out"] = torch.empty(OPS["neighbor"].output_shape(shape))
    return Measured(lambda t, s: t["out"].copy_(reference("neighbor", t)), tensors, shape, "neighbor",
                    "demo: neighbor / kept at 16x4x40", TOLERANCE, host=host)


def test_integer_inputs_are_kept_and_checked_to_the_byte_after_the_measurement():
    fn = neighbor_measured()
    assert set(fn.kept) == {n for n, t in fn.tensors.items() if not t.is_floating_point()} and fn.kept
    timing.spans({"kept": fn}, rounds=1, iterations=3, warmup=1, clock=timing.HostClock())
    fn.checksum()
    name = next(iter(fn.kept))
    fn.kept[name][0] += 1
    with pytest.raises(PipelineError, match=f"input '{name}' changed during the measurement"):
        fn.checksum()


def drawn(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((8, 16), dtype=np.float32), "bias": rng.standard_normal(16, dtype=np.float32)}


def prepared(run, host: dict) -> Measured:
    """A call prepared from a drawing, as workload.prepare_drawn prepares each implementation of a sweep point."""
    tensors = {n: torch.from_numpy(a).clone() for n, a in host.items()} | {"out": torch.empty(8, 16)}
    return Measured(run, tensors, SHAPE, "gelu", "demo: gelu / shared at 8x16", TOLERANCE, host=host)


def test_the_implementations_of_one_drawing_share_what_they_are_compared_with_and_each_is_still_verified():
    """A sweep point's implementations draw their sets again into one set of buffers no call sees (four copies of
    a sweep point's sets and references held 65 GB of the GPU in a GELU sweep capture); a cheat among them is still
    caught."""
    drawing = drawn(11)
    first, second, cheat = (prepared(run, drawing) for run in (honest, honest, below_the_precision_contract))
    timing.spans({"first": first, "second": second}, rounds=2, iterations=3, warmup=1, clock=timing.HostClock())
    first.checksum(), second.checksum()
    assert first.calls == second.calls == 6
    assert all(a is b for a, b in zip(first.truth().values(), second.truth().values(), strict=True))
    # half precision's error at 8x16 falls inside the tolerance on about one draw in fifty: six calls, not two
    with pytest.raises(PipelineError, match=r"timed call \d computed a wrong result: outside the tolerance"):
        timing.spans({"cheat": cheat}, rounds=1, iterations=6, warmup=1, clock=timing.HostClock())


def test_each_call_is_checksummed_in_a_hold_of_its_own(tmp_path, monkeypatch):
    from fieldnote.measure import workload
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    drawing = drawn(12)
    first, second = prepared(honest, drawing), prepared(honest, drawing)
    checked = []
    monkeypatch.setattr(Measured, "checksum", lambda self: checked.append(self))
    workload.checksummed({"first": first, "second": second})
    assert checked == [first, second]


def test_a_graphs_calls_each_get_buffers_of_their_own_as_many_as_fit(monkeypatch):
    from fieldnote.measure import verified
    fn = measured(honest)
    pool = verified.pooled(fn, 5)
    assert len(pool) == 5 and pool[0] is fn
    assert len({id(t) for call in pool for t in call.tensors.values()}) == 5 * len(fn.tensors)
    monkeypatch.setattr(verified, "POOLED_BYTES", 2 * sum(t.numel() * t.element_size() for t in fn.tensors.values()))
    assert len(verified.pooled(fn, 5)) == 2
    assert verified.pooled(honest, 3) == [honest] * 3


def test_a_runner_memoized_by_content_computes_every_timed_call():
    """No timed call's inputs are an earlier call's, so a memo keyed by their content never hits: every timed call
    computes (as the one warm-up call before them does) and is verified."""
    run = memoized_by_content()
    fn = measured(run)
    timing.spans({"memo": fn}, rounds=1, iterations=6, warmup=1, clock=timing.HostClock())
    assert (fn.calls, run.misses) == (6, 1 + 6)


def test_the_spans_say_each_timed_call_had_fresh_inputs_and_the_note_says_so():
    from fieldnote.publish import note
    fn = measured(honest)
    rows, _ = timing.spans({"honest": fn}, rounds=1, iterations=3, warmup=1, clock=timing.HostClock())
    spans = pd.DataFrame(rows)
    assert spans["fresh_inputs"].all() and spans["verified"].all()
    assert "inputs drawn afresh before it" in note.verification(spans)
    assert "two input sets in alternation" in note.verification(spans.drop(columns="fresh_inputs"))
