"""The note's figures, drawn from the summary table alone (matplotlib, PNG and SVG, readable without the text)."""
from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd

from ..registry.ops import OPS
from ..registry.vocabulary import COLORS, IMPLEMENTATIONS, OP_TITLES, hand_written


@cache
def pyplot():
    """matplotlib's pyplot, set up once, on the first figure: the workflow reads the captions (which figures a
    namespace has) on every run, and importing matplotlib for that would be half a second of a no-op run."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "fieldnote"  # stable SVG ids: a replay redraws the same bytes
    import matplotlib.pyplot as plt

    return plt


def _ops(summary: pd.DataFrame) -> list[str]:
    return [op for op in OP_TITLES if op in set(summary["op"])]


def _impls(summary: pd.DataFrame) -> list[str]:
    return [i for i in IMPLEMENTATIONS if i in set(summary["implementation"])]


def kernel_and_span(summary: pd.DataFrame, namespace: str):
    """Top row: GPU kernel time per op; bottom row: mean span; one column per op, each with its own scale."""
    ops, impls = _ops(summary), _impls(summary)
    fig, axes = pyplot().subplots(2, len(ops), figsize=(2.6 * len(ops), 5.2), squeeze=False)
    for col, op in enumerate(ops):
        rows = summary[summary["op"] == op].set_index("implementation")
        for row, (column, label) in enumerate([("kernel_us", "kernel (µs)"), ("span_mean_us", "span (µs)")]):
            ax = axes[row][col]
            values = [rows.loc[i, column] if i in rows.index else 0 for i in impls]
            whiskers = None
            if column == "span_mean_us" and "span_round_min_us" in rows:  # the range of the round means
                pairs = list(zip(impls, values, strict=True))
                whiskers = [[max(v - rows["span_round_min_us"].get(i, v), 0) for i, v in pairs],
                            [max(rows["span_round_max_us"].get(i, v) - v, 0) for i, v in pairs]]
            ax.bar(range(len(impls)), values, color=[COLORS[i] for i in impls], yerr=whiskers, capsize=3)
            ax.set_xticks(range(len(impls)), [IMPLEMENTATIONS[i] for i in impls], rotation=30, fontsize=8)
            ax.set_title(OP_TITLES[op] if row == 0 else "", fontsize=9)
            if col == 0:
                ax.set_ylabel(label)
    fig.suptitle(f"{namespace}: time inside the kernels (top) and around the call (bottom; whiskers: the range of "
                 "the round means)", fontsize=10)
    fig.tight_layout()
    return fig


def launches(summary: pd.DataFrame, namespace: str):
    ops, impls = _ops(summary), _impls(summary)
    fig, ax = pyplot().subplots(figsize=(7, 3.2))
    width = 0.8 / len(impls)
    for k, impl in enumerate(impls):
        rows = summary[summary["implementation"] == impl].set_index("op")
        ax.bar([x + k * width for x in range(len(ops))], [rows["launches"].get(op, 0) for op in ops], width,
               label=IMPLEMENTATIONS[impl], color=COLORS[impl])
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(ops))], [OP_TITLES[op].replace(" ", "\n", 1) for op in ops],
                  fontsize=8)
    ax.set_ylabel("kernel launches per call")
    ax.set_title(f"{namespace}: launches per iteration (captured launches / iterations)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def progression(stages: pd.DataFrame, ops=None, namespace: str | None = None):
    """Kernel time of the hand-written kernel at each stage (namespace), one panel per op, with the speed-up
    factor printed between stages. `stages` has columns namespace, op, kernel_us, in stage order; `ops` by default
    those the registry stages."""
    from ..evidence.history import staged

    ops = ops or staged()
    fig, axes = pyplot().subplots(1, len(ops), figsize=(5 * len(ops), 3.8), squeeze=False)
    for ax, op in zip(axes[0], ops, strict=True):
        rows = stages[stages["op"] == op].reset_index(drop=True)
        ax.plot(range(len(rows)), rows["kernel_us"], marker="o", color=COLORS["cuda"])
        for i, r in rows.iterrows():
            ax.annotate(f"{r.kernel_us:.2f}", (i, r.kernel_us), textcoords="offset points", xytext=(0, 7),
                        ha="center", fontsize=8, bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
            if i:  # the step's factor on a band at the foot of the panel, clear of the line and of the values
                factor = rows.loc[i - 1, "kernel_us"] / r.kernel_us
                ax.annotate(f"×{factor:.2f}", (i - 0.5, 0.04), xycoords=("data", "axes fraction"), ha="center",
                            fontsize=8, color="gray")
        ax.set_xticks(range(len(rows)), rows["namespace"], fontsize=8, rotation=20, ha="right")
        ax.set_xlim(-0.5, len(rows) - 0.5)
        ax.set_ylabel("GPU kernel time (µs)")
        ax.set_title(OP_TITLES[op], fontsize=10)
        ax.set_ylim(0, rows["kernel_us"].max() * 1.25)
    if namespace:
        fig.suptitle(f"{namespace}: the hand-written kernel at each stage (the factor: that step's speed-up)",
                     fontsize=10)
    fig.tight_layout()
    return fig


def stage_rows(summaries: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The hand-written kernel's time per op in each namespace's summary, namespaces in the given order."""
    rows = []
    for namespace, summary in summaries.items():
        mine = summary[summary["implementation"] == hand_written(summary)]
        rows += [{"namespace": namespace, "op": r.op, "kernel_us": r.kernel_us} for r in mine.itertuples()]
    return pd.DataFrame(rows)


