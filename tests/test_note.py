"""note.md for a measured namespace, rendered from real H200 tables (tests/fixtures, see test_capture.py)."""
from pathlib import Path

import pandas as pd
import pytest
from conftest import shipped_table

from fieldnote.core.errors import PipelineError
from fieldnote.evidence.measurements import summary
from fieldnote.evidence.summary import summarize
from fieldnote.publish import authored, note, verdicts
from fieldnote.registry.ops import OPS
from fieldnote.registry.vocabulary import IMPLEMENTATIONS

note_of = authored.generated_note  # the note of a namespace that names no template

FIXTURES = Path(__file__).parent / "fixtures"


DECLARED = {"Target (declared)": "Target"}  # the targets table's column, read by name


def tf32_probe(tflops: float, spread: float = 1.0) -> pd.DataFrame:
    """The ceilings' row of a probe of the TF32 tensor cores at matmul's seed shape (1024^3): `tflops` of TF32, its
    floor's interval `spread` either way (a factor)."""
    from fieldnote.evidence.floors import unit_flops

    seed = unit_flops("matmul", {"m": 1024, "n": 1024, "k": 1024})
    floor = seed / (tflops * 1e6)
    return pd.DataFrame({"op": ["matmul"], "cache": ["warm"], "kind": ["compute"], "config": ["cublas_tf32_4096"],
                         "unit": ["tf32_tensor"], "unit_flops": [seed], "tflops": [tflops], "floor_us": [floor],
                         "floor_low_us": [floor / spread], "floor_high_us": [floor * spread], "best": [True]})


def with_intervals(sweep: pd.DataFrame) -> pd.DataFrame:
    """A sweep without intervals (h200-002's) given 2% either side of each time."""
    return sweep.assign(kernel_low_us=sweep["kernel_us"] * 0.98, kernel_high_us=sweep["kernel_us"] * 1.02)


def h200_tables() -> dict[str, pd.DataFrame]:
    kernels = pd.read_parquet(FIXTURES / "h200-mage-006-kernels.parquet")
    spans = pd.read_parquet(FIXTURES / "h200-mage-006-spans.parquet")
    checks = pd.DataFrame({"op": ["matmul"], "subject": ["cuda"], "implementation": ["cuda"], "passed": [True],
                           "rtol": [1e-4], "atol": [1e-4], "max_abs_error": [1.38e-5]})
    return {"summary": summary(summarize(kernels), spans), "spans": spans, "kernels": kernels, "checks": checks,
            "resources": pd.read_parquet(FIXTURES / "h200-mage-006-resources.parquet"),
            "census": pd.read_parquet(FIXTURES / "h200-mage-006-census.parquet")}


def test_measured_note_has_every_supported_table_with_two_decimals():
    tables = h200_tables()
    text = note_of("mage-006", "The load in flight.", {"gpu": "NVIDIA H200"}, tables)
    cuda = tables["summary"].set_index(["op", "implementation"]).loc[("matmul", "cuda")]
    assert f"| Matrix multiplication | {cuda['kernel_us']:.2f} | {cuda['span_mean_us']:.2f} |" in text
    for heading in ("## Kernel and span per operation (CUDA C++)", "## GPU kernel time, all implementations",
                    "## Kernel launches per iteration", "## The hand-written kernels as ptxas built them",
                    "## The Triton kernels, compiled offline for sm_90 and censused"):
        assert heading in text
    assert "| LayerNorm | `layernorm_row_kernel` | sm_90 | 4 | 32 | 16 | 24 / 0 | 0 | 8 / 0 | 5 |" in text
    assert "| `matmul_cpasync_2buf_64x64` | 79 | 0 / 0 | 33792 | 1 |" in text


def test_the_generated_note_is_a_template_the_authored_engine_renders(tmp_path, monkeypatch):
    """One note engine: the generated note is templates/generated.md, held to the same rules as an authored
    template (a numeral typed into it is refused) and placing the same generated tables."""
    from fieldnote.core.errors import PipelineError

    tables = h200_tables()
    text = note_of("mage-006", "", {"gpu": "NVIDIA H200"}, tables)
    assert "\n\n\n" not in text and text.endswith(".\n") and text.startswith("# mage-006\n\n")
    edited = tmp_path / "generated.md"
    edited.write_text(authored.GENERATED.read_text().replace("## Kernel launches per iteration",
                                                             "## Kernel launches per iteration, 4 of them"))
    monkeypatch.setattr(authored, "GENERATED", edited)
    with pytest.raises(PipelineError, match="line .*: the number '4' is typed by hand"):
        note_of("mage-006", "", {"gpu": "NVIDIA H200"}, tables)


def test_every_microsecond_in_the_note_has_two_decimals():
    import re

    text = note_of("mage-006", "", {"gpu": "NVIDIA H200"}, h200_tables())
    cells = [cell for table in re.findall(r"## [^\n]*µs[^\n]*\n\n((?:\|[^\n]*\n)+)", text)
             for cell in re.findall(r"\| ([0-9.]+) (?=\|)", table)]
    assert len(cells) >= 20
    assert all(re.fullmatch(r"\d+\.\d\d", cell) for cell in cells), cells


def test_attempts_table_reads_each_value_and_its_comparison_from_one_summary():
    from fieldnote.evidence.measurements import attempts

    names = ["triton", "cuda", "layernorm_block96_rsqrt_rn", "layernorm_4warp_row_uneven", "layernorm_2warp_row_shared"]
    measured = pd.DataFrame({"op": "layernorm", "subject": names, "kernel_us": [5.4, 6.2, 6.9, 7.0, 8.0],
                             "span_mean_us": [20.0, 12.0, 13.0, 13.5, 12.7]})
    other_op = pd.DataFrame({"op": "matmul", "subject": ["triton"], "kernel_us": [79.5], "span_mean_us": [90.0]})
    measured = pd.concat([other_op, measured], ignore_index=True)  # every op has a triton row
    declared = [{"variant": "layernorm_block96_rsqrt_rn", "metric": "kernel", "compared_with": "triton"},
                {"variant": "layernorm_4warp_row_uneven", "metric": "span",
                 "compared_with": "layernorm_2warp_row_shared"}]
    table = attempts(measured, declared)
    assert table[["value_us", "compared_us"]].values.tolist() == [[6.9, 5.4], [13.5, 12.7]]
    assert "refused" not in table  # as it was before the column: archives replay to the byte
    rows = note.markdown(note.attempts(table)).splitlines()
    assert "GPU kernel time | 6.90 µs | 5.40 µs for Triton, same run (1.28x)" in rows[2]
    assert "CUDA-event span (mean) | 13.50 µs | 12.70 µs for `layernorm_2warp_row_shared`, same run (1.06x)" in rows[3]


