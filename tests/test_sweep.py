"""The size sweep's bookkeeping on the CPU: its points, the roofline arithmetic, the note's table and figures."""
import json

import pandas as pd
import pytest

from fieldnote.evidence.sweep import failed_points, passed, subjects, table
from fieldnote.publish import figures, note, verdicts

ROOF = {"bandwidth_gbs": 4300, "fp32_tflops": 67, "l2_bytes": 60 * 2**20}
CUDA = {"implementation": "cuda", "variant": "layernorm_block_row_1pass", "cubin": "ln.cubin"}
TORCH = {"implementation": "torch", "variant": None, "cubin": None}


def test_points_are_named_by_shape_and_a_contract_that_does_not_take_a_shape_leaves_it_out():
    shapes = [{"rows": 1024, "cols": 768}, {"rows": 1024, "cols": 4096}]
    points, skipped = subjects("layernorm", shapes, {"torch": TORCH, "cuda": CUDA}, seed=7)
    assert list(points) == ["torch@1024x768", "cuda@1024x768", "torch@1024x4096"]
    assert points["cuda@1024x768"] == {**CUDA, "shape": shapes[0], "seed": 7}
    assert skipped == [{"op": "layernorm", "implementation": "cuda", "variant": "layernorm_block_row_1pass",
                        "shape": "1024x4096", "reason": "holds a row of at most 1024 floats, got cols=4096"}]


def captures(rows):
    """A capture summary of sweep points, each subject described as the capture stage describes it."""
    def described(point):
        implementation, label = point.split("@")
        return {"subject": point, "implementation": implementation, "variant": implementation, "shape": label}

    return pd.DataFrame([{"op": op, **described(point), "backend": "nsys", "capture": 0,
                          "launches_per_iteration": 1, "kernel_us_per_iteration": us} for op, point, us in rows])


def test_roofline_arithmetic():
    out = table(captures([("gelu", "cuda@65536x4096", 500.0), ("gelu", "cuda@1024x768", 2.0),
                          ("matmul", "torch@4096x4096x4096", 2700.0), ("matmul", "torch@256x256x256", 5.0)]),
                ROOF).set_index(["op", "shape"])
    big = out.loc[("gelu", "65536x4096")]
    assert big["bytes"] == 4 * (2 * 65536 * 4096 + 4096) and big["bound"] == "memory" and not big["fits_l2"]
    assert big["achieved_gbs"] == pytest.approx(big["bytes"] / 500e-6 / 1e9)
    assert big["fraction_of_roof"] == pytest.approx(big["achieved_gbs"] / 4300)
    assert out.loc[("gelu", "1024x768"), "fits_l2"]
    mm = out.loc[("matmul", "4096x4096x4096")]
    assert mm["bound"] == "compute" and mm["achieved_tflops"] == pytest.approx(2 * 4096**3 / 2700e-6 / 1e12)
    # 256^3 does 2 x 256^3 FLOPs on 768 KiB: 43 FLOP/byte, above the ridge (67e12 / 4.3e12 = 15.6)
    assert out.loc[("matmul", "256x256x256"), "bound"] == "compute"


def test_the_note_gives_each_op_its_largest_point_and_the_figure_draws(tmp_path):
    swept = table(captures([("gelu", "cuda@65536x4096", 530.0), ("gelu", "torch@65536x4096", 900.0),
                            ("gelu", "cuda@1024x768", 2.0), ("gelu", "torch@1024x768", 4.0)]), ROOF)
    rows = note.markdown(note.sweep(swept)).splitlines()
    assert len(rows) == 4 and "| Bias + GELU | 65536x4096 | CUDA C++ | 530.00 | 4052 GB/s | 94% |" in rows
    paths = figures.save(figures.sweep(swept, "gelu", ROOF), tmp_path, "sweep-gelu")
    assert all(p.stat().st_size > 0 for p in paths)


