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

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

MEMORY, COMPUTE = "memory", "compute"  # the ceilings table's `kind`: a copy of the op's bytes, a probe of a unit
PREFIX = "ceiling-"  # the range of configuration c of op o: `o:ceiling-c`, `o:ceiling-c:cold` (subjects.range_name)


def traffic(op: str, shape: dict) -> tuple[int, int]:
    """(bytes read, bytes written) at the op's least traffic: its output (FP32) written once, the rest read."""
    from ..registry.ops import OPS

    spec = OPS[op]
    total, _ = spec.work(shape)
    written = 4 * math.prod(spec.output_shape(shape))
    return total - written, written


def range_of(op: str, config: str, cache: str = "warm") -> str:
    from ..registry.subjects import range_name

    return range_name(op, PREFIX + config, cache)


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


# Two squares, the faster setting the floor: the larger where the GPU keeps its clock, the smaller where a hundred
# calls of the larger run it into its power limit; the FMA chains as one resident grid and as eight one after another
# (the H200's rates and clocks: docs/integrity.md, "The compute floor, measured in the same session").
PROBES = {p.name: p for p in (Tf32Product("cublas_tf32_4096", 4096), Tf32Product("cublas_tf32_8192", 8192),
                              FmaChains("fma_resident", 1, 16384), FmaChains("fma_8waves", 8, 2048))}


def unit_flops(op: str, shape: dict) -> float:
    """The FLOPs the op's unit must do at `shape`: its FLOPs (Op.work) times its contract's per FP32 FLOP."""
    from ..registry.ops import OPS

    spec = OPS[op]
    return float(spec.work(shape)[1] * spec.precision.per_flop)


def probes_of(op: str, shape: dict) -> list:
    """The probes of the op's precision contract's unit; none where the op counts no FLOPs at `shape` (the GELU's
    and the layer norm's work is all bytes)."""
    from ..registry.ops import OPS

    if unit_flops(op, shape) <= 0:
        return []
    return [p for p in PROBES.values() if p.unit == OPS[op].precision.unit]


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
