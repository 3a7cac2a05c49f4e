"""The span bookkeeping, checked on the CPU with a host clock: rotation, warm-up, sample counts, states."""
from collections import Counter

from fieldnote.measure import timing


def calls_recorder():
    log = []
    return log, {impl: (lambda impl=impl: log.append(impl)) for impl in ("torch", "triton", "cuda")}


def test_rotation_starts_round_r_at_implementation_r_mod_n():
    impls = ["torch", "triton", "cuda"]
    assert [timing.rotation(impls, r) for r in range(4)] == [
        ["torch", "triton", "cuda"], ["triton", "cuda", "torch"], ["cuda", "torch", "triton"],
        ["torch", "triton", "cuda"]]


def test_spans_keep_every_sample_after_warmup_in_rotating_order():
    log, calls = calls_recorder()
    readings = iter(range(1000, 2000))
    samples, states = timing.spans(calls, rounds=3, iterations=100, warmup=25, clock=timing.HostClock(),
                                   state=lambda: {"sm_clock_mhz": next(readings)})
    assert len(samples) == 900 and Counter(s["subject"] for s in samples) == {"torch": 300, "triton": 300,
                                                                                       "cuda": 300}
    assert Counter(log) == {"torch": 375, "triton": 375, "cuda": 375}  # 3 x (25 warm-up + 100 timed)
    firsts = [log[i * 375] for i in range(3)]
    assert firsts == ["torch", "triton", "cuda"]
    assert log[375:375 + 25] == ["triton"] * 25  # round 1 warms its first implementation before timing it
    assert all(s["span_us"] >= 0 and s["mode"] == "eager" for s in samples)
    assert [s["iteration"] for s in samples[:100]] == list(range(100))
    assert [(s["round"], s["position"], s["subject"]) for s in states] == [
        (0, 0, "torch"), (0, 1, "triton"), (0, 2, "cuda"), (1, 0, "triton"), (1, 1, "cuda"), (1, 2, "torch"),
        (2, 0, "cuda"), (2, 1, "torch"), (2, 2, "triton")]
    assert {s["sm_clock_mhz"] for s in samples[:100]} == {1000} and samples[100]["sm_clock_mhz"] == 1001


def test_host_clock_measures_a_sleep():
    import time
    assert 2000 <= timing.HostClock().time_us(lambda: time.sleep(0.002)) < 200000