def test_a_point_that_fails_its_check_is_not_captured_and_is_named_with_its_error():
    points, _ = subjects("layernorm", [{"rows": 1024, "cols": 768}], {"torch": TORCH, "cuda": CUDA}, seed=7)
    checks = pd.DataFrame([
        {"op": "layernorm", "subject": "torch@1024x768", "implementation": "torch", "variant": "torch",
         "shape": "1024x768", "passed": True, "max_abs_error": 1e-6, "max_rel_error": 1e-6},
        {"op": "layernorm", "subject": "cuda@1024x768", "implementation": "cuda", "variant": CUDA["variant"],
         "shape": "1024x768", "passed": False, "max_abs_error": 7.3e-4, "max_rel_error": 1.45}])
    assert list(passed(points, checks)) == ["torch@1024x768"]
    assert failed_points(checks) == [{"op": "layernorm", "implementation": "cuda", "variant": CUDA["variant"],
                                      "shape": "1024x768",
                                      "reason": "failed the check: max abs error 0.00073, max rel error 1.45"}]


def test_a_point_left_out_does_not_turn_a_compute_bound_figure_into_bandwidth():
    swept = table(captures([("matmul", "torch@1024x1024x1024", 55.0), ("matmul", "cuda@1024x1024x1024", 44.0)]),
                  ROOF)
    failed = pd.DataFrame([{"op": "matmul", "implementation": "cuda", "shape": "4096x4096x4096",
                            "reason": "failed the check: max abs error 0.00073, max rel error 1.45"}])
    fig = figures.sweep(pd.concat([swept.assign(reason=None), failed], ignore_index=True), "matmul", ROOF)
    assert "TFLOP/s" in fig.axes[0].get_ylabel()


def test_the_figure_draws_an_op_in_the_bound_of_its_largest_size_as_the_note_does():
    """The triangle at 64 x 32 is memory-bound (10.7 FLOP/byte, under the ridge of 15.6), at 512 x 32 compute-bound:
    its figure is in TFLOP/s, as the note's row for its largest point. The widths of a row op go in numeric order,
    and an implementation with no point at one width draws no line for it."""
    swept = table(captures([("triangle", "torch@64x32", 20.0), ("triangle", "torch@512x32", 330.0)]), ROOF)
    assert set(swept["bound"]) == {"memory", "compute"}
    assert "TFLOP/s" in figures.sweep(swept, "triangle", ROOF).axes[0].get_ylabel()
    swept = table(captures([("gelu", "cuda@1024x768", 2.0), ("gelu", "cuda@1024x4096", 9.0),
                            ("gelu", "torch@1024x4096", 12.0)]), ROOF)
    labels = [t.get_text() for t in figures.sweep(swept, "gelu", ROOF).axes[0].get_legend().get_texts()]
    assert labels == ["PyTorch, 4096 columns", "CUDA C++, 768 columns", "CUDA C++, 4096 columns"]


def test_every_variant_launches_within_cuda_grid_limits_at_every_shape_of_h200_001_and_h200_003():
    """A grid's y and z stop at 65535 (the sweep's 65536 rows would not launch on y), x at 2^31 - 1, and a block
    at 1024 threads: checked for every launch of every CUDA variant at the seed shape and every sweep shape its
    contract takes (past the limits, `LaunchContract.refusal` refuses the shape)."""
    from conftest import ROOT

    from fieldnote.registry.config import load_defaults, load_namespaces
    from fieldnote.registry.ops import OPS

    namespaces = load_namespaces(ROOT / "config", load_defaults(ROOT / "config" / "config.yaml"))
    launches = 0
    swept = [(op, namespace) for namespace in map(namespaces.get, ("h200-001", "h200-003")) for op in namespace.sweep]
    for op, ns in swept:
        spec = OPS[op]
        for shape in [ns.shapes[op], *ns.sweep[op]]:
            for variant in spec.kernel_variants.values():
                contract = variant.contract
                if contract.supports(shape):
                    continue
                assert contract.refusal(shape) is None, (variant.name, shape)
                for step in (*contract.before, contract, *contract.after):
                    (gx, gy, gz), (bx, by, bz) = step.grid(shape), step.block
                    assert 1 <= gx < 2**31 and 1 <= gy <= 65535 and 1 <= gz <= 65535, (step.entry, shape)
                    assert bx * by * bz <= 1024, step.entry
                    launches += 1
    assert launches > 400


def test_a_sweep_process_compiles_every_one_of_its_shapes():
    """The compiled peer at a sweep's ten shapes, one process, a compile each: none falls back to eager past
    dynamo's recompile limit (8 by default), which would put torch's times under torch.compile's name."""
    import torch

    from fieldnote.measure.implementations import compiled

    compiled("gelu")  # the settings of every compiled peer's process
    torch._dynamo.reset()
    graphs = []
    fn = torch.compile(lambda x: x * 2 + 1, backend=lambda gm, _: graphs.append(gm) or gm.forward, dynamic=False)
    for n in range(1, 11):
        assert torch.equal(fn(torch.ones(n)), torch.full((n,), 3.0))
    assert len(graphs) == 10
    torch._dynamo.reset()


