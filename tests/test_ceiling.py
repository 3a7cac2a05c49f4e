"""The memory ceiling: the copy's traffic, its table from a capture's kernels, and the floors the note draws."""
import numpy as np
import pandas as pd
import pytest

from fieldnote.evidence import floors
from fieldnote.evidence.summary import summarize
from fieldnote.measure import ceiling
from fieldnote.measure.build.cuda import compile_source, parse_ptxas
from fieldnote.publish import note

SHAPES = {"gelu": {"rows": 4096, "cols": 768}}


def captured(times: dict[str, list[float]], iterations: int = 4) -> pd.DataFrame:
    """A kernels table as label() leaves it: per range, `iterations` calls per capture, one launch each."""
    rows = []
    for name, per_capture in times.items():
        for capture, us in enumerate(per_capture):
            for k in range(iterations):
                rows.append({"op": "gelu", "backend": "nsys", "range": name, "kernel": "k", "capture": capture,
                             "iteration": k, "iterations": iterations, "duration_us": us + 0.01 * k,
                             "subject": None})
    return pd.DataFrame(rows)


def test_traffic_is_the_ops_least_bytes_split_into_read_and_written():
    rows, cols = SHAPES["gelu"]["rows"], SHAPES["gelu"]["cols"]
    assert floors.traffic("gelu", SHAPES["gelu"]) == (4 * (rows * cols + cols), 4 * rows * cols)


def test_range_names_carry_op_configuration_and_cache():
    assert floors.range_of("gelu", "thread") == "gelu:ceiling-thread"
    assert floors.range_of("gelu", "thread", "cold") == "gelu:ceiling-thread:cold"


def test_table_takes_the_median_capture_and_marks_the_fastest_configuration():
    kernels = captured({"gelu:ceiling-thread": [5.0, 5.2, 5.1], "gelu:ceiling-resident": [4.0, 4.4, 4.2],
                        "gelu:ceiling-thread:cold": [9.0, 9.0, 9.0], "gelu:cast:warm-ish": [1.0, 1.0, 1.0]})
    table = floors.table(kernels, SHAPES, "nsys").set_index(["cache", "config"])
    assert set(table.index) == {("warm", "thread"), ("warm", "resident"), ("cold", "thread")}
    resident = table.loc[("warm", "resident")]
    assert resident["kernel_us"] == pytest.approx(4.2 + 0.015)
    assert resident["kernel_low_us"] <= 4.0 + 0.015 and resident["kernel_high_us"] >= 4.4 + 0.015
    assert resident["gbs"] == pytest.approx(sum(floors.traffic("gelu", SHAPES["gelu"])) / resident["kernel_us"] / 1e3)
    assert bool(resident["best"]) and not bool(table.loc[("warm", "thread"), "best"])
    assert bool(table.loc[("cold", "thread"), "best"])


def test_the_copies_are_not_any_implementations_kernels():
    kernels = captured({"gelu:ceiling-thread": [5.0]}).assign(subject=None)
    assert summarize(kernels).empty


def summary_row(warm, warm_low, warm_high, cold=np.nan, cold_low=np.nan, cold_high=np.nan, impl="cuda"):
    return {"op": "gelu", "implementation": impl, "kernel_us": warm, "kernel_low_us": warm_low,
            "kernel_high_us": warm_high, "kernel_cold_us": cold, "kernel_cold_low_us": cold_low,
            "kernel_cold_high_us": cold_high}


