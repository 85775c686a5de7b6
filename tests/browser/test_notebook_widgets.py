"""The notebook widgets in a real JupyterLab and a real browser: step through an episode,
mark a span with the mouse and keyboard, save it, and find it in the database; then search the
synthesized examples in the retrieval playground."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from store import Store
from tests.browser.conftest import EPISODE_ID
from tests.browser.lab import JupyterLab, write_notebook

KERNEL_READY = """() => {
    const panel = window.jupyterapp?.shell.currentWidget;
    const kernel = panel?.sessionContext?.session?.kernel;
    return kernel?.connectionStatus === "connected" && kernel?.status === "idle"
        && panel.content?.activeCellIndex === 0;
}"""
RENDER_TIMEOUT_MS = 180_000
"""How long the cell may take to import the widgets and draw them."""
CHANGE_TIMEOUT_MS = 120_000
"""How long a click may take to reach the kernel and come back as a change."""


def open_notebook(page: Page, lab: JupyterLab, name: str) -> None:
    """Open ``name`` in the lab and wait until its kernel is connected and idle."""
    page.goto(lab.page(name))
    page.wait_for_function(KERNEL_READY, timeout=300_000, polling=200)


def run_all_cells(page: Page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def next_step(page: Page, expected: str) -> None:
    """Click *next* and wait until the stepper shows ``expected`` (``step I / N``)."""
    page.locator(".wb-next").click()
    expect(page.locator(".wb-position")).to_contain_text(expected, timeout=CHANGE_TIMEOUT_MS)


@pytest.mark.slow
def test_a_span_marked_in_jupyterlab_is_saved(episode_db: Path, lab: JupyterLab, page: Page):
    specs = lab.api("kernelspecs")
    assert specs["kernelspecs"][specs["default"]]["spec"]["argv"][0] == sys.executable
    write_notebook(lab.root / "spans.ipynb", episode_db, EPISODE_ID)
    open_notebook(page, lab, "spans.ipynb")
    run_all_cells(page)

    expect(page.locator(".wb-position")).to_contain_text("step 0 / 6", timeout=RENDER_TIMEOUT_MS)
    next_step(page, "step 1 / 6")
    next_step(page, "step 2 / 6")
    page.locator(".wb-mark-start").click()
    next_step(page, "step 3 / 6")
    page.locator(".wb-mark-end").click()
    page.locator(".wb-label input").fill("premature-focus")
    page.locator(".wb-save").click()
    status = page.locator(".wb-annotator .wb-status")
    expect(status).to_contain_text(re.compile(r"saved span #\d+"), timeout=CHANGE_TIMEOUT_MS)

    span_id = int(re.search(r"saved span #(\d+)", status.inner_text()).group(1))
    with Store(episode_db) as store:
        span = store.span(span_id)
    assert span is not None, f"span #{span_id} is not in {episode_db}"
    assert (span.episode_id, span.start, span.end, span.label) == (
        EPISODE_ID,
        2,
        3,
        "premature-focus",
    )

    # keyboard stepping: focus the key strip, then the terminal UI's keys (and the arrows)
    page.locator(".wb-keys").click()
    position = page.locator(".wb-position")
    for key, expected in (("ArrowRight", "step 4 / 6"), ("h", "step 3 / 6"), ("End", "step 5 / 6")):
        page.keyboard.press(key)
        expect(position).to_contain_text(expected, timeout=CHANGE_TIMEOUT_MS)

    # the retrieval playground (second cell): a typed query comes back as scored hits
    with Store(episode_db) as store:
        [example] = store.synth_examples(verdict="kept")
    expect(page.locator(".wb-search")).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    page.locator(".wb-query input").fill("boil the water")
    page.locator(".wb-query input").press("Tab")
    page.locator(".wb-search").click()
    status = page.locator(".wb-retrieval .wb-status")
    expect(status).to_contain_text("1 of 1 kept examples", timeout=CHANGE_TIMEOUT_MS)
    hits = page.locator(".wb-hits")
    expect(hits).to_contain_text(f"#{example.id}")
    expect(hits).to_contain_text("bm25 instr")
