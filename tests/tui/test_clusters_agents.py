"""The Clusters screen with logs of several agents and people's causal spans: the agreement
line, learning from marked spans (``l``), grouping by responsible agent (``g``) and members
marked by where their span came from."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from store import Analysis, AnalysisRun, Cluster, EpisodeFilter, Store
from tests.analyze.multi_agent_db import build_agents_db
from tests.tui.conftest import SIZE, screen_for_key, settle, shown
from tui.app import make_app
from tui.screens.clusters import ONE_AGENT, ClustersScreen, agent_groups, grouped_cells
from tui.screens.help import HelpScreen
from tui.widgets.job_progress import JobProgress
from workbench.analyze.analyzer import analyze
from workbench.analyze.clusters import ClusterData, read_clusters
from workbench.analyze.heuristic import HeuristicAnalyst


def analysed(path: Path, marked: int) -> Path:
    """The chats database with ``marked`` chats marked by a person, analysed once by the
    heuristic."""
    build_agents_db(path, marked)
    with Store(path) as store:
        analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    return path


@pytest.fixture
def few_marked(tmp_path: Path) -> Path:
    return analysed(tmp_path / "few.db", marked=2)


@pytest.fixture
def enough_marked(tmp_path: Path) -> Path:
    return analysed(tmp_path / "enough.db", marked=4)


async def open_clusters(pilot) -> ClustersScreen:
    return await screen_for_key(pilot, "C", ClustersScreen)


def agreement_text(screen: ClustersScreen) -> str:
    return screen.query_one("#clusters-agreement").content.plain


def notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


def member_lines(screen: ClustersScreen) -> list[str]:
    return shown(screen.member_table)


async def test_the_agreement_line_shows_once_a_person_marked_a_failure(few_marked, tmp_path):
    app = make_app(few_marked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        line = screen.query_one("#clusters-agreement")
        assert line.display
        text = agreement_text(screen)
        assert text.startswith("agreement with 2 marked failure(s): heuristic ")
        for method in ("first step", "last step", "random"):
            assert f" · {method} " in text
        assert "agent " in text  # the chats name their speakers
        assert text.endswith(" · default")

    unmarked = analysed(tmp_path / "unmarked.db", marked=0)
    app = make_app(unmarked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        assert not screen.query_one("#clusters-agreement").display
        assert agreement_text(screen) == ""


async def test_members_name_their_agent_and_a_persons_span(few_marked):
    app = make_app(few_marked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        by_episode: dict[str, str] = {}
        for row in range(screen.cluster_table.row_count):  # every cluster's members
            screen.cluster_table.move_cursor(row=row)
            await settle(pilot)
            header, *lines = member_lines(screen)
            assert header.split()[:3] == ["episode", "agent", "span"]
            by_episode |= {line.split()[0]: line for line in lines if line.strip()}
        assert "Coder" in by_episode["chat-0"] and "person's span" in by_episode["chat-0"]
        assert "Planner" in by_episode["chat-4"] and "person's span" not in by_episode["chat-4"]


async def test_l_with_too_few_marked_spans_says_so_and_changes_nothing(few_marked):
    app = make_app(few_marked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        run = screen.data.run
        await pilot.press("l")
        await settle(pilot)
        assert not screen.running
        assert not screen.query_one(JobProgress).has_class("-shown")
        [notice] = [n for n in notices(app) if "cannot learn" in n]
        assert notice.startswith(
            "cannot learn yet: 2 failure(s) with a person's causal span; a scorer needs at least 4;"
        )
        assert "\n" not in notice
        assert screen.data.run == run


async def test_l_learns_from_marked_spans_and_reloads_the_clusters(enough_marked):
    app = make_app(enough_marked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        assert {a.origin for a in screen.data.analyses.values()} == {"human", "analyzer"}
        await pilot.press("l")
        await settle(pilot)
        assert not screen.running
        assert screen.data.run.reasoner == "heuristic+learned"
        origins = {a.episode_id: a.origin for a in screen.data.analyses.values()}
        assert {origins[f"chat-{i}"] for i in range(4)} == {"human"}
        assert {origins["chat-4"], origins["chat-5"]} == {"learned"}
        assert any(
            n.startswith("learned from marked spans: 7 failures analysed") for n in notices(app)
        )
        chats = next(c for c in screen.data.clusters if c.family == "math")
        screen.cluster_table.move_cursor(row=screen.data.clusters.index(chats))
        await settle(pilot)
        lines = [line for line in member_lines(screen)[1:] if line.strip()]
        assert sum(" learned " in line for line in lines) == 2
        assert sum(" person's span " in line for line in lines) == 4


async def test_l_is_cancelled_like_r(enough_marked):
    app = make_app(enough_marked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        cancel = threading.Event()
        cancel.set()  # as if escape had been pressed before the first failure
        screen._cancel = cancel
        screen._analyze(cancel, screen.query_one(JobProgress).reporter(), screen.scope, True)
        await settle(pilot)
        assert not screen.running
        assert "analysis cancelled; l continues it" in notices(app)
        with Store(enough_marked) as store:
            assert not [a for a in store.analyses() if a.origin == "learned"]


async def test_g_groups_the_clusters_under_the_agents_held_responsible(few_marked):
    app = make_app(few_marked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        plain = shown(screen.cluster_table)
        assert plain[0].split()[0] == "size"
        await pilot.press("g")
        await settle(pilot)
        assert screen.by_agent
        assert screen.cluster_table.border_title == "clusters by responsible agent"
        header, *rows = [line for line in shown(screen.cluster_table) if line.strip()]
        assert header.split()[:3] == ["agent", "size", "family"]
        # the people's spans (the coder's) and the analyzer's (the planner's approach) are
        # different triggers, so two clusters, each under its agent; the single agent's
        # failure under "(one agent)" (a cluster of mixed agents: test_grouped_cells_*)
        assert rows[0].split()[:3] == ["Planner", "4", "math"]
        assert rows[1].split()[:3] == ["Coder", "2", "math"]
        assert rows[2].split()[:4] == ["(one", "agent)", "1", "boil"]
        assert len(rows) == 3
        # a row under an agent selects its cluster: every member is listed
        screen.cluster_table.move_cursor(row=1)
        await settle(pilot)
        assert screen.cluster.family == "math" and screen.member_table.row_count == 2

        await pilot.press("g")
        await settle(pilot)
        assert not screen.by_agent and shown(screen.cluster_table)[0] == plain[0]
        assert screen.cluster.family == "math"  # the selection stays on the cluster


async def test_help_and_footer_name_the_new_keys(few_marked):
    app = make_app(few_marked, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await open_clusters(pilot)
        footer = {
            key: active.binding.description for key, active in app.screen.active_bindings.items()
        }
        assert footer["l"] == "Learn" and footer["g"] == "By agent"
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        described = dict(app.screen.help.keys)
        assert described["l"].startswith("learn from marked spans")
        assert "agent" in described["g"]


def test_agent_groups_order_and_the_one_agent_group(few_marked):
    with Store(few_marked) as store:
        data = read_clusters(store)
    groups = [(agent, [c.family for c in clusters]) for agent, clusters in agent_groups(data)]
    assert groups == [("Planner", ["math"]), ("Coder", ["math"]), (ONE_AGENT, ["boil"])]


def test_grouped_cells_give_each_agent_its_share_of_a_cluster_of_mixed_agents():
    analyses = {
        i: Analysis(id=i, run_id=1, episode_id=f"e{i}", start=1, end=1, agent=agent)
        for i, agent in enumerate(["Coder", "Coder", "Planner", ""], start=1)
    }
    mixed = Cluster(id=1, run_id=1, family="math", trigger="t", members=[1, 2, 3])
    single = Cluster(id=2, run_id=1, family="boil", trigger="u", members=[4])
    data = ClusterData(AnalysisRun(id=1, reasoner="heuristic", scope={}), [mixed, single], analyses)
    groups = agent_groups(data)
    assert [(agent, [c.id for c in found]) for agent, found in groups] == [
        ("Coder", [1]),
        ("Planner", [1]),
        (ONE_AGENT, [2]),
    ]
    assert [c.plain for c in grouped_cells(data, "Coder", mixed, True)[:2]] == ["Coder", "2/3"]
    assert [c.plain for c in grouped_cells(data, "Planner", mixed, False)[:2]] == ["", "1/3"]
    assert grouped_cells(data, ONE_AGENT, single, True)[1].plain.strip() == "1"
