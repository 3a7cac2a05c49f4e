"""Whether max-autotune compiles the matmul's GEMM candidates twice: the compiled matmul's first call at a few
shapes, one after another in one fresh process from cold caches (as a check or a sweep job calls it), with the
`triton.compile` calls of this process counted by thread: the main thread's are compiles as candidates are timed,
the others' the precompile threads'. Inductor's worker pool compiles in other processes, not counted. Then the
Triton cache's entries per kernel name. Run on an otherwise idle GPU host; prints one line per shape.

    python tools/compile_twice.py SETTING

SETTING: `threads` (as the pipeline runs: no worker pool, `implementations.compiled`), `pool` (inductor's worker
pool, as many workers as the host has cores) or `pool-ptxas` (the pool, with TRITON_PTXAS_PATH set beforehand to
the ptxas the pool's workers use). On 2026-12-03 (one H200, torch 2.11, before the pipeline gave up the pool for
the matrix products): with the pool, at 70x132x36 and 72x136x40, every candidate was compiled again by the main
thread (20 compiles, 22.8 and 18.0 s) after the pool's, and the first calls took 29.0 and 23.1 s; with the pool and
TRITON_PTXAS_PATH set, the main thread's 20 compiles at 72x136x40 took 0.1 s (the pool's cache entries were hit);
without the pool, 5.8 and 6.9 s, the compiles in precompile threads. At 1024^3, the first shape, inductor had not
started the pool yet: 20 compiles in threads either way (8.4 and 7.8 s)."""
from __future__ import annotations

import collections
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

SHAPES = ((1024, 1024, 1024), (70, 132, 36), (72, 136, 40))  # the first starts the pool; the others are the checks'


def counted_compiles(triton, calls: collections.Counter, seconds: collections.Counter) -> None:
    """Count and time every `triton.compile`, by whether the main thread made it."""
    compile_ = triton.compile

    def counting(*args, **kwargs):
        start = time.monotonic()
        try:
            return compile_(*args, **kwargs)
        finally:
            who = "main" if threading.current_thread() is threading.main_thread() else "threads"
            calls[who] += 1
            seconds[who] += time.monotonic() - start

    triton.compile = counting


def main() -> None:
    setting = sys.argv[1] if len(sys.argv) == 2 else ""
    if setting not in ("threads", "pool", "pool-ptxas"):
        sys.exit(__doc__)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(tempfile.mkdtemp()) / "inductor")
    if setting.startswith("pool"):
        os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(os.cpu_count())
    import torch
    import triton

    if setting == "pool-ptxas":  # the one inductor's workers set for themselves (compile_tasks._set_triton_ptxas_path)
        os.environ.setdefault("TRITON_PTXAS_PATH", str(Path(torch.__file__).parent / "bin" / "ptxas"))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from fieldnote.measure.implementations import compiled

    calls, seconds = collections.Counter(), collections.Counter()
    counted_compiles(triton, calls, seconds)
    matmul = compiled("matmul")
    for m, n, k in SHAPES:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        calls.clear()
        seconds.clear()
        start = time.monotonic()
        matmul(a, b)
        torch.cuda.synchronize()
        spent = {who: f"{calls[who]} in {seconds[who]:.1f} s" for who in calls}
        print(f"{setting} {m}x{n}x{k}: first call {time.monotonic() - start:.1f} s; triton.compile {spent}", flush=True)
    cache = os.environ.get("TRITON_CACHE_DIR", f"{os.environ['TORCHINDUCTOR_CACHE_DIR']}/triton/0")  # inductor's
    entries = collections.Counter(p.stem for p in Path(cache).glob("*/*.json") if not p.name.startswith("__grp__"))
    print(f"{setting}: Triton cache entries per kernel name: {dict(entries)}")


if __name__ == "__main__":
    main()
