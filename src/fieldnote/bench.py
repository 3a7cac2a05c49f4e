"""Side-by-side kernel time for kernel development: the implementations and CUDA variants of one op at one
shape (the seed shape unless --shape), each passed through the correctness gate first, then timed by
CUDA-graph replay (time per call: close to the nsys kernel time, sometimes below it, as 9.98 against
11.19 us for gelu_bias_tanh on the H200). A subject that fails the gate is named with its failures and not
timed; the others go on. A development aid; the pipeline's captures are the evidence.

    python -m fieldnote.bench OP SUBJECT... [--shape rows=65536,cols=4096]
    SUBJECT: torch, triton, compiled, or a CUDA variant of OP
"""
from __future__ import annotations

import argparse
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


def gated_calls(op: str, names: list[str], shape: dict, seed: int, tolerance: dict, folder: Path) -> dict:
    """name -> call, for the subjects that pass the gate at `shape` (full and fresh inputs, small, edges)."""
    from . import check, inputs
    from .implementations import runner
    from .ops import OPS
    from .workload import prepare

    npz = folder / "inputs.npz"
    np.savez(npz, **OPS[op].inputs(shape, seed))
    calls = {}
    for name in names:
        impl, variant, cubin = subject(op, name, folder)
        run = runner(op, impl, OPS[op].variant(variant) if variant else None, cubin)
        cases = check.cases(op, shape, seed, inputs.read(npz), small_only=False)
        failed = check.failures(check.run_checks(run, op, name, "cuda", cases, tolerance))
        if failed:
            print(f"{op:10s} {name:36s} FAILED THE GATE, not timed\n{failed}", flush=True)
            continue
        calls[name] = prepare(op, impl, str(npz), shape, variant, str(cubin) if cubin else None)
    return calls


def report(op: str, shape: dict, times: dict[str, float]) -> None:
    from .ops import OPS

    nbytes, flops = OPS[op].work(shape)
    best = min(times.values(), default=float("nan"))
    print(f"{op} at {OPS[op].label(shape)}: graph replay, median us per call")
    for name, us in times.items():
        rate = f"{flops / us / 1e6:7.2f} TFLOP/s" if flops else f"{nbytes / us / 1e3:7.0f} GB/s"
        print(f"{op:10s} {name:36s} {us:8.2f} us  {us / best:5.2f}x  {rate}")


def main(argv: list[str] | None = None) -> None:
    from .ops import OPS

    parser = argparse.ArgumentParser(prog="python -m fieldnote.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("op", choices=list(OPS))
    parser.add_argument("subjects", nargs="+")
    parser.add_argument("--shape", help="key=value,... (default: the seed shape from config/config.yaml)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.subjects if n not in ("torch", "triton", "compiled", *OPS[args.op].cuda_variants)]
    if unknown:
        parser.error(f"no implementation or CUDA variant of {args.op} named {', '.join(unknown)}")

    from . import timing
    from .config import load_defaults
    from .paths import CONFIG

    defaults = load_defaults(CONFIG / "config.yaml")  # the seed shapes, seed and tolerance of every namespace
    shape = defaults["shapes"][args.op]
    if args.shape:
        try:
            shape = {k: int(v) for k, v in (item.split("=") for item in args.shape.split(","))}
        except ValueError:
            parser.error(f"--shape takes key=value pairs with integer values, got {args.shape!r}")
        if set(shape) != set(OPS[args.op].dims):
            parser.error(f"--shape for {args.op} names {', '.join(OPS[args.op].dims)}, got {args.shape!r}")
    with tempfile.TemporaryDirectory() as tmp:
        calls = gated_calls(args.op, args.subjects, shape, defaults["seed"], defaults["tolerance"], Path(tmp))
        rows = timing.graph_spans(calls, rounds=3, iterations=100, warmup=25, replays=10) if calls else []
    times = {n: float(np.median([r["span_us"] for r in rows if r["implementation"] == n])) for n in calls}
    report(args.op, shape, times)


if __name__ == "__main__":
    main()
