"""Matrix multiplication as CUTLASS's FP32-accurate GEMM (matmul.cu: its 3xTF32 tensor-op path), built with the
machine's nvcc against the headers of the nvidia-cutlass package into a shared library under work/build/library/,
named by what it is built from (the source, the flags, CUTLASS's version, nvcc's). At each shape one process times
its tile configurations and keeps the fastest in a file beside the library, which every later process at that
shape reads: the peer at its best, as CUTLASS's profiler would pick it, and the same kernel in every measurement."""
import ctypes
import fcntl
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import torch

from fieldnote.core.paths import ROOT
from fieldnote.core.progress import log as progress
from fieldnote.measure.timing import EventClock

SOURCE = Path(__file__).with_suffix(".cu")
TRIES = 10  # timed calls a configuration gets where its shape is first met


def headers() -> Path:
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'cutlass_library' (CUTLASS's headers come with the nvidia-cutlass package)")
    return Path(spec.submodule_search_locations[0]) / "source" / "include"


@functools.cache
def built() -> Path:
    """The shared library, built here unless it is already (one job builds it, the others wait and load it)."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.access(nvcc, os.X_OK):
        raise ImportError("no nvcc on PATH or in /usr/local/cuda/bin: CUTLASS's GEMM is built here from its headers")
    major, minor = torch.cuda.get_device_capability()
    command = [nvcc, "-O3", "-std=c++17", f"-arch=sm_{major}{minor}", "-shared", "-Xcompiler", "-fPIC",
               "-diag-suppress", "20013,20015", f"-I{headers()}", str(SOURCE)]
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256("\0".join([SOURCE.read_text(), *command[1:-2], importlib.metadata.version("nvidia-cutlass"),
                                    version]).encode()).hexdigest()[:16]
    path = ROOT / "work" / "build" / "library" / f"matmul-{key}.so"
    with locked(path):
        if not path.exists():
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            done = subprocess.run([*command, "-o", str(partial)], capture_output=True, text=True)
            if done.returncode != 0:
                partial.unlink(missing_ok=True)
                raise ImportError(f"nvcc could not build {SOURCE.name}: {done.stderr.strip()[-400:]}")
            os.replace(partial, path)
    return path


@contextmanager
def locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@functools.cache
def library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(built()))
    lib.fieldnote_cutlass_gemm.argtypes = [ctypes.c_int, ctypes.c_int, *[ctypes.c_void_p] * 3, *[ctypes.c_int] * 3,
                                           ctypes.c_void_p]
    return lib


def prepare() -> None:
    library()


def gemm(config: int, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    (m, k), n = a.shape, b.shape[1]
    quads = n % 4 == 0 and k % 4 == 0 and all(t.data_ptr() % 16 == 0 for t in (a, b, c))
    status = library().fieldnote_cutlass_gemm(config, int(quads), a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k,
                                              torch.cuda.current_stream().cuda_stream)
    if status != 0:
        raise RuntimeError(f"CUTLASS's GEMM (configuration {config}) refused {m}x{n}x{k}: status {status}")


def fastest(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> int:
    """The configuration with the least median time at this shape, on the pipeline's event clock."""
    clock, times = EventClock(), {}
    for config in range(library().fieldnote_cutlass_configs()):
        gemm(config, a, b, c)
        samples = sorted(clock.time_us(lambda config=config: gemm(config, a, b, c)) for _ in range(TRIES))
        times[config] = samples[TRIES // 2]
    return min(times, key=times.get)


def chosen(shape: tuple[int, int, int], a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> int:
    """The configuration kept for this shape: read where an earlier process chose it, else chosen and kept."""
    record, label = built().with_suffix(".choices.json"), "x".join(map(str, shape))
    with locked(built()):
        choices = json.loads(record.read_text()) if record.exists() else {}
        if label not in choices:
            choices[label] = fastest(a, b, c)
            partial = record.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(json.dumps(choices, indent=1, sort_keys=True))
            os.replace(partial, record)
            progress.info("CUTLASS at %s: configuration %d, the fastest of its %d", label, choices[label],
                          library().fieldnote_cutlass_configs())
    return choices[label]


CHOSEN: dict[tuple[int, int, int], int] = {}  # this process's, by shape


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=torch.float32)
    shape = (a.shape[0], b.shape[1], a.shape[1])
    if shape not in CHOSEN:
        if torch.cuda.is_current_stream_capturing():  # nothing can be timed nor synchronized inside a capture
            raise RuntimeError(f"CUTLASS at {'x'.join(map(str, shape))}: first called inside a CUDA graph's capture; "
                               "its configuration is chosen on a call before it")
        CHOSEN[shape] = chosen(shape, a, b, c)
    gemm(CHOSEN[shape], a, b, c)
    return c
