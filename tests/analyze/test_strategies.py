"""The model-backed analyst's strategies against the scripted chat-completions server on
127.0.0.1: how many calls each asks, that each finds the step the server points to, the
whole-run budget, and long runs cut to the model's context with the cut said."""

from __future__ import annotations

import math
import re

import pytest

from store import EpisodeFilter, Store
from tests.analyze.test_causes import add
from workbench.analyze.analyst import FailureCase
from workbench.analyze.analyzer import analyze
from workbench.analyze.openai import OpenAIAnalyst
from workbench.analyze.strategies import BUDGET_SPENT, BudgetSpent, bisect, first_decisive
from workbench.backends import analyst_of, heuristic_backends, openai_analyst, openai_backends
from workbench.llm import ConfigError, ModelError
from workbench.llm.steps import CaseStep

CULPRIT = "break the vase"
"""The action the scripted model holds to be the decisive error, wherever it stands."""


def scripted_model(target: int | None = None):
    """The scripted model: a step is decisive when its action is :data:`CULPRIT`; the half
    holds the culprit's line (or stored index ``target``, for a listing that leaves it out);
    a proposal's span starts where the prompt's finding says, else at the culprit."""

    def respond(body: dict) -> dict:
        schema = body["response_format"]["json_schema"]["name"]
        text = body["messages"][1]["content"]
        line = re.search(rf"^\[(\d+)\] (?:\w+: )?{CULPRIT} ->", text, re.MULTILINE)
        culprit = int(line.group(1)) if line else target
        if schema == "StepVerdict":
            judged = int(re.search(r"Is step \[(\d+)\] the decisive error", text).group(1))
            decisive = culprit == judged
            return {
                "decisive": decisive,
                "reason": f"step {judged} {'breaks' if decisive else 'is fine'}",
            }
        if schema == "HalfVerdict":
            middle = int(re.search(r"upper half, steps \[\d+\] to \[(\d+)\]", text).group(1))
            return {"half": "upper" if culprit <= middle else "lower", "reason": "it breaks there"}
        found = re.search(r"put the decisive error at step \[(\d+)\]", text)
        first = int(re.search(r"^\[(\d+)\]", text, re.MULTILINE).group(1))
        return proposal(int(found.group(1)) if found else first if culprit is None else culprit)

    return respond


def proposal(start: int, **changes) -> dict:
    return {
        "failure": "The vase lies broken.",
        "start": start,
        "end": start,
        "change": "Carry fragile things with both hands.",
        "trigger": "drop <X> | <X> is fragile",
        "correction": "put <X> on <E1>",
        "confidence": 0.7,
        "rationale": f"Step {start} breaks the vase.",
        "citations": [start],
        "contrast_citations": [],
        **changes,
    }


def case(steps: int = 20, culprit: int | None = 13, *, agents: bool = False) -> FailureCase:
    """A failed run of ``steps`` steps whose stored indices go 10, 12, 14, … (not positions),
    :data:`CULPRIT` at position ``culprit``."""
    return FailureCase(
        episode_id="ep-vase",
        family="tidy",
        instruction="Put the vase on the shelf.",
        outcome="failed: the vase is broken (score 0)",
        steps=[
            CaseStep(
                index=10 + 2 * i,
                action=CULPRIT if i == culprit else f"look at shelf {i}",
                observation="Crash." if i == culprit else "The shelf is empty.",
                agent=("Mover" if i % 2 else "Planner") if agents else "",
            )
            for i in range(steps)
        ],
    )


@pytest.fixture
def scripted(chat_server):
    chat_server.responder = scripted_model()
    return chat_server


def index_of(position: int) -> int:
    return 10 + 2 * position


# -- each strategy --------------------------------------------------------------------------


def test_all_at_once_asks_once_and_keeps_the_name_of_the_runs_before_strategies(
    client, scripted, store
):
    analyst = OpenAIAnalyst(client)
    assert analyst.name == "openai:test-model"
    found = analyst.analyze_failure(case())
    assert found.start == index_of(13)
    assert scripted.request_count == 1
    assert [c.purpose for c in store.calls()] == ["analyze.failure"]
    assert "<finding>" not in scripted.prompt_text()


