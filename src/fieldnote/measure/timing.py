"""How spans are measured (what is measured is the caller's business): rounds of warmed, individually timed
calls with the implementation order rotating each round, every sample kept; and CUDA-graph replay of the same
calls, so launch overhead can be told apart from kernel time.

The clock is pluggable: CUDA events on the GPU, the host clock in tests, so the bookkeeping is checked
where no CUDA exists.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from ..core.progress import FIRST, MEASURE, VERIFY, WARMUP, phase
from ..core.progress import log as progress
from .verified import pooled, prime, verifies, verify


class HostClock:
    """Wall time around a call (for tests and CPU callables)."""

    def sync(self) -> None:
        pass

    def time_us(self, fn: Callable[[], object]) -> float:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e6


class EventClock:
    """One CUDA event pair around a call on the current stream, synchronized after each sample."""

    def __init__(self):
        import torch

        self.torch = torch
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def time_us(self, fn: Callable[[], object]) -> float:
        self.start.record()
        fn()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end) * 1e3


class QueuedClock(EventClock):
    """The GPU's time for a call, without the host's: the call is queued behind a spin of the GPU long enough for
    the host to enqueue all of it, so the events bracket its kernels and not the launch path before them
    (torch.compile's guards and wrapper, Python). Where the launch path is most of a span, as in torch.compile's
    tunes timed beside each other's compiles, it decides nothing about which kernels run faster."""

    SPIN_CYCLES = 4_000_000  # about 2 ms at Hopper's clocks: longer than any launch path seen here (~0.2 ms)
    LONGER = 4  # the spin's growth when a call outlasted it
    TRIES = 3

    def time_us(self, fn: Callable[[], object]) -> float:
        spin = self.SPIN_CYCLES
        for _ in range(self.TRIES):
            self.torch.cuda._sleep(spin)
            self.start.record()
            fn()
            # The premise is checked, not assumed: had the GPU reached the start before the host finished
            # enqueueing, the span would hold the host's time (a slow host, a call that synchronizes).
            queued = not self.start.query()
            self.end.record()
            self.end.synchronize()
            if queued:
                return self.start.elapsed_time(self.end) * 1e3
            spin *= self.LONGER
        raise RuntimeError(f"the queued clock's spin of {spin // self.LONGER} cycles ended before the host had "
                           "enqueued the call: it synchronizes with the GPU, or its launch path outlasts the spin")


def rotation(implementations: list[str], round_index: int) -> list[str]:
    """Round r starts at implementation r mod n, so no implementation always runs first or last."""
    k = round_index % len(implementations)
    return implementations[k:] + implementations[:k]


def spans(calls: dict[str, Callable[[], object]], rounds: int, iterations: int, warmup: int, clock,
          state: Callable[[], dict] = dict) -> tuple[list[dict], list[dict]]:
    """(samples, states): one sample row per timed call, one state row per (round, implementation) block.

    `state()` is read right after each block's samples (SM clock, temperature, ...); its `sm_clock_mhz`
    is stamped on that block's samples.
    """
    samples, states = [], []
    for r in range(rounds):
        progress.info("spans, round %d of %d: %s", r + 1, rounds, ", ".join(rotation(list(calls), r)))
        for position, impl in enumerate(rotation(list(calls), r)):
            fn = calls[impl]
            for k in range(warmup):  # the very first call compiles, autotunes or JITs what does so
                with phase(FIRST if r == 0 and k == 0 else WARMUP):
                    fn()
            with phase(WARMUP):
                clock.sync()
            block = [{"subject": impl, "mode": "eager", "round": r, "position": position, "iteration": i,
                      "span_us": timed(fn, clock, r * iterations + i), "verified": verifies(fn),
                      "fresh_inputs": verifies(fn)}
                     for i in range(iterations)]
            reading = state()
            for row in block:
                row["sm_clock_mhz"] = reading.get("sm_clock_mhz")
            samples += block
            states.append({"subject": impl, "round": r, "position": position, **reading})
    return samples, states


def timed(fn, clock, call: int) -> float:
    """One timed call: primed before the window (inputs loaded, output poisoned), verified after it."""
    with phase(VERIFY):
        prime(fn, call)
    with phase(MEASURE):
        span = clock.time_us(fn)
    with phase(VERIFY):
        verify(fn, call)
    return span


def graph_spans(calls: dict[str, Callable[[], object]], rounds: int, iterations: int, warmup: int,
                replays: int = 10, state: Callable[[], dict] = dict) -> list[dict]:
    """Per implementation, up to `iterations` calls captured into one CUDA graph, each on inputs and an output of
    its own (verified.pooled: a call of a replay never sees another's inputs); each replay gives a time per call.

    Rows follow the same rotation as `spans`; `iteration` is the replay index.
    """
    import torch

    graphs, pools = {}, {}
    side = torch.cuda.Stream()  # capture on a stream every launcher has already seen (warm-up below)
    for impl, fn in calls.items():
        pools[impl] = pooled(fn, iterations)
        with phase(WARMUP):  # the graph's capture with its warm-up
            with torch.cuda.stream(side):
                for _ in range(warmup):
                    fn()
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=side):
                for call in pools[impl]:
                    call()
        graphs[impl] = graph
    clock = EventClock()
    rows = []
    progress.info("graph replay: %s", ", ".join(f"{impl} {len(pool)} calls" for impl, pool in pools.items()))
    for r in range(rounds):
        for position, impl in enumerate(rotation(list(calls), r)):
            graphs[impl].replay()  # warm replay, untimed
            clock.sync()
            block = [{"subject": impl, "mode": "graph", "round": r, "position": position, "iteration": i,
                      "span_us": replayed(graphs[impl], pools[impl], clock, r * replays + i) / len(pools[impl]),
                      "verified": verifies(calls[impl]), "fresh_inputs": verifies(calls[impl])} for i in range(replays)]
            sm = state().get("sm_clock_mhz")
            rows += [{**row, "sm_clock_mhz": sm} for row in block]
    return rows


def replayed(graph, pool: list, clock, replay: int) -> float:
    """One timed replay: each of its calls reads its own live inputs and writes its own output, so each is primed
    and verified as one call is (a replay that computes nothing leaves the poison)."""
    with phase(VERIFY):
        for k, fn in enumerate(pool):
            prime(fn, replay * len(pool) + k)
    with phase(MEASURE):
        span = clock.time_us(graph.replay)
    with phase(VERIFY):
        for k, fn in enumerate(pool):
            verify(fn, replay * len(pool) + k)
    return span
