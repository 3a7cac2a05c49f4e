"""The page a reader opens, in a real headless browser at two window widths: h200-001's note (its widest tables,
thirteen columns of counters, and eight figures with their values) is never wider than the window; a wide table
scrolls inside the column, and each figure's values are folded under it."""
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, snakemake

pytestmark = pytest.mark.slow  # a replay, then a browser
ARTIFACTS = ROOT / "work" / "test-artifacts"


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    from conftest import copy_project

    project = copy_project(tmp_path_factory.mktemp("page"))
    run = snakemake(project, "--cores", "2", "results/h200-001")
    assert run.returncode == 0, run.stderr
    return project / "results" / "h200-001" / "note.html"


@pytest.mark.parametrize("width", [1280, 800])
def test_nothing_on_the_page_is_wider_than_the_window(page, width):
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("needs Chromium (apt-get install chromium)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        view = browser.new_page(viewport={"width": width, "height": 900})
        view.goto(page.as_uri())
        document = view.evaluate("[document.documentElement.scrollWidth, window.innerWidth, "
                                 "document.documentElement.scrollHeight]")
        past = view.eval_on_selector_all(
            "body *", "els => els.filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5 "
                      "&& !e.closest('table')).map(e => e.tagName + ' ' + e.textContent.slice(0, 40))")
        scrolling = view.eval_on_selector_all("table", "els => els.filter(t => t.scrollWidth > t.clientWidth).length")
        folded = view.eval_on_selector_all("details", "els => els.filter(d => !d.open).length")
        view.screenshot(path=str(ARTIFACTS / f"h200-001-note-{width}.png"), full_page=True)
        browser.close()
    scroll_width, window_width, height = document
    print(f"h200-001's page at {width} px: {height} px tall, {scrolling} tables scrolling inside the column")
    assert scroll_width <= window_width and past == [], past
    assert folded >= 8  # every figure's values, folded
    if width == 800:
        assert scrolling >= 1  # the counters' table, at least