def test_an_attempt_is_set_against_the_adopted_kernel_by_their_intervals_with_why_it_was_not_adopted():
    """An attempt faster than the kernel the namespace adopted says so, and why it was not adopted where the
    namespace declares it; one whose interval meets the adopted kernel's is not distinguishable from it."""
    from fieldnote.evidence.measurements import attempts

    measured = pd.DataFrame({"op": "layernorm", "implementation": ["triton", "cuda", "cuda", "cuda"],
                             "subject": ["triton", "cuda", "layernorm_block96_rsqrt_rn", "layernorm_block192_one_quad"],
                             "kernel_us": [5.47, 6.22, 5.76, 6.24], "kernel_low_us": [5.46, 6.21, 5.75, 6.20],
                             "kernel_high_us": [5.48, 6.23, 5.77, 6.28], "span_mean_us": [20.0, 12.0, 13.0, 13.5]})
    declared = [{"variant": "layernorm_block96_rsqrt_rn", "metric": "kernel", "compared_with": "triton",
                 "why": "the stage keeps the original project's choice"},
                {"variant": "layernorm_block192_one_quad", "metric": "kernel", "compared_with": "cuda"}]
    table = attempts(measured, declared)
    assert table["against_adopted"].tolist() == ["below", "not distinguishable"]
    rows = note.markdown(note.attempts(table)).splitlines()
    assert rows[2].endswith("| faster than CUDA C++'s 6.22 µs; not adopted: the stage keeps the original project's "
                            "choice |"), rows[2]
    assert rows[3].endswith("| not distinguishable from CUDA C++'s 6.22 µs |"), rows[3]


def test_an_attempt_the_sanitizer_left_out_has_no_value_and_says_why():
    from fieldnote.evidence.measurements import attempts

    measured = pd.DataFrame({"op": "matmul", "subject": ["cuda", "matmul_3xtf32_wgmma_tma"], "kernel_us": [23.3, 23.1],
                             "span_mean_us": [30.0, 29.0]})
    declared = [{"variant": "matmul_3xtf32_wgmma_tma", "metric": "kernel", "compared_with": "cuda"},
                {"variant": "matmul_3xtf32_wgmma_cpasync_64x128", "metric": "kernel", "compared_with": "cuda"}]
    why = "compute-sanitizer racecheck reported 100 error(s) at small 64x128x520: Error: Potential WAR hazard"
    table = attempts(measured, declared, {"matmul_3xtf32_wgmma_cpasync_64x128": why})
    assert table["refused"].tolist() == ["", why] and pd.isna(table["value_us"].iloc[1])
    rows = note.markdown(note.attempts(table)).splitlines()
    assert f"| not timed: {why} | 23.30 µs for CUDA C++, same run |" in rows[3], rows[3]
    with pytest.raises(PipelineError, match="matmul_3xtf32_wgmma_cpasync_64x128 .matmul. was not measured"):
        attempts(measured, declared)


def test_standing_sets_ours_against_the_best_peer_and_the_roofline_floor():
    """From the mage-006 H200 fixtures: matmul cuda 74.85 against torch; the floor at 1024^3 is 2.15 GFLOP at
    67 TFLOP/s, 32.05 us; the GELU's is 25.2 MB at 4300 GB/s, 5.85 us."""
    tables = h200_tables()
    shapes = {"matmul": {"m": 1024, "n": 1024, "k": 1024}, "gelu": {"rows": 4096, "cols": 768},
              "layernorm": {"rows": 4096, "cols": 768}, "triangle": {"n": 128, "channels": 32},
              "neighbor": {"nodes": 4096, "features": 64, "edges": 65536}}
    roof = {"bandwidth_gbs": 4300, "fp32_tflops": 67, "l2_bytes": 60 * 2**20}
    rows = note.standing(tables["summary"], shapes, roof).set_index("Operation")
    t = tables["summary"].set_index(["op", "implementation"])["kernel_us"]
    matmul = rows.loc["Matrix multiplication"]
    best = min(t[("matmul", "torch")], t[("matmul", "triton")])
    assert matmul["Best peer"] == "PyTorch" and matmul["Floor (µs)"] == "32.05"
    assert matmul["Ours / best peer"] == f"{t[('matmul', 'cuda')] / best:.2f}"
    assert rows.loc["Bias + GELU", "Floor (µs)"] == "5.85"
    text = note_of("h200-001", "", {"gpu": "NVIDIA H200"}, tables, roofline=(shapes, roof))
    assert "## CUDA C++ against the best peer and the roofline (kernel time, µs)" in text
    assert "against the best peer" not in note_of("mage-006", "", {"gpu": "NVIDIA H200"}, tables)
    summary = tables["summary"]  # and a fourth implementation, for the last op only
    compiled = summary[summary["op"] == "neighbor"].iloc[[0]].assign(implementation="compiled")
    rows = note.standing(pd.concat([summary, compiled]), shapes, roof)
    assert list(rows.columns[:5]) == ["Operation", "PyTorch", "Triton", "torch.compile", "CUDA C++"]
    assert rows.set_index("Operation").loc["Matrix multiplication", "torch.compile"] == ""


def test_a_share_nsight_compute_reports_past_a_hundred_percent_is_marked_out_of_range():
    """h200-001's neighbor aggregation: an L2 hit rate of 101%, a ratio whose two counts came from different replays,
    is shown as measured and marked, in the table and in the prose a template draws from it."""
    from fieldnote.publish.authored import Evidence

    counters = shipped_table("h200-001", "counters")
    hits = counters[(counters["op"] == "neighbor") & (counters["name"] == "l2_hit_rate")]["value"].median()
    assert hits > 100.5
    row = note.counters(counters).set_index("Operation").loc["Neighbor aggregation"]
    assert row["L2 hits"] == f"{hits:.0f}% (out of range)" and not row["DRAM throughput"].endswith("range)")
    evidence = Evidence("h200-001", {"counters": counters}, {}, {}, {})
    assert str(evidence.counter("neighbor", "l2_hit_rate")) == f"{hits:.0f}% (out of range)"