def test_a_time_wholly_below_the_copy_is_marked_not_physical_and_an_overlap_is_not():
    table = floors.table(captured({"gelu:ceiling-thread": [5.0, 5.1, 5.2],
                                    "gelu:ceiling-thread:cold": [8.0, 8.1, 8.2]}), SHAPES, "nsys")
    summary = pd.DataFrame([summary_row(4.0, 3.9, 4.1, 8.1, 7.9, 8.3),
                            summary_row(5.0, 4.9, 5.1, 7.0, 6.9, 7.1, impl="torch")])
    judged = note.floors(summary, table).set_index("Implementation")
    assert judged.loc["CUDA C++", "Judged"] == "not physical (warm: faster than the copy of its bytes)"
    assert judged.loc["PyTorch", "Judged"] == "not physical (cold: faster than the copy of its bytes)"
    fair = note.floors(pd.DataFrame([summary_row(5.05, 4.95, 5.15, 8.2, 8.1, 8.3)]), table)
    assert fair["Judged"].tolist() == ["within the ceiling"]
    assert fair["Warm / copy"].tolist() == [f"{5.05 / table[table['cache'] == 'warm']['kernel_us'].iloc[0]:.2f}"]


def test_the_copy_kernels_build_with_nvrtc_without_spills():
    _, _, log = compile_source(ceiling.SOURCE, "sm_90")
    for config in ceiling.CONFIGS:
        report = parse_ptxas(log, config.entry)
        assert report["spill_stores_bytes"] == 0 and report["stack_bytes"] == 0


@pytest.mark.gpu
@pytest.mark.parametrize("op,shape", [("gelu", SHAPES["gelu"]),
                                      ("neighbor", {"nodes": 4096, "features": 64, "edges": 65536})])
def test_every_copy_moves_its_bytes_on_the_gpu(op, shape):
    """Reads past the output (the neighbor aggregation reads more than it writes) and writes copy exactly."""
    import torch

    for copy in ceiling.streams(op, shape).values():
        copy.prime(0)
        copy()
        torch.cuda.synchronize()
        copy.verify(0)


@pytest.mark.gpu
def test_a_copy_that_did_not_run_fails_its_verification():
    from fieldnote.core.errors import PipelineError

    copy = ceiling.streams("gelu", SHAPES["gelu"])["thread"]
    copy.prime(0)  # the output poisoned, and no call
    with pytest.raises(PipelineError, match="did not copy its input"):
        copy.verify(0)


def test_a_real_capture_on_the_h200_gives_every_configuration_and_judges_our_kernels():
    """Captured on the H200 (nsys; gelu, layer norm, neighbor aggregation at the seed shapes, three captures of a
    hundred calls, warm and cold): every configuration is timed in every cache state, and our kernels, summarized
    from the same capture, are judged against the fastest copy."""
    from conftest import ROOT

    from fieldnote.evidence.measurements import kernel_interval
    from fieldnote.registry.config import load_defaults

    kernels = pd.read_parquet(ROOT / "tests" / "fixtures" / "h200-ceiling-kernels.parquet")
    shapes = load_defaults(ROOT / "config" / "config.yaml")["shapes"]
    table = floors.table(kernels, shapes, "nsys")
    assert len(table) == 3 * 2 * len(ceiling.CONFIGS) and set(table["captures"]) == {3}
    assert table.groupby(["op", "cache"])["best"].sum().eq(1).all()
    best = floors.best(table)
    assert (best.xs("cold", level="cache")["kernel_us"] > best.xs("warm", level="cache")["kernel_us"]).all()
    mine = summarize(kernels.dropna(subset=["subject"]))
    warm = mine[mine["cache"] == "warm"].groupby("op")["kernel_us_per_iteration"].median()
    intervals = kernel_interval(kernels, "nsys").set_index("op")
    summary = pd.DataFrame({"op": warm.index, "implementation": "cuda", "kernel_us": warm.to_numpy(),
                            "kernel_low_us": intervals.loc[warm.index, "kernel_low_us"].to_numpy(),
                            "kernel_high_us": intervals.loc[warm.index, "kernel_high_us"].to_numpy()})
    judged = note.floors(summary, table)
    assert len(judged) == 3 and set(judged["Judged"]) == {"within the ceiling"}


# The compute floor: the op's precision contract, the probes of its unit, their rows and the judgment by them.