def captions(progression: bool, sweep_ops) -> dict[str, str]:
    """Every figure the figures job draws for a namespace, by name, with the caption the note places it under."""
    return {
        "kernel-and-span": "GPU kernel time (top row) and the mean CUDA-event span around the call (bottom row) of "
                           "every operation and implementation; whiskers show the range of the round means",
        "launches": "Kernel launches per iteration: captured launches divided by captured iterations",
        **({"progression": "The hand-written kernel's GPU kernel time at each stage, with each step's speed-up "
                           "between the points"} if progression else {}),
        **{f"sweep-{op}": f"{OP_TITLES[op]}: what each implementation achieves at each size of the sweep, against the "
                          "roofline" for op in OP_TITLES if op in set(sweep_ops)},
    }


def stage_values(stages: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"Stage": stages["namespace"], "Operation": stages["op"].map(OP_TITLES),
                         "Kernel (µs)": stages["kernel_us"]})


def sweep_values(table: pd.DataFrame, op: str) -> pd.DataFrame:
    rows = table[table["op"] == op]
    return pd.DataFrame({"Shape": rows["shape"], "Implementation": rows["implementation"].map(IMPLEMENTATIONS),
                         "Kernel (µs)": rows["kernel_us"], "GB/s": rows["achieved_gbs"],
                         "TFLOP/s": rows["achieved_tflops"],
                         # in whole percent, as the note's sweep table prints it
                         "Of the roof (%)": (rows["fraction_of_roof"] * 100).round().astype("Int64")})


