"""The verdicts as evidence (verdicts.py): each judgment the note states is a row a reader can recompute from its
own values, and the note words the rows, not its own arithmetic. On h100-002r's shipped archive (the peers at their
best known, sweep points with intervals, both floors) and on planted rows."""
import io
import json

import numpy as np
import pandas as pd
import pytest
from conftest import archived_bundle, shipped_table

from fieldnote.publish import note, verdicts

NS = "h100-002r"


@pytest.fixture(scope="module")
def judged():
    names = ("summary", "sweep", "ceilings", "known_peers", "attempts")
    tables = {name: shipped_table(NS, name) for name in names if f"evidence/{name}.parquet" in archived_bundle(NS)}
    config = json.loads(archived_bundle(NS)["config.resolved.json"])
    roof = (config["shapes"], config["roofline"])
    return tables, config, verdicts.verdict_table(NS, tables, roof, config["targets"])


def test_every_kind_of_verdict_is_a_row_and_each_recomputes_from_its_own_values(judged):
    _, _, rows = judged
    assert {"standing", "roofline", "sweep", "floor", "target"} <= set(rows["kind"])
    ratios = rows[rows["kind"].isin(["standing", "roofline", "sweep", "floor"])]
    assert np.allclose(ratios["quotient"], ratios["value"] / ratios["reference"])
    spread = rows[rows["quotient_high"].notna()]
    assert np.allclose(spread["quotient_high"], spread["value_high"] / spread["reference_low"])
    floors = rows[rows["kind"] == "floor"]
    assert ((floors["verdict"] == verdicts.NOT_PHYSICAL) == (floors["value_high"] < floors["reference_low"])).all()
    targets = rows[rows["kind"] == "target"]
    assert (targets["holds"] == (targets["verdict"] == "met")).all() and targets["op"].notna().all()


def test_a_peer_verdict_is_placed_by_its_interval_and_the_worst_point_is_the_highest_ratio(judged):
    _, _, rows = judged
    swept = rows[rows["kind"] == "sweep"]
    under = swept["quotient_high"] <= 1
    across = (swept["quotient_low"] <= 1) & ~under
    assert (swept["verdict"] == np.select([under, across], [verdicts.AT_OR_UNDER, verdicts.ACROSS],
                                          verdicts.OVER)).all()
    assert (swept["holds"] == under).all()
    worst = swept[swept["worst"]].set_index("op")["quotient"]
    assert worst.to_dict() == swept.groupby("op")["quotient"].max().to_dict()


def test_the_note_words_the_rows(judged):
    """A verdict row changed is what the note prints: the note judges nothing of its own."""
    tables, config, rows = judged
    planted = rows.copy()
    gelu = (planted["kind"] == "sweep") & (planted["op"] == "gelu")
    planted.loc[gelu, "verdict"], planted.loc[gelu, "holds"] = verdicts.ACROSS, False
    line = note.sweep_worst(tables["sweep"], verdicts.of(planted, "sweep")).set_index("Operation").loc["Bias + GELU"]
    points = int(gelu.sum())
    assert line["Points at or under 1.00"] == f"0 of {points} ({points} not distinguishable from 1.00)"
    standing = verdicts.of(planted, "standing", "warm").index[0]
    planted.loc[standing, "quotient"] = 0.123
    stood = note.standing(tables["summary"], config["shapes"], config["roofline"], planted)
    assert "0.12" in stood["Ours / best peer"].tolist()


def test_a_ratio_across_one_is_not_counted_under_it_and_without_intervals_the_shown_ratio_decides():
    sweep = pd.DataFrame({"op": "gelu", "shape": ["1x8", "1x8", "2x8", "2x8"],
                          "implementation": ["cuda", "compiled"] * 2, "kernel_us": [5.0, 5.02, 5.0, 4.0]})
    plain = verdicts.sweep(sweep, sweep)
    assert plain["verdict"].tolist() == [verdicts.AT_OR_UNDER, verdicts.OVER]  # 0.996 shows 1.00; 1.25 is over
    spread = sweep.assign(kernel_low_us=sweep["kernel_us"] * 0.99, kernel_high_us=sweep["kernel_us"] * 1.01)
    rows = verdicts.sweep(spread, spread)
    assert rows["verdict"].tolist() == [verdicts.ACROSS, verdicts.OVER] and not rows["holds"].any()
    assert rows["worst"].tolist() == [False, True]


def test_a_comparison_across_namespaces_judges_each_side_by_its_interval():
    """The progression's steps and the drift, each side with its own interval (issue 41): faster or slower only
    where the quotient's interval is wholly on one side of one; a summary archived before intervals gets no
    verdict, never a point's."""
    bundle = archived_bundle(NS)
    config = json.loads(bundle["config.resolved.json"])
    stages = config["progression"]["namespaces"]
    history = {ns: pd.read_parquet(io.BytesIO(bundle[f"evidence/history/{ns}.summary.parquet"]))
               for ns in stages[:-1]}
    summary = shipped_table(NS, "summary")
    rows = verdicts.across({"progression": ({**history, NS: summary}, {})}, summary, shipped_table(NS, "kernels"))
    assert len(rows) == (len(stages) - 1) * 5 and set(rows["kind"]) == {"progression"}
    judged = rows[rows["verdict"] != verdicts.NO_INTERVAL]
    low, high = judged["quotient_low"], judged["quotient_high"]
    assert (low <= judged["quotient"]).all() and (judged["quotient"] <= high).all()
    expected = np.select([judged["quotient_high"] < 1, judged["quotient_low"] > 1], [verdicts.FASTER, verdicts.SLOWER],
                         verdicts.ACROSS)
    assert (judged["verdict"] == expected).all() and verdicts.ACROSS in set(judged["verdict"])
    pointwise = {**history, "mage-003": history["mage-003"].drop(columns=["kernel_low_us", "kernel_high_us"])}
    points = verdicts.across({"progression": ({**pointwise, NS: summary}, {})}, summary, summary)
    step = points[(points["versus"] == "mage-003") | (points["source"] == "mage-003")]
    assert len(step) == 10 and (step["verdict"] == verdicts.NO_INTERVAL).all() and not step["holds"].any()