MATMUL = {"matmul": {"m": 1024, "n": 1024, "k": 1024}}


def probed(times: dict[str, list[float]], op: str = "matmul", grid: str = "1056,1,1") -> pd.DataFrame:
    """A kernels table of `op`'s probes as a capture leaves it (one launch a call, its grid and block)."""
    return captured(times).assign(op=op, grid=grid, block="256,1,1")


def test_every_op_declares_a_contract_on_a_unit_the_probes_measure():
    from fieldnote.registry.ops import OPS

    for spec in OPS.values():
        assert spec.precision.unit in floors.UNITS and spec.precision.per_flop >= 1
    # the hand-written matmul and triangle kernels run three TF32 products for each FP32 product
    declared = {"matmul": ("tf32_tensor", 3), "triangle": ("tf32_tensor", 3), "gelu": ("fp32_fma", 1),
                "layernorm": ("fp32_fma", 1), "neighbor": ("fp32_fma", 1)}
    assert {op: (OPS[op].precision.unit, OPS[op].precision.per_flop) for op in declared} == declared


def test_an_op_is_probed_on_its_contracts_unit_and_not_where_its_work_is_all_bytes():
    assert [p.name for p in floors.probes_of("matmul", MATMUL["matmul"])] == ["cublas_tf32_4096",
                                                                                 "cublas_tf32_8192"]
    assert [p.unit for p in floors.probes_of("neighbor", {"nodes": 64, "features": 8, "edges": 100})] == [
        "fp32_fma", "fp32_fma"]
    assert floors.probes_of("gelu", SHAPES["gelu"]) == []
    assert floors.unit_flops("matmul", MATMUL["matmul"]) == 3 * 2 * 1024**3


def test_a_probes_rows_carry_its_rate_and_the_floor_it_sets_at_the_ops_shape():
    us_8192, us_4096 = [2500.0, 2510.0, 2490.0], [340.0, 345.0, 338.0]
    kernels = pd.concat([probed({"matmul:ceiling-cublas_tf32_8192": us_8192, "matmul:ceiling-cublas_tf32_4096":
                                 us_4096, "matmul:ceiling-cublas_tf32_8192:cold": [2520.0] * 3}),
                         captured({"matmul:ceiling-thread": [3.0, 3.1, 3.2]}).assign(op="matmul")])
    table = floors.table(kernels, MATMUL, "nsys").set_index(["cache", "config"])
    big = table.loc[("warm", "cublas_tf32_8192")]
    assert big["kind"] == "compute" and big["unit"] == "tf32_tensor" and big["flops"] == 2 * 8192**3
    assert big["tflops"] == pytest.approx(2 * 8192**3 / big["kernel_us"] / 1e6)
    need = 3 * 2 * 1024**3
    assert big["unit_flops"] == need
    assert big["floor_us"] == pytest.approx(need / (big["tflops"] * 1e6))
    assert big["floor_low_us"] == pytest.approx(big["kernel_low_us"] * need / big["flops"])
    assert big["floor_low_us"] <= big["floor_us"] <= big["floor_high_us"]
    # 8192^3 at ~440 TFLOP/s beats 4096^3 at ~405: the faster rate, the lower floor, is the one judged by
    assert bool(big["best"]) and not bool(table.loc[("warm", "cublas_tf32_4096"), "best"])
    assert bool(table.loc[("cold", "cublas_tf32_8192"), "best"])
    copy = table.loc[("warm", "thread")]
    assert copy["kind"] == "memory" and copy["floor_us"] == copy["kernel_us"] and bool(copy["best"])
    assert np.isnan(copy["tflops"]) and np.isnan(big["gbs"])


