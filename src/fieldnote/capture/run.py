"""The program a profiler watches: warm up outside the capture range, then `iterations` calls inside it, each
in an NVTX range named `op/implementation` and synchronized, as the timing stage calls them.

    python -m fieldnote.capture.run JOB.json range          # cudaProfilerStart/Stop: nsys, ncu
    python -m fieldnote.capture.run JOB.json torch TRACE    # torch.profiler (CUPTI), chrome trace to TRACE
"""
from __future__ import annotations

import json
import sys
from contextlib import nullcontext

from . import Job


def iterate(call, job: Job, annotate) -> None:
    import torch

    for _ in range(job.iterations):
        with torch.cuda.nvtx.range(job.range_name), annotate(job.range_name):  # NVTX default domain, push/pop
            call()
        torch.cuda.synchronize()


def warmed(job: Job):
    import torch

    from ..workload import prepare

    call = prepare(job.op, job.implementation, job.npz, job.shape, job.variant, job.cubin)
    for _ in range(job.warmup):
        call()
    torch.cuda.synchronize()
    return call


def profile_range(job: Job) -> None:
    """The iterations between cudaProfilerStart and cudaProfilerStop, for nsys and ncu."""
    import torch

    call = warmed(job)
    torch.cuda.profiler.start()
    iterate(call, job, lambda name: nullcontext())
    torch.cuda.profiler.stop()


def profile_torch(job: Job, trace: str) -> None:
    """The iterations under torch.profiler (CUPTI), written as a chrome trace."""
    from torch.profiler import ProfilerActivity, profile, record_function

    call = warmed(job)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        iterate(call, job, record_function)
    prof.export_chrome_trace(trace)


def main(job_path: str, mode: str, trace: str | None = None) -> None:
    job = Job(**json.loads(open(job_path).read()))
    if mode == "range":
        profile_range(job)
    elif mode == "torch":
        profile_torch(job, trace)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(*sys.argv[1:])