@pytest.mark.parametrize("culprit", [0, 1, 6, 19])
def test_step_by_step_asks_each_step_in_turn_until_the_first_decisive_one(
    client, scripted, store, culprit
):
    analyst = OpenAIAnalyst(client, strategy="step-by-step")
    assert analyst.name == "openai:test-model:step-by-step"
    found = analyst.analyze_failure(case(culprit=culprit))
    assert (found.start, found.end) == (index_of(culprit), index_of(culprit))
    assert scripted.request_count == culprit + 2  # one verdict per step so far, one proposal
    assert len(store.calls("analyze.step")) == culprit + 1
    assert len(store.calls("analyze.failure")) == 1
    for position in range(culprit + 1):  # each verdict saw the run up to its step, no further
        shown = re.findall(r"^\[(\d+)\]", scripted.prompt_text(position), re.MULTILINE)
        assert [int(i) for i in shown] == [index_of(p) for p in range(position + 1)]
        assert "it went on to 20 steps in all" in scripted.prompt_text(position)
    last = scripted.prompt_text()
    assert (
        f"step-by-step search of the failed run put the decisive error at step [{index_of(culprit)}]"
        in last
    )
    assert "breaks" in last  # the verdict's reason goes with the finding


@pytest.mark.parametrize("culprit", [0, 1, 7, 13, 19])
def test_binary_search_halves_the_run_until_one_step_is_left(client, scripted, store, culprit):
    analyst = OpenAIAnalyst(client, strategy="binary-search")
    assert analyst.name == "openai:test-model:binary-search"
    found = analyst.analyze_failure(case(culprit=culprit))
    assert found.start == index_of(culprit)
    halvings = len(store.calls("analyze.half"))
    assert math.floor(math.log2(20)) <= halvings <= math.ceil(math.log2(20))
    assert scripted.request_count == halvings + 1
    first = scripted.prompt_text(0)
    assert "The decisive error lies in steps [10] to [48]" in first
    assert "upper half, steps [10] to [28], or in the lower half, steps [30] to [48]" in first
    assert (
        f"binary-search search of the failed run put the decisive error at step [{index_of(culprit)}]"
        in scripted.prompt_text()
    )


def test_a_run_of_one_step_needs_no_halving(client, scripted):
    found = OpenAIAnalyst(client, strategy="binary-search").analyze_failure(case(1, 0))
    assert found.start == 10 and scripted.request_count == 1


def test_step_by_step_with_no_decisive_step_asks_about_the_whole_run(client, scripted, store):
    found = OpenAIAnalyst(client, strategy="step-by-step").analyze_failure(case(5, None))
    assert scripted.request_count == 6
    assert "judged no single step decisive: judge the whole run" in scripted.prompt_text()
    assert found.start == 10  # no culprit line: the scripted proposal took the first step


def test_the_found_steps_agent_is_the_proposals_when_the_model_names_none(client, scripted):
    found = OpenAIAnalyst(client, strategy="step-by-step").analyze_failure(case(6, 3, agents=True))
    assert found.agent == "Mover"
    assert "[16] Mover: break the vase -> Crash." in scripted.prompt_text()


def test_the_searches_walk_positions_whatever_is_asked():
    asked: list[int] = []

    def at_five(position):
        asked.append(position)
        return type("V", (), {"decisive": position == 5, "reason": "r"})()

    assert first_decisive(9, at_five).position == 5 and asked == [0, 1, 2, 3, 4, 5]
    for target in range(9):
        found = bisect(9, lambda low, middle, high, t=target: _half(t, middle))
        assert found.position == target and found.questions <= 4
    with pytest.raises(ValueError):
        bisect(0, lambda *_: None)


def _half(target: int, middle: int):
    return type("H", (), {"half": "upper" if target <= middle else "lower", "reason": "r"})()


# -- the one checked-answer loop, and what is logged --------------------------------------------


def test_a_verdict_without_a_reason_gets_one_correction(client, scripted, store):
    scripted.queue({"decisive": False, "reason": " "})
    OpenAIAnalyst(client, strategy="step-by-step").analyze_failure(case(3, 1))
    retry = scripted.requests[1].messages
    assert retry[2]["role"] == "assistant" and '"reason": " "' in retry[2]["content"]
    assert "reason is empty" in retry[3]["content"]
    first, again = sorted(store.calls("analyze.step"), key=lambda c: c.id)[:2]
    assert (first.turn, again.turn) == (0, 1)


def test_a_proposal_away_from_the_found_step_is_corrected_then_refused(client, scripted, store):
    wrong = proposal(index_of(2))
    scripted.queue({"half": "lower", "reason": "later"}, wrong, wrong)
    with pytest.raises(ModelError, match=r"start \(14\) must be 12, the step the search found"):
        OpenAIAnalyst(client, strategy="binary-search").analyze_failure(case(2, 1))
    assert "must be 12" in scripted.requests[2].messages[-1]["content"]


