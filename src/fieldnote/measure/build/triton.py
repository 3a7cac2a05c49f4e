"""Compile a Triton kernel offline for one arch (ASTSource + GPUTarget, no GPU needed) and census it.

The kernel file declares what to compile in its `COMPILE` dict (kernel, signature, constexprs, num_warps):
the same configuration its launcher runs.
"""
from __future__ import annotations

import hashlib
from types import ModuleType

from .census import cubin_resources, ptx_census


def compile_offline(module: ModuleType, arch: str):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = module.COMPILE
    signature = {**spec["signature"], **{name: "constexpr" for name in spec["constexprs"]}}
    source = ASTSource(fn=spec["kernel"], signature=signature, constexprs=spec["constexprs"])
    target = GPUTarget("cuda", int(arch.removeprefix("sm_").rstrip("a")), 32)
    return triton.compile(source, target=target, options={"num_warps": spec["num_warps"]})


def census(module: ModuleType, arch: str) -> tuple[bytes, str, dict]:
    """(cubin, ptx, one census row): registers from the cubin, loads/stores from the PTX.

    `shared_bytes` is what a launch requests (Triton's dynamic shared memory); `cubin_shared_bytes` is
    cuobjdump's SHARED, which on sm_90 includes the 1 KiB the hardware reserves per block.
    """
    import triton

    compiled = compile_offline(module, arch)
    ptx, cubin = compiled.asm["ptx"], compiled.asm["cubin"]
    name = compiled.metadata.name
    resources = cubin_resources(cubin).get(name, {})
    spec = module.COMPILE
    return cubin, ptx, {
        "kernel": name, "arch": arch, "num_warps": spec["num_warps"],
        "constexprs": ", ".join(f"{k}={v}" for k, v in spec["constexprs"].items()),
        "registers": resources.get("reg"), "shared_bytes": compiled.metadata.shared,
        "cubin_shared_bytes": resources.get("shared"), **ptx_census(ptx),
        "triton_version": triton.__version__, "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
    }
