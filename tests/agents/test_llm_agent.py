"""The LLM agent playing real ScienceWorld episodes against the local chat server."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from store import Store
from tests.llm_server import ChatServer, http_error, serve
from workbench.agents.base import FIRST_ACTION_STEP, Interaction, sample_actions
from workbench.agents.guidance import DelegateForm, Guidance, RuleForm
from workbench.agents.llm import (
    PURPOSE,
    LLMAgent,
    PromptBudget,
    build_prompt,
    closest,
    ground,
    manual_section,
)
from workbench.envs.base import EnvTask
from workbench.envs.scienceworld import ScienceWorld
from workbench.llm import ChatClient, ModelError

TASK = EnvTask("find-living-thing", 0, "train")
STEP_LIMIT = 12


@pytest.fixture(scope="module")
def env() -> Iterator[ScienceWorld]:
    world = ScienceWorld(step_limit=STEP_LIMIT)
    yield world
    world.close()


@pytest.fixture(scope="module")
def gold(env) -> list[str]:
    env.reset(TASK, 0)
    return env.gold_path()


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    yield from serve()


def start(env: ScienceWorld, step_limit: int = STEP_LIMIT) -> Interaction:
    return Interaction(env, env.reset(TASK, 0), step_limit)


def agent_for(server: ChatServer, store: Store, **options) -> LLMAgent:
    client = ChatClient(
        store, model="test-model", api_key=server.api_key, base_url=server.base_url, backoff=0
    )
    return LLMAgent(client, **options)


def answers(actions: list[str]):
    """A responder answering the given actions in order, then STOP."""
    remaining = iter(actions)

    def respond(request):
        return {"thought": "following the plan", "action": next(remaining, "STOP")}

    return respond


def test_following_the_gold_path_solves_the_episode(env, gold, chat_server, store):
    chat_server.responder = answers(gold)
    agent = agent_for(chat_server, store)
    io = start(env)
    metadata = agent.play(io, random.Random(0), Guidance())
    assert env.success() and io.done
    assert agent.name == "openai:test-model"
    assert [t.action for t in io.taken] == gold
    assert all(t.thought == "following the plan" for t in io.taken)
    assert metadata["model"] == "test-model"
    assert metadata["calls"] == len(gold) == chat_server.request_count
    assert metadata["usage"]["prompt_tokens"] > 0
    assert metadata["stopped"] == "done"
    calls = store.calls(purpose=PURPOSE)
    assert len(calls) == len(gold)
    assert sorted(c.id for c in calls) == metadata["call_ids"]
    first = chat_server.prompt_text(0)
    assert io.instruction in first
    assert "This room is called the hallway" in first
    assert "Valid actions (" in first and f"\n{gold[0]}\n" in first
    assert "Guidance" not in first  # no guidance, no section
    assert f"1. > {gold[0]}" in chat_server.prompt_text(1)  # history


def test_a_rule_is_in_the_prompt_and_vetoes_its_action(env, gold, chat_server, store):
    rule = RuleForm(
        id="no-look",
        description="Do not look around; the observation already shows the room.",
        when_action="look around",
        response="veto",
    )
    chat_server.responder = answers(gold)
    io = start(env)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance(forms=[rule]))
    assert "Rule no-look: Do not look around" in chat_server.prompt_text(0)
    assert "look around" not in [t.action for t in io.taken]
    at = gold.index("look around")
    step = at + FIRST_ACTION_STEP  # the stored step it would have been
    assert io.uses == [{"artifact": "no-look", "kind": "rule", "step": step}]
    assert metadata["vetoed"] == [{"step": step, "action": "look around", "rule": "no-look"}]
    after_veto = chat_server.prompt_text(at + 1)
    assert "Rule no-look vetoed your action 'look around'" in after_veto
    assert env.success()


def test_a_replacing_rule_takes_its_action(env, gold, chat_server, store):
    rule = RuleForm(
        id="look-instead",
        when_action=re.escape(gold[3]),
        response="replace",
        replacement="look around",
    )
    chat_server.responder = answers(gold[:4])
    io = start(env)
    agent_for(chat_server, store).play(io, random.Random(0), Guidance(forms=[rule]))
    assert io.taken[3].action == "look around"
    assert io.taken[3].source == "rule:look-instead"
    assert io.uses == [{"artifact": "look-instead", "kind": "rule", "step": 3 + FIRST_ACTION_STEP}]


def test_a_rerun_is_answered_from_the_cache(env, gold, chat_server, store, db_path):
    chat_server.responder = answers(gold)
    agent_for(chat_server, store).play(start(env), random.Random(0), Guidance())
    sent = chat_server.request_count
    with Store(db_path) as again:  # another connection, as a worker process would open
        io = start(env)
        metadata = agent_for(chat_server, again).play(io, random.Random(0), Guidance())
    assert chat_server.request_count == sent
    assert env.success()
    assert metadata["cached_calls"] == metadata["calls"] == len(gold)
    assert metadata["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}


def test_an_invalid_action_is_grounded_to_the_closest_valid_one(env, gold, chat_server, store):
    assert gold[0].startswith("open door to ")
    typo = gold[0].replace("door to ", "door to the ")[:-1]  # "open door to the kitche"
    chat_server.responder = answers([typo, *gold[1:]])
    io = start(env)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance())
    assert io.taken[0].action == gold[0]
    assert metadata["grounded"] == [
        {"step": FIRST_ACTION_STEP, "proposed": typo, "action": gold[0], "how": "closest"}
    ]
    assert env.success()


def test_the_model_can_call_a_subagent(env, chat_server, store):
    explorer = DelegateForm(
        id="explorer",
        description="Walks through doors to find the kitchen.",
        success="called the kitchen",
        max_steps=4,
    )
    chat_server.responder = answers(["delegate explorer"])
    io = start(env)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance(forms=[explorer]))
    first = chat_server.prompt_text(0)
    assert "delegate <id>" in first and "(call with: delegate explorer)" in first
    assert io.uses == [{"artifact": "explorer", "kind": "subagent", "step": FIRST_ACTION_STEP}]
    assert io.taken and all(t.source == "subagent:explorer" for t in io.taken)
    [delegation] = metadata["delegations"]
    assert delegation["subagent"] == "explorer" and delegation["steps"] == len(io.taken)
    assert "Subagent explorer" in chat_server.prompt_text(1)
    assert metadata["stopped"] == "agent"


def test_a_subagent_written_with_a_prompt_runs_on_the_model_in_a_fresh_context(
    env, gold, chat_server, store
):
    """The parent's history stays with the parent: the subagent's own prompt holds its
    instructions and its named inputs; an action outside its tools is refused and returned."""
    seeker = DelegateForm(
        id="seeker",
        description="Looks for a living thing where it stands.",
        inputs=[{"name": "thing", "description": "what to look for"}],
        objective="find a {thing}",
        tools=["look at"],
        prompt="Look at what is here; never pick anything up.",
        success="a (?:{thing})",
        max_steps=3,
    )
    parent = answers([gold[0], "delegate seeker thing=tree"])
    sub = iter(
        [
            {"thought": "t", "action": "pick up the seed", "status": "continue", "found": ""},
            {"thought": "t", "action": "", "status": "failure", "found": "no tree in sight"},
        ]
    )

    def respond(request):
        if request["messages"][0]["content"].startswith("You are a subagent."):
            return next(sub)
        return parent(request)

    chat_server.responder = respond
    io = start(env)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance(forms=[seeker]))
    [delegation] = metadata["delegations"]
    assert delegation["inputs"] == {"thing": "tree"} and delegation["status"] == "failure"
    assert delegation["reason"] == "no tree in sight" and delegation["steps"] == 0
    [refused] = delegation["refused"]  # grounded on what the world lists, then refused
    assert refused.startswith("pick up ") and not any(t.action == refused for t in io.taken)
    assert io.delegations[0]["refused"] == [refused]  # recorded with the episode
    subagent_prompts = [
        r.messages
        for r in chat_server.requests
        if r.messages[0]["content"].startswith("You are a subagent.")
    ]
    assert len(subagent_prompts) == 2 and len(store.calls("agent.subagent")) == 2
    system, user = subagent_prompts[0]
    assert system["content"].endswith("never pick anything up.")
    assert "- thing: tree" in user["content"] and gold[0] not in user["content"]
    assert "was refused: it is not one of your tools (look at)" in subagent_prompts[1][1]["content"]
    assert "Subagent seeker failed after 0 steps: no tree in sight." in chat_server.prompt_text(-1)


def test_stop_ends_the_episode_without_a_step(env, chat_server, store):
    chat_server.responder = answers([])
    io = start(env)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance())
    assert io.taken == [] and metadata["stopped"] == "agent" and metadata["calls"] == 1


def test_the_step_limit_ends_the_episode(env, chat_server, store):
    chat_server.responder = lambda request: {"thought": "again", "action": "look around"}
    io = start(env, step_limit=3)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance())
    assert len(io.taken) == 3 and io.done and metadata["calls"] == 3


def test_an_action_with_no_word_is_not_grounded_but_asked_again(env, chat_server, store):
    # SmolLM2-135M, for real: {"thought": "...", "action" : "..."} (bench/real_model.py)
    chat_server.queue('{ "thought": "...", "action" : "..." }', {"thought": "t", "action": "wait"})
    chat_server.queue({"thought": "t", "action": ""})
    chat_server.responder = answers(["look around"])
    io = start(env)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance())
    assert [t.action for t in io.taken] == ["wait", "look around"]
    assert [e["proposed"] for e in metadata["empty"]] == ["...", ""]
    assert metadata["calls"] == 5 and "names no action" in chat_server.prompt_text(1)
    assert metadata["stopped"] == "agent"  # its STOP, not the empty answers


def test_a_second_answer_with_no_action_in_a_row_ends_the_episode(env, chat_server, store):
    chat_server.responder = lambda request: '{ "thought": "...", "action" : "..." }'
    io = start(env)
    metadata = agent_for(chat_server, store).play(io, random.Random(0), Guidance())
    assert io.taken == [] and metadata["stopped"] == "no-action" and metadata["calls"] == 2


def test_a_failing_model_raises(env, chat_server, store):
    chat_server.queue(http_error(400, "model not found"))
    with pytest.raises(ModelError, match="model not found"):
        agent_for(chat_server, store).play(start(env), random.Random(0), Guidance())


def test_temperature_sends_a_seed_from_the_episode_rng(env, chat_server, store):
    chat_server.responder = answers([])
    agent = agent_for(chat_server, store, temperature=0.8)
    agent.play(start(env), random.Random(1), Guidance())
    agent.play(start(env), random.Random(2), Guidance())
    seeds = [r.body["seed"] for r in chat_server.requests]
    assert len(set(seeds)) == 2 and chat_server.requests[0].body["temperature"] == 0.8


def test_the_prompt_fits_its_budget(env, gold):
    io = start(env)
    for action in gold[:5]:
        io.act(action)
    budget = PromptBudget(prompt_chars=3_000, history_steps=3, valid_actions=20)
    messages = build_prompt(io, Guidance(), env.valid_actions(), budget=budget)
    text = "".join(m["content"] for m in messages)
    assert len(text) <= 3_000
    user = messages[1]["content"]
    assert "History (2 earlier steps not shown):" in user
    assert f"5. > {gold[4]}" in user and f"3. > {gold[2]}" in user
    assert f"2. > {gold[1]}" not in user
    tight = build_prompt(io, Guidance(), env.valid_actions(), budget=PromptBudget(1_000))
    assert "History (5 earlier steps not shown):" in tight[1]["content"]


def test_sample_actions_gives_every_verb_a_turn_within_the_budget():
    valid = [f"connect agent to thing {i}" for i in range(500)] + ["look around", "wait"]
    chosen = sample_actions(valid, "the thing 250", count=5, chars=10_000)
    assert chosen == [
        "connect agent to thing 0",
        "connect agent to thing 1",
        "connect agent to thing 250",  # shares most words with the context
        "look around",
        "wait",
    ]
    assert sum(len(a) + 1 for a in sample_actions(valid, "", 100, 200)) <= 200


@pytest.mark.parametrize(
    ("proposed", "expected"),
    [
        ("go to kitchen", ("go to kitchen", "")),
        ("Go to the kitchen.", ("go to kitchen", "normalized")),
        ("`open door to kitchen`", ("open door to kitchen", "normalized")),
        ("open door to hallway", ("open door to hallway", "")),  # known words: passed on
        ("walk to the kitchen", ("go to kitchen", "closest")),
        ("open door to kitchn", ("open door to kitchen", "closest")),
    ],
)
def test_ground(proposed, expected):
    valid = ["go to kitchen", "go to hallway", "open door to kitchen", "look around", "wait"]
    assert ground(proposed, valid) == expected


def test_strict_grounding_maps_every_unlisted_action():
    valid = ["go to kitchen", "open door to kitchen"]
    assert ground("open door to hallway", [*valid, "go to hallway"], strict=True) == (
        "open door to kitchen",
        "closest",
    )
    assert ground("anything", []) == ("anything", "")


def test_closest_prefers_the_same_verb_then_shared_words():
    valid = ["move orange in inventory to red box", "move blue jay to red box", "focus on jay"]
    assert closest("move egg blue jay egg in inventory to red box", valid) == (
        "move blue jay to red box"
    )


def test_from_options_builds_the_agent_in_a_worker(env, chat_server, store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    monkeypatch.delenv("WORKBENCH_MODEL", raising=False)
    options = {
        "model": "worker-model",
        "base_url": chat_server.base_url,
        "backoff": 0,
        "history_steps": 2,
        "valid_actions": 7,
        "temperature": 0.0,
        "strict_grounding": True,
    }
    agent = LLMAgent.from_options(store, options)
    assert agent.name == "openai:worker-model"
    assert (agent.budget.history_steps, agent.budget.valid_actions) == (2, 7)
    assert agent.strict_grounding and agent.client.backoff == 0
    chat_server.responder = answers([])
    agent.play(start(env), random.Random(0), Guidance())
    assert chat_server.requests[0].body["model"] == "worker-model"
    assert "Valid actions (7 of " in chat_server.prompt_text(0)


MANUAL = """\
# Manual

