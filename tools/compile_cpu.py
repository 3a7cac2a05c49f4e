"""The CPU a compiled check costs, with inductor's compile workers and without: one op's compiled check (as the
pipeline runs it, from a cold inductor cache) in a fresh process per setting of TORCHINDUCTOR_COMPILE_THREADS,
its wall time and the host's CPU time meanwhile (/proc/stat: the compile workers are other processes). Run on an
otherwise idle GPU host; prints a Markdown table.

    python tools/compile_cpu.py OP[:CASES] ... [--threads DEFAULT,1]

CASES: `all` (every case of the check) or `full` (the namespace shape's only). A setting of `--threads` is a
number, or `default`: unset, as the pipeline runs (one thread, `implementations.compiled`; until ad4c8bb the
matrix products kept inductor's own choice, the host's cores up to 32: tools/compile_twice.py). Measured on
2026-12-03, before that rule, as `default,1`; `16,1` on the H200's host measures the same now."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from job_times import jiffies  # noqa: E402

CHILD = """
import sys
from fieldnote.measure import check, gpulock
from fieldnote.registry.config import load_defaults
from fieldnote.measure.implementations import runner
from fieldnote.core.paths import CONFIG
op, which = sys.argv[1], sys.argv[2]
defaults = load_defaults(CONFIG / "config.yaml")  # the seed shape, seed and tolerance, as a namespace's check
cases = check.cases(op, defaults["shapes"][op], defaults["seed"], None, small_only=False)
cases = [c for c in cases if c.name == "full"] if which == "full" else cases
table = check.run_checks(runner(op, "compiled"), op, "compiled", "cuda", cases, defaults["tolerance"],
                         hold=gpulock.per_case("compiled"))
assert table["passed"].all()
"""


def busy() -> float:
    """The host's CPU seconds not idle so far (every core's), as job_times.py counts them."""
    busy_jiffies, _ = jiffies(Path("/proc/stat").read_text().split()[1:9])
    return busy_jiffies / os.sysconf("SC_CLK_TCK")


def measure(op: str, which: str, threads: str) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}:{os.environ.get('PYTHONPATH', '')}")
    env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
    if threads != "default":
        env["TORCHINDUCTOR_COMPILE_THREADS"] = threads
    with tempfile.TemporaryDirectory() as cache:
        env["TORCHINDUCTOR_CACHE_DIR"], env["TRITON_CACHE_DIR"] = cache, f"{cache}/triton"
        env["FIELDNOTE_GPU_LOCK"] = f"{cache}/gpu.lock"
        cpu, start = busy(), time.monotonic()
        subprocess.run([sys.executable, "-c", CHILD, op, which], env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.monotonic() - start
        time.sleep(1)  # compile workers that outlive the check still count
        return wall, busy() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("ops", nargs="+")
    parser.add_argument("--threads", default="default,1")
    args = parser.parse_args()
    items = [(op, which or "all") for op, _, which in (item.partition(":") for item in args.ops)]
    for op, which in items:
        if which not in ("all", "full"):
            parser.error(f"{op}:{which}: the cases are `all` or `full`")
    # once untimed, so that no setting is the first to read torch, Triton and inductor from disk
    subprocess.run([sys.executable, "-c", "import torch._inductor.compile_fx, triton"], check=True)
    print("| op | cases | TORCHINDUCTOR_COMPILE_THREADS | wall (s) | host CPU (s) |\n|---|---|---|---|---|")
    for op, which in items:
        for threads in args.threads.split(","):
            wall, cpu = measure(op, which, threads)
            print(f"| {op} | {which} | {threads} | {wall:.1f} | {cpu:.1f} |", flush=True)


if __name__ == "__main__":
    main()
