"""The original project's published evidence (comparison-results.json, comparison-profiles.json) as our tables.

Its implementations were python (the torch reference), triton and rust (hand-written, through cuda-oxide);
python is our `torch`. Kernel time is the sum of captured kernel durations over the requested iterations, and a
span is one CUDA-event sample, exactly as the original computed them, so the published numbers come back.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ..core.errors import PipelineError
from ..registry.subjects import range_name
from .plausible import check_plausible

IMPLEMENTATIONS = {"python": "torch", "triton": "triton", "rust": "rust"}
FILES = ("comparison-results.json", "comparison-profiles.json")


def _read(folder: Path) -> tuple[dict, dict]:
    missing = [f for f in FILES if not (folder / f).exists()]
    if missing:
        raise PipelineError(f"{folder}: the original evidence is not there (missing {', '.join(missing)}); "
                            f"it is read from ../shared/seed-evidence/<ns>/ beside the checkout")
    return tuple(_json(folder / f) for f in FILES)


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise PipelineError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise PipelineError(f"{path}: cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise PipelineError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise PipelineError(f"{path}: not a JSON object")
    return data


def _sm_clock(gpu_state: str) -> float | None:
    """nvidia-smi's CSV line: driver, pstate, temperature, SM clock, memory clock, utilization."""
    values = gpu_state.strip().splitlines()[-1].split(",")
    match = re.search(r"(\d+)\s*MHz", values[3]) if len(values) > 3 else None
    return float(match.group(1)) if match else None


def subjects(results: dict) -> dict[tuple[str, str], dict]:
    """Per (op, implementation): the subject as our tables name it (subjects.py), its variant (the kernel the
    original names, else the implementation) and the shape it ran at."""
    found = {}
    for result in results["results"]:
        for round_ in result["rounds"]:
            for impl, block in round_["implementations"].items():
                ours = IMPLEMENTATIONS[impl]
                found.setdefault((result["op"], impl), {
                    "subject": ours, "implementation": ours, "variant": block.get("variant_kernel") or ours,
                    "shape": "x".join(map(str, result["dims"]))})
    return found


def spans(results: dict) -> pd.DataFrame:
    rows, named = [], subjects(results)
    for result in results["results"]:
        for round_ in result["rounds"]:
            sm = _sm_clock(round_.get("gpu_state", ""))
            for impl, block in round_["implementations"].items():
                position = round_["order"].index(impl)
                rows += [{"op": result["op"], **named[result["op"], impl], "mode": "eager",
                          "round": round_["index"], "position": position, "iteration": i, "span_us": us,
                          "sm_clock_mhz": sm} for i, us in enumerate(block["samples_us"])]
    return pd.DataFrame(rows)


def checks(results: dict) -> pd.DataFrame:
    rows, named = [], subjects(results)
    for result in results["results"]:
        for round_ in result["rounds"]:
            for impl, block in round_["implementations"].items():
                c = block["correctness"]
                rows.append({"op": result["op"], **named[result["op"], impl], "case": f"full (round {round_['index']})",
                             "device": results["gpu"], "passed": bool(c["passed"]),
                             "max_abs_error": c.get("max_abs_error"), "checked_elements": c.get("checked_elements"),
                             "rtol": c.get("rtol"), "atol": c.get("atol")})
    return pd.DataFrame(rows)


def kernels(profiles: dict, named: dict[tuple[str, str], dict]) -> pd.DataFrame:
    rows = []
    for capture in profiles["captures"]:
        if capture["status"] != "complete":
            raise PipelineError(f"original capture {capture['operation']}/{capture['language']} is "
                                f"'{capture['status']}', not complete")
        op, impl = capture["operation"], IMPLEMENTATIONS[capture["language"]]
        iterations = capture["requested_iterations"]
        per_iteration = capture["launches"] // iterations
        rows += [{"op": op, **named[op, capture["language"]], "backend": capture["backend"],
                  "backend_version": profiles.get("timestamp_mode", ""), "capture": 0,
                  "iteration": launch // max(per_iteration, 1), "iterations": iterations,
                  "kernel": k["kernel_name"], "launch": launch, "range": range_name(op, impl),
                  "duration_us": k["duration_us"], "grid": k["grid_size"], "block": k["block_size"],
                  "registers": k["registers_per_thread"], "shared_bytes": k["shared_mem_bytes"]}
                 for launch, k in enumerate(capture["kernel_metrics"])]
    return pd.DataFrame(rows)


def environment(results: dict) -> dict:
    keys = ("experiment_id", "utc", "gpu", "torch", "triton", "cuda", "python", "platform", "precision", "timing")
    return {k: results.get(k) for k in keys}


def load(folder: str | Path) -> dict:
    """Every table the original evidence supports, plus its environment; the tables checked as plausible."""
    results, profiles = _read(Path(folder))
    try:
        tables = {"spans": spans(results), "checks": checks(results), "kernels": kernels(profiles, subjects(results))}
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError) as e:
        raise PipelineError(f"{folder}: the original evidence is not laid out as comparison-results.json and "
                            f"comparison-profiles.json are ({type(e).__name__}: {e})") from None
    for name, frame in tables.items():
        check_plausible(f"{folder}: {name}", frame)
    return {**tables, "environment": {**environment(results), "source_files": source_files(Path(folder))}}


def source_files(folder: Path) -> dict[str, str]:
    """The provenance of the import: each published file's name and SHA-256."""
    import hashlib

    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in FILES}
