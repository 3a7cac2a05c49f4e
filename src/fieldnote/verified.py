"""What a timed call computed, verified: every timed call of the timing and capture stages is checked, not only the
gate's calls before them (docs/integrity.md).

Before each timed call, outside the timed window and outside its NVTX range, the live inputs are loaded from one
of two input sets (the namespace's inputs, and the same with every float input negated) and the output is
poisoned with NaN. After it, the output is compared with that set's float64 reference (computed once on the GPU
from the op's torch expression) at the namespace's tolerance, as bounds (reference minus and plus the tolerance,
computed with it), and the live inputs with the set they were loaded from. A kernel that keeps an earlier call's
output, computes one call's result for several, hands back a result cached by pointer, drops below the precision
contract or writes its inputs fails on the call where it does; so does one that leaves its work on another stream,
which the comparison on the timing stream sees unfinished.
After the measurement both input sets are compared, byte for byte, with what they were before it: the first with the
host's copy of the inputs (out of a kernel's reach), the second with the first negated.
"""
from __future__ import annotations

from .errors import PipelineError

SETS = 2

# The input sets and the bounds of their float64 references, one per drawing of a process: the implementations of a
# sweep point are prepared from one drawing (`host`, the same arrays), and compute the same references. Each with its
# own copies, the GELU's and the layer norm's sweep captures held 65 GB of the GPU each (two input sets and two
# float64 references a call, four implementations a point), and beside the others one ran out of memory in an
# h200-001 copy's run (2026-12-03). The host arrays are kept in the entry, so that their ids stay theirs.
_pristine: dict[tuple, tuple] = {}


class Measured:
    """One subject's call, with what verifies it. Calling it runs the call alone (the timed part)."""

    def __init__(self, run, tensors: dict, shape: dict, op: str, what: str, tolerance: dict | None,
                 host: dict | None = None):
        """`host`: the inputs as numpy arrays, the ones `tensors` were made from (kept, not copied: a sweep's
        implementations share one drawing, and with it its input sets and references, `_pristine`); without it,
        copies of `tensors` on the host."""
        import torch

        from .check import reference

        self.run, self.tensors, self.shape, self.what = run, tensors, shape, what
        self.tolerance = tolerance
        self.inputs = [n for n in tensors if n != "out"]
        key = (op, tensors["out"].device, tolerance is not None, *((n, id(host[n])) for n in self.inputs)) \
            if host is not None else None
        if key in _pristine:
            _, self.sets, self.bounds = _pristine[key]
        else:
            self.sets = [{n: tensors[n].clone() for n in self.inputs}]
            self.sets.append({n: -t if t.is_floating_point() else t.clone() for n, t in self.sets[0].items()})
            self.bounds = None
            if tolerance is not None:
                device = tensors["out"].device
                self.bounds = [bounds_of(reference(op, s, device), tolerance) for s in self.sets]
                if tensors["out"].is_cuda:
                    torch.cuda.synchronize()
            if key is not None:
                _pristine[key] = (host, self.sets, self.bounds)
        self.host = {n: torch.from_numpy(host[n]) if host is not None else tensors[n].cpu().clone()
                     for n in self.inputs}
        self.calls = 0
        self.last = None

    def __call__(self):
        self.last = self.run(self.tensors, self.shape)
        return self.last

    def prime(self, call: int) -> None:
        """Before timed call `call` (outside its window): the live inputs from set call % SETS, the output NaN."""
        chosen = self.sets[call % SETS]
        for n in self.inputs:
            self.tensors[n].copy_(chosen[n])
        self.tensors["out"].fill_(float("nan"))

    def verify(self, call: int) -> None:
        """After timed call `call`: its output against its input set's reference, and the inputs unchanged."""
        import torch

        if self.bounds is None:
            return
        chosen, (low, high) = self.sets[call % SETS], self.bounds[call % SETS]
        for n in self.inputs:
            if not torch.equal(self.tensors[n], chosen[n]):
                self.fail(call, f"input '{n}' was changed by the call")
        out = self.last
        if out.shape != low.shape:
            self.fail(call, f"output shape {tuple(out.shape)}, not {tuple(low.shape)}")
        if not bool(torch.logical_and(out >= low, out <= high).all()):  # NaN and infinities fail both
            finite = torch.isfinite(out)
            if not bool(finite.all()):
                self.fail(call, f"{int((~finite).sum())} of {out.numel()} output elements not finite (not written, "
                                "or left from the poison before the call)")
            worst = float((out.double() - (low + high) / 2).abs().max())
            self.fail(call, f"outside the tolerance (largest absolute error {worst:.3g}, rtol = "
                            f"{self.tolerance['rtol']:g}, atol = {self.tolerance['atol']:g})")
        self.calls += 1

    def checksum(self) -> None:
        """After the measurement: both input sets as they were before it, to the byte. Each set used to go to the host
        for a SHA-256 when prepared and again here (a gigabyte a set at the GELU sweep's largest point, for each
        of four implementations): the GELU sweep capture of an h200-001 copy spent 41.9 s preparing and 35.9 s
        verifying, where the host's own copy needs no hashing (docs/pipeline-time.md, 2026-12-03)."""
        for n in self.inputs:
            if not same_bytes(self.sets[0][n].cpu(), self.host[n]):
                raise PipelineError(f"{self.what}: input set 0 changed during the measurement (input '{n}')")
            first = self.sets[0][n]
            if not same_bytes(self.sets[1][n], -first if first.is_floating_point() else first):
                raise PipelineError(f"{self.what}: input set 1 changed during the measurement (input '{n}')")

    def fail(self, call: int, why: str):
        raise PipelineError(f"{self.what}: timed call {call + 1} computed a wrong result: {why}; a measurement "
                            "that was not what the gate checked is not kept")


def bounds_of(reference, tolerance: dict) -> tuple:
    """What a call's output must lie within, element by element: the float64 reference minus and plus atol + rtol
    times its magnitude. Compared with the float32 output as it is (promoted inside the comparison), two passes of a
    comparison instead of the dozen of a float64 copy and its differences: inside a sweep capture's window, a GELU
    65536x4096 call's verification read and wrote some 37 GB before."""
    margin = reference.abs().mul_(tolerance["rtol"]).add_(tolerance["atol"])
    return reference - margin, margin.add_(reference)


def same_bytes(a, b) -> bool:
    """Equal shapes, dtypes and bytes (NaN payloads and the sign of zero included, which == would not compare)."""
    import torch

    return (a.shape == b.shape and a.dtype == b.dtype
            and torch.equal(a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8)))


def verifies(fn) -> bool:
    """Whether a call's timed calls are verified (a Measured with a tolerance; a plain callable in tests is not)."""
    return isinstance(fn, Measured) and fn.bounds is not None


def prime(fn, call: int) -> None:
    """Prime a call for timed call `call`, where it can be (a Measured or the ceiling's copy; a plain callable,
    in tests, cannot)."""
    if hasattr(fn, "prime"):
        fn.prime(call)


def verify(fn, call: int) -> None:
    if hasattr(fn, "verify"):
        fn.verify(call)


def checksum(calls: dict) -> None:
    for fn in calls.values():
        if isinstance(fn, Measured):
            fn.checksum()
