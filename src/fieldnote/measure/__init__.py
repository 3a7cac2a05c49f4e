"""Measuring on the GPU: kernels built (NVRTC, nvJitLink, Triton), checked, timed with CUDA events and captured by a
profiler, every timed call verified, the floors' kernels beside them, one measurement window a GPU at a time.
Imports `core`, `registry` and `evidence` (the tables it writes)."""