def test_counters_stand_beside_the_standing_one_row_a_kernel():
    """The mage-006 counters of the shipped archive (ncu on the H200): medians over the profiled launches, in the
    standing's section only; the counters mage-006 did not ask for (tensor pipe, issue slots) stay empty."""
    counters = shipped_table("mage-006", "counters")
    rows = note.counters(counters).set_index("Operation")
    assert list(rows.index) == ["Matrix multiplication", "Bias + GELU", "LayerNorm", "Triangle contraction",
                                "Neighbor aggregation"]
    matmul = rows.loc["Matrix multiplication"]
    durations = counters[(counters["op"] == "matmul") & (counters["name"] == "duration")]["value"]
    assert matmul["Kernel"] == "`matmul_cpasync_2buf_64x64`" and matmul["Registers"] == "79"
    assert matmul["Duration (µs)"] == f"{durations.median() / 1e3:.2f}" and matmul["Tensor pipe"] == ""
    tables = {**h200_tables(), "counters": counters}
    shapes = {"matmul": {"m": 1024, "n": 1024, "k": 1024}, "gelu": {"rows": 4096, "cols": 768},
              "layernorm": {"rows": 4096, "cols": 768}, "triangle": {"n": 128, "channels": 32},
              "neighbor": {"nodes": 4096, "features": 64, "edges": 65536}}
    roof = {"bandwidth_gbs": 4300, "fp32_tflops": 67, "l2_bytes": 60 * 2**20}
    assert "Nsight Compute's counters" in note_of("h200-001", "", {"gpu": "H200"}, tables, roofline=(shapes, roof))
    assert "Nsight Compute's counters" not in note_of("mage-006", "", {"gpu": "H200"}, tables)


def test_targets_say_by_how_much_each_is_missed_and_a_miss_needs_its_limit():
    """The shipped h200-001 run: matmul 46.12 us against torch.compile's 55.44 (0.83, 4% over 0.80; 5% over 44
    us); the triangle 0.76, met; at the sweep's largest sizes the GELU at 97% of the roof, met, the neighbor
    aggregation at 12%, missed, and the triangle (compute-bound there) not held to the roof."""
    summary, sweep = shipped_table("h200-001", "summary"), shipped_table("h200-001", "sweep")
    targets = {"best_peer_ratio": 0.80, "kernel_us": {"matmul": 44}, "roof_fraction": 0.75}
    rows = note.against_targets(summary, sweep, targets)
    found = {(r.Operation, r.Target): (r.Measured, r.Met) for r in rows.rename(columns=DECLARED).itertuples()}
    assert found[("Matrix multiplication", "ours / best peer at most 0.80")] == ("0.83", "missed by 4%")
    assert found[("Matrix multiplication", "kernel at most 44.00 µs")] == ("46.12 µs", "missed by 5%")
    assert found[("Triangle contraction", "ours / best peer at most 0.80")] == ("0.76", "met")
    assert found[("Bias + GELU", "at 65536x4096, at least 75% of the bandwidth roof")] == ("97%", "met")
    assert found[("Neighbor aggregation", "at 1048576x64x16777216, at least 75% of the bandwidth roof")] == (
        "12%", "missed by 84%")
    assert len(rows[rows["Operation"] == "Triangle contraction"]) == 1
    unstated = "\n\n".join(note.targets_section(summary, sweep, targets))
    assert "- **Matrix multiplication.** Not stated: the namespace file has no `targets.limits.matmul`." in unstated
    limits = {op: f"what limits {op}" for op in ("matmul", "gelu", "layernorm", "neighbor")}
    text = "\n\n".join(note.targets_section(summary, sweep, {**targets, "limits": limits}))
    assert "- **Neighbor aggregation.** what limits neighbor" in text and "what limits triangle" not in text
    assert "Not stated" not in text and "left out" not in text
    stale = "\n\n".join(note.targets_section(summary, sweep, {**targets, "limits": {**limits, "triangle": "nothing"}}))
    assert "Triangle contraction met every target; what the namespace file states limits it " \
           "(`targets.limits.triangle`) is left out." in stale and "- **Triangle contraction.** nothing" not in stale
    assert note.targets_section(summary, None, {"best_peer_ratio": 2})[-1].count("| met |") == 5


def test_a_target_the_evidence_cannot_judge_is_not_measured_not_met():
    """No peer for an op, or no point of ours at the op's largest sweep size (left out there): "not measured",
    which needs its limit like a miss; the roof is never judged at a smaller size instead."""
    summary, sweep = shipped_table("h200-001", "summary"), shipped_table("h200-001", "sweep")
    summary = summary.assign(kernel_us=summary["kernel_us"].where(
        (summary["op"] != "triangle") | (summary["implementation"] == "cuda")))
    sweep = sweep[~((sweep["op"] == "gelu") & (sweep["implementation"] == "cuda") & (sweep["shape"] == "65536x4096"))]
    rows = note.against_targets(summary, sweep, {"best_peer_ratio": 0.80, "roof_fraction": 0.75})
    found = {(r.Operation, r.Target): (r.Measured, r.Met) for r in rows.rename(columns=DECLARED).itertuples()}
    assert found[("Triangle contraction", "ours / best peer at most 0.80")] == ("nan", "not measured")
    assert found[("Bias + GELU", "at 65536x4096, at least 75% of the bandwidth roof")] == ("", "not measured")
    text = "\n\n".join(note.targets_section(summary, sweep, {"best_peer_ratio": 0.80, "limits": {
        op: "x" for op in ("matmul", "gelu", "layernorm")}}))
    assert "- **Triangle contraction.** Not stated: the namespace file has no `targets.limits.triangle`." in text


def test_a_peer_that_ran_other_kernels_between_namespaces_is_named():
    """Issue 17: what a library (or torch.compile) chose is in the kernels table; the note names a peer whose
    kernels, by name and launch, differ between the baseline and this namespace, and leaves the hand-written ones
    to the drift table."""
    from fieldnote.evidence import history
    def kernels(torch_kernel, cuda_kernel):
        return pd.DataFrame({"op": "gelu", "subject": ["torch", "torch", "cuda"],
                             "implementation": ["torch", "torch", "cuda"], "backend": "nsys",
                             "kernel": [torch_kernel, "add", cuda_kernel], "grid": "8,1,1", "block": "128,1,1"})

    changed = history.peer_changes(kernels("gelu_v1", "mine_a"), kernels("gelu_v2", "mine_b"))
    assert changed[["op", "implementation"]].values.tolist() == [["gelu", "torch"]]
    assert changed["only_before"].iloc[0] == [("gelu_v1", "8,1,1", "128,1,1")]
    assert history.peer_changes(kernels("gelu_v1", "a"), kernels("gelu_v1", "b")).empty


