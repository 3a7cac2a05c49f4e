"""What every operation declares: its shapes, inputs, reference call and hand-written kernel variants.

An op module (matmul.py, ...) builds one `Op`. Adding an op or a variant touches that module and a kernel
file, nothing else.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Shape = dict[str, int]
Inputs = dict[str, np.ndarray]


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return cdiv(a, b) * b


def normal(rng: np.random.Generator, *size: int) -> np.ndarray:
    """The inputs' distribution: normal(0, 0.25) drawn in float64 and stored as float32, as the original."""
    return rng.normal(0.0, 0.25, size).astype(np.float32)


def redraw_normal(tensors: dict, generator) -> None:
    """Fresh values for a timed call (verified.py), on the tensors' device: normal(0, 0.25), as `normal` draws."""
    for t in tensors.values():
        t.normal_(0.0, 0.25, generator=generator)


@dataclass(frozen=True)
class TensorMap:
    """An argument passed as a TMA descriptor of the named FP32 tensor, `box` elements a copy: the contract
    declares it, the launcher (launch.py) encodes it on the GPU."""

    tensor: str
    box: tuple[int, ...]


GRID_LIMITS = (2**31 - 1, 65535, 65535)  # blocks along x, y and z a launch may have (every arch since sm_30)


@dataclass(frozen=True)
class LaunchContract:
    """How a hand-written kernel is launched: the one place for its grid, block, shared memory and arguments.

    `args` maps (tensors by input name plus "out", shape) to the kernel's arguments in declaration order;
    integers must be numpy int32 and floats numpy float32, as the C signature says; a `TensorMap` names a tensor
    passed as a TMA descriptor.
    """

    entry: str
    block: tuple[int, int, int]
    grid: Callable[[Shape], tuple[int, int, int]]
    args: Callable[[dict, Shape], tuple]
    dynamic_shared_bytes: int = 0
    supports: Callable[[Shape], str | None] = lambda shape: None  # a reason the shape is out of range
    # Another entry of the same cubin that takes this call instead (tensors, shape -> its contract, or None for
    # this one): a TMA kernel hands shapes whose rows are not 16-byte strides to a plain one.
    route: Callable[[dict, Shape], LaunchContract | None] = lambda tensors, shape: None
    # Scratch tensors a call needs (shape -> name -> FP32 tensor shape), allocated once per shape by the launcher
    # and passed among the tensors, and entries of the same cubin launched first and last, in order, on the same
    # stream (a copy of A into rows of 16-byte strides before the TMA kernel reads it; a product's batches put
    # back into the output's layout after it).
    workspace: Callable[[Shape], dict[str, tuple[int, ...]]] | None = None
    before: tuple[LaunchContract, ...] = ()
    after: tuple[LaunchContract, ...] = ()

    def refusal(self, shape: Shape) -> str | None:
        """Why a call at `shape` cannot be made: the kernel's own range (`supports`), then CUDA's grid limits for
        every launch of the call (at least one block, at most the limit, along each axis), which a shape outside
        them would meet as a launch error."""
        reason = self.supports(shape)
        if reason:
            return reason
        for step in (*self.before, self, *self.after):
            grid = step.grid(shape)
            for axis, size, limit in zip("xyz", grid, GRID_LIMITS, strict=True):
                if not 1 <= size <= limit:
                    return f"{step.entry}'s grid would be {size} blocks along {axis}, outside CUDA's 1 to {limit}"
        return None


@dataclass(frozen=True)
class KernelVariant:
    """A hand-written kernel that builds into a cubin: kernels/<toolchain>/<op>/<name>.<suffix> (CUDA C++ unless
    it names another toolchain of toolchains.py), launched by its contract."""

    name: str
    op: str
    contract: LaunchContract
    design: str
    arch_specific: bool = False  # uses features of one arch only (wgmma: sm_90a), built for that target
    toolchain: str = "cuda"  # the hand-written implementation it is measured as

    @property
    def source(self) -> str:
        from ..toolchains import TOOLCHAINS

        return TOOLCHAINS[self.toolchain].source(self.op, self.name)

    def target(self, arch: str) -> str:
        """What NVRTC builds this variant for on `arch`: sm_90a for an arch-specific one on sm_90."""
        return f"{arch}a" if self.arch_specific and not arch.endswith("a") else arch


@dataclass(frozen=True)
class EdgeCase:
    """A named input set outside the normal distribution (constant rows, a graph with no edges, ...)."""

    name: str
    shape: Shape
    make: Callable[[np.random.Generator, Shape], Inputs]


@dataclass(frozen=True)
class Precision:
    """An op's precision contract, as the compute floor reads it (floors.py): the unit its cheapest honest
    implementation computes on (a unit of floors.UNITS) and how many of that unit's FLOPs each FP32 FLOP of `work`
    costs there (3xTF32: three TF32 products, hi*hi + hi*lo + lo*hi, for each FP32 product)."""

    unit: str
    per_flop: int = 1


