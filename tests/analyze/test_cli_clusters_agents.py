"""`workbench clusters --by agent` and `--show` on logs of several agents, with people's
causal spans and the learned scorer's."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from store import Store
from tests.analyze.multi_agent_db import build_agents_db
from workbench.cli import main


def invoke(db_path: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db_path), *args], catch_exceptions=False)


def cluster_of(db_path: Path, episode: str) -> int:
    """The latest run's cluster holding ``episode``'s analysis."""
    with Store(db_path) as store:
        [run, *_] = store.analysis_runs()
        [analysis] = store.analyses(run.id, episode)
        return next(c.id for c in store.clusters(run.id) if analysis.id in c.members)


def test_by_agent_lists_the_clusters_under_each_agent_held_responsible(tmp_path):
    db = tmp_path / "chats.db"
    build_agents_db(db, marked=2)
    assert invoke(db, "analyze").exit_code == 0
    plain = invoke(db, "clusters").output
    assert "by responsible agent" not in plain and "size:       4\n" in plain

    result = invoke(db, "clusters", "--by", "agent")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("analysis run 1 (heuristic), by responsible agent\n")
    headers = [line for line in out.splitlines() if " cluster(s)" in line]
    assert headers == [
        "Planner: 4 failure(s) in 1 cluster(s)",
        "Coder: 2 failure(s) in 1 cluster(s)",
        "(one agent): 1 failure(s) in 1 cluster(s)",
    ]
    sizes = [line.split()[1] for line in out.splitlines() if line.startswith("size:")]
    # the people's spans (on the coder) and the analyzer's (the planner's approach) are
    # different triggers, so different clusters: each lies wholly under one agent
    assert sizes == ["4", "2", "1"]

    wrong = invoke(db, "clusters", "--by", "agent", "--show", "1")
    assert wrong.exit_code == 2 and "--by groups the listing" in wrong.output
    assert invoke(db, "clusters", "--by", "speaker").exit_code == 2


def test_show_names_each_members_agent_and_where_its_span_came_from(tmp_path):
    db = tmp_path / "chats.db"
    build_agents_db(db, marked=4)
    invoke(db, "analyze")
    shown = invoke(db, "clusters", "--show", str(cluster_of(db, "chat-0"))).output
    assert "  chat-0 steps 2..2 (agent Coder, person's span) conf " in shown
    shown = invoke(db, "clusters", "--show", str(cluster_of(db, "chat-4"))).output
    assert "  chat-4 steps 1..1 (agent Planner) conf " in shown
    door = invoke(db, "clusters", "--show", str(cluster_of(db, "door"))).output
    assert "  door steps 1..1 conf " in door  # one agent's log: nothing to say

    learned = invoke(db, "analyze", "--learn")
    assert learned.exit_code == 0, learned.output
    shown = invoke(db, "clusters", "--show", str(cluster_of(db, "chat-3"))).output
    assert "  chat-3 steps 2..2 (agent Coder, person's span) conf " in shown
    shown = invoke(db, "clusters", "--show", str(cluster_of(db, "chat-4"))).output
    assert "  chat-4 steps 2..2 (agent Coder, learned) conf " in shown
    assert "  chat-5 steps 2..2 (agent Coder, learned) conf " in shown
    with Store(db) as store:  # the scorer chooses only in the families it learned from
        [run, *_] = store.analysis_runs()
        [door_analysis] = store.analyses(run.id, "door")
        assert (door_analysis.origin, door_analysis.trigger) == (
            "analyzer",
            "go to <X> | is not open",
        )
    grouped = invoke(db, "clusters", "--by", "agent").output
    assert "Coder: 6 failure(s) in 1 cluster(s)" in grouped
