"""The correctness gate: every output element finite and allclose(out, reference, rtol, atol).

The reference is the op's torch expression in float64, on the device the implementation runs on, from the
inputs as drawn (computed before the run). Outputs are poisoned with NaN before each run, so an element the kernel
never writes fails. Cases: the namespace's full shape from its input file, the same shape on freshly drawn inputs
(seed recorded), the small shapes and the edge cases.
"""
from __future__ import annotations

import secrets
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..core.errors import PipelineError
from ..core.progress import CHECK, phase, step
from ..registry.ops import OPS, Shape
from . import kernels


@dataclass(frozen=True)
class Case:
    name: str
    shape: Shape
    seed: int | None
    inputs: dict[str, np.ndarray]

    @property
    def measured(self) -> bool:
        """At a shape the namespace times and captures: its full shape (the input file's or fresh inputs) or a
        sweep point; the small shapes and edge cases are checked only."""
        return self.name in ("full", "fresh", "sweep")


def cases(op: str, full_shape: Shape, seed: int, full_inputs: dict | None, small_only: bool,
          implementation: str | None = None) -> list[Case]:
    """The gate's cases. The library is checked at the small shapes and edge cases inside its declared range
    (Library.supports: a peer checked where it runs); ours at every one, whatever its launch contract says."""
    spec = OPS[op]
    inside = (lambda s: not spec.refusal("library", None, s)) if implementation == "library" else (lambda s: True)
    found = [Case("small", s, seed, spec.inputs(s, seed)) for s in spec.small_shapes if inside(s)]
    found += [Case(f"edge:{e.name}", e.shape, seed, e.make(np.random.default_rng(seed), e.shape))
              for e in spec.edge_cases if inside(e.shape)]
    if not small_only:
        fresh = secrets.randbits(32)
        full = full_inputs if full_inputs is not None else spec.inputs(full_shape, seed)
        found = [Case("full", full_shape, seed, full),
                 Case("fresh", full_shape, fresh, spec.inputs(full_shape, fresh)), *found]
    return found


def full_fp32() -> None:
    """FP32 as the contract says: no TF32 anywhere torch could choose it."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def reference(op: str, inputs: dict, device: str = "cpu") -> torch.Tensor:
    """The op's torch expression on float64 copies of the inputs (arrays or tensors), on `device`: torch's own
    float64 kernels, not the float32 path of any implementation checked against it. On the GPU at the sweep's largest
    shapes it takes a hundredth of the CPU's time (GELU 65536x4096: 0.08 s against 0.77, on the H200's host idle)."""
    spec = OPS[op]
    args = [torch.as_tensor(inputs[n]).to(device) for n in spec.torch_args]
    return kernels.function("torch", op)(*(a.double() if a.is_floating_point() else a.long() for a in args))


COMPARED_AT_ONCE = {"cpu": 1 << 18, "cuda": 1 << 27}  # elements: on the CPU each chunk's float64 temporaries (2 MiB)
# stay in its caches; on the GPU a chunk's (1 GiB) bound what a sweep point's check holds beside the other jobs'


def compare(out, ref, rtol: float, atol: float) -> dict:
    """The output against the float64 reference, element by element, a chunk at a time, on the device they are on
    (arrays on the CPU): the same numbers to the bit whatever the chunk (each maximum the maximum of the chunks',
    NaN kept). On the CPU whole arrays took a dozen passes over memory of 8 bytes an element (16384x4096 on the CPU
    machine: 2.9 to 6.3 s whole, 0.5 s in chunks); on the GPU the GELU's 65536x4096 takes 0.23 s against the
    CPU's 4.18 (the H200's host, idle)."""
    out = torch.as_tensor(out)
    ref = torch.as_tensor(ref).to(out.device)
    flat_out, flat_ref = (t.reshape(-1) for t in torch.broadcast_tensors(out, ref))
    at_once = COMPARED_AT_ONCE["cpu" if flat_out.device.type == "cpu" else "cuda"]
    zero = torch.zeros((), dtype=torch.float64, device=flat_out.device)
    within, nonfinite, max_abs, max_rel, worst = [], [], [zero], [zero], [zero]
    for start in range(0, flat_out.numel(), at_once):
        o = flat_out[start:start + at_once].double()
        r = flat_ref[start:start + at_once]
        finite = torch.isfinite(o)
        err = (torch.where(finite, o, zero) - r).abs()
        scale = r.abs()
        ratio = err / (atol + rtol * scale)
        within.append(finite.all() & (ratio <= 1.0).all())
        nonfinite.append((~finite).sum())
        max_abs.append(err.max())
        max_rel.append(torch.where(scale > atol, err / scale, zero).max())
        worst.append(ratio.max())
    return {
        "passed": (bool(torch.stack(within).all()) if within else True) and out.shape == ref.shape,
        "max_abs_error": float(torch.stack(max_abs).max()),
        "max_rel_error": float(torch.stack(max_rel).max()),
        "worst_tolerance_ratio": float(torch.stack(worst).max()),
        "nonfinite_elements": int(torch.stack(nonfinite).sum()) if nonfinite else 0,
        "checked_elements": int(out.numel()),
    }


def _run_case(run, op: str, case: Case, device: str, tolerance: dict) -> dict:
    """The case's inputs on the device, their reference, the run on poisoned output, the comparison: all there."""
    t = {n: torch.from_numpy(a).to(device) for n, a in case.inputs.items()}
    expected = reference(op, t, device)  # before the run: what a kernel does to its inputs cannot reach it
    t["out"] = torch.full(OPS[op].output_shape(case.shape), float("nan"), dtype=torch.float32, device=device)
    out = run(t, case.shape)
    return compare(out.detach(), expected, tolerance["rtol"], tolerance["atol"])


def run_checks(run, op: str, subject: str, device: str, cases: list[Case], tolerance: dict,
               hold=lambda case: nullcontext()) -> pd.DataFrame:
    """Each case (its reference, the run and the comparison, on the device) under `hold(case)`, the GPU lock a check
    takes (gpulock.for_check)."""
    if device == "cuda":
        full_fp32()
    rows = []
    for case in cases:
        with step(f"check {op} {subject} on {device}: case {case.name} at {OPS[op].label(case.shape)}"):
            with hold(case), phase(CHECK):  # the wait for the lock is its own phase (gpulock.take)
                result = _run_case(run, op, case, device, tolerance)
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