@pytest.mark.parametrize("alone, says", [
    (None, "beside other checks on the GPU"),  # archived before the sweep checks recorded it
    (True, "timing its candidates with the GPU to itself as at the seed shapes"),
    (False, "beside other checks on the GPU"),
])
def test_the_sweep_says_how_torch_compile_autotuned_as_its_checks_recorded(alone, says):
    checks = pd.DataFrame({"implementation": ["compiled", "cuda"], "passed": [True, True]})
    if alone is not None:
        checks["gpu_alone"] = [alone, False]
    assert says in note.sweep_autotuning({"sweep_checks": checks})
    assert note.sweep_autotuning({"sweep_checks": checks[checks["implementation"] != "compiled"]}) == ""


def test_the_sweep_names_each_op_s_worst_point_against_the_fastest_peer_and_holds_it_to_its_target():
    """h200-001's archived sweep: the triangle leads PyTorch at 128 x 32 and trails it at 512 x 32."""
    sweep = shipped_table("h200-001", "sweep")
    worst = note.sweep_worst(sweep).set_index("Operation")
    ratios = verdicts.sweep_ratios(sweep).set_index(["op", "shape"])
    triangle = ratios.loc["triangle"]
    assert worst.loc["Triangle contraction", "Worst point"] == triangle["ratio"].idxmax() == "512x32"
    assert worst.loc["Triangle contraction", "Ours / best peer"] == f"{triangle['ratio'].max():.2f}"
    assert triangle.loc["128x32", "best_peer"] == "torch" and triangle.loc["128x32", "ratio"] < 1
    led = (ratios["ratio"].round(2) <= 1).groupby("op").sum()
    assert worst.loc["Neighbor aggregation", "Points at or under 1.00"] == f"{led['neighbor']} of 5"
    summary = shipped_table("h200-001", "summary")
    targets = note.against_targets(summary, sweep, {"sweep_best_peer_ratio": 1.0}).set_index("Operation")
    assert targets.loc["Triangle contraction", "Met"].startswith("missed by")
    assert targets.loc["Triangle contraction", "Measured"] == f"{triangle['ratio'].max():.2f} at 512x32"
    assert targets.loc["Neighbor aggregation", "Met"] == "met"


def test_targets_at_named_sweep_points_read_the_sweep_and_refuse_a_point_it_lacks():
    """issue 18's targets on h200-001's archived sweep: the triangle at n = 512 against PyTorch, the neighbor
    aggregation at 1M nodes against the fastest peer, the matmul's TFLOP/s at 4096^3."""
    sweep, summary = shipped_table("h200-001", "sweep"), shipped_table("h200-001", "summary")
    at = sweep.set_index(["op", "shape", "implementation"])
    targets = {"points": [{"op": "triangle", "shape": "512x32", "versus": "torch", "at_most": 0.80},
                          {"op": "neighbor", "shape": "1048576x64x16777216", "versus": "best_peer", "at_most": 0.75}],
               "tflops": [{"op": "matmul", "shape": "4096x4096x4096", "at_least": 90}]}
    rows = note.against_targets(summary, sweep, targets).set_index(["Operation", "Target (declared)"])["Measured"]
    triangle = at.loc[("triangle", "512x32", "cuda"), "kernel_us"] / at.loc[("triangle", "512x32", "torch"),
                                                                            "kernel_us"]
    assert rows[("Triangle contraction", "at 512x32, ours / PyTorch at most 0.80")] == f"{triangle:.2f}"
    tflops = at.loc[("matmul", "4096x4096x4096", "cuda"), "achieved_tflops"]
    assert rows[("Matrix multiplication", "at 4096x4096x4096, at least 90 TFLOP/s")] == f"{tflops:.1f} TFLOP/s"
    met = note.against_targets(summary, sweep, targets).set_index("Operation")["Met"]
    assert met["Neighbor aggregation"] == "met" and met["Triangle contraction"].startswith("missed by")
    with pytest.raises(PipelineError, match="'4096x4096' is no point of its sweep"):
        note.against_targets(summary, sweep, {"tflops": [{"op": "matmul", "shape": "4096x4096", "at_least": 1}]})


def test_the_floor_margin_holds_every_sweep_point_from_a_size_on_to_the_compute_floor_scaled_to_its_flops():
    """issue 46's "within 10% of the 3xTF32 bound from 2048^3": h200-002's archived matmul sweep against a probe of
    the TF32 tensor cores measured at the seed shape (1024^3), its floor there scaled by each point's FLOPs; the
    points below 2048^3 are not judged, the worst of the others stands for them, and a floor no probe measured is
    not measured, not met."""
    from fieldnote.evidence.floors import unit_flops

    sweep, summary = shipped_table("h200-002", "sweep"), shipped_table("h200-002", "summary")
    rate = 400e6  # unit FLOPs a microsecond: 400 TFLOP/s of TF32
    ceilings = tf32_probe(400)
    ours = sweep[(sweep["op"] == "matmul") & (sweep["implementation"] == "cuda")].set_index("shape")["kernel_us"]
    judged = {s: ours[s] / (unit_flops("matmul", OPS["matmul"].parse_label(s)) / rate) for s in ours.index
              if unit_flops("matmul", OPS["matmul"].parse_label(s)) >= unit_flops("matmul", {"m": 2048, "n": 2048,
                                                                                              "k": 2048})}
    assert set(judged) == {"2048x2048x2048", "4096x4096x4096"}
    worst = max(judged, key=judged.get)
    for margin, met in ((judged[worst] - 1 + 0.01, "met"), (judged[worst] - 1 - 0.01, "missed")):
        targets = {"floor_margin": [{"op": "matmul", "from": "2048x2048x2048", "margin": margin}]}
        row = note.against_targets(summary, sweep, targets, ceilings).set_index("Operation").loc[
            "Matrix multiplication"]
        assert row["Target (declared)"] == f"from 2048x2048x2048 on, at most {1 + margin:.2f}x the compute floor"
        assert row["Measured"] == f"{judged[worst]:.2f}x at {worst}" and row["Met"].startswith(met)
    unmeasured = note.against_targets(summary, sweep, targets, ceilings.assign(op="gelu")).set_index("Operation")
    assert unmeasured.loc["Matrix multiplication", "Met"] == "not measured"
    with pytest.raises(PipelineError, match="'2048x2048' is no point of its sweep"):
        note.against_targets(summary, sweep, {"floor_margin": [{"op": "matmul", "from": "2048x2048", "margin": 0.1}]},
                             ceilings)


