"""Fixtures for real-browser tests: a workbench database, a private JupyterLab server and a
headless Debian chromium driven by Playwright.

Server and browser are always shut down, whatever the test did. When a test fails, the
server log's tail, the browser console and a screenshot path are added to its report.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import ConsoleMessage, Page, sync_playwright

from store import Batch, Episode, Outcome, Step, Store, Task
from tests.browser.lab import JupyterLab
from tests.synth.examples import example_of

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 180_000
"""Default timeout of every Playwright wait."""

EPISODE_ID = "boil-0-s1"
WHEN = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
BOIL = "Your task is to boil water. First, focus on the substance."
TURNS = [
    ("I need water first.", "go to kitchen", "You move to the kitchen."),
    ("", "focus on substance in metal pot", "You focus on the water."),
    ("", "move metal pot to stove", "You move the metal pot to the stove."),
    ("Heat it.", "activate stove", "The stove is now activated."),
    ("Boiling takes time.", "wait", "You decide to wait for 10 iterations."),
]

Diagnostic = tuple[str, Callable[[], str]]


def chromium() -> str:
    """Debian's chromium; the test fails (CI installs it) rather than skips without it."""
    found = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if found is None:
        pytest.fail(
            "chromium is not installed: run `bash scripts/install-chromium.sh` "
            "(Debian's chromium package; CI runs it before the tests)"
        )
    return found


def diagnose(request: pytest.FixtureRequest, name: str, collect: Callable[[], str]) -> None:
    """Add ``collect()`` to the test's report under ``name`` if the test fails."""
    diagnostics: list[Diagnostic] = request.node.stash.setdefault(DIAGNOSTICS, [])
    diagnostics.append((name, collect))


DIAGNOSTICS = pytest.StashKey[list[Diagnostic]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    report = yield
    if report.failed and report.when == "call":
        for name, collect in item.stash.get(DIAGNOSTICS, []):
            try:
                text = collect()
            except Exception as error:  # diagnostics must never hide the failure
                text = f"(could not collect: {error!r})"
            report.sections.append((f"browser test: {name}", text))
    return report


@pytest.fixture
def episode_db(tmp_path: Path) -> Path:
    """A workbench database with one six-step boil episode, ``EPISODE_ID``, kept as a
    synthesized example (its whole trajectory under its instruction)."""
    path = tmp_path / "workbench.db"
    with Store(path) as store:
        store.put_batch(Batch(id="demo", name="demo", kind="run", created_at=WHEN))
        store.put_task(
            Task(
                id="scienceworld:boil:0",
                environment="scienceworld",
                family="boil",
                instruction=BOIL,
                split="train",
            )
        )
        steps = [Step(episode_id=EPISODE_ID, index=0, kind="observation", observation="Hallway.")]
        for i, (thought, action, observation) in enumerate(TURNS, start=1):
            steps.append(
                Step(
                    episode_id=EPISODE_ID,
                    index=i,
                    kind="action",
                    thought=thought,
                    action=action,
                    observation=observation,
                    reward=0.0,
                    timestamp=WHEN + timedelta(seconds=i),
                )
            )
        store.add_episode(
            Episode(
                id=EPISODE_ID,
                task_id="scienceworld:boil:0",
                agent="scripted",
                batch_id="demo",
                outcome=Outcome(success=True, score=100.0, message="Task completed"),
                started_at=WHEN,
            ),
            steps,
        )
        example_of(store, EPISODE_ID)
    return path


@pytest.fixture
def lab(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[JupyterLab]:
    """A running JupyterLab serving ``tmp_path / "notebooks"``."""
    root = tmp_path / "notebooks"
    root.mkdir()
    server = JupyterLab(root=root, home=tmp_path / "jupyter")
    diagnose(request, "JupyterLab log (tail)", server.tail)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def page(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page in headless chromium; its console is kept for the failure report."""
    executable = chromium()
    console: list[str] = []
    screenshot = tmp_path / "failure.png"

    def capture(message: ConsoleMessage) -> None:
        console.append(f"[{message.type}] {message.text}")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            opened = browser.new_page(viewport={"width": 1280, "height": 900})
            opened.set_default_timeout(TIMEOUT_MS)
            opened.on("console", capture)
            opened.on("pageerror", lambda error: console.append(f"[pageerror] {error}"))

            def shoot() -> str:
                opened.screenshot(path=screenshot, full_page=True)
                return f"screenshot: {screenshot}\nurl: {opened.url}"

            def outputs() -> str:
                texts = opened.locator(".jp-OutputArea-output").all_inner_texts()
                return "\n---\n".join(texts) or "(none)"

            diagnose(request, "browser console", lambda: "\n".join(console[-80:]) or "(empty)")
            diagnose(request, "notebook outputs", outputs)
            diagnose(request, "browser page", shoot)
            yield opened
        finally:
            browser.close()
