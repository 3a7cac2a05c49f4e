"""The GPU lock across processes: shared holders overlap, an exclusive holder overlaps nobody."""
import multiprocessing
import time

import pytest

from fieldnote.measure import gpulock

HOLD = 0.4


def hold_named(name: str, mode: str, lock: str, seconds: float, spans, holding=None) -> None:
    import os

    os.environ["FIELDNOTE_GPU_LOCK"] = lock
    with getattr(gpulock, mode)():
        start = time.monotonic()
        if holding is not None:
            holding.set()
        time.sleep(seconds)
        spans.put((name, start, time.monotonic()))


def hold(mode: str, lock: str, spans, holding=None) -> None:
    hold_named(mode, mode, lock, HOLD, spans, holding)


def spans_of(tmp_path, modes: list[str]) -> list[tuple[str, float, float]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=hold, args=(m, str(tmp_path / "gpu.lock"), queue)) for m in modes]
    for p in processes:
        p.start()
        time.sleep(0.05)  # started in this order, so that each takes the lock in turn or beside the others
    for p in processes:
        p.join(timeout=30)
        assert p.exitcode == 0
    return sorted(queue.get(timeout=5) for _ in modes)


def overlap(a, b) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def test_shared_holders_run_side_by_side(tmp_path):
    first, second = spans_of(tmp_path, ["shared", "shared"])
    assert overlap(first, second)


@pytest.mark.parametrize("modes", [["exclusive", "shared", "shared"], ["shared", "exclusive", "shared"]])
def test_an_exclusive_holder_overlaps_no_one(tmp_path, modes):
    spans = spans_of(tmp_path, modes)
    window = next(s for s in spans if s[0] == "exclusive")
    assert not any(overlap(window, s) for s in spans if s is not window)


def test_a_waiting_window_goes_before_the_checks_that_ask_after_it(tmp_path):
    """A check holds the GPU; a window asks and waits; a second check asks meanwhile: it waits for the window (flock
    alone would let it in beside the first check, and the window would wait for it too)."""
    context = multiprocessing.get_context("spawn")
    queue, lock, holding = context.Queue(), str(tmp_path / "gpu.lock"), context.Event()
    first = context.Process(target=hold_named, args=("first", "shared", lock, 3.0, queue, holding))
    first.start()
    assert holding.wait(timeout=30)
    window = context.Process(target=hold_named, args=("window", "exclusive", lock, 0.4, queue))
    window.start()
    time.sleep(1.5)  # the window's process has started and waits behind the first check
    second = context.Process(target=hold_named, args=("second", "shared", lock, 0.4, queue))
    second.start()
    for p in (first, window, second):
        p.join(timeout=30)
        assert p.exitcode == 0
    spans = {name: (start, end) for name, start, end in (queue.get(timeout=5) for _ in range(3))}
    assert spans["first"][1] <= spans["window"][0] and spans["window"][1] <= spans["second"][0], spans


def test_the_wait_is_a_phase_of_the_job(tmp_path, monkeypatch):
    from fieldnote.core import progress
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    before = progress.spent().get(progress.WAIT, 0.0)
    with gpulock.exclusive():
        pass
    assert progress.spent()[progress.WAIT] >= before


def _takeable(lock, flag: int) -> bool:
    """Whether another holder could take the lock now, shared or exclusively (`flag`)."""
    import fcntl
    import os

    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, flag | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _shared_free(lock) -> bool:
    """Whether a check could take the lock now."""
    import fcntl

    return _takeable(lock, fcntl.LOCK_SH)


def _exclusive_free(lock) -> bool:
    """Whether a measurement window could take the lock now."""
    import fcntl

    return _takeable(lock, fcntl.LOCK_EX)


@pytest.mark.parametrize("implementation, device", [("torch", "cuda"), ("cuda", "cuda"), ("compiled", "cpu")])
def test_a_check_shares_the_gpu_where_nothing_autotunes(tmp_path, monkeypatch, implementation, device):
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    with gpulock.for_check(implementation, device):
        assert _shared_free(lock)
    assert _shared_free(lock)


