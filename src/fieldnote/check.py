"""The correctness gate: every output element finite and allclose(out, reference, rtol, atol).

The reference is the op's torch expression in float64 on the CPU. Outputs are poisoned with NaN before
each run, so an element the kernel never writes fails. Cases: the namespace's full shape from its input
file, the same shape on freshly drawn inputs (seed recorded), the small shapes and the edge cases.
"""
from __future__ import annotations

import secrets
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from . import kernels
from .errors import PipelineError
from .ops import OPS, Shape
from .progress import CHECK, phase, step


@dataclass(frozen=True)
class Case:
    name: str
    shape: Shape
    seed: int | None
    inputs: dict[str, np.ndarray]
    expected: np.ndarray | None = None  # the float64 reference, when one case is checked for several runs

    @property
    def measured(self) -> bool:
        """At a shape the namespace times and captures: its full shape (the input file's or fresh inputs) or a
        sweep point; the small shapes and edge cases are checked only."""
        return self.name in ("full", "fresh", "sweep")


def cases(op: str, full_shape: Shape, seed: int, full_inputs: dict | None, small_only: bool) -> list[Case]:
    spec = OPS[op]
    found = [Case("small", s, seed, spec.inputs(s, seed)) for s in spec.small_shapes]
    found += [Case(f"edge:{e.name}", e.shape, seed, e.make(np.random.default_rng(seed), e.shape))
              for e in spec.edge_cases]
    if not small_only:
        fresh = secrets.randbits(32)
        full = full_inputs if full_inputs is not None else spec.inputs(full_shape, seed)
        found = [Case("full", full_shape, seed, full),
                 Case("fresh", full_shape, fresh, spec.inputs(full_shape, fresh)), *found]
    return found


def reference(op: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The op's torch expression on float64 copies of the inputs, on the CPU."""
    spec = OPS[op]
    args = [torch.from_numpy(inputs[n]).to(torch.float64 if inputs[n].dtype == np.float32 else torch.int64)
            for n in spec.torch_args]
    return kernels.function("torch", op)(*args).numpy()


COMPARED_AT_ONCE = 1 << 18  # elements: each chunk's float64 temporaries (2 MiB) stay in the CPU's caches


def compare(out: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> dict:
    """The output against the float64 reference, element by element, a chunk at a time: the same numbers to the
    bit as on whole arrays (each maximum the maximum of the chunks', NaN kept), whose temporaries were a dozen
    passes over memory of 8 bytes an element. At 16384x4096 on the CPU machine: 2.9 to 6.3 s whole, 0.5 s in
    chunks; a sweep check compares each implementation at up to 65536x4096."""
    flat_out, flat_ref = (a.reshape(-1) for a in np.broadcast_arrays(out, ref))
    within, nonfinite, max_abs, max_rel, worst = True, 0, [0.0], [0.0], [0.0]
    for start in range(0, flat_out.size, COMPARED_AT_ONCE):
        o = flat_out[start:start + COMPARED_AT_ONCE].astype(np.float64)
        r = flat_ref[start:start + COMPARED_AT_ONCE]
        finite = np.isfinite(o)
        err = np.abs(np.where(finite, o, 0.0) - r)
        scale = np.abs(r)
        significant = scale > atol
        ratio = err / (atol + rtol * scale)
        within = within and bool(finite.all() and (ratio <= 1.0).all())
        nonfinite += int((~finite).sum())
        max_abs.append(err.max(initial=0.0))
        max_rel.append((err[significant] / scale[significant]).max(initial=0.0))
        worst.append(ratio.max(initial=0.0))
    return {
        "passed": within and out.shape == ref.shape,
        "max_abs_error": float(np.max(max_abs)),
        "max_rel_error": float(np.max(max_rel)),
        "worst_tolerance_ratio": float(np.max(worst)),
        "nonfinite_elements": nonfinite,
        "checked_elements": int(out.size),
    }


def _run_case(run, op: str, case: Case, device: str) -> np.ndarray:
    t = {n: torch.from_numpy(a).to(device) for n, a in case.inputs.items()}
    t["out"] = torch.full(OPS[op].output_shape(case.shape), float("nan"), dtype=torch.float32, device=device)
    out = run(t, case.shape)
    if device == "cuda":
        torch.cuda.synchronize()
    return out.detach().cpu().numpy()


def run_checks(run, op: str, subject: str, device: str, cases: list[Case], tolerance: dict,
               hold=lambda case: nullcontext()) -> pd.DataFrame:
    """Each case run under `hold(case)` (the GPU lock a check takes, gpulock.for_check), its float64 reference and the
    comparison outside it: at the sweep's largest shapes those take seconds of CPU, for which no measurement window
    need wait."""
    if device == "cuda":
        from .workload import full_fp32
        full_fp32()
    rows = []
    for case in cases:
        with step(f"check {op} {subject} on {device}: case {case.name} at {OPS[op].label(case.shape)}"):
            with hold(case), phase(CHECK):  # the wait for the lock is its own phase (gpulock.take)
                out = _run_case(run, op, case, device)
            with phase(CHECK):
                expected = reference(op, case.inputs) if case.expected is None else case.expected
                result = compare(out, expected, tolerance["rtol"], tolerance["atol"])
        rows.append({"op": op, "subject": subject, "shape": OPS[op].label(case.shape),
                     "case": case.name, "device": device, "seed": case.seed, **result,
                     "rtol": tolerance["rtol"], "atol": tolerance["atol"]})
    return pd.DataFrame(rows)


def failures(table: pd.DataFrame) -> str | None:
    """One line per failed case, naming op, subject, shape and error; None when all passed."""
    bad = table[~table["passed"]]
    if bad.empty:
        return None
    return "\n".join(
        f"check failed: {r.op} / {r.subject} at {r.shape} ({r.case}, {r.device}): max abs error "
        f"{r.max_abs_error:.3g}, max rel error {r.max_rel_error:.3g}, {r.nonfinite_elements} non-finite "
        f"of {r.checked_elements}" for r in bad.itertuples())


def gate(table: pd.DataFrame) -> None:
    message = failures(table)
    if message:
        raise PipelineError(message)
