"""compute-sanitizer in the gate: every hand-written variant of an op under memcheck, racecheck, synccheck and
initcheck, at the op's small (tail) shapes and edge cases, before anything of it is timed. One sanitized
process per tool runs every variant at every shape; each launch is announced on stdout first, so each error the
tool prints is attributed to the variant and shape launched last. The `sanitizer` table has a row per (variant,
tool, shape): its errors and the first message. A variant with an error is never timed: an implementation's stops
the op's timing and captures (`refuse`), an attempt's is left out of them and the attempts table says why.

    python -m fieldnote.measure.sanitize JOB.json    # the workload the tool watches
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from ..core.errors import PipelineError

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
MARK = "fieldnote-sanitize: "
SANITIZER = "/usr/local/cuda/bin/compute-sanitizer"
# The first line of each error the tools print; the rest of a report is indented below it, and the summaries
# (ERROR SUMMARY, RACECHECK SUMMARY) are counted by the lines above them.
_ERROR = re.compile(r"^========= (Invalid |Error|Program hit|Uninitialized|Barrier|Race|Warning: (Race|.*hazard))")


def executable() -> str | None:
    return shutil.which("compute-sanitizer") or (SANITIZER if Path(SANITIZER).exists() else None)


def workload(job: dict) -> None:
    """Launch each variant once at each case, synchronized, each launch announced first. Each launch holds the
    GPU lock shared (gpulock), not the whole sanitized process: its start, imports and instrumentation are most of
    a tool run's 8 to 12 s, and a measurement window, or one of torch.compile's timings, waiting for the GPU waited
    for all of it (docs/pipeline-time.md, the seventeenth session)."""
    from ..registry.ops import OPS
    from .gpulock import shared
    from .implementations import runner

    op = job["op"]
    spec = OPS[op]
    for name, cubin in job["variants"].items():
        # a kernel planted in the tests launches by the contract of a registered variant
        contract = job.get("contracts", {}).get(name, name)
        run = runner(op, spec.variant(contract).toolchain, spec.variant(contract), Path(cubin))
        for case in _cases(job):
            print(f"{MARK}{name} | {case.name} {spec.label(case.shape)}", flush=True)
            with shared():
                _launch(run, spec, case)


def _launch(run, spec, case) -> None:
    """The case's inputs uploaded, the variant launched on them, and the GPU synchronized."""
    import torch

    t = {n: torch.from_numpy(a).cuda() for n, a in case.inputs.items()}
    t["out"] = torch.zeros(spec.output_shape(case.shape), dtype=torch.float32, device="cuda")
    run(t, case.shape)
    torch.cuda.synchronize()


def attribute(output: str, tool: str) -> list[dict]:
    """(variant, shape, errors, first message) for each launch the output announces."""
    rows, current = [], None
    for line in output.splitlines():
        if line.startswith(MARK):
            variant, shape = line.removeprefix(MARK).split(" | ", 1)
            current = {"variant": variant, "tool": tool, "shape": shape, "errors": 0, "first_message": ""}
            rows.append(current)
        elif _ERROR.match(line) and current is not None:
            current["errors"] += 1
            current["first_message"] = current["first_message"] or line.removeprefix("========= ").strip()
    return rows


def sanitize(job: dict, workdir: Path, timeout: int = 900) -> pd.DataFrame:
    """Every tool over the job; a tool run that fails to start (not an error it reports) is a PipelineError."""
    tool_path = executable()
    if tool_path is None:
        raise PipelineError("sanitize: compute-sanitizer not found (expected on PATH or at /usr/local/cuda/bin)")
    job_file = workdir / "sanitize-job.json"
    job_file.write_text(json.dumps(job))
    outputs = _run_tools(tool_path, job_file, workdir, timeout)  # the four side by side, each launch under the lock
    rows = []
    for tool, (returncode, text) in outputs.items():
        found = attribute(text, tool)
        launched = {(r["variant"], r["shape"]) for r in found}
        if returncode != 0 or len(launched) < expected_launches(job):
            tail = "\n".join(text.strip().splitlines()[-12:])
            raise PipelineError(f"sanitize ({tool}, {job['op']}): the sanitized workload did not run through "
                                f"(exit {returncode}):\n{tail}")
        rows += found
    return pd.DataFrame(rows, columns=["variant", "tool", "shape", "errors", "first_message"])


