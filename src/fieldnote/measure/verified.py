"""What a timed call computed, verified: every timed call of the timing and capture stages is checked, not only the
gate's calls before them, and no two timed calls of a process see the same inputs (docs/integrity.md).

Before each timed call, outside the timed window and outside its NVTX range, every floating-point input is drawn
afresh on the call's device (the op's `redraw`, a counter-based generator seeded from a number this process drew
at random and the call's own count, so no input set repeats and none can be known before the run) and the output
is poisoned with NaN; integer inputs (a graph's edges) stay as they were. After it, the same set is drawn again into
buffers the call never saw: the live inputs must equal it, and the output must lie within the namespace's tolerance
of that set's float64 reference, computed then on the device from the op's torch expression. A kernel that keeps an
earlier call's output, computes one call's result for several, hands back a result remembered by pointer or by
content, drops below the precision contract or writes its inputs fails on the call where it does; so does one that
leaves its work on another stream, which the comparison on the timing stream sees unfinished.
After the measurement, the integer inputs are compared, byte for byte, with the host's copy (out of a kernel's
reach), and the generator with itself: a set drawn twice from one seed is the same to the byte.
"""
from __future__ import annotations

import itertools
import secrets

from ..core.errors import PipelineError

# Every draw of this process is seeded _BASE + its count: a base drawn at random, so a run's inputs cannot be known
# (or their results computed) before it, and a count, so no two calls of a process share a set. The base is named in
# a failure's message, which is what reproducing it needs.
_BASE = secrets.randbits(62)
_draws = itertools.count()
# What each set is drawn again into, for the comparison after its call: buffers no call ever sees, one per device
# and shapes of the drawn inputs, for every subject of a process (a sweep point's four implementations share one).
_truths: dict[tuple, dict] = {}
POOLED_BYTES = 2 << 30  # a graph replay's calls each get their own inputs and output, up to this many bytes in all


def forget_truths() -> None:
    """The verification's buffers released (a sweep capture's next point has other shapes)."""
    _truths.clear()


class Measured:
    """One subject's call, with what verifies it. Calling it runs the call alone (the timed part)."""

    def __init__(self, run, tensors: dict, shape: dict, op: str, what: str, tolerance: dict | None,
                 host: dict | None = None):
        """`host`: the inputs as numpy arrays, the ones `tensors` were made from (kept, not copied); without it,
        copies of `tensors` on the host. Only the integer inputs are kept: the others are drawn at every call."""
        import torch

        from ..registry.ops import OPS

        self.run, self.tensors, self.shape, self.op, self.what = run, tensors, shape, op, what
        self.tolerance = tolerance
        self.inputs = [n for n in tensors if n != "out"]
        self.drawn = [n for n in self.inputs if tensors[n].is_floating_point()]
        self.kept = {n: tensors[n].clone() for n in self.inputs if n not in self.drawn}
        self.host = {n: torch.from_numpy(host[n]) if host is not None else tensors[n].cpu().clone()
                     for n in self.kept}
        self.generator = torch.Generator(device=tensors["out"].device)
        self.redraw = OPS[op].redraw
        self.seed = None
        self.calls = 0
        self.last = None

    def __call__(self):
        self.last = self.run(self.tensors, self.shape)
        return self.last

    def draw(self, into: dict, seed: int) -> None:
        self.generator.manual_seed(seed)
        self.redraw({n: into[n] for n in self.drawn}, self.generator)

    def prime(self, call: int) -> None:
        """Before timed call `call` (outside its window): a set of inputs never drawn before, the output NaN."""
        self.seed = fresh_seed()
        self.draw(self.tensors, self.seed)
        self.tensors["out"].fill_(float("nan"))

    def truth(self) -> dict:
        """The inputs of the last primed call, drawn again where no call can reach them."""
        import torch

        key = (self.tensors["out"].device, *((n, tuple(self.tensors[n].shape)) for n in self.drawn))
        if key not in _truths:
            _truths[key] = {n: torch.empty_like(self.tensors[n]) for n in self.drawn}
        self.draw(_truths[key], self.seed)
        return {**_truths[key], **self.kept}

    def verify(self, call: int) -> None:
        """After timed call `call`: the inputs as drawn, and the output within tolerance of their reference."""
        import torch

        from .check import reference

        if self.tolerance is None:
            return
        if self.seed is None:
            self.fail(call, "the call was not primed")
        truth = self.truth()
        for n in self.inputs:
            if not torch.equal(self.tensors[n], truth[n]):
                self.fail(call, f"input '{n}' was changed by the call")
        out, expected = self.last, reference(self.op, truth, truth[self.inputs[0]].device)
        if out.shape != expected.shape:
            self.fail(call, f"output shape {tuple(out.shape)}, not {tuple(expected.shape)}")
        if not within(out, expected, self.tolerance):
            self.fail(call, wrong(out, expected, self.tolerance))
        self.calls += 1

    def alike(self) -> Measured:
        """The same call on buffers of its own (a graph replay's calls each read their own inputs)."""
        tensors = {n: t.clone() for n, t in self.tensors.items()}
        twin = Measured(self.run, tensors, self.shape, self.op, self.what, self.tolerance)
        twin.host = self.host
        return twin

    def checksum(self) -> None:
        """After the measurement: the integer inputs, which no draw renews, as the host holds them, to the byte."""
        for n, kept in self.kept.items():
            if not same_bytes(kept.cpu(), self.host[n]):
                raise PipelineError(f"{self.what}: input '{n}' changed during the measurement")

    def fail(self, call: int, why: str):
        raise PipelineError(f"{self.what}: timed call {call + 1} computed a wrong result: {why}; a measurement "
                            f"that was not what the gate checked is not kept (inputs drawn from seed {self.seed})")


def fresh_seed() -> int:
    """A seed no draw of this process had (the ceiling's copies draw theirs from it too)."""
    return _BASE + next(_draws)


def within(out, expected, tolerance: dict) -> bool:
    """Every element within atol + rtol times the reference's magnitude (NaN and infinities are not)."""
    error = out.double().sub_(expected).abs_()
    return bool(error.le_(expected.abs().mul_(tolerance["rtol"]).add_(tolerance["atol"])).all())


def wrong(out, expected, tolerance: dict) -> str:
    import torch

    finite = torch.isfinite(out)
    if not bool(finite.all()):
        return (f"{int((~finite).sum())} of {out.numel()} output elements not finite (not written, or left from the "
                "poison before the call)")
    worst = float((out.double() - expected).abs().max())
    return (f"outside the tolerance (largest absolute error {worst:.3g}, rtol = {tolerance['rtol']:g}, atol = "
            f"{tolerance['atol']:g})")


def pooled(fn, calls: int) -> list:
    """`calls` calls of `fn`, each with inputs and output of its own where it is a Measured (as many as fit in
    POOLED_BYTES, at least one): what a CUDA graph of them replays, so no call of a replay sees another's inputs."""
    if not isinstance(fn, Measured):
        return [fn] * calls
    size = sum(t.numel() * t.element_size() for t in fn.tensors.values())
    return [fn] + [fn.alike() for _ in range(min(calls, max(1, POOLED_BYTES // max(size, 1))) - 1)]


def same_bytes(a, b) -> bool:
    """Equal shapes, dtypes and bytes (NaN payloads and the sign of zero included, which == would not compare)."""
    import torch

    return (a.shape == b.shape and a.dtype == b.dtype
            and torch.equal(a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8)))


def verifies(fn) -> bool:
    """Whether a call's timed calls are verified (a Measured with a tolerance; a plain callable in tests is not)."""
    return isinstance(fn, Measured) and fn.tolerance is not None


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