def test_an_fma_probes_flops_are_counted_from_the_threads_it_launched():
    shape = {"nodes": 4096, "features": 64, "edges": 65536}
    kernels = probed({"neighbor:ceiling-fma_resident": [1100.0, 1101.0, 1102.0]}, op="neighbor", grid="1056,1,1")
    row = floors.table(kernels, {"neighbor": shape}, "nsys").iloc[0]
    assert row["flops"] == 2 * floors.FMA_CHAINS * 16384 * 1056 * 256
    assert row["floor_us"] == pytest.approx(2 * 65536 * 64 / (row["tflops"] * 1e6))


def test_a_probe_of_another_unit_and_a_floor_under_a_nanosecond_are_left_out():
    fma_for_matmul = probed({"matmul:ceiling-fma_resident": [1100.0] * 3})
    assert floors.table(fma_for_matmul, MATMUL, "nsys").empty  # matmul's contract is TF32 tensor cores
    toy = probed({"neighbor:ceiling-fma_resident": [1100.0] * 3}, op="neighbor")
    assert floors.table(toy, {"neighbor": {"nodes": 4, "features": 4, "edges": 4}}, "nsys").empty


def test_a_table_from_before_the_compute_floor_reads_as_copies_alone():
    from conftest import shipped_table

    old = shipped_table("h200-002", "ceilings")
    assert "kind" not in old
    read = floors.with_kinds(old)
    assert (read["kind"] == "memory").all() and read["floor_low_us"].equals(read["kernel_low_us"])
    assert floors.best(old, "compute").empty
    assert floors.best(old).equals(floors.best(read))


def test_the_note_renders_a_shipped_table_from_before_the_compute_floor_as_it_did():
    """h200-002's note places the ceilings and floors tables: they read the same from its own evidence."""
    from conftest import archived_bundle, shipped_table

    text = archived_bundle("h200-002")["note.md"].decode()
    table, summary = shipped_table("h200-002", "ceilings"), shipped_table("h200-002", "summary")
    assert note.markdown(note.ceilings(table)) in text
    assert note.markdown(note.floors(summary, table)) in text


def matmul_floors(warm: float, warm_high: float, cold: float = np.nan, cold_high: float = np.nan):
    """A matmul kernel time judged against a copy of 3 us and a TF32 probe of 2500 us (8192^3, ~440 TFLOP/s:
    matmul's compute floor at 1024^3 is 3/512 of it, ~14.6 us), warm and cold."""
    kernels = pd.concat([probed({"matmul:ceiling-cublas_tf32_8192": [2500.0, 2500.0, 2500.0],
                                 "matmul:ceiling-cublas_tf32_8192:cold": [2500.0, 2500.0, 2500.0]}),
                         captured({"matmul:ceiling-thread": [3.0] * 3, "matmul:ceiling-thread:cold": [5.0] * 3})
                         .assign(op="matmul")])
    table = floors.table(kernels, MATMUL, "nsys")
    row = {**summary_row(warm, warm * 0.99, warm_high, cold, cold * 0.99, cold_high), "op": "matmul"}
    return table, note.floors(pd.DataFrame([row]), table).iloc[0]


def test_a_time_wholly_below_the_compute_floor_is_marked_not_physical_and_an_overlap_is_not():
    table, planted = matmul_floors(7.0, 7.1)  # twice the copy, half the FLOPs' time on the tensor cores
    floor = floors.best(table, "compute").loc[("matmul", "warm")]
    assert floor["floor_us"] == pytest.approx((2500.0 + 0.015) * 3 / 512)
    assert planted["Judged"] == "not physical (warm: faster than its FLOPs at the TF32 tensor-core rate)"
    assert planted["Warm / compute floor"] == f"{7.0 / floor['floor_us']:.2f}"
    _, fair = matmul_floors(floor["floor_us"], floor["floor_low_us"] + 1e-6)
    assert fair["Judged"] == "within the ceiling"
    _, cold = matmul_floors(20.0, 20.1, 10.0, 10.1)
    assert cold["Judged"] == "not physical (cold: faster than its FLOPs at the TF32 tensor-core rate)"
    _, both = matmul_floors(2.0, 2.1)
    assert both["Judged"] == ("not physical (warm: faster than the copy of its bytes); not physical (warm: faster "
                              "than its FLOPs at the TF32 tensor-core rate)")