class Torch211Benchmarker:
    """Inductor's benchmarker as the lock sees it: timings that may call one another; torch 2.11's has these two."""
    def __init__(self, lock):
        self.lock, self.seen, self.window_free = lock, [], []

    def benchmark(self, fn):
        return self.benchmark_gpu(fn)

    def benchmark_gpu(self, fn):
        self.seen.append(_shared_free(self.lock))  # False: held alone
        self.window_free.append(_exclusive_free(self.lock))  # False: held, shared or alone
        return fn()


class Benchmarker(Torch211Benchmarker):
    """A later torch's: a cuda-graph timing too."""
    def benchmark_gpu_with_cuda_graph(self, fn):
        return self.benchmark_gpu(fn)


def test_torch_compile_compiles_beside_other_jobs_and_times_its_candidates_alone(tmp_path, monkeypatch):
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    fake = Benchmarker(lock)
    monkeypatch.setattr(gpulock, "_inductor_benchmarker", lambda: fake)
    with gpulock.for_check("compiled", "cuda"):
        assert _shared_free(lock)  # compiling: other checks may run, a measurement window may not
        assert fake.benchmark(lambda: 1.5) == 1.5 and fake.benchmark_gpu_with_cuda_graph(lambda: 2) == 2
        assert fake.seen == [False, False]  # every timing alone, nested calls included
        assert _shared_free(lock)
    assert "benchmark" not in fake.__dict__ and _shared_free(lock)  # the benchmarker as it was


def test_torch_compile_autotunes_beside_other_checks_at_a_shape_nothing_measures(tmp_path, monkeypatch):
    """Its small and edge cases: nothing it picks there is timed, so its timings there wait for no one's hold to
    end; the full shape, a fresh draw of it and a sweep point are measured, and time alone."""
    from fieldnote.measure import check
    from fieldnote.registry.ops import OPS

    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    fake = Benchmarker(lock)
    monkeypatch.setattr(gpulock, "_inductor_benchmarker", lambda: fake)
    shape = OPS["layernorm"].parse_label("64x32")
    cases = check.cases("layernorm", shape, 7, None, small_only=False)
    sweep = check.Case("sweep", shape, 7, {})
    for case in [*cases, sweep]:
        fake.seen.clear()
        with gpulock.for_check("compiled", "cuda", case.measured):
            assert fake.benchmark(lambda: 1.0) == 1.0
        assert fake.seen == [not case.measured], case.name  # alone: no shared holder could take the lock
        assert fake.window_free[-1] is False, case.name  # held all the same: no window beside a timing
    assert [c.name for c in cases if c.measured] == ["full", "fresh"] and sweep.measured
    assert {c.name.split(":")[0] for c in cases if not c.measured} == {"small", "edge"}


def compile_graph(lock, fake, seen):
    """Inductor's compile of one graph as the lock sees it (gpulock.COMPILE): CPU work, and a timing in it."""
    seen.append(_exclusive_free(lock))
    fake.benchmark(lambda: None)
    seen.append(_exclusive_free(lock))
    return "graph"


@pytest.mark.parametrize("measured", [True, False], ids=["measured shape", "small case"])
@pytest.mark.parametrize("batches", ["all reached", "one missing"])
def test_a_compile_holds_nothing_while_inductor_compiles_a_graph(tmp_path, monkeypatch, batches, measured):
    """Inside COMPILE a window may run (the compile's GPU work is its timings, each alone at a measured shape,
    shared at a small case's); around it, the compile's runs hold the lock shared. Where a set of candidates is out
    of reach (its example inputs would be drawn with no hold), the compile keeps its shared hold."""
    lock, fake, *_ = faked_inductor(tmp_path, monkeypatch)
    missing = batches == "one missing"
    monkeypatch.setattr(gpulock, "BATCHES", (("fieldnote", "NoSuchSelector", "benchmark_choices"),) * missing)
    monkeypatch.setattr(gpulock, "COMPILE", (__name__, "compile_graph"))
    original, seen = compile_graph, []
    with gpulock.for_check("compiled", "cuda", measured):
        assert not _exclusive_free(lock) and _shared_free(lock)
        assert compile_graph(lock, fake, seen) == "graph"  # the module's name, as inductor calls it
        assert not _exclusive_free(lock) and _shared_free(lock)
    assert seen == [not missing, not missing] and fake.seen == [not measured] and fake.window_free == [False]
    assert compile_graph is original and _exclusive_free(lock)