def save(fig, folder: Path, name: str, values: pd.DataFrame | None = None) -> list[Path]:
    """The figure as PNG and SVG, and the values it draws (`<name>.values.csv`, shown beneath it on the page)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.{ext}" for ext in ("png", "svg")]
    for path in paths:
        fig.savefig(path, dpi=150, metadata={"Date": None} if path.suffix == ".svg" else {"Software": None})
    pyplot().close(fig)
    if values is not None:
        paths.append(folder / f"{name}.values.csv")
        values.to_csv(paths[-1], index=False, float_format="%.2f")
    return paths


def summary_values(summary: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """The values a summary figure draws: one row per op and implementation."""
    rows = summary[summary["implementation"].isin(_impls(summary))].copy()
    rows["Operation"], rows["Implementation"] = rows["op"].map(OP_TITLES), rows["implementation"].map(IMPLEMENTATIONS)
    rows = rows.sort_values(["op", "implementation"], key=lambda c: c.map(
        {**{o: i for i, o in enumerate(OP_TITLES)}, **{m: i for i, m in enumerate(IMPLEMENTATIONS)}}))
    return rows[["Operation", "Implementation", *columns]].rename(columns=columns)


def draw_all(summary: pd.DataFrame, namespace: str, folder: Path) -> list[Path]:
    spans = {"kernel_us": "Kernel (µs)", "span_mean_us": "Span, mean (µs)",
             **{c: t for c, t in (("span_round_min_us", "Fastest round's mean (µs)"),
                                  ("span_round_max_us", "Slowest round's mean (µs)")) if c in summary}}
    return (save(kernel_and_span(summary, namespace), folder, "kernel-and-span", summary_values(summary, spans))
            + save(launches(summary, namespace), folder, "launches",
                   summary_values(summary, {"launches": "Launches per iteration"})))


LINE_STYLES = ["-", "--", ":", "-."]


def sweep(table: pd.DataFrame, op: str, roofline: dict, namespace: str | None = None):
    """Achieved bandwidth (memory-bound ops) or FLOP/s (compute-bound) of every implementation against the
    problem size, under the machine's roof; for memory-bound ops a line marks where the data outgrows L2."""
    rows = table[(table["op"] == op) & table["kernel_us"].notna()]  # points left out have no time to draw
    compute = rows.loc[rows["bytes"].idxmax(), "bound"] == "compute"  # as the note: the op at its largest size
    x, y = ("flops", "achieved_tflops") if compute else ("bytes", "achieved_gbs")
    roof = roofline["fp32_tflops"] if compute else roofline["bandwidth_gbs"]
    fig, ax = pyplot().subplots(figsize=(8.4, 3.8), layout="constrained")  # the legend beside the axes, not on them
    by = OPS[op].sweep_lines_by  # a line per row width, or one line
    widths = sorted({str(OPS[op].parse_label(s)[by]) for s in rows["shape"]}, key=int) if by else [None]
    for impl in [i for i in IMPLEMENTATIONS if i in set(rows["implementation"])]:
        for i, width in enumerate(widths):  # every width drawn, the line styles taken in turn
            style = LINE_STYLES[i % len(LINE_STYLES)]
            line = rows[rows["implementation"] == impl]
            if width is not None:
                line = line[[str(OPS[op].parse_label(s)[by]) == width for s in line["shape"]]]
            if line.empty:
                continue
            line = line.sort_values(x)
            label = IMPLEMENTATIONS[impl] + (f", {width} columns" if width is not None else "")
            ax.plot(line[x], line[y], style, marker="o", markersize=3, color=COLORS[impl], label=label)
    ax.axhline(roof, color="black", linewidth=0.8, linestyle="--")
    ax.annotate(f"roof {roof:g} {'TFLOP/s' if compute else 'GB/s'}", (0.01, roof), xycoords=("axes fraction", "data"),
                textcoords="offset points", xytext=(0, 3), fontsize=7)
    above = rows[rows[y] > roof]  # possible only while the data sits in L2: marked, never hidden
    if not above.empty:
        ax.scatter(above[x], above[y], s=60, facecolors="none", edgecolors="red", linewidths=1,
                   label="above the roof (in L2)", zorder=3)
    if not compute:
        ax.axvline(roofline["l2_bytes"], color="gray", linewidth=0.8, linestyle=":")
        ax.annotate("L2", (roofline["l2_bytes"], 0.02), xycoords=("data", "axes fraction"), textcoords="offset points",
                    xytext=(3, 0), fontsize=7)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("FLOPs per call" if compute else "least bytes moved per call")
    ax.set_ylabel("achieved TFLOP/s" if compute else "achieved GB/s")
    ax.set_ylim(rows[y].min() / 1.5, max(roof, rows[y].max()) * 1.5)
    ax.set_title(f"{namespace + ': ' if namespace else ''}{OP_TITLES[op]}, achieved against the roofline by size",
                 fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return fig