## Moving between rooms
Doors may be closed: open a door before going through it.
"""


def test_the_manual_is_in_the_system_prompt_the_server_receives(env, chat_server, store):
    chat_server.responder = answers([])
    agent = agent_for(chat_server, store, manual=MANUAL)
    agent.play(start(env), random.Random(0), Guidance())
    system = chat_server.requests[0].messages[0]
    assert system["role"] == "system"
    assert "=== Manual ===\n# Manual\n\n## Moving between rooms\n" in system["content"]
    assert "open a door before going through it.\n=== End of manual ===" in system["content"]


def test_no_manual_means_no_manual_section(env):
    messages = build_prompt(start(env), Guidance(), env.valid_actions())
    assert "Manual" not in messages[0]["content"]


def test_a_long_manual_is_cut_to_its_share_of_the_budget(env):
    io = start(env)
    budget = PromptBudget(prompt_chars=3_000, valid_actions=20, manual_chars=2_000)
    long = MANUAL + "More advice.\n" * 500
    messages = build_prompt(io, Guidance(), env.valid_actions(), budget=budget, manual=long)
    system = messages[0]["content"]
    assert "Doors may be closed" in system and "[... cut]\n=== End of manual ===" in system
    assert len(manual_section(long, budget)) <= 1_000  # a third of the prompt, not 2_000
    assert len("".join(m["content"] for m in messages)) <= 3_000


def test_from_options_passes_the_manual(store, chat_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    options = {"model": "m", "base_url": chat_server.base_url, "manual": MANUAL}
    assert LLMAgent.from_options(store, options).manual == MANUAL
