"""On the GPU: the adversarial table (each cheat, the check that caught it, its message) and the sanitizer table
for a namespace's adopted variants and the planted kernel, printed as markdown (for the closing note and docs).

    python tools/integrity_tables.py h200-001
"""
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import pandas as pd  # noqa: E402
import test_adversarial as adv  # noqa: E402

from fieldnote.core.errors import PipelineError  # noqa: E402
from fieldnote.measure import sanitize  # noqa: E402
from fieldnote.measure.build import cuda as build  # noqa: E402
from fieldnote.publish.note import markdown  # noqa: E402
from fieldnote.registry.config import load_namespaces  # noqa: E402
from fieldnote.registry.ops import OPS  # noqa: E402


def caught(fn, name) -> str:
    try:
        adv.spans(fn, name)
    except PipelineError as e:
        return str(e)
    return "NOT CAUGHT"


def adversarial(tmp: Path) -> pd.DataFrame:
    rows = []
    for name in ("gelu_stale", "gelu_every_fourth", "gelu_half", "gelu_zero_inputs"):
        rows.append({"cheat": f"kernel `{name}`", "message": caught(adv.measured(adv.cheat_kernel(tmp, name), name),
                                                                      name)})
    for name, make in (("left_on_another_stream", adv.left_on_another_stream), ("cached_by_pointer",
                                                                                 adv.cached_by_pointer)):
        rows.append({"cheat": f"runner `{name}`", "message": caught(adv.measured(make(), name), name)})
    return pd.DataFrame(rows)


def sanitizer(ns: str, tmp: Path) -> pd.DataFrame:
    import yaml

    defaults = yaml.safe_load(Path("config/config.yaml").read_text())
    namespace = load_namespaces(Path("config"), defaults)[ns]
    frames = []
    for op, variant in namespace.variants.items():
        v = OPS[op].variant(variant)
        cubin, _, _ = build.compile_source(Path(v.source), v.target("sm_90"))
        (tmp / f"{variant}.cubin").write_bytes(cubin)
        frames.append(sanitize.sanitize({"op": op, "variants": {variant: str(tmp / f"{variant}.cubin")},
                                         "seed": 7}, tmp).assign(op=op))
    cubin, _, _ = build.compile_source(Path("tests/cuda/gelu_missing_barrier.cu"), "sm_90")
    (tmp / "racy.cubin").write_bytes(cubin)
    frames.append(sanitize.sanitize({"op": "gelu", "variants": {"gelu_missing_barrier": str(tmp / "racy.cubin")},
                                     "seed": 7, "contracts": {"gelu_missing_barrier": "gelu_bias_tanh"}},
                                    tmp).assign(op="gelu (planted)"))
    return pd.concat(frames, ignore_index=True)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print(markdown(adversarial(Path(tmp))))
        table = sanitizer(sys.argv[1], Path(tmp))
        table.to_csv(Path(sys.argv[2]) / "sanitizer.csv" if len(sys.argv) > 2 else sys.stdout, index=False)
        summary = table.groupby(["op", "variant", "tool"]).agg(shapes=("shape", "count"), errors=("errors", "sum"),
                                                               first=("first_message", "max")).reset_index()
        print(markdown(summary))
