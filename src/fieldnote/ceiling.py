"""The floors an op's kernel times are held to, each measured in the same session as the op, warm and cold.

The memory floor: a copy of the op's own traffic (the bytes it must read and write at its shape) by
kernels/ceiling/stream.cu, in several launch configurations. A vendor's bandwidth is not a floor for an op whose
inputs stay in L2 between calls: at the seed shapes our GELU beat torch's own copy of the same bytes. What is a floor
is the fastest copy of those bytes on this GPU, in this session, with the cache in the same state. Warm, the copy's
inputs are rewritten before each call as an op's are (verified.prime), so both start from L2; cold, L2 is flushed
before each call of both.

The compute floor: the op's FLOPs (Op.work) times its precision contract's cost on its unit (Op.precision: three
TF32 FLOPs for each FP32 one for 3xTF32 on the tensor cores, one on the FP32 pipes), at the fastest rate a probe of
that unit reached in the session: cuBLAS's TF32 product of large square matrices, or kernels/ceiling/fma.cu's chains
of FMAs over the GPU's resident threads. The FP32 pipes' peak alone is no floor where a kernel computes on tensor
cores; the tensor cores' rate divided by the products the contract needs is.

A kernel whose whole interval lies below either floor's is flagged as not physical (docs/integrity.md).
"""
from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import PipelineError
from .paths import KERNELS

SOURCE = KERNELS / "ceiling" / "stream.cu"
FMA_SOURCE = KERNELS / "ceiling" / "fma.cu"
MEMORY, COMPUTE = "memory", "compute"  # the ceilings table's `kind`: a copy of the op's bytes, a probe of a unit
THREADS = 256
RESIDENT_BLOCKS_PER_SM = 2048 // THREADS  # as many threads as an SM holds at once (sm_80 and later)
PREFIX = "ceiling-"  # the range of configuration c of op o: `o:ceiling-c`, `o:ceiling-c:cold` (capture.range_name)


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


def traffic(op: str, shape: dict) -> tuple[int, int]:
    """(bytes read, bytes written) at the op's least traffic: its output (FP32) written once, the rest read."""
    from .ops import OPS

    spec = OPS[op]
    total, _ = spec.work(shape)
    written = 4 * math.prod(spec.output_shape(shape))
    return total - written, written


def range_of(op: str, config: str, cache: str = "warm") -> str:
    from .capture import range_name

    return range_name(op, PREFIX + config, cache)


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
    return copies | {p.name: p.make(op) for p in probes_of(op, shape)}


@functools.cache
def _built(source) -> bytes:
    """`source`'s cubin for this GPU's arch, built once a process (NVRTC)."""
    import torch

    from .build.cuda import compile_source

    major, minor = torch.cuda.get_device_capability()
    return compile_source(source, f"sm_{major}{minor}")[0]


def _kernel(cubin: bytes, name: str, entry: str, grid: int, args):
    """A ceiling's kernel: `entry` of `cubin` on a 1-D grid of `grid` blocks of THREADS."""
    from .launch import CudaKernel
    from .ops import CudaVariant, LaunchContract

    contract = LaunchContract(entry=entry, block=(THREADS, 1, 1), grid=lambda s: (grid, 1, 1), args=args)
    return CudaKernel(cubin, CudaVariant(name=name, op="ceiling", contract=contract, design=""))


# The units a precision contract may name (ops.base.Precision), as the note names them.
UNITS = {"tf32_tensor": "TF32 tensor-core", "fp32_fma": "FP32 FMA"}
FMA_CHAINS = 8  # fma.cu's CHAINS: the independent chains of each thread


@dataclass(frozen=True)
class Tf32Product:
    """A probe of the TF32 tensor cores: cuBLAS's TF32 product of two n x n FP32 matrices, 2 n^3 FLOPs a call."""

    name: str
    n: int
    unit: str = "tf32_tensor"

    def flops(self, threads: float) -> float:
        return 2.0 * self.n**3

    def make(self, op: str):
        return Tf32Call(op, self)


@dataclass(frozen=True)
class FmaChains:
    """A probe of the FP32 pipes: fma.cu over `waves` grids of the threads the GPU holds at once, `steps` steps of
    FMA_CHAINS FMAs a thread; its FLOPs a call counted from the threads its capture launched (`threads`)."""

    name: str
    waves: int
    steps: int
    unit: str = "fp32_fma"

    def flops(self, threads: float) -> float:
        return 2.0 * FMA_CHAINS * self.steps * threads

    def make(self, op: str):
        return FmaCall(op, self)


# Two squares, the faster setting the floor: the larger where the GPU keeps its clock, the smaller where a hundred
# calls of the larger run it into its power limit; the FMA chains as one resident grid and as eight one after another
# (the H200's rates and clocks: docs/integrity.md, "The compute floor, measured in the same session").
PROBES = {p.name: p for p in (Tf32Product("cublas_tf32_4096", 4096), Tf32Product("cublas_tf32_8192", 8192),
                              FmaChains("fma_resident", 1, 16384), FmaChains("fma_8waves", 8, 2048))}


def unit_flops(op: str, shape: dict) -> float:
    """The FLOPs the op's unit must do at `shape`: its FLOPs (Op.work) times its contract's per FP32 FLOP."""
    from .ops import OPS

    spec = OPS[op]
    return float(spec.work(shape)[1] * spec.precision.per_flop)


