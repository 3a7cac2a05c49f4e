"""Compile a hand-written CUDA C++ variant with NVRTC (cuda.bindings.nvrtc) into a cubin for one arch.

No GPU and no host compiler are needed, so this runs in CI. ptxas's verbose report (registers, spills,
shared memory, barriers) comes back in the program log and is kept as the variant's resource report.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ...core.errors import PipelineError
from ...core.paths import KERNELS
from .census import cubin_resources, ptx_census

OPTIONS = ("-std=c++17", "-Xptxas=-v", "-lineinfo")
# A kernel family's shared pieces (`#include "<name>.cuh"`): one include path, each header an input of the build.
INCLUDE = KERNELS / "cuda" / "include"
INCLUDE_LINE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def _check(result, what: str, log: str = "") -> object:
    from cuda.bindings import nvrtc
    err, *rest = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise PipelineError(f"{what}: {err.name}\n{log}".rstrip())
    return rest[0] if rest else None


def _fetch(prog, size_fn, get_fn, what: str) -> bytes:
    size = _check(size_fn(prog), what)
    buf = b" " * size
    _check(get_fn(prog, buf), what)
    return buf


def headers(source: Path) -> list[Path]:
    """The family headers a source includes, directly or through another header, in the order first reached; a
    header not in the include path is an error naming both."""
    found: dict[Path, None] = {}
    pending = [source]
    while pending:
        current = pending.pop(0)
        for name in INCLUDE_LINE.findall(current.read_text()):
            header = INCLUDE / name
            if not header.is_file():
                raise PipelineError(f"{current}: includes \"{name}\", which is not in {INCLUDE}")
            if header not in found:
                found[header] = None
                pending.append(header)
    return list(found)


def compile_source(source: Path, arch: str) -> tuple[bytes, str, str]:
    """(cubin, ptx, program log) of one .cu file; a compile error names the file and carries the log."""
    from cuda.bindings import nvrtc
    prog = _check(nvrtc.nvrtcCreateProgram(source.read_bytes(), str(source).encode(), 0, [], []),
                  f"{source}: nvrtcCreateProgram")
    try:
        options = [f"-arch={arch}".encode(), *(o.encode() for o in OPTIONS), f"--include-path={INCLUDE}".encode()]
        result = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        log = _fetch(prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, "log").decode().rstrip("\x00 ")
        _check(result, f"{source}: compile for {arch} failed", log)
        cubin = _fetch(prog, nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN, f"{source}: cubin")
        ptx = _fetch(prog, nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, f"{source}: ptx").decode().rstrip("\x00")
        return cubin, ptx, log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def parse_ptxas(log: str, entry: str) -> dict[str, int]:
    """Registers, spills, stack, static shared memory and barriers of `entry` from ptxas -v output."""
    # the whole name: an entry may be another's prefix (gelu_bias_sigmoid_flat4, gelu_bias_sigmoid_flat4_quads)
    section = re.split(rf"Function properties for {re.escape(entry)}\s*\n", log, maxsplit=1)
    if len(section) < 2:
        raise PipelineError(f"build: ptxas report has no entry '{entry}'")
    text = section[1].split("Function properties for", 1)[0]

    def grab(pattern: str) -> int:
        m = re.search(pattern, text)
        return int(m.group(1)) if m else 0

    return {"registers": grab(r"Used (\d+) registers"), "spill_stores_bytes": grab(r"(\d+) bytes spill stores"),
            "spill_loads_bytes": grab(r"(\d+) bytes spill loads"), "stack_bytes": grab(r"(\d+) bytes stack frame"),
            "static_shared_bytes": grab(r"(\d+) bytes smem"), "barriers": grab(r"used (\d+) barriers")}


def version() -> str:
    """NVRTC's version, as the resources report records it."""
    from cuda.bindings import nvrtc
    _, major, minor = nvrtc.nvrtcVersion()
    return f"NVRTC {major}.{minor}"


def build(source: Path, entry: str, arch: str) -> tuple[bytes, str, dict]:
    """Compile and report: (cubin, ptx, one row of the resources table without op/variant keys)."""
    cubin, ptx, log = compile_source(source, arch)
    ptxas = parse_ptxas(log, entry)
    objdump = cubin_resources(cubin).get(entry, {})
    census = {f"ptx_{k}": v for k, v in ptx_census(ptx).items()}
    return cubin, ptx, {
        "entry": entry, "arch": arch, **ptxas, "cuobjdump_registers": objdump.get("reg"),
        "cubin_shared_bytes": objdump.get("shared"), **census,
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "headers": " ".join(f"{h.name}:{hashlib.sha256(h.read_bytes()).hexdigest()}" for h in headers(source)),
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(), "options": " ".join(OPTIONS), "ptxas_log": log,
    }