def faked_inductor(tmp_path, monkeypatch):
    """The lock file, a fake benchmarker the lock wraps, and what other processes are started and report with."""
    lock = str(tmp_path / "gpu.lock")
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", lock)
    fake = Benchmarker(lock)
    monkeypatch.setattr(gpulock, "_inductor_benchmarker", lambda: fake)
    context = multiprocessing.get_context("spawn")
    return lock, fake, context, context.Queue()


def test_a_window_waits_for_the_compile_and_a_timing_for_the_other_checks(tmp_path, monkeypatch):
    lock, fake, context, queue = faked_inductor(tmp_path, monkeypatch)
    with gpulock.for_check("compiled", "cuda"):
        window = context.Process(target=hold, args=("exclusive", lock, queue))
        window.start()
        time.sleep(1.5)  # compiling: the window, started meanwhile, has not begun
        compiled = time.monotonic()
    window.join(timeout=30)
    assert queue.get(timeout=5)[1] >= compiled
    holding = context.Event()
    check = context.Process(target=hold, args=("shared", lock, queue, holding))
    with gpulock.for_check("compiled", "cuda"):
        check.start()
        assert holding.wait(timeout=30)  # another check holds the lock beside the compile
        timed = fake.benchmark(time.monotonic)
    check.join(timeout=30)
    assert timed >= queue.get(timeout=5)[2]  # the timing waited for the other check to end


def test_a_compile_that_times_while_a_window_waits_goes_after_the_window(tmp_path, monkeypatch):
    """The compile holds the lock shared, a window waits at the turnstile, the compile asks to time: it lets its
    shared hold go before it queues (held, the window and the timing would wait for each other)."""
    import threading

    lock, fake, context, queue = faked_inductor(tmp_path, monkeypatch)
    with gpulock.for_check("compiled", "cuda"):
        window = context.Process(target=hold_named, args=("window", "exclusive", lock, 0.4, queue))
        window.start()
        time.sleep(1.5)  # the window waits for the compile's shared hold
        timed = []
        timing = threading.Thread(target=lambda: timed.append(fake.benchmark(time.monotonic)), daemon=True)
        timing.start()
        timing.join(timeout=20)
        assert timed, "the timing and the window wait for each other"
    window.join(timeout=30)
    _, start, end = queue.get(timeout=5)
    assert timed[0] >= end


@pytest.mark.parametrize("measured", [True, False], ids=["measured shape", "small case"])
@pytest.mark.parametrize("reach", ["none", "told"])
def test_an_inductor_out_of_reach_autotunes_with_the_gpu_alone_throughout(tmp_path, monkeypatch, reach, measured):
    """At a measured shape; at a small case's, shared throughout (as any check)."""
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    if reach == "none":
        monkeypatch.setattr(gpulock, "_inductor_benchmarker", lambda: None)
    else:  # a GPU test found a timing around the benchmarker
        monkeypatch.setenv("FIELDNOTE_AUTOTUNE_ALONE", "compile")
    with gpulock.for_check("compiled", "cuda", measured):
        assert _shared_free(lock) is not measured and not _exclusive_free(lock)
    assert _exclusive_free(lock)


def test_this_torch_times_its_autotuning_through_the_benchmarker_the_lock_wraps():
    benchmarker = gpulock._inductor_benchmarker()
    assert benchmarker is not None
    assert all(callable(getattr(benchmarker, name)) for name in gpulock.REQUIRED)


