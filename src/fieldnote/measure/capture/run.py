"""The program a profiler watches: warm up outside the capture range, then inside it, for each implementation
in turn, `iterations` calls each in an NVTX range named `op:implementation` and synchronized, as the timing
stage calls them.

    python -m fieldnote.measure.capture.run JOB.json range          # cudaProfilerStart/Stop: nsys, ncu
    python -m fieldnote.measure.capture.run JOB.json torch TRACE    # torch.profiler (CUPTI), chrome trace to TRACE
"""
from __future__ import annotations

import json
import sys
from contextlib import nullcontext

from ...core.progress import FLUSH, MEASURE, PREPARE, PROFILER, START, VERIFY, WARMUP, phase, spent
from . import Job


def iterate(calls: dict, job: Job, annotate, ceilings: dict | None = None) -> None:
    """`repeats` rounds; in each, every implementation's iterations in its own NVTX range, order rotating, then
    the ceiling's copies (`ceilings`: configuration -> ceiling.Stream) in theirs."""
    import torch

    from ...evidence.floors import range_of
    from ..timing import rotation
    from ..verified import prime, verify

    flush = L2Flush() if "cold" in job.caches else None
    for repeat in range(job.repeats):
        for cache in job.caches:  # warm and cold side by side, in one session
            timed = [(job.range_of(impl, cache), calls[impl]) for impl in rotation(list(job.subjects_named), repeat)]
            # the ceiling's copies after the op's subjects, in the same state of the cache
            timed += [(range_of(job.op, config, cache), copy) for config, copy in (ceilings or {}).items()]
            for name, call in timed:
                for k in range(job.iterations):
                    with phase(VERIFY):
                        prime(call, repeat * job.iterations + k)  # outside the range: no kernel time includes it
                    if cache == "cold":
                        with phase(FLUSH):
                            flush()
                    with phase(MEASURE):
                        with torch.cuda.nvtx.range(name), annotate(name):  # NVTX default domain, push/pop
                            call()
                        torch.cuda.synchronize()
                    with phase(VERIFY):
                        verify(call, repeat * job.iterations + k)


class L2Flush:
    """Before a cold call, outside its range: twice the L2's bytes written (evicting the inputs the priming just
    wrote), and the persisting L2 lines reset."""

    def __init__(self):
        import torch

        size = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        self.buffer = torch.empty(2 * size, dtype=torch.uint8, device="cuda")
        self.calls = 0

    def __call__(self) -> None:
        from cuda.bindings import runtime

        self.calls += 1
        self.buffer.fill_(self.calls % 251)
        runtime.cudaCtxResetPersistingL2Cache()


def prepared(job: Job) -> tuple[dict, dict]:
    """(every subject's measured call, the ceiling's copies by configuration), each called once (the first call
    compiles, autotunes or JITs what does so), beside other jobs' GPU work: one subject a hold of its own
    (workload.prepared_each), the copies one more."""
    with phase(PREPARE):
        from .. import workload
        from ..ceiling import streams
        from ..gpulock import shared

        draw_all(job)  # drawn once a process: measured_window's drawing of every point is not done again

    def make(name, s):
        what = job.what(name, s)
        if "shape" in s:
            return lambda: workload.prepare_drawn(job.op, s["implementation"], s["shape"], s["seed"], s["variant"],
                                                  s["cubin"], job.tolerance, what)
        return lambda: workload.prepare(job.op, s["implementation"], job.npz, job.shape, s["variant"], s["cubin"],
                                        job.tolerance, what)

    calls = workload.prepared_each({name: make(name, s) for name, s in job.subjects.items()},
                                   {name: s["implementation"] for name, s in job.subjects.items()}, bool(job.warmup))
    copies = {}
    if job.ceiling:
        with shared():
            with phase(PREPARE):
                copies = streams(job.op, job.shape)
            if job.warmup:
                workload.first_calls(copies.values())
    return calls, copies


DRAWN_AT_ONCE = 4