def test_every_call_is_logged_with_its_tokens_and_counted(client, scripted, store):
    analyst = OpenAIAnalyst(client, strategy="step-by-step")
    analyst.analyze_failure(case(8, 4))
    calls = store.calls()
    assert len(calls) == analyst.budget.sent == 6
    assert all(c.prompt_tokens and c.completion_tokens for c in calls)
    assert analyst.budget.prompt_tokens == sum(c.prompt_tokens for c in calls)
    assert analyst.budget.completion_tokens == sum(c.completion_tokens for c in calls)
    assert {c.episode_id for c in calls} == {"ep-vase"}
    again = OpenAIAnalyst(client, strategy="step-by-step")
    again.analyze_failure(case(8, 4))  # the same questions: all from the cache, none sent
    assert (again.budget.sent, again.budget.cached) == (0, 6)
    assert "0 model call(s) sent, 6 answered from the cache" in again.budget.describe()


# -- the whole run's budget -------------------------------------------------------------------


def stored_failures(store: Store) -> None:
    """Three failed runs of four agent steps, the vase broken at the second."""
    for name in ("vase-a", "vase-b", "vase-c"):  # different runs: no prompt is another's
        turns = [("look at shelf", name), (CULPRIT, "Crash."), ("wait", "."), ("wait", ".")]
        add(store, name, f"sw:tidy:{name}", False, turns)


def test_a_spent_budget_stops_the_run_and_the_next_run_continues(client, scripted, store):
    stored_failures(store)  # each takes 3 calls: verdicts on steps 1 and 2, then the proposal
    analyst = OpenAIAnalyst(client, strategy="step-by-step", max_calls=5)
    first = analyze(store, EpisodeFilter(), analyst)
    assert first.analyzed == 1 and scripted.request_count == analyst.budget.sent == 5
    assert len(first.failed) == 2 and all(BUDGET_SPENT in reason for reason in first.failed)
    assert len(analyst.budget.refused) == 2 and analyst.budget.spent
    with pytest.raises(BudgetSpent):  # spent for good: not one more question
        analyst.analyze_failure(case())
    assert scripted.request_count == 5
    [done] = {a.episode_id for a in store.analyses(first.run.id)}

    rerun = OpenAIAnalyst(client, strategy="step-by-step", max_calls=5)
    second = analyze(store, EpisodeFilter(), rerun)
    assert second.run.id == first.run.id and (second.skipped, second.analyzed) == (1, 2)
    assert not second.failed and not rerun.budget.refused
    assert (rerun.budget.sent, rerun.budget.cached) == (4, 2)  # the half-done one's verdicts
    asked = [
        (r.body["messages"][1]["content"], r.body["response_format"]["json_schema"]["name"])
        for r in scripted.requests
    ]
    assert len(asked) == len(set(asked)) == 9  # no question was sent twice
    analyses = store.analyses(first.run.id)
    assert {a.episode_id for a in analyses} == {"vase-a", "vase-b", "vase-c"} > {done}
    assert {a.start for a in analyses} == {2}  # the culprit's stored index


def test_a_budget_below_one_call_is_refused(client):
    with pytest.raises(ValueError, match="max_calls"):
        OpenAIAnalyst(client, max_calls=0)
    with pytest.raises(ValueError, match="unknown strategy"):
        OpenAIAnalyst(client, strategy="at-random")  # type: ignore[arg-type]


# -- long runs and the model's context ---------------------------------------------------------


def long_case() -> FailureCase:
    """300 steps of long observations and a long instruction, the culprit at position 211."""
    long = case(300, 211)
    steps = [
        s.model_copy(update={"observation": f"{s.observation} " + "The shelf creaks. " * 12})
        for s in long.steps
    ]
    instruction = "Put the vase on the shelf. " + "Mind the rules of the house. " * 700
    return long.model_copy(update={"steps": steps, "instruction": instruction})