def test_a_benchmarker_without_the_cuda_graph_timing_is_still_wrapped(tmp_path, monkeypatch):
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    fake = Torch211Benchmarker(lock)  # found where inductor keeps it (the H200's torch 2.11 lacked the third
    monkeypatch.setattr("torch._inductor.runtime.benchmarking.benchmarker", fake)  # timing: the lock took it all)
    before = gpulock.timed_alone
    with gpulock.for_check("compiled", "cuda"):
        assert _shared_free(lock)  # compiling beside other checks, not alone throughout
        assert fake.benchmark(lambda: 3) == 3 and fake.seen == [False]
    assert gpulock.timed_alone == before + 1 and "benchmark" not in fake.__dict__


class Selector:
    """Inductor's two places that time a set of candidates in turn: a classmethod and a method."""
    benchmarker = None

    @classmethod
    def benchmark_choices(cls, choices):
        return [cls.benchmarker.benchmark_gpu(c) for c in choices]

    def benchmark_all_configs(self, configs):
        return [self.benchmarker.benchmark(c) for c in configs]


def test_a_set_of_candidates_is_timed_in_one_turn_alone(tmp_path, monkeypatch):
    """Seven candidates, one turn alone each time a set is timed (a turn waits for every check holding the GPU);
    the classes as they were afterwards."""
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    fake = Benchmarker(lock)
    monkeypatch.setattr(gpulock, "_inductor_benchmarker", lambda: fake)
    monkeypatch.setattr(Selector, "benchmarker", fake)
    monkeypatch.setattr(gpulock, "BATCHES", tuple((__name__, "Selector", name)
                                                  for name in ("benchmark_choices", "benchmark_all_configs")))
    before, methods = gpulock.timed_alone, dict(vars(Selector))
    with gpulock.for_check("compiled", "cuda"):
        assert Selector.benchmark_choices([lambda: 1] * 4) == [1] * 4
        assert Selector().benchmark_all_configs([lambda: 2] * 3) == [2] * 3
        assert _shared_free(lock) and fake.seen == [False] * 7  # each candidate alone, the lock shared between
    assert gpulock.timed_alone == before + 2 and dict(vars(Selector)) == methods


def test_this_torch_has_the_sets_of_candidates_the_lock_times_in_one_turn_and_the_compile_it_holds_nothing_in():
    batches = gpulock._batches()
    assert [(owner.__name__, name) for owner, name in batches] == [b[1:] for b in gpulock.BATCHES]
    assert gpulock._compile_unheld(batches) is not None


def test_every_hold_is_traced_with_its_job_and_times(tmp_path, monkeypatch):
    """FIELDNOTE_GPU_TRACE: a line per hold from every process, whole, naming the job (script.entry sets
    FIELDNOTE_JOB from its log), the window's hold apart from the shared ones."""
    import json

    trace = tmp_path / "gpulock.jsonl"
    monkeypatch.setenv("FIELDNOTE_GPU_TRACE", str(trace))
    monkeypatch.setenv("FIELDNOTE_JOB", "work/logs/time/ns/gelu")
    spans_of(tmp_path, ["shared", "exclusive", "shared"])
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert sorted(line["mode"] for line in lines) == ["alone", "shared", "shared"]
    assert {line["job"] for line in lines} == {"work/logs/time/ns/gelu"}
    assert all(line["asked"] <= line["taken"] < line["released"] for line in lines)
    window = next(line for line in lines if line["mode"] == "alone")
    assert all(line["released"] <= window["taken"] or line["taken"] >= window["released"]
               for line in lines if line is not window)