def test_the_seed_targets_read_cold_l2_and_the_copy_of_the_bytes():
    """Cold L2 against the cold peers; a warm kernel slower than 0.80x the best peer meets its target when it is
    within the margin of the warm copy of its own bytes, and only then."""
    summary = shipped_table("h200-001", "summary")
    times = summary.set_index(["op", "implementation"])["kernel_us"]
    cold = summary.assign(kernel_cold_us=summary["kernel_us"] * summary["implementation"].map(
        {"cuda": 1.2}).fillna(2.0))  # ours 1.2x its warm time, every peer 2x: cold ratio = warm ratio x 0.6
    ceilings = pd.DataFrame({"op": ["gelu", "layernorm"], "cache": "warm", "config": "x", "best": True,
                             "kernel_us": [times[("gelu", "cuda")] / 1.05, times[("layernorm", "cuda")] / 1.5]})
    targets = {"best_peer_ratio": 0.80, "warm_ceiling_margin": 0.10, "cold_best_peer_ratio": 0.80}
    rows = note.against_targets(cold, None, targets, ceilings)
    warm = rows[rows["Target (declared)"].str.startswith("ours / best peer")].set_index("Operation")
    assert warm.loc["Bias + GELU", "Met"] == "met"
    assert warm.loc["Bias + GELU", "Measured"].endswith("1.05x the warm copy")
    assert warm.loc["LayerNorm", "Met"] != "met"  # 1.50x its copy, and behind the best peer
    ratio = times[("gelu", "cuda")] / times["gelu"].drop("cuda").min()
    cold_rows = rows[rows["Target (declared)"].str.startswith("L2 cold")].set_index("Operation")
    assert cold_rows.loc["Bias + GELU", "Measured"] == f"{round(ratio * 0.6, 2):.2f}"


def test_a_best_peer_ratio_under_the_floor_is_met_near_the_floor_and_only_there():
    """issue 46: at most 0.80 of the best peer, or within 10% of the measured floor where 0.80 of the best peer lies
    under it (the higher of the copy and the compute floor): GELU's peers near the copy (met by ours at the copy),
    the layer norm's the same with ours far from it (missed), the matmul's 0.80 above its compute floor (the floor
    does not excuse a ratio no floor forbids)."""
    summary = shipped_table("h200-001", "summary")
    times = {("gelu", "cuda"): 10.4, ("layernorm", "cuda"): 20.0, ("matmul", "cuda"): 10.5}
    peer = {"gelu": 12.1, "layernorm": 12.1, "matmul": 13.0}
    summary = summary.assign(kernel_us=[times.get((r.op, r.implementation), peer.get(r.op, r.kernel_us) *
                                                  (1.0 if r.implementation == "torch" else 1.5))
                                        for r in summary.itertuples()])
    ceilings = pd.DataFrame({"op": ["gelu", "layernorm", "matmul", "matmul"], "cache": "warm", "best": True,
                             "config": ["c", "c", "c", "cublas_tf32_4096"],
                             "kind": ["memory", "memory", "memory", "compute"],
                             "kernel_us": [10.0, 10.0, 5.0, float("nan")], "floor_us": [10.0, 10.0, 5.0, 10.0]})
    targets = {"best_peer_ratio": 0.80, "unreachable_floor_margin": 0.10}
    rows = note.against_targets(summary, None, targets, ceilings).set_index("Operation")
    assert rows.loc["Bias + GELU", "Met"] == "met"
    assert rows.loc["Bias + GELU", "Measured"] == ("0.86; 0.80x the best peer is 0.97x the copy of its bytes, ours "
                                                   "1.04x it")
    assert rows.loc["LayerNorm", "Met"].startswith("missed")
    assert rows.loc["Matrix multiplication", "Met"].startswith("missed")
    assert "1.04x the compute floor, ours 1.05x it" in rows.loc["Matrix multiplication", "Measured"]
    assert rows.loc["Bias + GELU", "Target (declared)"] == ("ours / best peer at most 0.80, or at most 1.10x the "
                                                             "floor where that lies under it")
    claims = verdicts.target_claims(summary, None, targets, ceilings)
    gelu = claims[claims["claim"].str.startswith("Bias + GELU")]
    assert list(gelu["key"]) == ["targets.best_peer_ratio", "targets.best_peer_ratio",
                                 "targets.unreachable_floor_margin"]
    assert list(gelu["holds"]) == [False, True, True]


def test_the_traffic_at_a_named_point_is_each_kernel_s_dram_bytes_a_call_against_the_op_s_least():
    """issue 46's neighbor at 1M nodes, h200-002's counters there: ours moved about six times the op's least bytes
    (the gathered rows of x from DRAM, kernel notes section 5); a subject of several kernels sums them, each kernel's
    median times its launches a call."""
    from fieldnote.evidence.tables import PROFILED_CALLS as CALLS

    counted = shipped_table("h200-002", "sweep_counters")
    table = note.point_traffic(counted).set_index("At")
    ours = counted[(counted["subject"] == "cuda@1048576x64x16777216") & (counted["name"] == "dram_bytes")]
    least = OPS["neighbor"].work({"nodes": 1048576, "features": 64, "edges": 16777216})[0]
    row = table.loc["`cuda@1048576x64x16777216`"]
    assert row["DRAM a call (MiB)"] == f"{ours['value'].median() * len(ours) / CALLS / 2**20:.1f}"
    assert row["Least bytes (MiB)"] == f"{least / 2**20:.1f}" and 5.5 < float(row["DRAM / least"]) < 6.5
    two = pd.DataFrame({"op": "neighbor", "subject": "x", "shape": "4096x64x65536", "name": "dram_bytes",
                        "kernel": ["k1"] * CALLS + ["k2"] * 2 * CALLS, "value": [1e6] * CALLS + [3e6] * 2 * CALLS})
    assert note.point_traffic(two)["DRAM a call (MiB)"].iloc[0] == f"{(1e6 + 2 * 3e6) / 2**20:.1f}"


