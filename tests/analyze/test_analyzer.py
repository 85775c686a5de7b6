"""The analysis stage, clusters and agreement on hand-built runs (no simulator)."""

from __future__ import annotations

import pytest

from store import Episode, EpisodeFilter, Outcome, Span
from tests.analyze.test_causes import SUCCESS, add
from workbench.analyze.agreement import agreement, iou
from workbench.analyze.analyst import Proposal
from workbench.analyze.analyzer import ProposalRejected, analyze, build_case, check
from workbench.analyze.heuristic import HeuristicAnalyst
from workbench.compare import shape

DOOR = [("go to kitchen", "The door is not open."), ("go to kitchen", "The door is not open.")]


@pytest.fixture
def runs(store):
    add(store, "ok", "sw:boil:1", True, SUCCESS)
    add(store, "door-1", "sw:boil:1", False, DOOR)
    add(store, "door-2", "sw:boil:1", False, [DOOR[0], ("look around", "You see the hallway.")])
    add(store, "focus", "sw:boil:1", False, [*SUCCESS[:3], ("focus on sink", "CRITICAL")])
    add(store, "alone", "sw:melt:1", False, [("look around", "You see a room.")])
    return store


def test_shapes_keep_task_entities_and_abstract_the_rest():
    instruction = "Your task is to boil water."
    assert shape("go to kitchen", instruction) == "go to <X>"
    assert shape("focus on water", instruction) == "focus on <E1>"
    assert shape("open door to hallway", instruction) == "open door to <X>"


def test_every_failure_gets_an_analysis_with_a_causal_span(runs):
    report = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    assert report.analyzed == 4 and not report.rejected
    door = runs.analyses(report.run.id, "door-1")[0]
    assert (door.start, door.trigger, door.correction) == (
        1,
        "go to <X> | is not open",
        "open door to <X>",
    )
    assert door.contrastive and door.contrast_id == "ok" and door.citations
    [span] = runs.spans("door-1")
    assert (span.kind, span.author, span.start, span.id) == (
        "causal",
        "analyzer:heuristic",
        1,
        door.span_id,
    )
    lone = runs.analyses(report.run.id, "alone")[0]
    assert not lone.contrastive and lone.confidence < 0.5


def test_rerunning_is_idempotent_unless_a_new_run_is_asked_for(runs):
    first = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    again = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    assert (again.run.id, again.analyzed, again.skipped) == (first.run.id, 0, 4)
    assert len(runs.spans("door-1")) == 1
    fresh = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs), new_run=True)
    assert fresh.run.id != first.run.id and fresh.analyzed == 4


def test_clusters_group_same_correction_under_same_condition_and_defer_the_rest(runs):
    report = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    clusters = runs.clusters(report.run.id)
    door = next(c for c in clusters if c.trigger == "go to <X> | is not open")
    assert door.status == "supported" and len(door.members) == 2
    assert door.contrasts == ["ok"]
    lone = next(c for c in clusters if c.family == "melt")
    assert lone.status == "deferred" and "no observable trigger" in lone.reason
    assert report.deferred == sum(c.status == "deferred" for c in clusters)


def test_proposals_citing_missing_steps_are_rejected(runs):
    case = build_case(runs, runs.episode("door-1"))
    bad = Proposal(
        failure="x",
        start=1,
        end=9,
        change="",
        trigger="",
        correction="",
        confidence=0.5,
        rationale="",
        citations=[1, 42],
    )
    with pytest.raises(ProposalRejected, match=r"step 9 is not a step the agent took.*step 42"):
        check(bad, case)


def test_agreement_between_human_and_analyzer_spans(runs):
    analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    runs.add_span(Span(episode_id="door-1", start=1, end=1, kind="causal"))
    runs.add_span(Span(episode_id="door-2", start=2, end=2, kind="causal"))
    [overall, boil] = agreement(runs)
    assert (overall.key, overall.episodes, boil.key) == ("all", 2, "family boil")
    assert overall.exact == 0.5 and overall.within_one == 1.0
    assert iou(
        Span(episode_id="e", start=0, end=3, kind="note"),
        Span(episode_id="e", start=2, end=5, kind="note"),
    ) == pytest.approx(2 / 6)


def test_a_failure_no_success_can_correct_is_deferred_with_its_reason(store):
    add(store, "melt-err", "sw:melt:2", False, [("go to kitchen", "The door is not open.")])
    report = analyze(store, EpisodeFilter(family="melt"), HeuristicAnalyst(store))
    [cluster] = store.clusters(report.run.id)
    assert (cluster.status, cluster.trigger) == ("deferred", "go to <X> | is not open")
    assert cluster.reason.startswith("no consistent correction")


def test_human_verdicts_accept_edit_and_reject(runs):
    from workbench.analyze.review import accept, edit, reject

    report = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    door1, door2, focus = (
        runs.analyses(report.run.id, e)[0] for e in ("door-1", "door-2", "focus")
    )
    confirmed = accept(runs, door1.id)
    assert (confirmed.author, confirmed.start, runs.analysis(door1.id).status) == (
        "human",
        door1.start,
        "accepted",
    )
    corrected = edit(runs, door2.id, 1, 2)
    assert (corrected.start, corrected.end, runs.analysis(door2.id).status) == (1, 2, "edited")
    reject(runs, focus.id)
    assert runs.analysis(focus.id).status == "rejected"
    assert [s for s in runs.spans("focus") if s.author.startswith("analyzer:")] == []
    assert all(focus.id not in c.members for c in runs.clusters(report.run.id))
    assert agreement(runs)[0].episodes == 2


