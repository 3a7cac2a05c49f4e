"""The floors' kernels, run on the GPU beside an op: the copy of its traffic (kernels/ceiling/stream.cu) in several
launch configurations, and the probes of its unit (cuBLAS's TF32 product, kernels/ceiling/fma.cu's FMA chains), each
a measured call with `prime` and `verify`. What they measure and how it judges a kernel: floors.py."""
from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..core.errors import PipelineError
from ..core.paths import KERNELS
from ..evidence.floors import FMA_CHAINS, FmaChains, Tf32Product, probes_of, traffic

SOURCE = KERNELS / "ceiling" / "stream.cu"
FMA_SOURCE = KERNELS / "ceiling" / "fma.cu"
THREADS = 256
RESIDENT_BLOCKS_PER_SM = 2048 // THREADS  # as many threads as an SM holds at once (sm_80 and later)
@dataclass(frozen=True)
class Config:
    """One way to launch the copy: the entry, and how many float4 each thread moves per grid."""

    name: str
    entry: str
    resident: bool  # a grid the GPU holds at once, striding; else one float4 (or four) per thread

    def grid(self, n: int, sms: int) -> int:
        if self.resident:
            return sms * RESIDENT_BLOCKS_PER_SM
        per_thread = 4 if self.entry == "stream_x4" else 1
        return max(1, math.ceil(n / (THREADS * per_thread)))


CONFIGS = (Config("thread", "stream", False), Config("thread_x4", "stream_x4", False),
           Config("resident", "stream", True), Config("resident_x4", "stream_x4", True))


class Stream:
    """One configuration of the copy, with buffers of the op's traffic; `prime` and `verify` as a measured call's."""

    def __init__(self, op: str, shape: dict, config: Config, module):
        import torch

        read, written = traffic(op, shape)
        self.what = f"{op}: the ceiling's copy ({config.name})"
        self.n_in, self.n_out = math.ceil(read / 16), math.ceil(written / 16)
        device = torch.cuda.current_device()
        self.generator = torch.Generator("cuda")
        self.tensors = {"in": torch.empty(4 * self.n_in, device="cuda"),
                        "out": torch.empty(4 * self.n_out, device="cuda"), "sink": torch.zeros(1, device="cuda")}
        sms = torch.cuda.get_device_properties(device).multi_processor_count
        self.shape = {"n_in": self.n_in, "n_out": self.n_out}
        self.kernel = module(config, config.grid(max(self.n_in, self.n_out), sms))

    def prime(self, call: int) -> None:
        """Values no call of the process saw, as an op's inputs are drawn (verified.Measured.prime)."""
        from .verified import fresh_seed

        self.tensors["in"].normal_(generator=self.generator.manual_seed(fresh_seed()))
        self.tensors["out"].fill_(float("nan"))

    def __call__(self) -> None:
        self.kernel(self.tensors, self.shape)

    def verify(self, call: int) -> None:
        """The copy moved every byte: the output is the input where both exist, zero past the input."""
        import torch

        out, common = self.tensors["out"], 4 * min(self.n_in, self.n_out)
        if not (torch.equal(out[:common], self.tensors["in"][:common]) and bool((out[common:] == 0).all())):
            raise PipelineError(f"{self.what}: call {call + 1} did not copy its input")


def streams(op: str, shape: dict) -> dict:
    """Everything timed beside the op, by configuration: every configuration of the copy of its traffic and the
    probes of its precision contract's unit (`probes_of`), each built once (NVRTC) for this GPU's arch."""
    cubin = _built(SOURCE)

    def args(t, s):
        return (t["in"], t["out"], np.int32(s["n_in"]), np.int32(s["n_out"]), t["sink"])

    def module(config: Config, grid: int):
        return _kernel(cubin, config.name, config.entry, grid, args)

    copies = {c.name: Stream(op, shape, c, module) for c in CONFIGS}
    return copies | {p.name: CALLS[p.unit](op, p) for p in probes_of(op, shape)}


@functools.cache
def _built(source) -> bytes:
    """`source`'s cubin for this GPU's arch, built once a process (NVRTC)."""
    import torch

    from .build.cuda import compile_source

    major, minor = torch.cuda.get_device_capability()
    return compile_source(source, f"sm_{major}{minor}")[0]


