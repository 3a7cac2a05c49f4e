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


def main(job_path: str, mode: str, trace: str | None = None) -> None:
    import torch

    from ..workload import prepare

    job = Job(**json.loads(open(job_path).read()))
    call = prepare(job.op, job.implementation, job.npz, job.shape, job.variant, job.cubin)
    for _ in range(job.warmup):
        call()
    torch.cuda.synchronize()
    if mode == "range":
        torch.cuda.profiler.start()
        iterate(call, job, lambda name: nullcontext())
        torch.cuda.profiler.stop()
    elif mode == "torch":
        from torch.profiler import ProfilerActivity, profile, record_function
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            iterate(call, job, record_function)
        prof.export_chrome_trace(trace)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(*sys.argv[1:])
