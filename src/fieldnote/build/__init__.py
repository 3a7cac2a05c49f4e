"""Build: compile hand-written CUDA with NVRTC and Triton kernels offline, and census what came out."""
