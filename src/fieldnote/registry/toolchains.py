"""The toolchains a hand-written variant is built with, one per hand-written implementation of the registry
(vocabulary.py): where its sources live and which module of the build package turns one into a cubin and its
resources report (`build.builder`). Every toolchain's cubin is launched the same way (launch.CudaKernel, by the
variant's contract), so a new one that emits a cubin is an entry here, its build module and its sources."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Toolchain:
    name: str  # the implementation it builds for
    suffix: str  # of its sources: kernels/<name>/<op>/<variant>.<suffix>
    builder: str  # the build package's module: build(source, entry, arch) -> (cubin, ptx, report), version()

    def source(self, op: str, variant: str) -> str:
        return f"kernels/{self.name}/{op}/{variant}.{self.suffix}"


TOOLCHAINS = {t.name: t for t in (
    Toolchain("cuda", "cu", "cuda"),  # CUDA C++ through NVRTC
    Toolchain("ptx", "ptx", "ptx"),  # hand-written PTX through nvJitLink's ptxas
)}
