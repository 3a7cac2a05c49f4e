"""Raw NVRTC, the same source compiled twice in one process: the ptxas log's length each time. Run it twice with
`on` (the CUDA compute cache as the machine has it) and once with `off` (CUDA_CACHE_DISABLE=1 before NVRTC loads):
on the H200 machine, `on` loses the ptxas report from the second compile on, `off` never does (runbook, entry 14).

    python tools/nvrtc_cache_diag.py on|off
"""
import os
import sys
from pathlib import Path

if sys.argv[1] == "off":
    os.environ["CUDA_CACHE_DISABLE"] = "1"

from cuda.bindings import nvrtc  # noqa: E402  (after the environment it reads when it loads)

source = Path("kernels/cuda/gelu/gelu_bias_tanh.cu").read_bytes()
for i in range(2):
    _, prog = nvrtc.nvrtcCreateProgram(source, b"gelu_bias_tanh.cu", 0, [], [])
    options = [b"-arch=sm_90", b"-Xptxas=-v"]
    nvrtc.nvrtcCompileProgram(prog, len(options), options)
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    print(sys.argv[1], "compile", i + 1, "log bytes", size, "has the entry", b"Function properties" in log)
    nvrtc.nvrtcDestroyProgram(prog)
