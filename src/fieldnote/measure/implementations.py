"""One callable per (op, implementation): takes the input tensors and a preallocated output, returns the result.

torch returns a fresh tensor (as a library user would write it); compiled is the same torch function through
torch.compile (max-autotune, without CUDA graphs: what a user reaches for instead of hand-written kernels, and a
peer of ours); library is the op's own library as its users call it, returning a fresh tensor too; triton and cuda
write into `out`.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..core.errors import PipelineError
from ..registry.ops import OPS, KernelVariant
from ..registry.toolchains import TOOLCHAINS
from . import kernels

Runner = Callable[[dict, dict], object]  # (tensors incl. "out", shape) -> output tensor


def runner(op: str, implementation: str, variant: KernelVariant | None = None, cubin: Path | None = None) -> Runner:
    spec = OPS[op]
    if implementation == "torch":
        fn = kernels.function("torch", op)
        return lambda t, shape: fn(*(t[n] for n in spec.torch_args))
    if implementation == "compiled":
        fn = compiled(op)
        return lambda t, shape: fn(*(t[n] for n in spec.torch_args))
    if implementation == "library":
        fn = library(op)

        def call(t, shape):
            reason = spec.refusal("library", None, shape)
            if reason:
                raise PipelineError(f"{op}/library ({spec.library.title}): shape {shape} out of range: {reason}")
            return fn(*(t[n] for n in spec.library.args))
        return call
    if implementation == "triton":
        fn = kernels.function("triton", op)
        return lambda t, shape: fn(*(t[n] for n in spec.triton_args), t["out"])
    if implementation in TOOLCHAINS:  # every toolchain's cubin launches by the variant's contract
        from .launch import CudaKernel
        kernel = CudaKernel(cubin, variant)

        def run(t, shape):
            kernel(t, shape)
            return t["out"]
        return run
    raise ValueError(f"unknown implementation '{implementation}'")


def library(op: str):
    """kernels/library/<op>.py's entry point; where the library is not installed here, one error that names it."""
    spec = OPS[op]
    if spec.library is None:
        raise PipelineError(f"{op} has no library peer (registry/ops/{op}.py names none)")
    try:
        module = kernels.load("library", op)
        getattr(module, "prepare", lambda: None)()  # a library built on the machine it runs on is built here
        return getattr(module, op)
    except ImportError as e:
        raise PipelineError(f"{op}: its library peer {spec.library.title} does not import here ({e}): install "
                            f"'{spec.library.package}' or leave 'library' out of the namespace's implementations"
                            ) from None


SHAPES_A_PROCESS = 64  # the most shapes one process compiles an op at (a sweep's points)


def compiled(op: str):
    """torch.compile of the op's torch function. Inductor compiles on the first call of each shape and keeps
    its kernels and autotuning results in TORCHINDUCTOR_CACHE_DIR, which the workflow points at work/, so
    the check, timing and capture jobs of a namespace compile and tune once."""
    import torch

    # A sweep job calls it at one shape after another in one process, a compile each (dynamic=False). Past dynamo's
    # recompile limit (8) the function would run eagerly, unannounced, and the "compiled" peer would be torch's:
    # h200-002's sweep has ten GELU and layer norm shapes. So a higher limit, and a hit of it is an error.
    dynamo = torch._dynamo.config
    limit, fail = ("recompile_limit", "fail_on_recompile_limit_hit") if hasattr(dynamo, "recompile_limit") else (
        "cache_size_limit", "fail_on_cache_limit_hit")  # the names before torch 2.6
    setattr(dynamo, limit, max(getattr(dynamo, limit), SHAPES_A_PROCESS))
    setattr(dynamo, fail, True)
    if "TORCHINDUCTOR_COMPILE_THREADS" not in os.environ:
        # Inductor's worker pool (a process per core) costs more than it saves here: its start costs more than one
        # fused kernel's compile, and with it a later shape compiled max-autotune's GEMM templates again as it timed
        # them (tools/compile_cpu.py, tools/compile_twice.py; docs/pipeline-time.md, the twenty-third session).
        # Read when the first compile would start the pool (async_compile.warm_pool).
        import torch._inductor.config as inductor

        inductor.compile_threads = 1
    return torch.compile(kernels.function("torch", op), mode="max-autotune-no-cudagraphs", dynamic=False)


def inductor_choice(op: str, arrays: dict, device: str) -> dict:
    """What torch.compile generated for an op at one shape (its autotuning included): the SHA-256 of the generated
    source and the kernels it defines, read with Inductor's run_and_get_code. A second compile of the same graph
    (the cache answering) gives the same source, so the hash identifies the choice across jobs and namespaces. The
    source names each kernel's file in the cache (`# kernel path:`); the hash drops the cache's folder, keeping the
    file's content-addressed name, so the same choice made in two caches hashes alike."""
    import hashlib
    import re

    import torch
    from torch._inductor.utils import run_and_get_code

    spec = OPS[op]
    tensors = [torch.from_numpy(arrays[n]).to(device) for n in spec.torch_args]
    _, sources = run_and_get_code(compiled(op), *tensors)
    source = re.sub(r"(# kernel path: )\S*?([^/\s]+/[^/\s]+)$", r"\1\2", "\n".join(sources), flags=re.MULTILINE)
    kernels = sorted(set(re.findall(r"^def (triton_\w+)\(", source, re.MULTILINE)))
    return {"generated_sha256": hashlib.sha256(source.encode()).hexdigest(), "generated_kernels": " ".join(kernels)}
