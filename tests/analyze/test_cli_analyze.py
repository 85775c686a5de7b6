"""`workbench analyze` and `workbench clusters` through click's runner."""

from __future__ import annotations

from click.testing import CliRunner

from store import Span, Store
from tests.analyze.test_causes import SUCCESS, add
from workbench.cli import main


def invoke(db_path, *args):
    result = CliRunner().invoke(main, ["--db", str(db_path), *args], catch_exceptions=False)
    return result


def test_analyze_then_clusters_then_agreement(db_path):
    with Store(db_path) as store:
        add(store, "ok", "sw:boil:1", True, SUCCESS)
        add(store, "door", "sw:boil:1", False, [("go to kitchen", "The door is not open.")])
    first = invoke(db_path, "analyze")
    assert (
        first.exit_code == 0 and "1 failure(s) analysed; 1 cluster(s), 0 deferred" in first.output
    )
    assert "1 already analysed" in invoke(db_path, "analyze").output
    listing = invoke(db_path, "clusters").output
    assert "go to <X> | is not open" in listing and "supported" in listing
    shown = invoke(db_path, "clusters", "--show", "1").output
    assert "door steps 1..1" in shown and "[proposed]" in shown and "ok" in shown
    assert "no failure in scope has a causal span by a human" in (
        invoke(db_path, "analyze", "--agreement").output
    )
    with Store(db_path) as store:
        store.add_span(Span(episode_id="door", start=1, end=1, kind="causal"))
    agreement = invoke(db_path, "analyze", "--agreement").output
    assert "scope: all episodes" in agreement
    for method in ("heuristic", "first step", "last step", "random"):
        assert f"method:   {method}\n" in agreement or f" {method} " in agreement


def test_clusters_without_a_run_and_unknown_cluster(db_path):
    Store(db_path).close()
    assert "no analysis run yet" in invoke(db_path, "clusters").output
    assert "no cluster 7" in invoke(db_path, "clusters", "--show", "7").output


def test_analyze_with_the_openai_reasoner_against_a_local_server(db_path, monkeypatch):
    from tests.llm_server import ChatServer

    proposal = {
        "failure": "walked into a closed door",
        "start": 1,
        "end": 1,
        "change": "open the door first",
        "trigger": "go to <X> | is not open",
        "correction": "open door to <X>",
        "confidence": 0.9,
        "rationale": "the success opens the door first",
        "citations": [1],
        "contrast_citations": [1],
    }
    with Store(db_path) as store:
        add(store, "ok", "sw:boil:1", True, SUCCESS)
        add(store, "door", "sw:boil:1", False, [("go to kitchen", "The door is not open.")])
    with ChatServer(responder=lambda request: proposal) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
        result = invoke(db_path, "analyze", "--reasoner", "openai")
        assert result.exit_code == 0, result.output
        assert "analysis run 1 (openai:test-model): 1 failure(s) analysed" in result.output
        assert "[1] go to kitchen -> The door is not open." in server.prompt_text()
    with Store(db_path) as store:
        [analysis] = store.analyses(episode_id="door")
        assert (analysis.correction, analysis.confidence) == ("open door to <X>", 0.9)
        assert store.spans("door")[0].author == "analyzer:openai:test-model"
        assert store.calls(purpose="analyze.failure")[0].episode_id == "door"