def test_the_points_a_target_names_are_ours_and_the_peer_it_is_held_against():
    from fieldnote.evidence.sweep import subjects, target_points
    from fieldnote.registry.ops import OPS

    impls = {n: {"implementation": n, "variant": None, "cubin": None} for n in ("torch", "triton", "compiled")}
    impls["cuda"] = {"implementation": "cuda", "variant": "triangle_smem_tile32x16", "cubin": "x.cubin"}
    shapes = [{"n": 256, "channels": 32}, {"n": 512, "channels": 32}]
    points, _ = subjects("triangle", shapes, impls, 7)
    targets = {"points": [{"op": "triangle", "shape": "512x32", "versus": "torch", "at_most": 0.8},
                          {"op": "neighbor", "shape": "4096x64x65536", "versus": "best_peer", "at_most": 0.5}]}
    assert set(target_points("triangle", points, targets)) == {"cuda@512x32", "torch@512x32"}
    best = {"points": [{"op": "triangle", "shape": "256x32", "versus": "best_peer", "at_most": 0.8}]}
    assert set(target_points("triangle", points, best)) == {"cuda@256x32"}  # the fastest peer is known after
    assert target_points("triangle", points, None) == {} and OPS["triangle"].label(shapes[1]) == "512x32"


def test_the_counters_at_named_points_render_a_row_per_subject_and_kernel():
    import pandas as pd

    from fieldnote.publish.note import counters, targets_section

    rows = [{"op": "triangle", "subject": s, "kernel": k, "name": n, "value": v}
            for s, k in (("cuda@512x32", "triangle_smem_tile32x16"), ("torch@512x32", "sgemm"))
            for n, v in (("dram_throughput", 40.0), ("duration", 570800.0))]
    table = counters(pd.DataFrame(rows), at_points=True)
    assert list(table["At"]) == ["`cuda@512x32`", "`torch@512x32`"] and list(table["DRAM throughput"]) == ["40%"] * 2
    summary = pd.DataFrame([{"op": "triangle", "implementation": i, "variant": None, "kernel_us": us}
                            for i, us in (("torch", 10.0), ("cuda", 12.0))])
    section = targets_section(summary, None, {"best_peer_ratio": 0.8, "limits": {"triangle": "Bytes."}}, None,
                              "COUNTERS")
    assert section.index("COUNTERS") < next(i for i, text in enumerate(section) if "Bytes." in text)


def test_nsight_compute_is_asked_for_a_sweep_point_by_a_range_its_filter_reads(tmp_path, monkeypatch):
    """In `--nvtx-include`, `@` splits a domain from a range: asked for `gelu:torch@4099x770/`, the H200's ncu
    profiled nothing. The profiled process names the point's range without it, and the rows keep the point's name."""
    from fieldnote.measure.capture import Job, ncu

    commands = []

    def stop(command, what, expect=None):
        commands.append(command)
        raise RuntimeError("stopped before profiling")

    monkeypatch.setattr(ncu, "available", lambda: True)
    monkeypatch.setattr(ncu, "run", stop)
    point = {"implementation": "torch", "variant": None, "cubin": None, "shape": {"rows": 4099, "cols": 770},
             "seed": 7}
    job = Job(op="gelu", subjects={"torch@4099x770": point}, npz="", shape={}, iterations=10, warmup=3, repeats=1,
              tolerance={"rtol": 1e-4, "atol": 1e-4}, namespace="test")
    with pytest.raises(RuntimeError):
        ncu.capture(job, tmp_path)
    include = commands[0][commands[0].index("--nvtx-include") + 1]
    assert include == "gelu:torch at 4099x770/" and "@" not in include
    profiled = json.loads((tmp_path / "job.json").read_text())
    assert list(profiled["subjects"]) == ["torch at 4099x770"]