def probes_of(op: str, shape: dict) -> list:
    """The probes of the op's precision contract's unit; none where the op counts no FLOPs at `shape` (the GELU's
    and the layer norm's work is all bytes)."""
    from .ops import OPS

    if unit_flops(op, shape) <= 0:
        return []
    return [p for p in PROBES.values() if p.unit == OPS[op].precision.unit]


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


COLUMNS = ["op", "cache", "kind", "config", "unit", "bytes_read", "bytes_written", "kernel_us", "kernel_low_us",
           "kernel_high_us", "gbs", "flops", "tflops", "unit_flops", "floor_us", "floor_low_us", "floor_high_us",
           "captures", "backend"]


def table(kernels: pd.DataFrame, shapes: dict, backend: str) -> pd.DataFrame:
    """The `ceilings` table: per op, cache and configuration, the kernel time of a copy (kind `memory`) or a probe
    (kind `compute`), the median over captures of each capture's mean per call, with its interval as the
    summary's; the floor it sets for the op at its shape, with that interval (a copy's: its own time; a probe's:
    the op's unit FLOPs at the probe's rate); `best` marks the lowest floor of each op, cache and kind, the one the
    note judges by. A probe of another unit than the op's contract names is left out, and so is a compute floor
    under the GPU timer's nanosecond (a toy shape's), which judges no kernel."""
    from .measurements import BOOTSTRAP_SEED, interval
    from .plausible import MIN_US

    parsed = kernels["range"].str.extract(rf"^(?P<op>[^:]+):{PREFIX}(?P<config>[^:]+)(?::(?P<cache>cold))?$")
    mine = kernels.assign(op=parsed["op"], config=parsed["config"], cache=parsed["cache"].fillna("warm"))
    mine = mine[parsed["config"].notna() & (kernels["backend"] == backend)]
    keys = ["op", "cache", "config"]
    per_iteration = mine.groupby([*keys, "capture", "iteration"])["duration_us"].sum()
    threads = _threads_per_call(mine, keys)
    rng, rows = np.random.default_rng(BOOTSTRAP_SEED), []
    for (op, cache, config), group in per_iteration.groupby(level=keys, sort=True):
        read, written = traffic(op, shapes[op])
        median = float(group.groupby(level="capture").mean().median())
        low, high = interval(group, rng)
        row = {"op": op, "cache": cache, "config": config, "bytes_read": read, "bytes_written": written,
               "kernel_us": median, "kernel_low_us": low, "kernel_high_us": high,
               "captures": group.index.get_level_values("capture").nunique(), "backend": backend}
        if config not in PROBES:
            rows.append({**row, "kind": MEMORY, "unit": "", "gbs": (read + written) / median / 1e3,
                         "floor_us": median, "floor_low_us": low, "floor_high_us": high})
            continue
        probe, need = PROBES[config], unit_flops(op, shapes[op])
        flops = probe.flops(threads.get((op, cache, config), np.nan))
        if probe not in probes_of(op, shapes[op]) or not need * median / flops >= MIN_US:
            continue
        rows.append({**row, "kind": COMPUTE, "unit": probe.unit, "gbs": np.nan, "flops": flops,
                     "tflops": flops / median / 1e6, "unit_flops": need, "floor_us": need * median / flops,
                     "floor_low_us": need * low / flops, "floor_high_us": need * high / flops})
    out = pd.DataFrame(rows, columns=COLUMNS)
    lowest = out.groupby(["op", "cache", "kind"])["floor_us"].transform("min")
    return out.assign(best=out["floor_us"] == lowest)


def _threads_per_call(mine: pd.DataFrame, keys: list[str]) -> dict:
    """Per configuration, the threads its kernels launched in a call (grid times block, `x,y,z` each), from the
    capture: what an FMA probe's FLOPs are counted from."""
    if mine.empty or not {"grid", "block"} <= set(mine.columns):
        return {}

    def volume(column: pd.Series) -> pd.Series:
        return column.str.split(",", expand=True).astype(float).prod(axis=1)

    launched = mine.assign(threads=volume(mine["grid"]) * volume(mine["block"]))
    calls = launched.groupby(keys)[["capture", "iteration"]].apply(lambda g: len(g.drop_duplicates()))
    return (launched.groupby(keys)["threads"].sum() / calls).to_dict()


def with_kinds(ceilings: pd.DataFrame) -> pd.DataFrame:
    """The table in today's layout: one captured before the compute floor has copies alone, each its own floor."""
    if "kind" in ceilings:
        return ceilings
    own = {f"floor{end}": ceilings[f"kernel{end}"] for end in ("_us", "_low_us", "_high_us")
           if f"kernel{end}" in ceilings}
    return ceilings.assign(kind=MEMORY, **own)


def best(ceilings: pd.DataFrame, kind: str = MEMORY) -> pd.DataFrame:
    """Per (op, cache), the row of the lowest floor of that kind: the fastest copy (`memory`) or the fastest
    probe's (`compute`)."""
    rows = with_kinds(ceilings)
    rows = rows[rows["best"] & (rows["kind"] == kind)]
    return rows.drop_duplicates(["op", "cache"]).set_index(["op", "cache"])


def faster_than(kernel_high_us: float, floor_low_us: float) -> bool:
    """A kernel time not physical: its whole interval below the floor's, so no noise explains it."""
    return bool(kernel_high_us < floor_low_us)
