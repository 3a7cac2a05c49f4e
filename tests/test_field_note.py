"""Field note 004 regenerated from the evidence: the seed note's measured numbers carried by the rendered
original-mage-006 note, its claims recorded as evidence, and its page opened in a real headless browser."""
import re
import shutil
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT

SEED_NOTE = ROOT.parent / "shared" / "seed" / "field-note-004.txt"
pytestmark = pytest.mark.slow
ARTIFACTS = ROOT / "work" / "test-artifacts"
# The seed's numbers the rendered note does not print, each with why: none is a measurement left out.
NOT_CARRIED = {"004": "the note's own number, not a measurement"}


@pytest.fixture(scope="module")
def bundle(replayed_original) -> Path:
    """The note rebuilt from its shipped archive (the import from the seed evidence makes the same bundle)."""
    return replayed_original / "results" / "original-mage-006"


def seed_numbers() -> list[str]:
    """Every number of the seed note that is not part of an identifier (sm_89, mage-006, PR #49, 128-bit)."""
    text = SEED_NOTE.read_text()
    return list(dict.fromkeys(re.findall(r"(?<![\w#.-])(\d+(?:\.\d+)?)(?![\w.-]*[A-Za-z_])", text)))


def carried(number: str, shown: set[str]) -> bool:
    """Printed as the seed prints it, or (the seed's one-decimal figure tables) a two-decimal value that rounds
    to it."""
    if number in shown:
        return True
    tenth = Decimal("0.1")
    return "." in number and len(number.split(".")[1]) == 1 and any(
        "." in s and len(s.split(".")[1]) == 2 and str(Decimal(s).quantize(tenth, ROUND_HALF_UP)) == number
        for s in shown)


@pytest.mark.skipif(not SEED_NOTE.exists(), reason="reads the seed note, ../shared/seed/field-note-004.txt, absent")
def test_the_note_carries_every_measured_number_of_the_seed(bundle):
    shown = set(re.findall(r"\d+(?:\.\d+)?", (bundle / "note.md").read_text().replace("†", "")))
    numbers = seed_numbers()
    missing = [n for n in numbers if not carried(n, shown)]
    assert len(numbers) > 100 and set(missing) <= set(NOT_CARRIED), missing


# The seed's arguments and caveats, each with words our rendering must hold for it (issue 44's table).
ARGUMENTS = {
    "the first rewrite's layer norm in the seed's slot": "| first rewrite (PR #42) | 141.70 (×2.43) | 11.03† (×1.69) |",
    "the pull requests and the open issue": ("PR #43 / #44", "PR #49 / #52", "issue #54"),
    "the wait that leaves one group in flight": "`cp_async_wait_group(1)`",
    "the two defects of the first pipeline": ("`tiles % 2`", "`(tiles - 1) % 2`", "69† µs"),
    "one pass against two": "| Passes over the row | 1† (the row stays in registers) | 2† |",
    "Triton's sqrt_rn against the approximate rsqrt": ("`1.0 / sqrt_rn_f32`", "0.0000001†"),
    "launch counts do not determine kernel time": "a launch count does not determine how long the kernels run",
    "why the pipeline holds 96 registers": "96 registers a thread hold the second buffer's indices",
    "the Triton matmul read as under load": "That capture ran under load",
    "the library call still ahead": "The library call is still ahead",
    "the two views from separate runs": "separate runs",
    "host, clocks and timestamps": ("WSL2", "unlocked clocks", "reduced precision"),
    "method and reproduction": ("## Method and reproduction", "`comparison-results.json`"),
}


def test_the_note_carries_the_seed_s_arguments_and_caveats_as_its_account(bundle):
    """Each argument of the seed is in the rendering, the original's reading marked as its account."""
    text = (bundle / "note.md").read_text()
    missing = [what for what, words in ARGUMENTS.items()
               if not all(w in text for w in ((words,) if isinstance(words, str) else words))]
    assert missing == []
    assert text.count("*From the original project's field note 004 (`seed/field-note-004.txt`):*") >= 10


def test_the_quoted_values_are_marked_and_declared_with_their_provenance(bundle):
    text = (bundle / "note.md").read_text()
    assert "11.03†" in text and "68.35†, 68.60†, 68.68† and 68.62† µs" in text and "Quoted, not measured" in text
    quoted = pd.read_parquet(bundle / "evidence" / "quoted.parquet")
    assert quoted["provenance"].str.contains("SHA-256 9b9b31d4").all()


@pytest.mark.skipif(not SEED_NOTE.exists(), reason="reads the seed note, ../shared/seed/field-note-004.txt, absent")
def test_the_quoted_values_provenance_names_the_seed_note_by_its_hash():
    import hashlib

    assert hashlib.sha256(SEED_NOTE.read_bytes()).hexdigest().startswith("9b9b31d4")


def test_the_claims_and_their_verdicts_are_evidence(bundle):
    claims = pd.read_parquet(bundle / "evidence" / "claims.parquet")
    assert claims[claims["kind"] == "claim"]["holds"].all()
    verdicts = dict(zip(claims["claim"], claims["verdict"], strict=True))
    # the retained session alone cannot rank the layer norm against Triton, nor the matmul against cuBLAS
    assert verdicts["the layer norm against Triton's"] == "not distinguishable"
    assert verdicts["the matrix multiply against cuBLAS"] == "not distinguishable"
    assert verdicts["the pipelined matrix multiply is faster than the kernel it replaces"] == "below"
    assert (claims["file"] == "notes/field-note-004.md").all() and (claims["line"] > 0).all()


def test_the_page_opens_in_a_headless_browser(bundle):
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Chromium is needed for the page test (apt-get install chromium)"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((bundle / "note.html").as_uri())
        images = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth])")
        headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
        tables = page.eval_on_selector_all("table", "els => els.length")
        captions = page.eval_on_selector_all("figcaption", "els => els.length")
        page.screenshot(path=str(ARTIFACTS / "original-mage-006-note.png"), full_page=True)
        browser.close()
    assert len(images) == 3 and all(done and width > 0 for done, width in images), images
    assert errors == []
    assert "The stages so far" in headings and "Limits" in headings
    assert captions == 3 and tables >= 12