@dataclass(frozen=True)
class Library:
    """The library a user would pick for the op instead of writing a kernel: measured as the implementation
    `library`, called from kernels/library/<op>.py with the inputs `args` names, in order; the distribution
    `package` is what a machine installs (its version is recorded with the GPU's description, gpu.describe) and
    `title` how the note names it."""

    title: str
    package: str
    args: tuple[str, ...]
    # a reason a shape is out of the library's range (as a kernel's launch contract says it): the gate leaves its
    # small shapes and edge cases out there, the sweep its points, and a call there is refused with the reason
    supports: Callable[[Shape], str | None] = lambda shape: None
    # other libraries a user would pick for the op that are not measured here, each with the reason the note gives
    unmeasured: tuple[Unmeasured, ...] = ()


@dataclass(frozen=True)
class Unmeasured:
    """A library made for an op that this project does not measure: its name, its distribution, and why not (a
    clause the note prints after "not measured:", its own words)."""

    title: str
    package: str
    why: str


FP32_FMA = Precision("fp32_fma")  # the FP32 pipes, one of their FLOPs (an FMA is two) for each FLOP
THREE_TF32 = Precision("tf32_tensor", 3)


@dataclass(frozen=True)
class Op:
    name: str
    title: str  # as the note and the figures name it
    order: int  # where the note's tables and the figures place it among the ops
    dims: tuple[str, ...]
    make_inputs: Callable[[np.random.Generator, Shape], Inputs]
    output_shape: Callable[[Shape], tuple[int, ...]]
    torch_args: tuple[str, ...]
    small_shapes: tuple[Shape, ...]
    # The least work any implementation must do at a shape: (bytes to and from memory, each input read once and
    # the output written once; floating-point operations). The floors, the roofline and the sweep are drawn from it.
    work: Callable[[Shape], tuple[int, int]]
    # The inputs kernels/triton/<op>.py takes, in order; None where the op has no Triton kernel.
    triton_args: tuple[str, ...] | None = None
    # A shape between the small ones and the seed's, small enough for the CPU: the tests check every case of the
    # op's CPU implementations there. Its first small shape where it names none.
    medium_shape: Shape | None = None
    edge_cases: tuple[EdgeCase, ...] = ()
    kernel_variants: dict[str, KernelVariant] = field(default_factory=dict)
    may_be_zero: tuple[str, ...] = ()  # dims a shape may set to 0 (a graph with no edges)
    # What the compute floor holds its kernel times to: the FLOPs of `work` on this unit (floors.py). Not the
    # contract of each implementation but the cheapest among them (the FP32 pipes' peak is no floor where one of
    # them computes on tensor cores), so that the floor bounds every implementation that passes the check.
    precision: Precision = FP32_FMA
    # Fresh values for the floating-point inputs of every timed call, drawn on the device from a torch.Generator
    # (float tensors by name, generator): an op whose inputs are not normal(0, 0.25) says how it draws them.
    redraw: Callable[[dict, object], None] = redraw_normal
    # Shown stage by stage in a progression (its table and figure): an op whose hand-written kernel the stages
    # rewrote. The dim that holds a row's width, where the sweep figure draws a line per width.
    in_progression: bool = False
    sweep_lines_by: str | None = None
    library: Library | None = None  # the op's library peer, where one is made for it

    @property
    def cpu_test_shape(self) -> Shape:
        return self.medium_shape or self.small_shapes[0]

    @property
    def implementations(self) -> tuple[str, ...]:
        """What the op can be measured as: its torch reference (kernels/torch/<op>.py) and torch.compile of it,
        its Triton kernel and its library where it has them, and each toolchain its hand-written variants are built
        with."""
        triton = ("triton",) if self.triton_args is not None else ()
        library = ("library",) if self.library is not None else ()
        return ("torch", *triton, "compiled", *library, *sorted({v.toolchain for v in self.kernel_variants.values()}))

    def label(self, shape: Shape) -> str:
        """The shape as the note writes it: 1024x1024x1024, 4096x768, ..."""
        return "x".join(str(shape[d]) for d in self.dims)

    def parse_label(self, label: str) -> Shape:
        """The inverse of `label`: 1024x1024x1024 back to {"m": 1024, "n": 1024, "k": 1024}."""
        values = label.split("x")
        if len(values) != len(self.dims) or not all(v.isdigit() for v in values):
            raise ValueError(f"{self.name}: shape '{label}' is not {'x'.join(self.dims)}")
        return dict(zip(self.dims, map(int, values), strict=True))

    def inputs(self, shape: Shape, seed: int) -> Inputs:
        """Deterministic inputs: a fresh generator per op from `seed`, as the original project drew them."""
        return self.make_inputs(np.random.default_rng(seed), shape)

    def variant(self, name: str) -> KernelVariant:
        return self.kernel_variants[name]

    def refusal(self, implementation: str, variant: str | None, shape: Shape) -> str | None:
        """Why an implementation (a hand-written variant by its launch contract, the library by its range) does not
        take `shape`; None where it does."""
        if variant:
            return self.variant(variant).contract.refusal(shape)
        if implementation == "library" and self.library is not None:
            return self.library.supports(shape)
        return None