def test_the_generated_note_sets_each_prediction_against_its_outcome():
    """A namespace without an authored note still shows its predictions (issue 18: method in the open)."""
    tables = h200_tables()
    matmul = tables["summary"].set_index(["op", "implementation"]).loc[("matmul", "cuda")]
    variant = matmul["variant"]
    around = {"variant": variant, "metric": "kernel", "made": "2026-12-02", "source": "docs/x.md, section 1",
              "low_us": round(matmul["kernel_us"] - 1, 2), "high_us": round(matmul["kernel_us"] + 1, 2)}
    above = {**around, "low_us": round(matmul["kernel_us"] + 1, 2), "high_us": round(matmul["kernel_us"] + 2, 2)}
    text = note_of("mage-006", "", {"gpu": "NVIDIA H200"}, tables, predictions=(around, above))
    section = text.split("## Each change's prediction against its outcome", 1)[1]
    assert f"| `{variant}` | GPU kernel time |" in section and "| held |" in section
    assert "| faster than predicted |" in section
    assert "prediction against its outcome" not in note_of("mage-006", "", {"gpu": "NVIDIA H200"}, tables)


def test_a_kernel_past_the_fp32_roof_is_said_to_run_on_the_tensor_cores():
    """h200-002's sweep (its fourteenth-session run): the 3xTF32 matmul passes the FP32 roof at its larger sizes."""
    tables = {**h200_tables(), "sweep": pd.read_parquet(FIXTURES / "h200-002-sweep.parquet")}
    said = "those kernels run on the tensor cores"
    assert said in note_of("mage-006", "", {"gpu": "NVIDIA H200"}, tables)
    sweep = tables["sweep"]
    under = sweep[~((sweep["op"] == "matmul") & (sweep["implementation"] == "cuda"))]
    assert said not in note_of("mage-006", "", {"gpu": "NVIDIA H200"}, {**tables, "sweep": under})


def test_a_value_that_rounds_to_its_target_but_lies_past_it_is_missed():
    """Judged on the unrounded value (issue 41): h200-001's matmul stands at 0.8320 of the best peer (shown 0.83) and
    at 46.122 µs (shown 46.12), its layer norm at 0.9690 of the roof (shown 97%), its 4096^3 matmul at 53.288 TFLOP/s
    (shown 53.3). A target at the shown value is missed, by less than one percent (never "by 0%"); one a hair
    past the value is met; the margin, unrounded and signed, is the claims table's."""
    summary, sweep = shipped_table("h200-001", "summary"), shipped_table("h200-001", "sweep")
    times = summary.set_index(["op", "implementation"])["kernel_us"]
    ratio = times[("matmul", "cuda")] / times["matmul"].drop("cuda").min()
    at = sweep.set_index(["op", "shape", "implementation"])
    roof = at.loc[("layernorm", "65536x4096", "cuda"), "fraction_of_roof"]
    tflops = at.loc[("matmul", "4096x4096x4096", "cuda"), "achieved_tflops"]
    assert (f"{ratio:.2f}", round(ratio, 2) < ratio) == ("0.83", True)
    assert (f"{roof:.0%}", round(roof, 2) > roof, f"{tflops:.1f}", round(tflops, 1) > tflops) == (
        "97%", True, "53.3", True)

    def met(targets):
        rows = note.against_targets(summary, sweep, targets)
        return {(r.Operation, r.Measured): r.Met for r in rows.itertuples()}

    at_shown = {"best_peer_ratio": 0.83, "kernel_us": {"matmul": 46.12}, "roof_fraction": 0.97,
                "tflops": [{"op": "matmul", "shape": "4096x4096x4096", "at_least": 53.3}]}
    missed = met(at_shown)
    assert missed[("Matrix multiplication", "0.83")] == "missed by less than 1%"
    assert missed[("Matrix multiplication", "46.12 µs")] == "missed by less than 1%"
    assert missed[("LayerNorm", "97%")] == "missed by less than 1%"
    assert missed[("Matrix multiplication", "53.3 TFLOP/s")] == "missed by less than 1%"
    past = met({"best_peer_ratio": 0.8320, "kernel_us": {"matmul": 46.123}, "roof_fraction": 0.9689,
                "tflops": [{"op": "matmul", "shape": "4096x4096x4096", "at_least": 53.28}]})
    assert [past[k] for k in (("Matrix multiplication", "0.83"), ("Matrix multiplication", "46.12 µs"),
                              ("LayerNorm", "97%"), ("Matrix multiplication", "53.3 TFLOP/s"))] == ["met"] * 4
    claims = verdicts.target_claims(summary, sweep, at_shown).set_index("key")
    row = claims.loc["targets.best_peer_ratio"].set_index("left").loc["matmul: cuda / the best peer (compiled)"]
    assert (row["left_value"], row["right_value"], row["relation"], row["verdict"]) == (ratio, 0.83, "<=", "missed")
    assert row["margin"] == pytest.approx(0.83 - ratio) and -0.005 < row["margin"] < 0
    assert row["relative_margin"] == pytest.approx(0.83 / 0.83 - ratio / 0.83) and not row["holds"]
    tf = claims.loc["targets.tflops.0"]
    assert (tf["relation"], tf["verdict"], tf["margin"]) == (">=", "missed", pytest.approx(tflops - 53.3))


def test_a_prediction_is_held_only_when_its_unrounded_value_lies_in_the_range():
    """h200-001's GELU kernel at 5.0490 µs (shown 5.05): predicted from 5.05 it did not hold, and its noise interval
    reaches into the range, so it is not distinguishable from the prediction (not faster than it); predicted from
    5.50 it was faster than predicted. The claims table has the margin to the nearer bound."""
    summary = shipped_table("h200-001", "summary")
    gelu = summary.set_index(["op", "implementation"]).loc[("gelu", "cuda")]
    assert f"{gelu['kernel_us']:.2f}" == "5.05" and gelu["kernel_us"] < 5.05
    prediction = {"variant": gelu["variant"], "metric": "kernel", "low_us": 5.05, "high_us": 6.0,
                  "made": "2026-11-29", "source": "docs/x.md, section 1"}
    table = note.against_predictions([prediction], summary, None)
    assert (table["Measured (µs)"].iloc[0], table["Outcome"].iloc[0]) == ("5.05",
                                                                           "not distinguishable from the prediction")
    assert gelu["kernel_high_us"] >= 5.05
    faster = note.against_predictions([{**prediction, "low_us": 5.5}], summary, None)["Outcome"].iloc[0]
    assert faster == "faster than predicted"
    assert note.against_predictions([{**prediction, "low_us": 5.04}], summary, None)["Outcome"].iloc[0] == "held"
    row = verdicts.prediction_claims([prediction], summary, None).iloc[0]
    assert (row["key"], row["relation"], row["right_low"], row["right_high"]) == ("predictions.0", "in", 5.05, 6.0)
    assert row["margin"] == pytest.approx(gelu["kernel_us"] - 5.05) and row["margin"] < 0 and not row["holds"]