def draw_all(job: Job) -> None:
    """The sweep points' inputs, each drawing once (CPU work, before any hold), the largest first, DRAWN_AT_ONCE at a
    time: numpy draws without the GIL, and the GELU sweep's eight drawings one after another took about 11 s, the
    largest (65536x4096) 6.5 s of them (the H200's host, idle; two drawings in two threads on the CPU machine: 0.94 s
    against 1.81 one after the other)."""
    from concurrent.futures import ThreadPoolExecutor

    from ...registry.ops import OPS
    from .. import workload

    spec = OPS[job.op]
    drawings = {(spec.label(s["shape"]), s["seed"]): s["shape"] for s in job.subjects.values() if "shape" in s}
    largest_first = sorted(drawings, key=lambda key: -spec.work(drawings[key])[0])
    with ThreadPoolExecutor(DRAWN_AT_ONCE) as pool:
        list(pool.map(lambda key: workload.drawn(job.op, drawings[key], key[1]), largest_first))


def warm(calls: dict, copies: dict, job: Job) -> None:
    """The rest of each call's `warmup` calls (the first came in `prepared`), inside the measurement window."""
    import torch

    for call in [*calls.values(), *copies.values()]:
        for _ in range(job.warmup - 1):
            with phase(WARMUP):
                call()
    with phase(WARMUP):
        torch.cuda.synchronize()


def measured_window(job: Job, start, stop, annotate) -> None:
    """Every subject prepared beside other jobs' GPU work, the profiler started (`start`), the warm-up and the
    iterations with the GPU to itself (gpulock.exclusive), the profiler stopped (`stop`), the inputs checksummed.
    The profiler starts before the window and stops after it: under nsys each takes seconds and runs nothing on the
    GPU, and the warm-up's kernels it then sees fall outside every NVTX range (the summaries read only the kernels
    inside their own; ncu profiles only those). A sweep's points go one after another, each released before the
    next is prepared: the GPU holds one point's inputs, not the sweep's (trimul's six points at once held 42 GiB of
    an H100's 79)."""
    from ..gpulock import exclusive
    from ..workload import checksummed

    with phase(PREPARE):
        draw_all(job)
    points = job.points()
    calls, copies = prepared(points[0])
    with phase(PROFILER):
        start()
    for k, point in enumerate(points):
        if k:
            calls, copies = prepared(point)
        with exclusive():
            warm(calls, copies, point)
            iterate(calls, point, annotate, copies)
        checksummed(calls)
        if k < len(points) - 1:
            released(calls, copies)
    with phase(PROFILER):
        stop()


def released(calls: dict, copies: dict) -> None:
    """A point's calls dropped and the GPU memory they held handed back (the verification's buffers too)."""
    import gc

    import torch

    from ..verified import forget_truths

    calls.clear()
    copies.clear()
    forget_truths()
    gc.collect()
    torch.cuda.empty_cache()


def profile_range(job: Job) -> None:
    """The iterations between cudaProfilerStart and cudaProfilerStop, for nsys and ncu."""
    import torch

    measured_window(job, torch.cuda.profiler.start, torch.cuda.profiler.stop, lambda name: nullcontext())


def profile_torch(job: Job, trace: str) -> None:
    """The iterations under torch.profiler (CUPTI), written as a chrome trace."""
    from torch.profiler import ProfilerActivity, profile, record_function

    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])

    def stop():
        prof.stop()
        prof.export_chrome_trace(trace)

    measured_window(job, prof.start, stop, record_function)


def record_gpu(job_path) -> None:
    """The GPU this process ran on and its clocks as the session ends, beside the job file (capture.on_gpu reads
    them and puts them on every row)."""
    from ..gpu import State, identity

    state = State()()
    gpu = {**identity(), "session_sm_clock_mhz": state.get("sm_clock_mhz"),
           "session_memory_clock_mhz": state.get("memory_clock_mhz")}
    open(f"{job_path}.gpu.json", "w").write(json.dumps(gpu))


def main(job_path: str, mode: str, trace: str | None = None) -> None:
    from ...core.errors import PipelineError
    from ...core.progress import add, since_process_start

    add(START, since_process_start())
    job = Job.from_dict(json.loads(open(job_path).read()))
    try:
        if mode == "range":
            profile_range(job)
        elif mode == "torch":
            profile_torch(job, trace)
        else:
            raise SystemExit(f"unknown mode {mode}")
        record_gpu(job_path)
        # the profiled process's own phases, for the capture job's account (capture.account)
        phases = {"wall": since_process_start(), **spent()}
        open(f"{job_path}.phases.json", "w").write(json.dumps(phases))
    except PipelineError as e:  # a timed call that computed a wrong result: the profiler's job reports this line
        print(f"fieldnote: {e}", file=sys.stderr)
        raise SystemExit(3) from None


if __name__ == "__main__":
    main(*sys.argv[1:])
