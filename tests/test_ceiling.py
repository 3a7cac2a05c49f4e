"""The memory ceiling: the copy's traffic, its table from a capture's kernels, and the floors the note draws."""
import numpy as np
import pandas as pd
import pytest

from fieldnote import ceiling, note
from fieldnote.build.cuda import compile_source, parse_ptxas
from fieldnote.capture.summary import summarize

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
    assert ceiling.traffic("gelu", SHAPES["gelu"]) == (4 * (rows * cols + cols), 4 * rows * cols)


def test_range_names_carry_op_configuration_and_cache():
    assert ceiling.range_of("gelu", "thread") == "gelu:ceiling-thread"
    assert ceiling.range_of("gelu", "thread", "cold") == "gelu:ceiling-thread:cold"


def test_table_takes_the_median_capture_and_marks_the_fastest_configuration():
    kernels = captured({"gelu:ceiling-thread": [5.0, 5.2, 5.1], "gelu:ceiling-resident": [4.0, 4.4, 4.2],
                        "gelu:ceiling-thread:cold": [9.0, 9.0, 9.0], "gelu:cast:warm-ish": [1.0, 1.0, 1.0]})
    table = ceiling.table(kernels, SHAPES, "nsys").set_index(["cache", "config"])
    assert set(table.index) == {("warm", "thread"), ("warm", "resident"), ("cold", "thread")}
    resident = table.loc[("warm", "resident")]
    assert resident["kernel_us"] == pytest.approx(4.2 + 0.015)
    assert resident["kernel_low_us"] <= 4.0 + 0.015 and resident["kernel_high_us"] >= 4.4 + 0.015
    assert resident["gbs"] == pytest.approx(sum(ceiling.traffic("gelu", SHAPES["gelu"])) / resident["kernel_us"] / 1e3)
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
    table = ceiling.table(captured({"gelu:ceiling-thread": [5.0, 5.1, 5.2],
                                    "gelu:ceiling-thread:cold": [8.0, 8.1, 8.2]}), SHAPES, "nsys")
    summary = pd.DataFrame([summary_row(4.0, 3.9, 4.1, 8.1, 7.9, 8.3),
                            summary_row(5.0, 4.9, 5.1, 7.0, 6.9, 7.1, impl="torch")])
    floors = note.floors(summary, table).set_index("Implementation")
    assert floors.loc["CUDA C++", "Judged"] == "not physical (warm: faster than the copy of its bytes)"
    assert floors.loc["PyTorch", "Judged"] == "not physical (cold: faster than the copy of its bytes)"
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
    from fieldnote.errors import PipelineError

    copy = ceiling.streams("gelu", SHAPES["gelu"])["thread"]
    copy.prime(0)  # the output poisoned, and no call
    with pytest.raises(PipelineError, match="did not copy its input"):
        copy.verify(0)


def test_a_real_capture_on_the_h200_gives_every_configuration_and_judges_our_kernels():
    """Captured on the H200 (nsys; gelu, layer norm, neighbor aggregation at the seed shapes, three captures of a
    hundred calls, warm and cold): every configuration is timed in every cache state, and our kernels, summarized
    from the same capture, are judged against the fastest copy."""
    from conftest import ROOT

    from fieldnote.config import load_defaults
    from fieldnote.measurements import kernel_interval

    kernels = pd.read_parquet(ROOT / "tests" / "fixtures" / "h200-ceiling-kernels.parquet")
    shapes = load_defaults(ROOT / "config" / "config.yaml")["shapes"]
    table = ceiling.table(kernels, shapes, "nsys")
    assert len(table) == 3 * 2 * len(ceiling.CONFIGS) and set(table["captures"]) == {3}
    assert table.groupby(["op", "cache"])["best"].sum().eq(1).all()
    best = ceiling.best(table)
    assert (best.xs("cold", level="cache")["kernel_us"] > best.xs("warm", level="cache")["kernel_us"]).all()
    mine = summarize(kernels.dropna(subset=["subject"]))
    warm = mine[mine["cache"] == "warm"].groupby("op")["kernel_us_per_iteration"].median()
    intervals = kernel_interval(kernels, "nsys").set_index("op")
    summary = pd.DataFrame({"op": warm.index, "implementation": "cuda", "kernel_us": warm.to_numpy(),
                            "kernel_low_us": intervals.loc[warm.index, "kernel_low_us"].to_numpy(),
                            "kernel_high_us": intervals.loc[warm.index, "kernel_high_us"].to_numpy()})
    floors = note.floors(summary, table)
    assert len(floors) == 3 and set(floors["Judged"]) == {"within the ceiling"}