def test_the_note_shows_each_ops_contract_its_probes_rate_and_a_dash_where_it_has_none():
    table, _ = matmul_floors(20.0, 20.1)
    gelu = floors.table(captured({"gelu:ceiling-thread": [5.0] * 3}), SHAPES, "nsys")
    shown = note.ceilings(pd.concat([table, gelu])).set_index("Operation")
    matmul = shown.loc["Matrix multiplication"]
    assert matmul["Contract"] == "3 TF32 tensor-core FLOPs a FLOP"
    assert matmul["Rate, warm (TFLOP/s)"] == f"{2 * 8192**3 / 2500.015 / 1e6:.1f}"
    assert matmul["Compute floor, warm (µs)"] == f"{2500.015 * 3 / 512:.2f}"
    assert matmul["Probe, cold"] == "`cublas_tf32_8192`"
    assert shown.loc["Bias + GELU", "Contract"] == "FP32 FMA"
    assert shown.loc["Bias + GELU", "Rate, warm (TFLOP/s)"] == "—"
    judged = note.floors(pd.DataFrame([summary_row(5.5, 5.4, 5.6)]), pd.concat([table, gelu]))
    assert judged["Warm / compute floor"].tolist() == ["—"]


def test_tf32_is_allowed_inside_the_probe_and_the_processs_setting_restored_after():
    import torch

    from fieldnote.measure.check import full_fp32

    full_fp32()
    with ceiling.tf32_allowed():
        assert torch.backends.cuda.matmul.allow_tf32
    assert not torch.backends.cuda.matmul.allow_tf32 and torch.get_float32_matmul_precision() == "highest"


def test_tf32_keeps_ten_bits_of_mantissa():
    import torch

    x = torch.tensor([1 + 2**-10 + 2**-11, -3.0, 0.1])
    held = ceiling.tf32(x)
    assert held[0] == 1 + 2**-10 and held[1] == -3.0
    assert (held.view(torch.int32) & 0x1FFF).eq(0).all()


def test_the_fma_probe_builds_with_nvrtc_without_spills_and_holds_a_full_sm():
    _, ptx, log = compile_source(ceiling.FMA_SOURCE, "sm_90")
    report = parse_ptxas(log, "fma_chains")
    assert report["spill_stores_bytes"] == 0 and report["stack_bytes"] == 0
    assert report["registers"] <= 65536 // 2048  # 2048 threads an SM resident, as the probe's grid assumes
    assert f"#define CHAINS {floors.FMA_CHAINS}" in ceiling.FMA_SOURCE.read_text()
    assert ptx.count("fma.rn.f32") >= 16 * floors.FMA_CHAINS  # the step loop unrolled sixteen times


def timed(call, calls: int = 20) -> float:
    """Microseconds a call, by CUDA events over `calls` calls after three untimed."""
    import torch

    for _ in range(3):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / calls


@pytest.mark.gpu
@pytest.mark.parametrize("op,shape,low,high", [("matmul", MATMUL["matmul"], 300, 600),
                                               ("neighbor", {"nodes": 4096, "features": 64, "edges": 65536}, 45, 70)])