def test_a_measurement_prepares_each_subject_in_a_hold_of_its_own(tmp_path, monkeypatch):
    """A window waiting for the GPU waits for one subject's preparation and first call, not for a whole sweep's:
    each subject (and the ceiling's copies) prepared and called once inside its own shared hold, traced; the
    sweep points' inputs drawn (CPU work) before the first hold."""
    import json

    from fieldnote.measure import ceiling, workload
    from fieldnote.measure.capture import Job
    from fieldnote.measure.capture.run import prepared

    trace = tmp_path / "gpulock.jsonl"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    monkeypatch.setenv("FIELDNOTE_GPU_TRACE", str(trace))
    seen = []  # (what, when)
    monkeypatch.setattr(workload, "prepare_drawn", lambda op, impl, *a: lambda: seen.append((impl, time.time())))
    monkeypatch.setattr(workload, "first_calls", lambda calls: [call() for call in calls])
    monkeypatch.setattr(ceiling, "streams", lambda op, shape: {"copy": lambda: seen.append(("copy", time.time()))})
    drew = []
    monkeypatch.setattr(workload, "drawn", lambda op, shape, seed: drew.append(time.time()))
    subjects = {f"{impl}@8x{cols}": {"implementation": impl, "shape": {"rows": 8, "cols": cols}, "seed": 0,
                                      "variant": None, "cubin": None}
                for impl, cols in (("torch", 8), ("triton", 8), ("cuda", 16))}
    job = Job("gelu", subjects, "", {}, iterations=1, warmup=1, ceiling=True)
    calls, copies = prepared(job)
    assert list(calls) == list(subjects) and list(copies) == ["copy"]
    holds = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [h["mode"] for h in holds] == ["shared"] * 4
    assert [what for what, _ in seen] == ["torch", "triton", "cuda", "copy"]
    assert len(drew) == 2 and max(drew) <= holds[0]["taken"]  # each drawing once
    for (_, when), h in zip(seen, holds, strict=True):  # each first call inside a hold of its own
        assert h["taken"] <= when <= h["released"]


def test_a_measurement_holds_nothing_while_inductor_compiles_a_subject(tmp_path, monkeypatch):
    """A torch.compile subject's first call compiles (from inductor's cache, or not): a window waiting meanwhile
    waits for its uploads and runs, not for the compile (gpulock.for_check, as the compiled check)."""
    from fieldnote.measure import workload
    lock, fake, *_ = faked_inductor(tmp_path, monkeypatch)
    monkeypatch.setattr(gpulock, "BATCHES", ())
    monkeypatch.setattr(gpulock, "COMPILE", (__name__, "compile_graph"))
    seen, made = [], []
    monkeypatch.setattr(workload, "first_calls", lambda calls: [call() for call in calls])

    def make(impl):
        made.append((impl, _exclusive_free(lock), _shared_free(lock)))  # uploads: shared
        return lambda: compile_graph(lock, fake, seen) if impl == "compiled" else None

    calls = workload.prepared_each({"compiled": lambda: make("compiled"), "cuda": lambda: make("cuda")},
                                   {"compiled": "compiled", "cuda": "cuda"})
    assert list(calls) == ["compiled", "cuda"] and made == [("compiled", False, True), ("cuda", False, True)]
    assert seen == [True, True] and fake.seen == [False]  # unheld while compiling; its one timing alone
    assert _exclusive_free(lock)


def test_the_inputs_are_checksummed_after_the_window_in_a_shared_hold(tmp_path, monkeypatch):
    """A measurement's window holds the GPU alone for the warm-up and the verified timed calls only: the inputs'
    checksum after them (host copies, a gigabyte a set at a sweep's largest shapes) waits until it is released. On
    the CPU with a real verified call; the CUDA profiler's start and stop, NVTX and the synchronize are no-ops."""
    import contextlib
    import json

    import torch
    from test_verified import honest, measured

    from fieldnote.measure import workload
    from fieldnote.measure.capture import Job
    from fieldnote.measure.capture.run import profile_range
    from fieldnote.measure.verified import Measured

    trace = tmp_path / "gpulock.jsonl"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    monkeypatch.setenv("FIELDNOTE_GPU_TRACE", str(trace))
    for name in ("start", "stop"):
        monkeypatch.setattr(torch.cuda.profiler, name, lambda: None)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda.nvtx, "range", lambda name: contextlib.nullcontext())
    made = []  # each subject its own call and input sets (one drawing's are shared, and checked once)
    monkeypatch.setattr(workload, "prepare_drawn", lambda *a: made.append(measured(honest)) or made[-1])
    summed = []
    monkeypatch.setattr(Measured, "checksum", lambda self: summed.append(time.time()))
    subjects = {f"{impl}@8x{cols}": {"implementation": impl, "shape": {"rows": 8, "cols": cols}, "seed": 0,
                                      "variant": None, "cubin": None}
                for cols in (16, 32) for impl in ("cuda", "torch")}
    profile_range(Job("gelu", subjects, "", {}, iterations=3, warmup=2, tolerance={"rtol": 1e-4, "atol": 1e-4}))
    holds = [json.loads(line) for line in trace.read_text().splitlines()]
    # a sweep point at a time: its two subjects prepared, its window, their two checksums; then the next point
    assert [h["mode"] for h in holds] == ["shared", "shared", "alone", "shared", "shared"] * 2
    assert [call.calls for call in made] == [3, 3, 3, 3]  # every timed call verified
    assert len(summed) == 4
    for point, sums in ((holds[:5], summed[:2]), (holds[5:], summed[2:])):
        window, after = point[2], point[3:]
        assert window["released"] <= after[0]["taken"]
        for when, h in zip(sums, after, strict=True):  # each subject's checksum in a hold of its own
            assert h["taken"] <= when <= h["released"]


