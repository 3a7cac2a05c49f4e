"""torch.compile at its best known configuration: max-autotune picks among candidate kernels by timing them, and
what it picks differs from one fresh cache to the next (issue 41). So an op is compiled at its seed shape in several
caches of its own, each empty and in a fresh process; each compile is timed on fresh, verified inputs, and the
fastest cache is the one every later job of the op compiles from (its choice read back, not tuned again: the
compiled check holds its Inductor source to the kept tune's, `kept_choice`). Each tune is timed on the GPU's clock
(timing.QueuedClock), not by spans: the tunes run side by side, and a span beside another tune's compile is mostly
the host's launch path, which would pick a cache by noise. The tunes are a table, compiled_tunes, which the note
prints as the spread.

    python -m fieldnote.measure.tune REQUEST.json RESULT.json   (one tune, in the process the cache is new to)
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from ..core.errors import PipelineError

KEPT = "kept"  # the link in an op's cache folder to the fastest tune's cache


def cache_of(root: Path) -> Path:
    """The cache an op's jobs compile from, once its tunes ran."""
    return root / KEPT


def use_kept(tunes: str | os.PathLike) -> None:
    """Point inductor at the kept cache of a tunes table (its `cache` column, the kept row's), before the first
    compile of a job."""
    table = pd.read_parquet(tunes)
    kept = table.loc[table["kept"], "cache"]
    if len(kept) != 1:
        raise PipelineError(f"{tunes}: {len(kept)} kept tunes where there must be one")
    folder = Path(kept.iloc[0]).parent / KEPT
    if not folder.is_dir():
        raise PipelineError(f"{tunes}: the kept cache {folder} is gone (a fresh machine?); remove {tunes} so the "
                            "tunes run again")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(folder.resolve())


def kept_choice(tunes: str | os.PathLike, choice: dict, what: str) -> None:
    """The compiled check's proof that the kept cache answered: the Inductor source it compiled is the kept tune's."""
    table = pd.read_parquet(tunes)
    kept = table.loc[table["kept"]].iloc[0]
    if choice["generated_sha256"] != kept["generated_sha256"]:
        raise PipelineError(f"{what}: torch.compile generated source {choice['generated_sha256'][:12]}, not the kept "
                            f"tune's {kept['generated_sha256'][:12]} ({kept['cache']}): the cache did not answer, and "
                            "the peer measured would not be the one tuned")


def tunes(request: dict, root: Path, count: int) -> pd.DataFrame:
    """`count` tunes of one op, side by side, each a process with an empty cache root/<i>; the fastest is linked as
    root/kept. `request`: what `tune_one` takes. A tune that fails fails them all, with its own words."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    children = []
    for i in range(1, count + 1):
        cache, result, log = root / str(i), root / f"{i}.json", root / f"{i}.log"
        cache.mkdir()
        (root / f"{i}.request.json").write_text(json.dumps(request))
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache.resolve())}
        env.pop("TRITON_CACHE_DIR", None)  # Triton's cache inside inductor's, new with it
        with open(log, "w") as out:
            children.append((i, subprocess.Popen(
                [sys.executable, "-m", "fieldnote.measure.tune", str(root / f"{i}.request.json"), str(result)],
                env=env, stdout=out, stderr=subprocess.STDOUT)))
    rows = []
    for i, child in children:
        child.wait()
        sys.stderr.write((root / f"{i}.log").read_text())  # into the job's log
        if child.returncode != 0:
            raise PipelineError(f"{request['op']}: torch.compile's tune {i} of {count} failed (its log: "
                                f"{root / f'{i}.log'})")
        rows.append({"tune": i, "cache": str(root / str(i)), **json.loads((root / f"{i}.json").read_text())})
    table = pd.DataFrame(rows)
    table["kept"] = table["gpu_us"] == table["gpu_us"].min()
    table.loc[table["kept"].cumsum() > 1, "kept"] = False  # a tie: the first
    (root / KEPT).symlink_to(str(table.loc[table["kept"], "tune"].iloc[0]))
    return table


def tune_one(request: dict) -> dict:
    """One tune: compile the op at its seed shape (autotuning with the GPU alone for its timings, gpulock), time
    `iterations` calls after `warmup` on the GPU's clock with the GPU alone, each on inputs drawn afresh and verified
    (verified.py), and read back what Inductor generated."""
    import statistics

    from . import gpulock, timing, workload
    from .implementations import inductor_choice
    from .inputs import read

    op, shape = request["op"], request["shape"]
    calls = workload.prepared_each({"compiled": lambda: workload.prepare(
        op, "compiled", request["npz"], shape, tolerance=request["tolerance"],
        what=f"{op} / compiled (tune) at {request['label']}")}, {"compiled": "compiled"})
    with gpulock.exclusive():
        samples, _ = timing.spans(calls, 1, request["iterations"], request["warmup"], timing.QueuedClock())
    workload.checksummed(calls)
    with gpulock.for_check("compiled"):
        choice = inductor_choice(op, read(request["npz"]), "cuda")
    times = [s["span_us"] for s in samples]  # on the queued clock: the GPU's time, not a span
    return {"op": op, "shape": request["label"], **choice, "gpu_us": statistics.median(times),
            "gpu_min_us": min(times), "calls": len(times)}


def main(argv: list[str]) -> int:
    request, result = json.loads(Path(argv[0]).read_text()), Path(argv[1])
    try:
        out = tune_one(request)
    except PipelineError as error:
        print(f"fieldnote: {error}", file=sys.stderr)
        return 1
    result.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
