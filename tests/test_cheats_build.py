"""Every cheat of the adversarial suite (tests/cuda/cheats/, run on the GPU by tests/test_adversarial.py) built
through NVRTC for sm_90 on the CPU, so a broken cheat is found here and not on the GPU."""
import re

import pytest
from conftest import ROOT

from fieldnote.measure.build import cuda

CHEATS = sorted((ROOT / "tests" / "cuda" / "cheats").glob("*.cu"))
MEMO = [p for p in CHEATS if p.stem.startswith("matmul_memo_")]


def entries(ptx: str) -> set[str]:
    return set(re.findall(r"\.entry (\w+)\(", ptx))


@pytest.mark.parametrize("source", CHEATS, ids=[p.stem for p in CHEATS])
def test_every_cheat_builds_for_sm_90(source):
    cubin, ptx, log = cuda.compile_source(source, "sm_90")
    assert cubin[:4] == b"\x7fELF" and entries(ptx), log
    assert not re.search(r"[1-9]\d* bytes spill", log), log


def test_the_memo_family_is_one_header_built_seven_ways():
    """Each key and slot count is a build of matmul_memo.cuh of its own (no two the same PTX); with a memo, the
    product and the commit launched after it; with it compiled out, the product alone."""
    ptx = {p.stem: cuda.compile_source(p, "sm_90")[1] for p in MEMO}
    assert set(ptx) == {f"matmul_memo_{key}_{slots}" for key in ("content", "pointer", "both")
                        for slots in ("1slot", "4slots")} | {"matmul_memo_off"}
    assert all('#include "matmul_memo.cuh"' in p.read_text() for p in MEMO)
    code = {re.sub(r"^\s*(//|\.file).*$", "", text, flags=re.MULTILINE) for text in ptx.values()}  # not the names
    assert len(code) == len(ptx)
    assert entries(ptx.pop("matmul_memo_off")) == {"matmul_memo"}
    assert all(entries(text) == {"matmul_memo", "matmul_memo_commit"} for text in ptx.values())
