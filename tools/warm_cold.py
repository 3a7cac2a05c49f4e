"""On the GPU: a namespace's implementations at its seed shapes, warm and cold L2 side by side in one Nsight
Systems session per op (every timed call verified), as the pipeline captures them with `capture.cache: [warm,
cold]`. Prints the table; writes it as CSV to the folder given.

    python tools/warm_cold.py h200-001 OUT [IMPLEMENTATION-TO-LEAVE-OUT...]
"""
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

from fieldnote.evidence.measurements import control_band, summary
from fieldnote.evidence.summary import summarize
from fieldnote.measure import capture, inputs
from fieldnote.measure.build import cuda as build
from fieldnote.measure.capture import backends
from fieldnote.publish.note import markdown, warm_and_cold
from fieldnote.registry.config import load_namespaces
from fieldnote.registry.ops import OPS


def subjects(namespace, op: str, tmp: Path, left_out=()) -> dict:
    found = {}
    for impl in [i for i in namespace.implementations if i not in left_out]:
        if impl != "cuda":
            found[impl] = {"implementation": impl, "variant": None, "cubin": None}
            continue
        variant = OPS[op].variant(namespace.variants[op])
        cubin, _, _ = build.compile_source(Path(variant.source), variant.target(namespace.arch))
        (tmp / f"{variant.name}.cubin").write_bytes(cubin)
        found[impl] = {"implementation": "cuda", "variant": variant.name, "cubin": str(tmp / f"{variant.name}.cubin")}
    return found


def main(ns: str, out: Path, left_out=()) -> None:
    defaults = yaml.safe_load(Path("config/config.yaml").read_text())
    namespace = load_namespaces(Path("config"), defaults)[ns]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(tmp / "inductor"))
        for op in namespace.ops:
            npz = tmp / f"{op}.npz"
            inputs.write(op, namespace.shapes[op], namespace.seed, npz, tmp / f"{op}.json")
            job = capture.Job(op, subjects(namespace, op, tmp, left_out), str(npz), namespace.shapes[op],
                              iterations=100, warmup=25, repeats=3, tolerance=namespace.tolerance,
                              namespace=f"{ns} (warm/cold)", caches=("warm", "cold"))
            (tmp / op).mkdir()
            kernels = backends.backend("nsys").capture(job, tmp / op).assign(op=op, backend="nsys")
            rows.append((kernels, control_band(summarize(kernels), 0.05)))
            print(f"{op}: captured", flush=True)
    kernels = pd.concat([k for k, _ in rows], ignore_index=True)
    per_capture = pd.concat([c for _, c in rows], ignore_index=True)
    spans = per_capture[["op", "implementation"]].drop_duplicates().assign(mode="eager", round=0, span_us=1.0)
    table = summary(per_capture, spans, kernels)
    table.to_csv(out / f"{ns}-warm-cold.csv", index=False)
    per_capture.to_csv(out / f"{ns}-warm-cold-captures.csv", index=False)
    print(markdown(warm_and_cold(table)))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), tuple(sys.argv[3:]))
