"""The inputs are the original project's, bit for bit: its published SHA-256 of every input file."""
import json

import numpy as np
import pytest
from conftest import SEED_EVIDENCE

from fieldnote.measure import inputs
from fieldnote.registry.ops import OPS

SEED = 20260910
FULL = {"matmul": {"m": 1024, "n": 1024, "k": 1024}, "gelu": {"rows": 4096, "cols": 768},
        "layernorm": {"rows": 4096, "cols": 768}, "triangle": {"n": 128, "channels": 32},
        "neighbor": {"nodes": 4096, "features": 64, "edges": 65536}}
# The original's file names for our inputs, in the order it wrote them.
ORIGINAL_NAMES = {"matmul": {"a.bin": "a", "b.bin": "b"}, "gelu": {"a.bin": "x", "b.bin": "bias"},
                  "layernorm": {"a.bin": "x", "b.bin": "weight", "c.bin": "bias"},
                  "triangle": {"a.bin": "a", "b.bin": "b"},
                  "neighbor": {"a.bin": "x", "b.bin": "weight", "indices.bin": "src", "rowptr.bin": "rowptr"}}
# Published in the original mage-006 comparison-results.json (input_hashes), quoted so CI can check them.
PUBLISHED_PREFIX = {"matmul": {"a.bin": "14bd2864", "b.bin": "a5e7b2f0"},
                    "gelu": {"a.bin": "b89c3862", "b.bin": "da01bb73"},
                    "layernorm": {"a.bin": "b89c3862", "b.bin": "da01bb73", "c.bin": "688eea93"},
                    "triangle": {"a.bin": "ed24ed61", "b.bin": "a3f1e8a3"},
                    "neighbor": {"a.bin": "a4e80271", "b.bin": "a1042b72", "indices.bin": "88a64da7",
                                 "rowptr.bin": "fd719842"}}


@pytest.mark.parametrize("op", list(PUBLISHED_PREFIX))  # the original project's ops
def test_inputs_match_the_original_hashes(op):
    arrays = OPS[op].inputs(FULL[op], SEED)
    for original, ours in ORIGINAL_NAMES[op].items():
        assert inputs.sha256(arrays[ours]).startswith(PUBLISHED_PREFIX[op][original]), (op, original)


@pytest.mark.skipif(not (SEED_EVIDENCE / "mage-006").exists(), reason="../shared/seed-evidence not present")
def test_inputs_match_the_seed_evidence_file():
    published = json.loads((SEED_EVIDENCE / "mage-006" / "comparison-results.json").read_text())
    for result in published["results"]:
        op = result["op"]
        arrays = OPS[op].inputs(FULL[op], result["input_hashes"]["seed"])
        for original, digest in result["input_hashes"]["sha256"].items():
            assert inputs.sha256(arrays[ORIGINAL_NAMES[op][original]]) == digest


def test_written_inputs_round_trip_and_are_deterministic(tmp_path):
    shape = {"nodes": 7, "features": 9, "edges": 23}
    hashes = inputs.write("neighbor", shape, SEED, tmp_path / "a.npz", tmp_path / "a.json")
    again = inputs.write("neighbor", shape, SEED, tmp_path / "b.npz", tmp_path / "b.json")
    assert hashes == again
    read = inputs.read(tmp_path / "a.npz")
    assert read["src"].dtype == np.int32 and read["rowptr"][-1] == 23
    assert json.loads((tmp_path / "a.json").read_text())["shape"] == "7x9x23"
    assert inputs.path_for("neighbor", shape, SEED) == "work/inputs/neighbor/7x9x23-seed20260910.npz"


def test_csr_rows_cover_every_edge_in_order():
    arrays = OPS["neighbor"].inputs(FULL["neighbor"], SEED)
    rowptr, dst = arrays["rowptr"], arrays["dst"]
    assert rowptr[0] == 0 and rowptr[-1] == len(dst) and np.all(np.diff(rowptr) >= 0)
    assert np.array_equal(np.repeat(np.arange(len(rowptr) - 1), np.diff(rowptr)), dst)