def _run_tools(tool_path: str, job_file: Path, workdir: Path, timeout: int) -> dict[str, tuple[int, str]]:
    """Each tool's exit status and output (stdout, then stderr), the tools run at once, each into files of its
    own (a pipe left unread would stall a tool that reports much)."""
    running = {}
    for tool in TOOLS:
        command = [tool_path, "--tool", tool, "--error-exitcode", "0", "--print-limit", "100",
                   *(["--racecheck-report", "all"] if tool == "racecheck" else []),
                   sys.executable, "-m", "fieldnote.measure.sanitize", str(job_file)]
        out, err = open(workdir / f"{tool}.out", "w"), open(workdir / f"{tool}.err", "w")
        running[tool] = (subprocess.Popen(command, stdout=out, stderr=err, text=True), out, err)
    try:
        for process, *_ in running.values():
            process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PipelineError(f"sanitize: a tool ran past {timeout} s") from None
    finally:
        for process, out, err in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
            out.close(), err.close()
    return {tool: (process.returncode, (workdir / f"{tool}.out").read_text() + "\n" + (workdir / f"{tool}.err")
                   .read_text()) for tool, (process, *_) in running.items()}


def _cases(job: dict):
    """The op's small shapes and edge cases, drawn from the job's seed."""
    from ..registry.ops import OPS
    from .check import cases

    return cases(job["op"], OPS[job["op"]].small_shapes[0], job["seed"], None, small_only=True)


def expected_launches(job: dict) -> int:
    return len(job["variants"]) * len(_cases(job))


def refuse(table: pd.DataFrame, variants, what: str) -> None:
    """Stop before timing when any of `variants` has a sanitizer error: one line naming variant, tool, shape."""
    bad = flagged(table, variants)
    if not bad.empty:
        r = bad.iloc[0]
        raise PipelineError(f"{what}: {r.variant} is not timed: {finding(r)}")


def flagged(table: pd.DataFrame, variants) -> pd.DataFrame:
    """The first row with errors of each of `variants` the sanitizer reported."""
    bad = table[table["variant"].isin(list(variants)) & (table["errors"] > 0)]
    return bad.drop_duplicates("variant")


def finding(row) -> str:
    return f"compute-sanitizer {row.tool} reported {row.errors} error(s) at {row.shape}: {row.first_message}"


def gate(snakemake, subjects: dict, what: str) -> dict:
    """A timing or capture job's gate: the sanitizer table of its op (an input where the op has hand-written
    variants). An implementation it reported an error for stops the job (`refuse`); an attempt's variant is left
    out of the job, which times the rest (the attempts table says why it has no value). The subjects to time."""
    paths = list(getattr(snakemake.input, "sanitized", None) or [])
    if not paths:
        return dict(subjects)
    table = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    attempt = {name for name, s in subjects.items() if s.get("variant") and name != s["implementation"]}
    refuse(table, [s["variant"] for name, s in subjects.items() if s.get("variant") and name not in attempt], what)
    found = refusals(table)
    left_out = {name for name in attempt if subjects[name]["variant"] in found}
    for name in left_out:
        print(f"fieldnote: {what}: the attempt {name} is left out: {found[subjects[name]['variant']]}", flush=True)
    return {name: s for name, s in subjects.items() if name not in left_out}


def refusals(table: pd.DataFrame | None) -> dict[str, str]:
    """variant -> why the gate left it out, from a sanitizer table (none where the evidence has no such table)."""
    if table is None:
        return {}
    return {r.variant: finding(r) for r in flagged(table, table["variant"].unique()).itertuples()}


if __name__ == "__main__":
    workload(json.loads(Path(sys.argv[1]).read_text()))