def kernels_of(points: dict, captures: int, iterations: int = 4) -> pd.DataFrame:
    """A sweep's kernels table: one kernel a call inside its range, `points` giving each subject's per-capture
    times."""
    rows = []
    for point, times in points.items():
        implementation, label = point.split("@")
        for capture in range(captures):
            for i in range(iterations):
                rows.append({"op": "gelu", "subject": point, "implementation": implementation,
                             "variant": implementation, "shape": label, "backend": "nsys", "range": f"gelu:{point}",
                             "capture": capture, "iteration": i, "iterations": iterations, "kernel": "k",
                             "duration_us": times[capture] + 0.001 * i})
    return pd.DataFrame(rows)


def test_a_point_captured_three_times_is_judged_by_its_interval():
    """Under 1.00 only where the ratio's whole interval is; across it, not distinguishable: a ratio of 0.995 between
    captures that spread more than that is no win. One capture a point keeps the table as older evidence has it."""
    from fieldnote.evidence.summary import summarize

    kernels = kernels_of({"cuda@4096x768": [5.00, 5.10, 4.90], "torch@4096x768": [5.02, 5.12, 4.93],
                          "cuda@1024x768": [2.00, 2.01, 2.02], "torch@1024x768": [3.0, 3.01, 3.02]}, captures=3)
    swept = table(summarize(kernels), ROOF, kernels)
    assert {"kernel_low_us", "kernel_high_us"} <= set(swept) and (swept["captures"] == 3).all()
    assert (swept["kernel_low_us"] <= swept["kernel_us"]).all()
    assert (swept["kernel_us"] <= swept["kernel_high_us"]).all()
    ratios = verdicts.sweep_ratios(swept).set_index("shape")
    assert ratios.loc["4096x768", "ratio"] < 1 < ratios.loc["4096x768", "ratio_high"]
    assert note.at_or_under(verdicts.sweep(swept, swept)) == "1 of 2 (1 not distinguishable from 1.00)"
    single = kernels[kernels["capture"] == 0]
    assert "kernel_low_us" not in table(summarize(single), ROOF, single)
    points = table(summarize(single), ROOF, single)
    assert note.at_or_under(verdicts.sweep(points, points)) == "2 of 2"


def test_the_sweep_target_is_met_only_where_the_worst_interval_is_under_it():
    from fieldnote.evidence.summary import summarize

    kernels = kernels_of({"cuda@4096x768": [5.00, 5.10, 4.90], "torch@4096x768": [5.02, 5.12, 4.93],
                          "cuda@1024x768": [2.00, 2.01, 2.02], "torch@1024x768": [3.0, 3.01, 3.02]}, captures=3)
    swept = table(summarize(kernels), ROOF, kernels)
    _, measured, verdict, (judged,) = verdicts._sweep_target(verdicts.sweep_ratios(swept), "gelu", 1.0)
    assert measured.startswith("1.00 [0.9") and measured.endswith("at 4096x768")  # 0.9986 rounded
    assert judged.value > 1 and verdict.startswith("missed")


def test_the_sweep_figure_draws_a_line_for_every_row_width():
    """Four widths and three line styles once left the fourth width out of the figure (h200-002's GELU at 4096)."""
    widths = [768, 770, 3001, 4096]
    rows = pd.DataFrame([{"op": "gelu", "implementation": impl, "shape": f"{r}x{w}", "kernel_us": 10.0,
                          "bytes": 8 * r * w, "bound": "memory", "achieved_gbs": 1000.0, "flops": 0,
                          "achieved_tflops": 0.0} for impl in ("torch", "cuda") for w in widths for r in (1024, 4096)])
    fig = figures.sweep(rows, "gelu", {"bandwidth_gbs": 4800, "fp32_tflops": 67, "l2_bytes": 60 << 20})
    labels = [line.get_label() for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert labels == [f"{name}, {w} columns" for name in ("PyTorch", "CUDA C++") for w in widths]


def test_the_figure_s_values_give_the_share_of_the_roof_as_the_note_does():
    """The note prints 76%, so the values beneath the figure do too (not 0.76)."""
    rows = pd.DataFrame({"op": "gelu", "implementation": ["cuda", "torch"], "shape": "1024x768",
                         "kernel_us": [5.0, 6.0], "achieved_gbs": [3268.0, 2723.0], "achieved_tflops": [0.0, 0.0],
                         "fraction_of_roof": [0.7601, 0.6333]})
    values = figures.sweep_values(rows, "gelu")
    assert values["Of the roof (%)"].tolist() == [76, 63]
    assert note.sweep(rows.assign(bound="memory", variant="", bytes=0, flops=0))["Of the roof"].tolist()[:1] == ["76%"]