def test_the_verdicts_of_a_placed_table_are_recorded_with_the_claims_where_it_is_placed(tmp_path):
    """A template that places the targets table records each of its comparisons in the claims table, at the line
    it places it, once; the generated note records them all (workflow/scripts/note.py)."""
    from fieldnote.publish import authored
    tables = {"summary": shipped_table("h200-001", "summary"), "sweep": shipped_table("h200-001", "sweep")}
    targets = {"best_peer_ratio": 0.80, "kernel_us": {"matmul": 44}, "roof_fraction": 0.75}
    judged = verdicts.judged(tables, targets)
    template = tmp_path / "note.md"
    template.write_text('The targets:\n\n{{ table("targets") }}\n\n{{ table("targets") }}\n')
    evidence = authored.Evidence("h200-001", tables, {"gpu": "H200"}, {}, {})
    made = {"targets": note.markdown(note.against_targets(tables["summary"], tables["sweep"], targets))}
    claims = authored.render(template, evidence, made, {}, "notes/x.md", judged).claims
    assert len(claims) == len(judged["targets"]) == 9 and (claims["kind"] == "target").all()
    assert (claims["line"] == 3).all() and (claims["file"] == "notes/x.md").all()
    assert claims.set_index(["key", "left"]).loc[("targets.kernel_us.matmul", "matmul: cuda kernel time (µs)"),
                                                 "verdict"] == "missed"
    unplaced = template.with_name("unplaced.md")
    unplaced.write_text("Nothing placed.\n")
    assert authored.render(unplaced, evidence, made, {}, None, judged).claims.empty
    generated = authored.Claims("config/namespaces/h200-001.yaml", judged=dict(judged))
    generated.placed("targets")
    assert (generated.table("h200-001")["line"] == 0).all() and len(generated.rows) == 9


def test_the_seed_table_has_every_implementation_warm_and_cold_and_the_ratio_with_its_interval():
    """issue 46's first table: h200-002's archived summary, ours against the fastest peer in each L2 state, the
    ratio's interval from the ends of both times' intervals."""
    summary = shipped_table("h200-002", "summary")
    table = note.seed_standing(summary, verdicts.standing(summary, summary)).set_index(["Operation", "L2"])
    assert {"PyTorch", "Triton", "torch.compile", "CUDA C++"} <= set(table.columns)
    for cache, (time, low, high) in verdicts.TIMES.items():
        times = summary[summary["op"] == "matmul"].set_index("implementation")
        peer = times.drop("cuda")[time].idxmin()
        row = table.loc[("Matrix multiplication", cache)]
        assert row["CUDA C++"] == f"{times.loc['cuda', time]:.2f}" and row["Best peer"] == IMPLEMENTATIONS[peer]
        quotient, lowest, highest = (times.loc["cuda", t] / times.loc[peer, u] for t, u in
                                     ((time, time), (low, high), (high, low)))
        assert row["Ours / best peer (interval)"] == f"{quotient:.2f} ({lowest:.2f} to {highest:.2f})"
    assert "cold" not in set(note.seed_standing(summary.assign(kernel_cold_us=float("nan")),
                                                verdicts.standing(summary, summary))["L2"])
    # a peer held at its best known time from a pinned archive: named with it, the columns staying this run's
    known = {"versus": "triton", "source": "h200-001", "reference": 4.5}
    assert note.best_peer(known) == "Triton (in h200-001, 4.50 µs)"
    assert note.best_peer({"versus": "triton", "source": "", "reference": 4.5}) == "Triton"


def test_the_worst_point_of_each_op_carries_its_interval_and_where_it_stands_against_one():
    """h200-002's archived sweep, given intervals of 2% either side: the triangle's worst point, its ratio's
    interval, and over 1.00 by all of it."""
    sweep = with_intervals(shipped_table("h200-002", "sweep"))
    row = note.worst_points(verdicts.sweep(sweep, sweep)).set_index("Operation").loc["Triangle contraction"]
    ratios = verdicts.sweep_ratios(sweep).set_index(["op", "shape"]).loc["triangle"]
    worst = ratios["ratio"].idxmax()
    assert row["Worst point"] == worst
    expected = ratios.loc[worst, "ratio"]
    assert row["Ours / best peer (interval)"] == (f"{expected:.2f} ({expected * 0.98 / 1.02:.2f} to "
                                                  f"{expected * 1.02 / 0.98:.2f})")
    assert row["Against 1.00"] == verdicts.OVER


def test_the_compute_bound_op_is_shown_by_size_against_the_bound_its_probe_sets():
    """issue 46's matmul table: every implementation's TFLOP/s at each sweep point by FLOPs, the 3xTF32 bound (the
    TF32 probe's rate over three) and ours / its floor there with the interval; nothing for an op no probe ran
    for, and no table without probes."""
    from fieldnote.evidence.floors import unit_flops

    sweep = with_intervals(shipped_table("h200-002", "sweep"))
    rate = 600e6  # unit FLOPs a microsecond: 600 TFLOP/s of TF32
    ceilings = tf32_probe(600, spread=1.01)
    table = note.compute_by_size(sweep, ceilings)
    assert set(table["Operation"]) == {"Matrix multiplication"}
    ours = sweep[(sweep["op"] == "matmul") & (sweep["implementation"] == "cuda")].set_index("shape")
    by_flops = sorted(ours.index, key=lambda s: unit_flops("matmul", OPS["matmul"].parse_label(s)))
    assert list(table["Shape"]) == by_flops
    row = table.set_index("Shape").loc["4096x4096x4096"]
    assert row["CUDA C++ (TFLOP/s)"] == f"{ours.loc['4096x4096x4096', 'achieved_tflops']:.1f}"
    assert row["Bound (TFLOP/s)"] == "200.0" and "PyTorch (TFLOP/s)" in table.columns
    floor = unit_flops("matmul", {"m": 4096, "n": 4096, "k": 4096}) / rate
    time = ours.loc["4096x4096x4096", "kernel_us"]
    assert row["Ours / floor (interval)"] == (f"{time / floor:.2f} ({time * 0.98 / (floor * 1.01):.2f} to "
                                              f"{time * 1.02 / (floor / 1.01):.2f})")
    assert note.compute_by_size(sweep, ceilings.iloc[:0]).empty and note.compute_by_size(sweep, None).empty


