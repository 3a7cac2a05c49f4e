"""The memory ceiling, measured in the same session as the op: a copy of the op's own traffic (the bytes it must
read and write at its shape) by kernels/ceiling/stream.cu, in several launch configurations, warm and cold.

A vendor's bandwidth is not a floor for an op whose inputs stay in L2 between calls: at the seed shapes our GELU
beat torch's own copy of the same bytes. What is a floor is the fastest copy of those bytes on this GPU, in this
session, with the cache in the same state: a kernel that moves them faster than that copy, beyond both intervals,
is flagged as not physical (docs/integrity.md). Warm, the copy's inputs are rewritten before each call as an
op's are (verified.prime), so both start from L2; cold, L2 is flushed before each call of both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import PipelineError
from .paths import KERNELS

SOURCE = KERNELS / "ceiling" / "stream.cu"
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
        self.source = torch.randn(4 * self.n_in, device="cuda", generator=torch.Generator("cuda").manual_seed(0))
        self.tensors = {"in": self.source.clone(), "out": torch.empty(4 * self.n_out, device="cuda"),
                        "sink": torch.zeros(1, device="cuda")}
        sms = torch.cuda.get_device_properties(device).multi_processor_count
        self.shape = {"n_in": self.n_in, "n_out": self.n_out}
        self.kernel = module(config, config.grid(max(self.n_in, self.n_out), sms))

    def prime(self, call: int) -> None:
        self.tensors["in"].copy_(self.source)
        self.tensors["out"].fill_(float("nan"))

    def __call__(self) -> None:
        self.kernel(self.tensors, self.shape)

    def verify(self, call: int) -> None:
        """The copy moved every byte: the output is the input where both exist, zero past the input."""
        import torch

        out, common = self.tensors["out"], 4 * min(self.n_in, self.n_out)
        if not (torch.equal(out[:common], self.tensors["in"][:common]) and bool((out[common:] == 0).all())):
            raise PipelineError(f"{self.what}: call {call + 1} did not copy its input")


def streams(op: str, shape: dict) -> dict[str, Stream]:
    """Every configuration of the copy for the op's traffic, compiled once (NVRTC) for this GPU's arch."""
    import torch

    from .build.cuda import compile_source
    from .launch import CudaKernel
    from .ops import CudaVariant, LaunchContract

    major, minor = torch.cuda.get_device_capability()
    cubin, _, _ = compile_source(SOURCE, f"sm_{major}{minor}")

    def module(config: Config, grid: int):
        contract = LaunchContract(entry=config.entry, block=(THREADS, 1, 1), grid=lambda s: (grid, 1, 1),
                                  args=lambda t, s: (t["in"], t["out"], np.int32(s["n_in"]), np.int32(s["n_out"]),
                                                     t["sink"]))
        return CudaKernel(cubin, CudaVariant(name=config.name, op="ceiling", contract=contract, design=""))

    return {c.name: Stream(op, shape, c, module) for c in CONFIGS}


def table(kernels: pd.DataFrame, shapes: dict, backend: str) -> pd.DataFrame:
    """The `ceilings` table: per op, cache and configuration, the copy's kernel time (median over captures of
    each capture's mean per call) with its interval as the summary's, the bytes and the bandwidth; `best` marks
    the fastest configuration of each op and cache, the one the floors use."""
    from .measurements import BOOTSTRAP_SEED, interval

    parsed = kernels["range"].str.extract(rf"^(?P<op>[^:]+):{PREFIX}(?P<config>[^:]+)(?::(?P<cache>cold))?$")
    mine = kernels.assign(op=parsed["op"], config=parsed["config"], cache=parsed["cache"].fillna("warm"))
    mine = mine[parsed["config"].notna() & (kernels["backend"] == backend)]
    per_iteration = mine.groupby(["op", "cache", "config", "capture", "iteration"])["duration_us"].sum()
    rng, rows = np.random.default_rng(BOOTSTRAP_SEED), []
    for (op, cache, config), group in per_iteration.groupby(level=["op", "cache", "config"], sort=True):
        read, written = traffic(op, shapes[op])
        median = float(group.groupby(level="capture").mean().median())
        low, high = interval(group, rng)
        rows.append({"op": op, "cache": cache, "config": config, "bytes_read": read, "bytes_written": written,
                     "kernel_us": median, "kernel_low_us": low, "kernel_high_us": high,
                     "gbs": (read + written) / median / 1e3, "captures": group.index.get_level_values("capture")
                     .nunique(), "backend": backend})
    out = pd.DataFrame(rows, columns=["op", "cache", "config", "bytes_read", "bytes_written", "kernel_us",
                                      "kernel_low_us", "kernel_high_us", "gbs", "captures", "backend"])
    fastest = out.groupby(["op", "cache"])["kernel_us"].transform("min")
    return out.assign(best=out["kernel_us"] == fastest)


def best(ceilings: pd.DataFrame) -> pd.DataFrame:
    """Per (op, cache), the fastest configuration's row."""
    return ceilings[ceilings["best"]].drop_duplicates(["op", "cache"]).set_index(["op", "cache"])


def faster_than(kernel_high_us: float, ceiling_low_us: float) -> bool:
    """A kernel time not physical: its whole interval below the copy's, so no noise explains it."""
    return bool(kernel_high_us < ceiling_low_us)