def _kernel(cubin: bytes, name: str, entry: str, grid: int, args):
    """A ceiling's kernel: `entry` of `cubin` on a 1-D grid of `grid` blocks of THREADS."""
    from ..registry.ops import KernelVariant, LaunchContract
    from .launch import CudaKernel

    contract = LaunchContract(entry=entry, block=(THREADS, 1, 1), grid=lambda s: (grid, 1, 1), args=args)
    return CudaKernel(cubin, KernelVariant(name=name, op="ceiling", contract=contract, design=""))


@contextmanager
def tf32_allowed():
    """TF32 in cuBLAS for the calls inside, and the process's setting as it was after them (check.full_fp32
    forbids TF32 everywhere else)."""
    import torch

    precision, allowed = torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(precision)
        torch.backends.cuda.matmul.allow_tf32 = allowed


def tf32(x):
    """x with the 13 low bits of each mantissa cleared: a value TF32 holds exactly."""
    import torch

    return torch.bitwise_and(x.view(torch.int32), ~0x1FFF).view(torch.float32)


class Tf32Call:
    """cuBLAS's TF32 product as a measured call: `prime` poisons the output, `verify` holds it to the float64
    product of the same inputs."""

    def __init__(self, op: str, probe: Tf32Product):
        import torch

        n, generator = probe.n, torch.Generator("cuda").manual_seed(0)
        self.what = f"{op}: the compute probe ({probe.name})"
        # inputs TF32 holds exactly, so that the tensor cores read them as they are: the product then differs
        # from the float64 one by its FP32 accumulation alone
        a, b = (tf32(torch.randn(n, n, device="cuda", generator=generator)) for _ in range(2))
        self.tensors = {"a": a, "b": b, "out": torch.empty(n, n, device="cuda")}
        wide_a, wide_b = a.double(), b.double()
        self.expected = (wide_a @ wide_b).float()
        # n FP32 additions, each truncated at worst, err by n * 2^-23 of the sum of the terms' magnitudes; twice
        # that passes any order of summation and fails an output poisoned, zeroed or summed over part of k
        self.bound = (wide_a.abs() @ wide_b.abs()).mul_(2 * n * 2.0**-23).float()
        self.scratch = torch.empty_like(self.expected)

    def prime(self, call: int) -> None:
        self.tensors["out"].fill_(float("nan"))

    def __call__(self) -> None:
        import torch

        t = self.tensors
        with tf32_allowed():
            torch.matmul(t["a"], t["b"], out=t["out"])

    def verify(self, call: int) -> None:
        import torch

        torch.sub(self.tensors["out"], self.expected, out=self.scratch).abs_()
        if not bool((self.scratch <= self.bound).all()):
            raise PipelineError(f"{self.what}: call {call + 1} did not compute its product")


class FmaCall:
    """fma.cu as a measured call: `prime` poisons the output, `verify` finds every thread's count of its steps."""

    def __init__(self, op: str, probe: FmaChains):
        import torch

        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        blocks = probe.waves * props.multi_processor_count * RESIDENT_BLOCKS_PER_SM
        self.what = f"{op}: the compute probe ({probe.name})"
        self.tensors = {"out": torch.empty(blocks * THREADS, device="cuda")}
        # a = b = 1: each chain counts its steps from its index, exactly (below 2^24)
        steps = np.int32(probe.steps)
        self.kernel = _kernel(_built(FMA_SOURCE), probe.name, "fma_chains", blocks,
                              lambda t, s: (t["out"], steps, np.float32(1.0), np.float32(1.0)))
        self.expected = float(FMA_CHAINS * probe.steps + FMA_CHAINS * (FMA_CHAINS - 1) // 2)

    def prime(self, call: int) -> None:
        self.tensors["out"].fill_(float("nan"))

    def __call__(self) -> None:
        self.kernel(self.tensors, {})

    def verify(self, call: int) -> None:
        if not bool((self.tensors["out"] == self.expected).all()):
            raise PipelineError(f"{self.what}: call {call + 1} did not run every step of its chains")


CALLS = {"tf32_tensor": Tf32Call, "fp32_fma": FmaCall}  # a probe of each unit as a measured call
