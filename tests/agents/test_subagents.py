"""Subagents as sub-policies: each offline strategy on a small world of its kind, the scope
they run in (tools refused and recorded, their own budget, their inputs only), and a model
subagent on a prompt of its own, against the scripted chat server."""

from __future__ import annotations

from store import Store
from tests.agents.test_guidance import KITCHEN, NAV, House, world_of
from tests.llm_server import ChatServer
from workbench.admit.gates import conforms
from workbench.agents.guidance import DelegateForm
from workbench.agents.llm import SUBAGENT_PURPOSE, ModelSubagent
from workbench.agents.subagents import RETURN_SCHEMA, World, run_subagent
from workbench.envs.lexicon import PLAIN
from workbench.llm import ChatClient


class Shed:
    """One room of closed containers; the key is in the crate."""

    def __init__(self) -> None:
        self.actions: list[str] = []
        self.opened: set[str] = set()

    def valid(self) -> list[str]:
        return [f"open {c}" for c in ("chest", "crate", "door to the yard") if c not in self.opened]

    def act(self, action: str, thought: str) -> str:
        self.actions.append(action)
        thing = action.removeprefix("open ")
        self.opened.add(thing)
        return "You open the crate. Inside is a brass key." if thing == "crate" else "It is empty."


def test_search_containers_opens_what_the_world_lists_but_no_way_out():
    shed = Shed()
    form = DelegateForm(
        id="find-key",
        inputs=[{"name": "thing"}],
        strategy="search-containers",
        tools=["open"],
        success=r"(?i){thing}",
    )
    result = run_subagent(form, {"thing": "key"}, World(shed.act, str, shed.valid, lambda: False))
    assert result.success and result.found == "You open the crate. Inside is a brass key."
    assert shed.actions == ["open chest", "open crate"]  # never the door: a way out, not a box
    assert result.visited == ["chest", "crate"]
    assert conforms(result.returned(), RETURN_SCHEMA) == []


class Bench:
    """Three wires; only the copper one lights the bulb."""

    def __init__(self) -> None:
        self.actions: list[str] = []

    def valid(self) -> list[str]:
        return [f"connect battery to {w} wire" for w in ("iron", "copper", "glass")] + ["wait"]

    def act(self, action: str, thought: str) -> str:
        self.actions.append(action)
        return "The bulb lights up." if "copper" in action else "Nothing happens."


def test_test_candidates_tries_each_candidate_the_world_offers_in_turn():
    bench = Bench()
    form = DelegateForm(
        id="find-conductor",
        strategy="test-candidates",
        action="connect battery to {candidate} wire",
        tools=["connect"],
        success="bulb lights",
    )
    world = World(bench.act, str, bench.valid, lambda: False)
    result = run_subagent(form, {}, world, PLAIN)
    assert result.success and result.reason == "'copper' passed"
    assert result.visited == ["iron", "copper"] and len(bench.actions) == 2
    nothing = form.model_copy(update={"success": "sparks fly"})
    exhausted = run_subagent(nothing, {}, World(Bench().act, str, bench.valid, lambda: False))
    assert not exhausted.success and exhausted.reason == "tried every candidate (3)"


def test_wait_for_change_repeats_its_action_until_the_change_shows_or_its_budget_ends():
    readings = iter(["The water is warm.", "The water is hot.", "The water boils."])
    form = DelegateForm(
        id="wait-boil", strategy="wait-for-change", action="wait", tools=["wait"], success="boils"
    )
    world = World(lambda a, t: next(readings), str, list, lambda: False)
    result = run_subagent(form, {}, world)
    assert result.success and result.steps == 3 and result.found == "The water boils."
    short = form.model_copy(update={"max_steps": 2})
    cold = World(lambda a, t: "The water is cold.", str, list, lambda: False)
    assert run_subagent(short, {}, cold).reason == "step budget spent"


def turn(action: str = "", status: str = "continue", found: str = "") -> dict:
    return {"thought": "t", "action": action, "status": status, "found": found}


def model(chat_server: ChatServer, store: Store) -> ModelSubagent:
    client = ChatClient(
        store, model="m", api_key=chat_server.api_key, base_url=chat_server.base_url, backoff=0
    )
    return ModelSubagent(client)


def test_a_model_subagent_sees_only_its_inputs_and_its_own_steps(
    chat_server: ChatServer, store: Store
):
    """Fresh context: its prompt holds its instructions, its inputs and its own steps, never
    the parent's; success is read from what the world shows, not from its claim."""
    chat_server.queue(
        turn("go to kitchen"),  # the door is closed: it stays in the hallway
        turn(status="success", found="I am there"),  # not so: the claim is not taken
        turn("open door to kitchen"),
        turn("go to kitchen"),
    )
    house = House()
    walker = NAV.model_copy(update={"prompt": "Open the door, then go through it."})
    result = run_subagent(
        walker, {"room": "kitchen"}, world_of(house), policy=model(chat_server, store)
    )
    system, user = chat_server.requests[0].messages
    assert system["content"].endswith("Open the door, then go through it.")
    assert "Inputs (all you are given):\n- room: kitchen" in user["content"]
    assert "Your steps so far:\n(none yet)" in user["content"]
    assert "Note: Your success condition is not observed yet" in chat_server.prompt_text(2)
    assert "1. > go to kitchen\nok" in chat_server.prompt_text(1)  # its own step only
    assert result.success and result.found == KITCHEN.splitlines()[0]
    assert house.actions == ["go to kitchen", "open door to kitchen", "go to kitchen"]
    assert len(store.calls(SUBAGENT_PURPOSE)) == 4 and chat_server.request_count == 4


def test_tools_bound_what_a_model_subagent_may_do(chat_server: ChatServer, store: Store):
    chat_server.responder = lambda request: turn("open door to kitchen")
    house = House()
    walker = NAV.model_copy(update={"tools": ["go to"], "prompt": "Go.", "max_steps": 3})
    policy = model(chat_server, store)
    result = run_subagent(walker, {"room": "kitchen"}, world_of(house), policy=policy)
    assert not result.success and result.reason == "step budget spent"
    assert result.refused == ["open door to kitchen"] * 6 and house.actions == []
    assert "was refused: it is not one of your tools (go to)" in chat_server.prompt_text(1)