def test_the_table_by_size_leaves_out_an_op_whose_floor_is_its_bytes_and_leaves_a_blank_where_none_ran():
    """An FP32 FMA probe beside the neighbor aggregation (all its points memory-bound) does not put it in the table
    of ops whose floor is their FLOPs; an implementation one op has and another lacks is a blank there, not nan."""
    sweep = with_intervals(shipped_table("h200-002", "sweep"))
    sweep = sweep[~((sweep["op"] == "triangle") & (sweep["implementation"] == "torch"))]  # matmul has one
    probes = pd.concat([tf32_probe(600), tf32_probe(600).assign(op="neighbor", unit="fp32_fma", tflops=60.0),
                        tf32_probe(600).assign(op="triangle")])
    assert set(sweep.loc[sweep["op"] == "neighbor", "bound"]) == {"memory"}
    table = note.compute_by_size(sweep, probes).set_index(["Operation", "Shape"])
    assert set(table.index.get_level_values(0)) == {"Matrix multiplication", "Triangle contraction"}
    assert (table.loc["Triangle contraction", "PyTorch (TFLOP/s)"] == "").all()
    assert (table.loc["Matrix multiplication", "PyTorch (TFLOP/s)"] != "").all() and not table.isna().any().any()


def test_every_point_of_an_op_s_sweep_has_each_implementation_and_the_ratio():
    """issue 46's trimul table at the task's shapes, here h200-002's triangle: each point in the sweep's order with
    every implementation's time, the best peer and the ratio as the sweep verdict has it."""
    sweep = shipped_table("h200-002", "sweep")
    rows = verdicts.sweep(sweep, sweep)
    table = note.points(sweep, rows, "triangle")
    triangle = sweep[sweep["op"] == "triangle"]
    assert list(table["Shape"]) == list(dict.fromkeys(triangle["shape"]))
    assert list(table.columns) == ["Shape", "PyTorch (µs)", "Triton (µs)", "torch.compile (µs)", "CUDA C++ (µs)",
                                   "Best peer", "Ours / best peer (interval)"]
    verdict = rows[rows["op"] == "triangle"].set_index("shape").loc["300x30"]
    row = table.set_index("Shape").loc["300x30"]
    ours = triangle.set_index(["shape", "implementation"]).loc[("300x30", "cuda"), "kernel_us"]
    assert row["CUDA C++ (µs)"] == f"{ours:.2f}" and row["Ours / best peer (interval)"] == f"{verdict['quotient']:.2f}"
    assert row["Best peer"] == IMPLEMENTATIONS[verdict["versus"]]


def test_h200_003_s_note_renders_over_a_run_of_its_kind_and_places_issue_46_s_tables():
    """notes/h200-003.md was written before its run: rendered over h200-002's archived evidence (h200-003's tables
    but the library and trimul columns), with a probe of the tensor cores added, it places the seed table warm and
    cold, the matmul by size against its bound, each op's worst point and every point of each sweep, and names no
    table the evidence lacks."""
    import io
    import json

    import yaml
    from conftest import ROOT, archived_bundle

    from fieldnote.publish.figures import captions

    files = archived_bundle("h200-002")
    tables = {name.removeprefix("evidence/").removesuffix(".parquet"): pd.read_parquet(io.BytesIO(data))
              for name, data in files.items() if name.startswith("evidence/") and name.count("/") == 1
              and name.endswith(".parquet")}
    tables["ceilings"] = pd.concat([tables["ceilings"].assign(kind="memory"), tf32_probe(600, spread=1.01)],
                                   ignore_index=True)
    config = yaml.safe_load((ROOT / "config" / "namespaces" / "h200-003.yaml").read_text())
    targets = {k: v for k, v in config["targets"].items() if k != "tflops"}  # h200-002 has 4096^3, not trimul
    shapes = json.loads(files["config.resolved.json"])["shapes"]
    roofline = (shapes, json.loads(files["config.resolved.json"])["roofline"])
    made = note.generated("h200-002", tables, {}, roofline, targets, (), None)
    environment = json.loads(files["evidence/environment.json"])
    evidence = authored.Evidence("h200-002", tables, environment, {}, {**config, "targets": targets})
    figures = captions(False, sorted(set(tables["sweep"]["op"])))
    text = authored.render(ROOT / "notes" / "h200-003.md", evidence, made, figures, "notes/h200-003.md").text
    for placed in ("seed_standing", "compute_by_size", "worst_points", "points_matmul", "points_neighbor",
                   "targets", "floors", "point_counters", "point_traffic"):
        assert made[placed] in text, placed
    assert "| Matrix multiplication | cold |" in text and "Ours / floor (interval)" in text
    assert "## The triangle multiplicative update at the task's shapes" not in text  # h200-002 has no trimul
    assert ("which the FP32 peak does not bound" in text) == note.past_compute_roof(tables["sweep"]) is True
    # with trimul in the sweep (the triangle's points, relabelled), its table and its figure are placed together
    trimul = tables["sweep"][tables["sweep"]["op"] == "triangle"].assign(op="trimul")
    trimul["shape"] = trimul["shape"].map(lambda s: "1x{}x{}x128".format(*s.split("x")))
    tables["sweep"] = pd.concat([tables["sweep"], trimul], ignore_index=True)
    made = note.generated("h200-002", tables, {}, roofline, targets, (), None)
    figures = captions(False, sorted(set(tables["sweep"]["op"])))
    text = authored.render(ROOT / "notes" / "h200-003.md", evidence, made, figures, "notes/h200-003.md").text
    section = text.split("## The triangle multiplicative update at the task's shapes", 1)[1].split("\n## ", 1)[0]
    assert made["points_trimul"] in section and "figures/sweep-trimul.svg" in section
