"""Build: compile hand-written CUDA with NVRTC and Triton kernels offline, and census what came out."""
import importlib


def builder(toolchain):
    """The module of this package that builds a toolchain's sources (toolchains.Toolchain.builder): its
    `build(source, entry, arch) -> (cubin, ptx, report)` and `version()`."""
    return importlib.import_module(f"{__name__}.{toolchain.builder}")
