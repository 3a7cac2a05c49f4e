"""Side-by-side kernel time for kernel development: the implementations and CUDA variants of one op at the seed
shape, each passed through the correctness gate first, then timed by CUDA-graph replay (time per call: close
to the nsys kernel time, sometimes below it, as 9.98 against 11.19 us for gelu_bias_tanh on the H200). A
development aid; the pipeline's captures are the evidence.

    python -m fieldnote.bench OP SUBJECT...      # SUBJECT: torch, triton, compiled, or a CUDA variant
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np


def subject(op: str, name: str, folder: Path):
    """(implementation, variant name, cubin path) of a subject; a CUDA variant is built here."""
    if name in ("torch", "triton", "compiled"):
        return name, None, None
    from .build import cuda
    from .ops import OPS

    variant = OPS[op].variant(name)
    cubin = folder / f"{name}.cubin"
    cubin.write_bytes(cuda.compile_source(Path(variant.source), "sm_90")[0])  # no ptxas report needed here
    return "cuda", name, cubin


def main(op: str, *names: str) -> None:
    from . import check, inputs, timing
    from .config import load_defaults
    from .implementations import runner
    from .ops import OPS
    from .paths import CONFIG
    from .workload import prepare

    defaults = load_defaults(CONFIG / "config.yaml")  # the seed shapes, seed and tolerance of every namespace
    shape, seed, tolerance = defaults["shapes"][op], defaults["seed"], defaults["tolerance"]
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "inputs.npz"
        np.savez(npz, **OPS[op].inputs(shape, seed))
        calls = {}
        for name in names:
            impl, variant, cubin = subject(op, name, Path(tmp))
            run = runner(op, impl, OPS[op].variant(variant) if variant else None, cubin)
            cases = check.cases(op, shape, seed, inputs.read(npz), small_only=False)
            table = check.run_checks(run, op, name, "cuda", cases, tolerance)
            check.gate(table)
            calls[name] = prepare(op, impl, str(npz), shape, variant, str(cubin) if cubin else None)
        rows = timing.graph_spans(calls, rounds=3, iterations=100, warmup=25, replays=10)
    times = {n: float(np.median([r["span_us"] for r in rows if r["implementation"] == n])) for n in names}
    best = min(times.values())
    for name, us in times.items():
        print(f"{op:10s} {name:36s} {us:8.2f} us  {us / best:5.2f}x")


if __name__ == "__main__":
    main(*sys.argv[1:])