@pytest.mark.parametrize("strategy", ["all-at-once", "binary-search"])
def test_a_long_run_is_cut_to_the_context_and_the_prompt_says_so(client, scripted, strategy):
    scripted.responder = scripted_model(index_of(211))
    context = 4096
    long = long_case()
    analyst = OpenAIAnalyst(client, strategy=strategy, context_tokens=context)
    found = analyst.analyze_failure(long)
    assert found.start == index_of(211)
    for received in scripted.requests:
        sent = sum(len(m["content"]) for m in received.messages)
        assert sent <= (context - 1024) * 3  # the reply's tokens kept free
        text = received.prompt_text()
        cut = re.search(r"<cut>\nCut to fit the model's context: (.*)\.\n</cut>", text)
        assert cut, "the prompt does not say what was cut"
        shown = len(re.findall(r"^\[\d+\] ", text, re.MULTILINE))
        assert f"the failed run shows {shown} of 300 steps (each gap marked)" in cut.group(1)
        said = re.search(r"the instruction is cut after ([\d,]+) of ([\d,]+) characters", text)
        assert said and said.group(2) == f"{len(long.instruction.strip()):,}"
        assert "more characters cut …]" in text
        assert 'steps="300"' in text


def test_a_short_run_says_nothing_was_cut(client, scripted):
    OpenAIAnalyst(client, context_tokens=8192).analyze_failure(case())
    assert "<cut>" not in scripted.prompt_text() and "cut" not in scripted.prompt_text().lower()


def test_a_context_with_no_room_for_a_prompt_is_refused(client):
    with pytest.raises(ValueError, match="leaves no room"):
        OpenAIAnalyst(client, context_tokens=1500)


# -- building the analyst -------------------------------------------------------------------------


def test_the_backends_set_the_strategy_budget_and_context(client, store):
    backends = openai_backends(client)
    assert analyst_of(backends) is backends.analyst
    analyst = analyst_of(backends, "binary-search", 7, environ={"WORKBENCH_CONTEXT_TOKENS": "8192"})
    assert isinstance(analyst, OpenAIAnalyst) and analyst.client is client
    assert (analyst.name, analyst.budget.limit, analyst.context_tokens) == (
        "openai:test-model:binary-search",
        7,
        8192,
    )
    for bad in ("0", "8k", "-5"):
        with pytest.raises(ConfigError, match="WORKBENCH_CONTEXT_TOKENS must be a positive"):
            openai_analyst(client, environ={"WORKBENCH_CONTEXT_TOKENS": bad})
    with pytest.raises(ConfigError, match=r"leaves no room.*WORKBENCH_CONTEXT_TOKENS"):
        openai_analyst(client, environ={"WORKBENCH_CONTEXT_TOKENS": "100"})
    with pytest.raises(ConfigError, match="heuristic asks no model"):
        analyst_of(heuristic_backends(store), "step-by-step")


# -- the command ------------------------------------------------------------------------------


def invoke(db_path, *args):
    from click.testing import CliRunner

    from workbench.cli import main

    return CliRunner().invoke(main, ["--db", str(db_path), *args], catch_exceptions=False)


def test_the_command_takes_a_strategy_and_a_budget(db_path, chat_server, monkeypatch):
    chat_server.responder = scripted_model()
    with Store(db_path) as store:
        stored_failures(store)
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
    options = ("analyze", "--reasoner", "openai", "--strategy", "binary-search")
    first = invoke(db_path, *options, "--max-calls", "4")
    assert first.exit_code == 0, first.output
    assert (  # 4 steps: two halvings, then the proposal
        "analysis run 1 (openai:test-model:binary-search): 1 failure(s) analysed, "
        "2 not analysed (budget)" in first.output
    )
    assert "4 model call(s) sent (of at most 4), 0 answered from the cache;" in first.output
    assert "the budget is spent: run again to continue" in first.output
    assert "not analysed:" not in first.output  # no line per failure the budget left
    second = invoke(db_path, *options)
    assert "run 1 (openai:test-model:binary-search): 2 failure(s) analysed, 1 already" in (
        second.output
    )
    assert "5 model call(s) sent, 1 answered from the cache" in second.output  # the halving
    assert chat_server.request_count == 9
    other = invoke(db_path, "analyze", "--reasoner", "openai", "--max-calls", "2")
    assert (  # all at once, another run: a call a failure
        "analysis run 2 (openai:test-model): 2 failure(s) analysed, 1 not analysed (budget)"
        in other.output
    )


def test_the_heuristic_takes_no_strategy(db_path):
    Store(db_path).close()
    done = invoke(db_path, "analyze", "--reasoner", "heuristic", "--strategy", "step-by-step")
    assert done.exit_code == 2 and "go with the openai reasoner" in done.output
    done = invoke(db_path, "analyze", "--agreement", "--max-calls", "3")
    assert done.exit_code == 2 and "not --agreement" in done.output
    assert "binary-search" in invoke(db_path, "analyze", "--help").output
