"""Kernel capture: per-kernel GPU time from a profiler over the iterations inside a capture range.

Three backends behind one interface (`available`, `version`, `capture`): Nsight Systems (`nsys`, the default
where found), CUPTI through torch.profiler (`cupti`, the fallback), and Nsight Compute (`ncu`, counters,
opt-in). Each profiles `python -m fieldnote.measure.capture.run`, the same workload the timing stage measures.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ...core.errors import PipelineError
from ...registry.subjects import range_name


@dataclass(frozen=True)
class Job:
    """What to capture: every subject of one op (name -> implementation, variant, cubin), `repeats` times in
    rotating order, each call inside the NVTX range `range_name(op, name)`. One profiled process, one session."""

    op: str
    subjects: dict[str, dict]
    npz: str
    shape: dict
    iterations: int
    warmup: int
    repeats: int = 1
    tolerance: dict | None = None  # every timed call verified at it (verified.py)
    namespace: str = ""
    caches: tuple[str, ...] = ("warm",)  # warm: inputs left in L2 between calls; cold: L2 flushed before each call
    ceiling: bool = False  # the memory ceiling's copies of the op's traffic timed beside them (ceiling.py)

    def what(self, name: str, subject: dict) -> str:
        """A subject as its errors name it: namespace, op, implementation (or variant), shape."""
        from ...registry.ops import OPS

        label = OPS[self.op].label(subject.get("shape", self.shape))
        return f"{self.namespace + ': ' if self.namespace else ''}{self.op} / {name} at {label}"

    @property
    def subjects_named(self) -> tuple[str, ...]:
        """The measured names, as the tables' `subject` column carries them."""
        return tuple(self.subjects)

    def range_of(self, implementation: str, cache: str = "warm") -> str:
        return range_name(self.op, implementation, cache)

    def points(self) -> list[Job]:
        """The job a sweep point at a time (its subjects at one shape and seed, in their order), or itself whole
        where its subjects share the job's shape."""
        from dataclasses import replace

        from ...registry.ops import OPS

        def point(subject):
            return (OPS[self.op].label(subject["shape"]), subject["seed"]) if "shape" in subject else None

        keys = list(dict.fromkeys(point(s) for s in self.subjects.values()))
        if keys == [None]:
            return [self]
        return [replace(self, subjects={n: s for n, s in self.subjects.items() if point(s) == key}) for key in keys]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Job:
        return cls(**{**data, "caches": tuple(data.get("caches", ("warm",)))})


def label(kernels, job: Job):
    """Name each kernel's subject and capture from its range: the k-th occurrence of a range is
    iteration k mod `iterations` of capture k div `iterations`. Kernels outside every range keep nulls."""
    by_range = {job.range_of(name, cache): (name, cache) for name in job.subjects_named for cache in job.caches}
    occurrence = kernels["iteration"]
    found = kernels["range"].map(by_range)
    kernels = kernels.assign(subject=found.map(lambda v: v[0] if isinstance(v, tuple) else None),
                             capture=occurrence // job.iterations, iteration=occurrence % job.iterations,
                             iterations=job.iterations)
    if job.caches != ("warm",):  # a warm-only capture keeps the tables as they were
        kernels = kernels.assign(cache=found.map(lambda v: v[1] if isinstance(v, tuple) else None))
    return kernels


def account(workdir, seconds: float, here: float = 0.0) -> None:
    """Add a profiled session to this job's phases: the profiled process's own (its job file's `.phases.json`),
    and the rest of the `seconds` the session took as the profiler's start and export. A backend that profiles in
    this process (CUPTI) writes no such file; its phases are already this job's, `here` seconds of the session."""
    import json
    from pathlib import Path

    from ...core.progress import PROFILER, add

    found = Path(workdir) / "job.json.phases.json"
    inner = json.loads(found.read_text()) if found.exists() else {"wall": here}
    for name, value in inner.items():
        if name != "wall":
            add(name, value)
    add(PROFILER, max(seconds - inner["wall"], 0.0))


def session(module, job: Job, workdir, keep=None):
    """One profiled session through a backend module, its time added to this job's phases (account)."""
    import time
    from pathlib import Path

    from ...core.progress import spent

    start, before = time.perf_counter(), sum(spent().values())
    table = module.capture(job, Path(workdir), keep)
    account(workdir, time.perf_counter() - start, sum(spent().values()) - before)
    return table.assign(**on_gpu(workdir))


def on_gpu(workdir) -> dict:
    """The GPU the profiled process ran on and its clocks at the session's end (run.main writes them)."""
    import json
    from pathlib import Path

    found = Path(workdir) / "job.json.gpu.json"
    if not found.exists():
        raise PipelineError(f"capture: the profiled process recorded no GPU ({found.name} missing)")
    return json.loads(found.read_text())