def test_reclustering_unchanged_analyses_keeps_cluster_ids(runs):
    report = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    before = runs.clusters(report.run.id)
    analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    assert runs.clusters(report.run.id) == before


def test_held_out_failures_are_analysed_only_when_the_scope_asks_for_them(runs):
    from store import Episode, Outcome, Step, Task

    runs.put_task(Task(id="sw:boil:9", environment="scienceworld", family="boil", split="test"))
    steps = [
        Step(episode_id="held-out", index=i, kind="action", action=action, observation=seen)
        for i, (action, seen) in enumerate(DOOR)
    ]
    runs.add_episode(
        Episode(id="held-out", task_id="sw:boil:9", batch_id="b", outcome=Outcome(success=False)),
        steps,
    )
    default = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    assert "held-out" not in {a.episode_id for a in runs.analyses(default.run.id)}
    assert default.analyzed == 4
    for scope in (EpisodeFilter(split="test"), EpisodeFilter(held_out=True)):
        chosen = analyze(runs, scope, HeuristicAnalyst(runs))
        assert chosen.run.id != default.run.id  # its own run, never the default one continued
        assert "held-out" in {a.episode_id for a in runs.analyses(chosen.run.id)}
    again = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    assert again.run.id == default.run.id and again.analyzed == 0


# What SmolLM2-135M wrote for real failures (bench/real_model.py), replayed: each failure it
# cannot judge is named with why, and the others are still analysed.
LOOPING = '{ "failure": "12,000,000,000,000,000,000,000,000,000,000,000,12,398,657,400,000,000'
OUT_OF_RANGE = (
    '{ "failure": ", the door is not open.", "start" : 3, "end" : 2, "change" : ", nothing '
    'happens.", "trigger" : ", no change occurs.", "correction": "the door is not open.", '
    '"confidence": 10, "rationale": "nothing happens.", "citations": [], "contrast_citations": [2]}'
)


def real_model_answers(request: dict) -> object:
    from tests.llm_server import truncated

    prompt = "\n".join(str(m.get("content")) for m in request["messages"])
    if "focus on sink" in prompt:
        return truncated(LOOPING)  # finish_reason "length" at the token limit
    if "You see a room." in prompt:
        return OUT_OF_RANGE  # the same answer after a correction
    return Proposal(
        failure="The run never reached the kitchen.",
        start=1,
        end=1,
        change="Open the door before going through it.",
        trigger="go to <X> | is not open",
        correction="open door to <X>",
        confidence=0.6,
        rationale="Step 1 walks into a closed door.",
        citations=[1],
    )


def test_a_failure_without_action_steps_is_named_and_no_analyst_is_asked(runs, chat_server):
    from workbench.analyze.openai import OpenAIAnalyst
    from workbench.llm import ChatClient

    # the LLM agent's first answer ended a real TextWorld episode before any action
    add(runs, "none", "sw:freeze:1", False, [])
    client = ChatClient(runs, model="m", api_key="k", base_url=chat_server.base_url, backoff=0)
    report = analyze(runs, EpisodeFilter(task="sw:freeze:1"), OpenAIAnalyst(client))
    assert report.rejected == ["none: the run has no action step to cite (the agent took none)"]
    assert report.analyzed == 0 and chat_server.request_count == 0


def test_failures_of_no_steps_are_left_out_and_counted(runs):
    """Outcomes imported alone (a results file read through a mapping) hold nothing to analyse:
    no analyst is asked, and the report counts them apart from rejected proposals."""
    failed = Outcome(success=False, score=0.0)
    runs.add_episode(Episode(id="result", task_id="sw:boil:1", batch_id="b", outcome=failed), [])
    report = analyze(runs, EpisodeFilter(), HeuristicAnalyst(runs))
    assert (report.no_steps, report.analyzed, report.rejected) == (1, 4, [])
    assert runs.analyses(report.run.id, "result") == []


def test_failures_the_model_cannot_judge_are_named_and_the_others_analysed(runs, chat_server):
    from workbench.analyze.openai import OpenAIAnalyst
    from workbench.llm import ChatClient

    chat_server.responder = real_model_answers
    client = ChatClient(runs, model="m", api_key="k", base_url=chat_server.base_url, backoff=0)
    report = analyze(runs, EpisodeFilter(), OpenAIAnalyst(client))
    assert report.analyzed == 2
    failed = dict(line.split(": ", 1) for line in report.failed)
    assert set(failed) == {"focus", "alone"}
    assert "token limit" in failed["focus"]
    assert "confidence" in failed["alone"]
    assert "after 2 attempts (it wrote the same again after a correction)" in failed["alone"]
    assert {a.episode_id for a in runs.analyses(report.run.id)} == {"door-1", "door-2"}
    ended = [c for c in runs.calls() if c.gave_up]
    assert sorted(c.episode_id for c in ended) == ["alone", "focus"]
    assert max(c.turn for c in runs.calls()) == 1  # the repeated answer is not asked a third time
