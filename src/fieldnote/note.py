"""note.md: a template over the evidence tables. One function per table returns rows (a DataFrame); the
markdown is the last step. No number is typed here: each comes from a table of the bundle."""
from __future__ import annotations

import pandas as pd

OPS = {"matmul": "Matrix multiplication", "gelu": "Bias + GELU", "layernorm": "LayerNorm",
       "triangle": "Triangle contraction", "neighbor": "Neighbor aggregation"}
IMPLEMENTATIONS = {"torch": "PyTorch", "triton": "Triton", "cuda": "CUDA C++", "rust": "Rust"}
HAND_WRITTEN = ("cuda", "rust")


def us(value) -> str:
    """Every time in the note: microseconds with two decimals."""
    return "" if pd.isna(value) else f"{value:.2f}"


def ordered(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(_o=frame["op"].map(list(OPS).index)).sort_values("_o").drop(columns="_o")


def hand_written(summary: pd.DataFrame) -> str:
    impl = [i for i in HAND_WRITTEN if i in set(summary["implementation"])]
    return impl[0] if impl else None


def kernel_and_span(summary: pd.DataFrame) -> pd.DataFrame:
    """Per op, the hand-written implementation's kernel time and mean span."""
    rows = ordered(summary[summary["implementation"] == hand_written(summary)])
    return pd.DataFrame({"Operation": rows["op"].map(OPS), "Kernel (µs)": rows["kernel_us"].map(us),
                         "Span (µs)": rows["span_mean_us"].map(us)})


def by_implementation(summary: pd.DataFrame, column: str, fmt=us) -> pd.DataFrame:
    """Ops down, implementations across: `column` of the summary (kernel_us, span_mean_us, launches)."""
    wide = summary.pivot(index="op", columns="implementation", values=column)
    wide = wide.loc[[op for op in OPS if op in wide.index]]
    impls = [i for i in IMPLEMENTATIONS if i in wide.columns]
    out = pd.DataFrame({"Operation": [OPS[op] for op in wide.index]})
    for impl in impls:
        out[IMPLEMENTATIONS[impl]] = [fmt(v) for v in wide[impl]]
    return out


def resources(kernels: pd.DataFrame) -> pd.DataFrame:
    """The launch the capture recorded for each hand-written kernel: grid x block, registers, shared memory."""
    mine = kernels[kernels["implementation"].isin(HAND_WRITTEN)].drop_duplicates(["op", "kernel"])
    mine = ordered(mine)
    return pd.DataFrame({"Kernel": "`" + mine["kernel"] + "`", "Grid × block": mine["grid"] + " × " + mine["block"],
                         "Registers / thread": mine["registers"].astype(str),
                         "Shared memory (bytes)": mine["shared_bytes"].astype(str)})


def triton_census(census: pd.DataFrame) -> pd.DataFrame:
    """What the offline compile of each Triton kernel shows (registers, shared memory, loads by width)."""
    rows = ordered(census.drop_duplicates("op"))
    return pd.DataFrame({
        "Operation": rows["op"].map(OPS), "Kernel": "`" + rows["kernel"] + "`",
        "Warps": rows["num_warps"].astype(str), "Registers": rows["registers"].astype(str),
        "Shared (bytes)": rows["shared_bytes"].astype(str),
        "Global loads (32 / 128-bit)": rows["global_loads_32bit"].astype(str) + " / "
        + rows["global_loads_128bit"].astype(str),
        "Async copies": rows["async_copies"].astype(str),
        "Stores (32 / 128-bit)": rows["global_stores_32bit"].astype(str) + " / "
        + rows["global_stores_128bit"].astype(str),
        "Barriers": rows["barriers"].astype(str)})


def ptxas(resources: pd.DataFrame) -> pd.DataFrame:
    """The resource report ptxas gave for each hand-written variant."""
    rows = ordered(resources)
    return pd.DataFrame({
        "Variant": "`" + rows["variant"] + "`", "Registers": rows["registers"].astype(str),
        "Spill stores / loads (bytes)": rows["spill_stores_bytes"].astype(str) + " / "
        + rows["spill_loads_bytes"].astype(str),
        "Static shared (bytes)": rows["static_shared_bytes"].astype(str), "Barriers": rows["barriers"].astype(str)})


def markdown(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def render(namespace: str, description: str, environment: dict, tables: dict[str, pd.DataFrame],
           history: dict | None = None) -> str:
    """`history`: optional cross-namespace views, {"progression": (summaries, changes), "drift": (baseline name,
    (summary, kernels) of the baseline)}."""
    summary = tables["summary"]
    spans = tables["spans"]
    eager = spans[spans["mode"] == "eager"]
    samples = eager.groupby(["op", "implementation"]).size()
    mine = IMPLEMENTATIONS.get(hand_written(summary), "hand-written")
    sections = [
        f"# {namespace}", description, f"GPU: {environment.get('gpu', 'unknown')}. Kernel time is the sum of "
        f"captured kernel durations per iteration ({', '.join(sorted(set(summary['backend'].dropna())))}); a span "
        f"is the mean of {samples.min()} warmed CUDA-event samples around one call "
        f"in {eager['round'].nunique()} rounds with rotating implementation order.",
        f"## Kernel and span per operation ({mine})", markdown(kernel_and_span(summary)),
        "## GPU kernel time, all implementations (µs)", markdown(by_implementation(summary, "kernel_us")),
        "## Time around the call, all implementations (mean span, µs)",
        markdown(by_implementation(summary, "span_mean_us")),
        "## Kernel launches per iteration",
        markdown(by_implementation(summary, "launches", fmt=lambda v: "" if pd.isna(v) else str(int(v)))),
        f"## Resources the capture reports for the {mine} kernels", markdown(resources(tables["kernels"])),
    ]
    sections += history_sections(namespace, tables, history or {})
    if "resources" in tables:
        sections += ["## The hand-written kernels as ptxas built them", markdown(ptxas(tables["resources"]))]
    if "census" in tables:
        arch = tables["census"]["arch"].iloc[0]
        sections += [f"## The Triton kernels, compiled offline for {arch} and censused",
                     markdown(triton_census(tables["census"]))]
    if "checks" in tables:
        checks = tables["checks"]
        sections += ["## Correctness", f"{int(checks['passed'].sum())} of {len(checks)} checks passed "
                     f"(rtol = {checks['rtol'].max():g}, atol = {checks['atol'].max():g}); largest absolute error "
                     f"{checks['max_abs_error'].max():.3g}."]
    return "\n\n".join(s for s in sections if s) + "\n"


def history_sections(namespace: str, tables: dict, history: dict) -> list[str]:
    from . import history as views

    sections = []
    if "progression" in history:
        summaries, changes = history["progression"]
        sections += ["## How each kernel reached its time",
                     "GPU kernel time of the hand-written kernel at each stage, each value read from that stage's "
                     "own namespace; the factor is that step's speed-up.",
                     markdown(views.progression(summaries, changes))]
    if "drift" in history:
        baseline, evidence = history["drift"]
        table = views.drift(evidence, (tables["summary"], tables["kernels"]))
        if not table.empty:
            bound = table["movement_pct"].abs().max()
            sections += ["## The unchanged operations bound the drift",
                         f"These operations kept their kernel between `{baseline}` and `{namespace}`; their kernel "
                         f"time moved by at most {bound:.1f}%, which bounds how much of the rewritten kernels' "
                         f"movement could be environment drift.",
                         markdown(views.drift_table(table, baseline, namespace))]
    return sections
