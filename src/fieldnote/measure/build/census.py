"""Census of compiled code: what the PTX does (global loads and stores by width, barriers) and what the cubin
requests (registers, shared memory), read with cuobjdump. Works on any PTX/cubin, CUDA C++ or Triton."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from ...core.errors import PipelineError

_MEMORY_OP = re.compile(r"^\s*(?:@!?%\w+\s+)?(ld|st)\.global((?:\.[\w:]+)*)\s", re.MULTILINE)
_BARRIER = re.compile(r"^\s*(?:@!?%\w+\s+)?(?:bar\.sync|barrier\.sync|bar\.red|barrier\.cta)", re.MULTILINE)
_ASYNC_COPY = re.compile(  # cp.async.ca.shared.global [dst], [src], SIZE(, src_bytes);
    r"cp\.async\.c[ag]\.shared\.global(?:\.[\w:]+)*\s+\[[^\]]+\],\s*\[[^\]]+\],\s*(0x[0-9a-fA-F]+|\d+)")
_BITS = {"b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "b32": 32, "u32": 32,
         "s32": 32, "f32": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64, "b128": 128}


def _width_bits(qualifiers: str) -> int:
    parts = qualifiers.strip(".").split(".")
    lanes = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
    bits = next((_BITS[p] for p in reversed(parts) if p in _BITS), 0)
    return lanes * bits


def ptx_census(ptx: str) -> dict[str, int]:
    """Count global loads, stores and cp.async copies (global to shared) by width in bits, and barriers."""
    counts: Counter = Counter()
    for kind, qualifiers in _MEMORY_OP.findall(ptx):
        name = "global_loads" if kind == "ld" else "global_stores"
        counts[name] += 1
        counts[f"{name}_{_width_bits(qualifiers)}bit"] += 1
    for size in _ASYNC_COPY.findall(ptx):
        counts["async_copies"] += 1
        counts[f"async_copies_{int(size, 0) * 8}bit"] += 1
    counts["barriers"] = len(_BARRIER.findall(ptx))
    row = {k: counts.get(k, 0) for k in ("global_loads", "global_stores", "async_copies", "barriers")}
    for name in ("global_loads", "global_stores", "async_copies"):
        for bits in (32, 64, 128):
            row[f"{name}_{bits}bit"] = counts.get(f"{name}_{bits}bit", 0)
    return row


def cuobjdump() -> str:
    """Triton ships cuobjdump; the CUDA toolkit has one too. Either reads an sm_90 cubin without a GPU."""
    candidates = []
    try:
        import triton
        candidates.append(Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump")
    except ImportError:
        pass
    candidates += [Path("/usr/local/cuda/bin/cuobjdump"), shutil.which("cuobjdump")]
    for c in candidates:
        if c and Path(c).exists():
            return str(c)
    raise PipelineError("build: cuobjdump not found (install triton, or the CUDA toolkit)")


def cubin_resources(cubin: bytes) -> dict[str, dict[str, int]]:
    """Per function in the cubin: REG, SHARED, LOCAL, STACK as cuobjdump --dump-resource-usage reports them."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([cuobjdump(), "--dump-resource-usage", f.name], capture_output=True, text=True,
                             check=True).stdout
    functions: dict[str, dict[str, int]] = {}
    current = None
    for line in out.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            current = functions.setdefault(m.group(1), {})
        elif current is not None:
            current.update({k.lower(): int(v) for k, v in re.findall(r"\b(REG|SHARED|LOCAL|STACK):(\d+)", line)})
    return functions
