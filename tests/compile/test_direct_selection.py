"""The ``no-closure`` ablation: the compiler picks the type directly and its contract is taken
as proposed. The obligation checks are still recorded, so what closure would have caught is
visible; offline the pick reads the correction's size, with a model the model picks."""

from __future__ import annotations

from tests.compile.cases import member, premature, repeated, steps
from tests.compile.test_elsewhere import SW_HALL
from tests.compile.test_heuristic import closure, specs_of
from tests.compile.test_openai import spec  # noqa: F401 (fixture)
from workbench.compile import heuristic
from workbench.compile.compiler import direct_selection
from workbench.compile.obligations import SpecEvidence
from workbench.compile.openai import KindAnswer, OpenAICompiler


def two_rooms_away(analysis_id: int):
    """The run walks to a room it cannot see; the success goes through the kitchen."""
    failed = steps(("go to outside", "No known action matches that input."))
    contrast = steps(
        ("go to kitchen", "You move to the kitchen."),
        ("open door to outside", "The door is now open."),
        ("go to outside", "You move to the outside."),
    )
    return member(analysis_id, 1, failed, 1, contrast=contrast, contrast_step=1, initial=SW_HALL)


def test_without_closure_a_short_search_becomes_a_fixed_route_skill():
    compiler = heuristic.HeuristicCompiler()
    case = two_rooms_away(1)
    [found] = specs_of(case)
    assert found.mechanism == "unreachable-target"
    assert closure(found, case, compiler=compiler)[-1].kind == "subagent"

    [attempt] = direct_selection(compiler, found, SpecEvidence.of(found, [case]))
    assert attempt.kind == "skill" and attempt.closed and attempt.position == 1
    assert attempt.carried[0].startswith("no closure: skill chosen directly")
    # what closure would have refused stays on record, with its witness
    still_open = {c.obligation: c for c in attempt.checks if not c.closed}
    assert set(still_open) == {"decision", "completion"}
    decision, completion = still_open["decision"], still_open["completion"]
    assert "decided where the move at s1@1 arrived" in decision.witness
    assert [c.label() for c in decision.citations] == ["s1@1", "s1@2"]
    assert "'outside' was out of sight at s1@1" in completion.witness
    assert [c.label() for c in completion.citations] == ["s1@1", "s1@3"]
    assert attempt.contract["form"]["steps"][-1] == "go to outside"


def test_direct_choice_agrees_with_closure_where_the_correction_is_one_step_or_a_procedure():
    compiler = heuristic.HeuristicCompiler()
    for case in (repeated(1, 1), premature(2, 2)):
        [found] = specs_of(case)
        [direct] = direct_selection(compiler, found, SpecEvidence.of(found, [case]))
        closed = closure(found, case, compiler=compiler)[-1]
        assert (direct.kind, direct.closed) == (closed.kind, True)


def test_the_model_picks_the_type_in_one_logged_call(client, chat_server, store, spec):  # noqa: F811
    chat_server.queue(KindAnswer(kind="skill", why="the door is opened before walking in"))
    choice = OpenAICompiler(client).select_kind(spec)
    assert (choice.kind, choice.why) == ("skill", "the door is opened before walking in")
    [call] = store.calls("compile.select")
    assert call.request["response_format"]["name"] == "KindAnswer"
    system, user = call.request["messages"]
    assert "subagent" in system["content"] and spec.mechanism in user["content"]