def test_the_probes_verify_and_reach_a_plausible_rate_on_the_h200(op, shape, low, high):
    """TF32 dense on an H200: about 495 TFLOP/s at the vendor's clock, 400-500 sustained; FP32 FMA: 67 at its
    boost clock. Each probe's call is verified as the capture verifies it."""
    import torch

    rates = {}
    for name, probe in ceiling.streams(op, shape).items():
        if name not in floors.PROBES:
            continue
        probe.prime(0)
        probe()
        torch.cuda.synchronize()
        probe.verify(0)
        threads = probe.tensors["out"].numel() if floors.PROBES[name].unit == "fp32_fma" else 0
        rates[name] = floors.PROBES[name].flops(threads) / timed(probe) / 1e6
        assert not torch.backends.cuda.matmul.allow_tf32  # TF32 inside the probe's call only
    assert len(rates) == 2 and low <= max(rates.values()) <= high, rates


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["matmul", "neighbor"])
def test_a_probe_that_did_not_run_fails_its_verification(op):
    from fieldnote.core.errors import PipelineError

    shape = MATMUL["matmul"] if op == "matmul" else {"nodes": 4096, "features": 64, "edges": 65536}
    first = floors.probes_of(op, shape)[0]
    probe = ceiling.CALLS[first.unit](op, first)
    probe.prime(0)  # the output poisoned, and no call
    with pytest.raises(PipelineError, match="did not"):
        probe.verify(0)


@pytest.mark.gpu
def test_a_planted_time_below_the_floor_measured_on_the_gpu_is_marked_not_physical():
    """The TF32 probe timed on this GPU sets matmul's compute floor at 1024^3; a kernel time at half of it is
    not physical, one at twice it is within the ceiling."""
    probe = floors.PROBES["cublas_tf32_8192"]
    us = timed(ceiling.CALLS[probe.unit]("matmul", probe), 10)
    table = floors.table(probed({"matmul:ceiling-cublas_tf32_8192": [us, us * 1.001, us * 0.999]}), MATMUL, "nsys")
    floor = floors.best(table, "compute").loc[("matmul", "warm")]["floor_us"]
    assert 3 * 2 * 1024**3 / 600e6 <= floor <= 3 * 2 * 1024**3 / 300e6  # 10.7 to 21.5 us
    summary = pd.DataFrame([{**summary_row(t, t * 0.99, t * 1.01), "op": "matmul"} for t in (floor / 2, floor * 2)])
    judged = note.floors(summary.assign(implementation=["cuda", "torch"]), table).set_index("Implementation")
    assert judged.loc["CUDA C++", "Judged"] == "not physical (warm: faster than its FLOPs at the TF32 tensor-core rate)"
    assert judged.loc["PyTorch", "Judged"] == "within the ceiling"


@pytest.mark.gpu
def test_the_probes_captured_as_a_session_captures_them_give_their_rows(tmp_path):
    """capture.run.iterate times a copy and the TF32 probes in their ranges, warm and cold, under CUPTI
    (torch.profiler, as the cupti backend); the ceilings table built from that trace has each probe's kernels,
    every cuBLAS launch of a call inside its range, and a plausible rate."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from fieldnote.measure.capture import Job, label
    from fieldnote.measure.capture.cupti import parse_trace
    from fieldnote.measure.capture.run import iterate

    job = Job(op="matmul", subjects={"idle": {}}, npz="", shape=MATMUL["matmul"], iterations=5, warmup=2, repeats=2,
              caches=("warm", "cold"))
    timed_beside = {name: call for name, call in ceiling.streams("matmul", job.shape).items()
                    if name in ("thread", "cublas_tf32_4096", "cublas_tf32_8192")}
    for call in timed_beside.values():
        call()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        iterate({"idle": lambda: None}, job, record_function, timed_beside)  # a subject that launches nothing
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    kernels = label(parse_trace(tmp_path / "trace.json"), job).assign(backend="cupti", op="matmul")
    table = floors.table(kernels, MATMUL, "cupti").set_index(["cache", "config"])
    assert set(table.index) == {(c, n) for c in job.caches for n in timed_beside}
    assert (table["captures"] == 2).all()
    probes = table[table["kind"] == "compute"]
    assert probes["tflops"].between(300, 600).all(), probes["tflops"]
    assert probes.groupby(level="cache")["best"].sum().eq(1).all()