class Triton:
    """Triton's compile as inductor calls it (`triton.compile`), as the lock sees it: CPU work, the lock free."""

    def __init__(self, lock):
        self.lock, self.seen = lock, []

    def compile(self, source):
        self.seen.append((_exclusive_free(self.lock), _shared_free(self.lock)))
        return f"kernel of {source}"


@pytest.mark.parametrize("measured", [True, False], ids=["measured shape", "small case"])
def test_a_kernel_compiled_inside_a_set_of_timings_holds_nothing_and_the_next_timing_is_held_again(
        tmp_path, monkeypatch, measured):
    """max-autotune compiles a candidate as it times it (the matmul's odd small shapes): the set's hold is given up
    for each compile, a window may run meanwhile, and each timing after it is held again, alone where the set's are;
    triton.compile as it was afterwards."""
    import sys
    import types

    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    fake = Benchmarker(lock)
    monkeypatch.setattr(gpulock, "_inductor_benchmarker", lambda: fake)
    monkeypatch.setattr(Selector, "benchmarker", fake)
    monkeypatch.setattr(gpulock, "BATCHES", ((__name__, "Selector", "benchmark_choices"),))
    triton = Triton(lock)
    monkeypatch.setitem(sys.modules, "fake_triton", types.SimpleNamespace(compile=triton.compile))
    monkeypatch.setattr(gpulock, "KERNEL_COMPILE", ("fake_triton", "compile"))
    before, module = gpulock.compiled_unheld, sys.modules["fake_triton"]

    def candidate(name):  # compiled on its first timing
        return lambda: module.compile(name) and (_exclusive_free(lock), _shared_free(lock))

    with gpulock.for_check("compiled", "cuda", measured):
        timed = Selector.benchmark_choices([candidate(n) for n in ("a", "b", "c")])
        assert _shared_free(lock) and not _exclusive_free(lock)
    assert triton.seen == [(True, True)] * 3  # nothing held: a window could have run
    assert timed == [(False, not measured)] * 3 and fake.seen == [not measured] * 3  # each timing held again
    assert gpulock.compiled_unheld == before + 3 and module.compile == triton.compile and _exclusive_free(lock)


def test_a_sweeps_drawings_are_drawn_side_by_side_each_once(monkeypatch):
    """Each drawing once, several at a time (numpy draws without the GIL): three drawings meet at a barrier only if
    they run at once."""
    import threading

    from fieldnote.measure import workload
    from fieldnote.measure.capture import Job
    from fieldnote.measure.capture.run import draw_all

    met, order = threading.Barrier(3, timeout=20), []

    def drawn(op, shape, seed):
        order.append(shape["cols"])
        met.wait()

    monkeypatch.setattr(workload, "drawn", drawn)
    subjects = {f"{impl}@8x{cols}": {"implementation": impl, "shape": {"rows": 8, "cols": cols}, "seed": 0}
                for impl in ("torch", "cuda") for cols in (16, 64, 32)}
    draw_all(Job("gelu", subjects, "", {}, iterations=1, warmup=1))
    assert sorted(order) == [16, 32, 64]
