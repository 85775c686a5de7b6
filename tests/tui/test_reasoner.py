"""The app's one backend choice: the header names a model backend, `r` on Clusters and Compile
and `f`/`b` on Manual judge with it (here the scripted chat server on 127.0.0.1), and a
misconfigured endpoint is one message, not a crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import Header

import workbench.cli as cli
from store import Store
from tests.llm_server import ChatServer
from tests.tui.conftest import SIZE, settle
from tests.tui.test_clusters import build, open_clusters
from tests.tui.test_compile import open_compile
from tests.tui.test_manual import open_manual, write_rules
from tui.app import WorkbenchApp, make_app

MODEL = "test-model"
PROPOSAL = {
    "failure": "the task was not completed",
    "start": 1,
    "end": 1,
    "change": "open the door first",
    "trigger": "go to <X> | is not open",
    "correction": "open door to <X>",
    "confidence": 0.6,
    "rationale": "step 1 met a closed door",
    "citations": [1],
    "contrast_citations": [],
}
NO_SPEC = {
    "supported": False,
    "reason": "the members need different corrections",
    "mechanism": "mixed",
    "activation": None,
    "scope": None,
    "execution": None,
}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: a proposal, a deferred spec, or every rule in one group."""
    schema = request["response_format"]["json_schema"]["name"]
    if schema == "Proposal":
        return PROPOSAL
    if schema == "SpecAnswer":
        return NO_SPEC
    listed = request["messages"][1]["content"].splitlines()[0]  # "... holds 2 rule(s): a, b."
    ids = [rule_id.strip() for rule_id in listed.split(": ", 1)[1].rstrip(".").split(",")]
    return {"groups": [{"title": "Everything", "introduction": "All rules.", "rule_ids": ids}]}


@pytest.fixture
def server(monkeypatch) -> Any:
    """The chat server, configured as the app's backend through the environment."""
    with ChatServer(responder=answer) as chat:
        monkeypatch.setenv("WORKBENCH_REASONER", "openai")
        monkeypatch.setenv("OPENAI_BASE_URL", chat.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", chat.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", MODEL)
        yield chat


@pytest.fixture
def misconfigured(monkeypatch) -> None:
    """The openai backend chosen, with neither endpoint nor model."""
    monkeypatch.setenv("WORKBENCH_REASONER", "openai")
    for name in ("OPENAI_BASE_URL", "WORKBENCH_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def clusters_db(tmp_path: Path) -> Path:
    path = tmp_path / "clusters.db"
    build(path)
    return path


def header(app: WorkbenchApp) -> str:
    return app.screen.query_one(Header).format_title().plain


def messages(app: WorkbenchApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_r_on_clusters_analyses_with_the_configured_model(server, clusters_db):
    app = make_app(clusters_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        port = server.base_url.split(":")[2].split("/")[0]
        assert f"openai · {MODEL} @ 127.0.0.1:{port}" in header(app)
        await pilot.press("r")
        await settle(pilot)
        assert not screen.running
    assert server.request_count == 4  # one per failure
    with Store(clusters_db) as store:
        [run] = store.analysis_runs()
        assert run.reasoner == f"openai:{MODEL}"
        analyses = store.analyses(run.id)
        assert len(analyses) == 4
        assert {a.correction for a in analyses} == {"open door to <X>"}
        authors = {s.author for a in analyses for s in store.spans(a.episode_id)}
        assert authors == {f"analyzer:openai:{MODEL}"}
        assert len(store.calls("analyze.failure")) == 4


async def test_r_on_compile_and_f_on_manual_use_the_model(server, analysed_repo_db):
    with Store(analysed_repo_db) as store:
        write_rules(store)
    app = make_app(analysed_repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await open_compile(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("q")
        await settle(pilot)
        screen = await open_manual(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert screen.manual is not None and screen.manual.reasoner == f"openai:{MODEL}"
    with Store(analysed_repo_db) as store:
        specs = store.specs()
        assert specs and {s.reasoner for s in specs} == {f"openai:{MODEL}"}
        assert {s.status for s in specs} == {"deferred"}
        assert store.calls("compile.spec") and store.calls("manual.formulate")


async def test_a_misconfigured_endpoint_is_one_message_on_every_job(misconfigured, clusters_db):
    app = make_app(clusters_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        assert "reasoner not configured" in header(app)
        await pilot.press("r")
        await settle(pilot)
        assert not screen.running and app.screen is screen
        for key, opener in (("K", open_compile), ("M", open_manual)):
            await pilot.press("q")
            await settle(pilot)
            await opener(pilot)
            await pilot.press("r" if key == "K" else "f")
            await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        assert not app.screen.running
    shown = messages(app)
    assert len(shown) == 4
    assert all(
        m.startswith("the openai reasoner needs an endpoint: set OPENAI_BASE_URL") for m in shown
    )
    assert all("\n" not in m for m in shown)
    with Store(clusters_db) as store:
        assert store.analysis_runs() == [] and store.specs() == [] and store.manuals() == []


async def test_the_heuristic_header_is_the_apps_title(clusters_db, monkeypatch):
    monkeypatch.delenv("WORKBENCH_REASONER", raising=False)
    app = make_app(clusters_db, poll_interval=0, reasoner="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await open_clusters(pilot)
        assert header(app).startswith("Trajectory Workbench — clusters")


def test_workbench_tui_passes_its_reasoner_to_the_app(tui_db, monkeypatch):
    chosen = []
    monkeypatch.setattr(
        WorkbenchApp, "run", lambda self, **kw: chosen.append(self.session.reasoner)
    )
    for args, expected in (([], None), (["--reasoner", "openai"], "openai")):
        result = CliRunner().invoke(cli.main, ["tui", "--db", str(tui_db), *args])
        assert result.exit_code == 0, result.output
        assert chosen[-1] == expected
