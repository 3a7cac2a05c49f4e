"""Build a hand-written PTX variant into a cubin with nvJitLink (cuda.bindings.nvjitlink), which runs ptxas on it.

The second toolchain of the registry (toolchains.py): as NVRTC for CUDA C++, it needs no GPU and no host compiler,
and ptxas's verbose report comes back in the link's info log, parsed as the CUDA C++ build's is.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from ...core.errors import PipelineError
from .census import cubin_resources, ptx_census
from .cuda import parse_ptxas

OPTIONS = ("-Xptxas=-v", "-lineinfo")


def _log(handle, size_fn, get_fn) -> str:
    buf = bytearray(size_fn(handle))
    get_fn(handle, buf)
    return bytes(buf).decode(errors="replace").rstrip("\x00 \n")


def link(source: Path, arch: str) -> tuple[bytes, str]:
    """(cubin, ptxas's report) of one .ptx file; an error names the file and carries nvJitLink's error log."""
    from cuda.bindings import nvjitlink

    options = [f"-arch={arch}", *OPTIONS]
    handle = nvjitlink.create(len(options), options)
    try:
        data = source.read_bytes()
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), source.name)
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as e:
            errors = _log(handle, nvjitlink.get_error_log_size, nvjitlink.get_error_log)
            raise PipelineError(f"{source}: ptxas for {arch} failed ({e})\n{errors}".rstrip()) from None
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
        return bytes(cubin), _log(handle, nvjitlink.get_info_log_size, nvjitlink.get_info_log)
    finally:
        nvjitlink.destroy(handle)


def version() -> str:
    from cuda.bindings import nvjitlink

    major, minor = nvjitlink.version()
    return f"nvJitLink {major}.{minor}"


def build(source: Path, entry: str, arch: str) -> tuple[bytes, str, dict]:
    """Link and report: (cubin, the PTX itself, one row of the resources table without op/variant keys)."""
    cubin, log = link(source, arch)
    ptx = source.read_text()
    objdump = cubin_resources(cubin).get(entry, {})
    return cubin, ptx, {
        "entry": entry, "arch": arch, **parse_ptxas(log, entry), "cuobjdump_registers": objdump.get("reg"),
        "cubin_shared_bytes": objdump.get("shared"), **{f"ptx_{k}": v for k, v in ptx_census(ptx).items()},
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(), "headers": "",
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(), "options": " ".join(OPTIONS), "ptxas_log": log,
    }
