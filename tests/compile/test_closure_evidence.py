"""First closure decided from what real recorded runs of both worlds show: each obligation's
demand is read off the steps (is the trigger visible, does a decision depend on an earlier
step, does their order depend on what is found, does completion need coverage), and every
insufficiency witness cites the steps that show it — the same way whichever reasoner
proposed the contract."""

from __future__ import annotations

import pytest

from store import Store
from tests.compile.test_openai import RULE, closed
from workbench.compile.closure import decide
from workbench.compile.obligations import SpecEvidence
from workbench.compile.openai import ClosureAnswer, OpenAICompiler, RuleAnswer
from workbench.compile.specs import gather

pytestmark = pytest.mark.slow

SW = "use-thermometer:1"
TW = "tw-coin_collector-level2"


def path_of(compiled) -> list[tuple[str, bool]]:
    return [(a.kind, a.closed) for a in compiled.attempts]


def witness(compiled, kind: str, obligation: str):
    """The check of ``obligation`` in the attempt of ``kind``."""
    attempt = next(a for a in compiled.attempts if a.kind == kind)
    return next(c for c in attempt.checks if c.obligation == obligation)


def labels(check) -> list[str]:
    return [c.label() for c in check.citations]


def resolve(path, compiled) -> None:
    """Every citation of every check names stored steps of the spec's runs."""
    runs = {*compiled.spec.sources, *compiled.spec.contrasts}
    with Store(path) as store:
        for attempt in compiled.attempts:
            for check in attempt.checks:
                for citation in check.citations:
                    assert citation.episode_id in runs, citation
                    assert store.step(citation.episode_id, citation.start) is not None
                    assert store.step(citation.episode_id, citation.end) is not None


def test_a_decision_taken_before_its_check_is_a_skill(scienceworld_runs):
    compiled = scienceworld_runs.mechanism("premature-decision")
    assert path_of(compiled) == [("rule", False), ("skill", True)]
    clean = f"clean:{SW}"
    state = witness(compiled, "rule", "state")
    assert labels(state) == [f"{clean}@16", f"{clean}@17"]
    assert "decides on the result of 'use thermometer" in state.witness
    assert "a rule keeps nothing between decisions" in state.witness
    assert labels(witness(compiled, "rule", "decision")) == [f"{clean}@16-17"]
    assert labels(witness(compiled, "rule", "completion")) == [f"{clean}@16"]
    assert compiled.spec.execution.owner == "parent"  # read off the runs, not the mechanism
    resolve(scienceworld_runs.path, compiled)


def test_a_room_two_doors_away_is_a_subagent_because_the_way_is_found_on_the_way(
    scienceworld_runs,
):
    compiled = scienceworld_runs.mechanism("unreachable-target")
    assert path_of(compiled) == [("rule", False), ("skill", False), ("subagent", True)]
    clean = f"clean:{SW}"
    decision = witness(compiled, "skill", "decision")
    assert labels(decision) == [f"{clean}@2", f"{clean}@3"]
    assert f"is decided where the move at {clean}@2 arrived" in decision.witness
    completion = witness(compiled, "skill", "completion")
    assert labels(completion) == [f"{clean}@1", f"{clean}@2", f"{clean}@4"]
    assert "'kitchen' was out of sight" in completion.witness
    assert witness(compiled, "skill", "state").closed  # a short walk: the parent holds it
    subagent = compiled.attempts[-1]
    assert len(subagent.carried) == 4 + 2  # every open rule and skill obligation
    resolve(scienceworld_runs.path, compiled)


def test_a_commitment_to_an_unnamed_object_is_a_rule(scienceworld_runs):
    compiled = scienceworld_runs.mechanism("unnamed-commitment")
    assert path_of(compiled) == [("rule", True)]
    failed = f"wrong-focus:{SW}"
    observation = witness(compiled, "rule", "observation")
    assert observation.slot == "guard" and f"{failed}@14" in labels(observation)
    resolve(scienceworld_runs.path, compiled)


def test_textworld_a_coin_rooms_away_is_a_subagent_and_a_missing_exit_a_rule(textworld_runs):
    wrong_turn = textworld_runs.mechanism("unreachable-target", f"demo:{TW}:888")
    assert path_of(wrong_turn) == [("rule", False), ("skill", False), ("subagent", True)]
    clean = f"clean:{TW}:3"
    decision = witness(wrong_turn, "skill", "decision")
    assert labels(decision) == [f"{clean}@1", f"{clean}@2"]
    completion = witness(wrong_turn, "skill", "completion")
    assert labels(completion) == [f"{clean}@{i}" for i in range(1, 6)]
    assert "'coin' was out of sight" in completion.witness
    resolve(textworld_runs.path, wrong_turn)

    no_exit = textworld_runs.mechanism("unreachable-target", f"skip-route:{TW}:3")
    assert path_of(no_exit) == [("rule", True)]
    assert no_exit.version.contract["form"]["response"] == "veto"
    resolve(textworld_runs.path, no_exit)


def test_a_model_claiming_a_rule_is_refused_by_the_same_evidence(
    scienceworld_runs, client, chat_server
):
    """The controller decides the model's proposal against the runs as it decides the
    heuristic's: a rule the model claims closed stays open where the runs demand more."""
    compiled = scienceworld_runs.mechanism("premature-decision")
    spec = compiled.spec
    with Store(scienceworld_runs.path) as store:
        members, _ = gather(store, [store.cluster(i) for i in spec.clusters])
    evidence = SpecEvidence.of(spec, members, trusted=False)  # as a model's spec is read
    cited = RULE.closure.observation.citations[0].model_copy(
        update={"episode_id": spec.sources[0], "start": 16, "end": 16}
    )
    claim = closed("guard", cited)
    chat_server.queue(
        RuleAnswer(
            contract=RULE.contract,
            closure=ClosureAnswer(observation=claim, state=claim, decision=claim, completion=claim),
        )
    )
    proposal = OpenAICompiler(client).propose_contract(spec, "rule", [], evidence.demands)
    assert "<evidence>\nobservation: visible" in chat_server.prompt_text()
    attempt = decide(spec, proposal, 1, [], evidence)
    assert not attempt.closed
    model = {c.obligation: c for c in attempt.checks}
    heuristic = {c.obligation: c for c in compiled.attempts[0].checks}
    for obligation in ("state", "decision", "completion"):
        assert not model[obligation].closed
        assert model[obligation].witness == heuristic[obligation].witness
        assert model[obligation].citations == heuristic[obligation].citations
