"""Side-by-side kernel time for kernel development: the implementations and CUDA variants of one op at one
shape (the seed shape unless --shape), each passed through the correctness gate first, then timed by
CUDA-graph replay (time per call: close to the nsys kernel time, sometimes below it, as 9.98 against
11.19 us for gelu_bias_tanh on the H200). A subject that fails the gate is named with its failures and not
timed; the others go on. With --counters, Nsight Compute then profiles each subject alone (the pipeline's ncu
capture and metrics). A development aid; the pipeline's captures are the evidence.

    python -m fieldnote.measure.bench OP SUBJECT... [--shape rows=65536,cols=4096] [--counters]
    SUBJECT: torch, triton, compiled, library (where the op has one), or a CUDA variant of OP
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from ..registry.vocabulary import PEERS


def subject(op: str, name: str, folder: Path):
    """(implementation, variant name, cubin path) of a subject; a CUDA variant is built here."""
    if name in PEERS:
        return name, None, None
    from ..registry.ops import OPS
    from .build import cuda

    variant = OPS[op].variant(name)
    cubin = folder / f"{name}.cubin"
    cubin.write_bytes(cuda.compile_source(Path(variant.source), variant.target("sm_90"))[0])  # no ptxas report
    return "cuda", name, cubin


def gated_calls(op: str, names: list[str], shape: dict, seed: int, tolerance: dict, folder: Path) -> dict:
    """name -> (call, subject), for the subjects that pass the gate at `shape` (full and fresh inputs, small,
    edges); the subject as a capture job names it."""
    from ..registry.ops import OPS
    from . import check, inputs
    from .implementations import runner
    from .workload import prepare

    npz = folder / "inputs.npz"
    np.savez(npz, **OPS[op].inputs(shape, seed))
    calls = {}
    for name in names:
        impl, variant, cubin = subject(op, name, folder)
        reason = OPS[op].refusal(impl, variant, shape)
        if reason:
            print(f"{op:10s} {name:36s} DOES NOT TAKE {OPS[op].label(shape)}, not timed: {reason}", flush=True)
            continue
        run = runner(op, impl, OPS[op].variant(variant) if variant else None, cubin)
        cases = check.cases(op, shape, seed, inputs.read(npz), small_only=False, implementation=impl)
        failed = check.failures(check.run_checks(run, op, name, "cuda", cases, tolerance))
        if failed:
            print(f"{op:10s} {name:36s} FAILED THE GATE, not timed\n{failed}", flush=True)
            continue
        spec = {"implementation": impl, "variant": variant, "cubin": str(cubin) if cubin else None}
        calls[name] = prepare(op, impl, str(npz), shape, variant, spec["cubin"]), spec
    return calls


def counters(op: str, shape: dict, subjects: dict[str, dict], npz: Path, folder: Path):
    """Nsight Compute's counters of each subject alone, the median over the launches profiled: one column a
    subject."""
    import pandas as pd

    from ..core.errors import PipelineError
    from . import capture
    from .capture import ncu

    columns = {}
    for name, spec in subjects.items():
        job = capture.Job(op, {name: spec}, str(npz), shape, iterations=10, warmup=3)
        try:
            table = ncu.capture(job, folder)
        except PipelineError as error:  # named, and the other subjects go on
            print(f"{op:10s} {name:36s} NO COUNTERS: {error}", flush=True)
            continue
        columns[name] = table.groupby(["kernel", "name"])["value"].median()
    return pd.DataFrame(columns)


def report(op: str, shape: dict, times: dict[str, float]) -> None:
    from ..registry.ops import OPS

    nbytes, flops = OPS[op].work(shape)
    best = min(times.values(), default=float("nan"))
    print(f"{op} at {OPS[op].label(shape)}: graph replay, median us per call")
    for name, us in times.items():
        rate = f"{flops / us / 1e6:7.2f} TFLOP/s" if flops else f"{nbytes / us / 1e3:7.0f} GB/s"
        print(f"{op:10s} {name:36s} {us:8.2f} us  {us / best:5.2f}x  {rate}")


def main(argv: list[str] | None = None, prog: str = "python -m fieldnote.measure.bench") -> None:
    from ..registry.ops import OPS

    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("op", choices=list(OPS))
    parser.add_argument("subjects", nargs="+")
    parser.add_argument("--shape", help="key=value,... (default: the seed shape from config/config.yaml)")
    parser.add_argument("--counters", action="store_true", help="then Nsight Compute's counters of each subject")
    args = parser.parse_args(argv)
    peers = [i for i in OPS[args.op].implementations if i in PEERS]
    unknown = [n for n in args.subjects if n not in (*peers, *OPS[args.op].kernel_variants)]
    if unknown:
        parser.error(f"no implementation or hand-written variant of {args.op} named {', '.join(unknown)} "
                     f"(it has {', '.join(peers)} and its variants)")

    from ..core.paths import CONFIG
    from ..registry.config import load_defaults
    from . import timing

    defaults = load_defaults(CONFIG / "config.yaml")  # the seed shapes, seed and tolerance of every namespace
    shape = defaults["shapes"][args.op]
    if args.shape:
        try:
            shape = {k: int(v) for k, v in (item.split("=") for item in args.shape.split(","))}
        except ValueError:
            parser.error(f"--shape takes key=value pairs with integer values, got {args.shape!r}")
        if set(shape) != set(OPS[args.op].dims):
            parser.error(f"--shape for {args.op} names {', '.join(OPS[args.op].dims)}, got {args.shape!r}")
    if args.counters:
        from .capture import ncu

        if not ncu.available():
            parser.error("--counters needs Nsight Compute: `ncu` is not on PATH")
    from . import gpu

    if not gpu.available():
        raise SystemExit("fieldnote: no GPU here: bench times kernels on an NVIDIA GPU (torch.cuda.is_available() "
                         "is False); run it on a machine with one")
    with tempfile.TemporaryDirectory() as tmp:
        gated = gated_calls(args.op, args.subjects, shape, defaults["seed"], defaults["tolerance"], Path(tmp))
        calls = {name: call for name, (call, _) in gated.items()}
        rows = timing.graph_spans(calls, rounds=3, iterations=100, warmup=25, replays=10) if calls else []
        times = {n: float(np.median([r["span_us"] for r in rows if r["subject"] == n])) for n in calls}
        report(args.op, shape, times)
        if args.counters and gated:
            table = counters(args.op, shape, {n: spec for n, (_, spec) in gated.items()}, Path(tmp) / "inputs.npz",
                             Path(tmp))
            print(f"{args.op}: Nsight Compute counters, median over the launches of {ncu.PROFILED_CALLS} calls of each "
                  "subject")
            print(table.to_string(float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
