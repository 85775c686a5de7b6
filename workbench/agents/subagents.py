"""Subagents: a delegated objective run as a sub-policy of its own.

A parent — the scripted agent, the LLM agent, the contract gate — hands a subagent only its
declared inputs (:func:`~workbench.agents.guidance.bind_inputs`) and the world
(:class:`World`). The subagent runs in a :class:`Scope`:

- a **fresh context**: its inputs and its own observations, never the parent's history;
- its **tools**: an allow-list of action roles (read through the world's lexicon) or action
  prefixes; an action outside it is refused — not taken — and recorded in its return;
- its **own loop and step budget** (``max_steps``): running out ends it as a failure;
- a **typed return** (:class:`SubagentResult`, :data:`RETURN_SCHEMA`): success or failure,
  what it found and where, the places or candidates it went through, what it was refused.

Offline its policy is one of four strategies (:data:`STRATEGIES`), chosen at compilation from
what the world offers in the cluster's runs:

========================  ==========================================================================
``search-exits``          depth first through the exits the room texts show (opening closed ones,
                          coming back the way it went) until what it sees matches its success
``search-containers``     the same walk, opening every closed container the world lists on the way
``test-candidates``       its action on each candidate the world's valid actions offer, in order,
                          until an observation shows success
``wait-for-change``       its action again and again until an observation shows the change
========================  ==========================================================================

With a model it is an LLM agent with its own prompt (:class:`workbench.agents.llm.ModelSubagent`)
in the same scope. Success is read from what the world shows, never from a policy's claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.agents.guidance import Act, DelegateForm, fill_inputs
from workbench.envs.lexicon import OPPOSITE, ROLES, Exit, Lexicon, Scene
from workbench.envs.registry import INSTALLED

RETURN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["status", "steps", "found", "where", "visited", "refused", "reason"],
    "properties": {
        "status": {"enum": ["success", "failure"]},
        "steps": {"type": "integer", "minimum": 0},
        "found": {"type": "string"},
        "where": {"type": "string"},
        "visited": {"type": "array", "items": {"type": "string"}},
        "refused": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    },
    "additionalProperties": False,
}
"""What every subagent of this runtime returns."""

RETURN_SCHEMA_V1: dict[str, Any] = {
    "type": "object",
    "required": ["status", "steps", "visited", "reason"],
    "properties": {
        "status": {"enum": ["success", "failure"]},
        "steps": {"type": "integer", "minimum": 0},
        "visited": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    },
    "additionalProperties": False,
}
"""What subagents of the first stored format returned (read as :data:`RETURN_SCHEMA`)."""

CANDIDATE = "{candidate}"
"""Where ``test-candidates`` puts each candidate in its action template."""


@dataclass(frozen=True)
class World:
    """What a parent hands a subagent of the world."""

    act: Act
    """Performs an action (recorded as the subagent's) and returns the observation."""
    look: Callable[[], str]
    """The current room text (costs no step)."""
    valid: Callable[[], list[str]]
    """The actions the world accepts now (empty when it does not say)."""
    done: Callable[[], bool]
    """Whether the episode is over."""


@dataclass
class SubagentResult:
    """A subagent's typed return (:data:`RETURN_SCHEMA`)."""

    status: Literal["success", "failure"]
    steps: int
    """World steps it took."""
    found: str = ""
    """What it found: the observed line that met its objective (success), else empty."""
    where: str = ""
    """The place it ended in (empty when the world does not say)."""
    visited: list[str] = field(default_factory=list)
    """Its ledger: the places it went through, or the candidates it tried."""
    refused: list[str] = field(default_factory=list)
    """Actions it proposed outside its tools (refused, never taken)."""
    reason: str = ""
    context: dict[str, Any] = field(default_factory=dict)
    """What it was given when it started (its inputs and its own history, empty): shown to
    the contract gate, not part of the return."""

    @property
    def success(self) -> bool:
        return self.status == "success"

    def returned(self) -> dict[str, Any]:
        """The return as its schema has it."""
        return {key: getattr(self, key) for key in RETURN_SCHEMA["properties"]}


class OutOfBudget(Exception):
    """The subagent's step budget is spent, or the episode is over."""


class Scope:
    """A subagent's side of the world: its inputs, its tools, its budget, its own history."""

    def __init__(
        self, form: DelegateForm, inputs: dict[str, str], world: World, lexicon: Lexicon
    ) -> None:
        self.form, self.inputs, self.world, self.lexicon = form, dict(inputs), world, lexicon
        self.steps = 0
        self.turns = 0
        """Proposals it made, refused ones included (bounded too)."""
        self.refused: list[str] = []
        self.history: list[tuple[str, str]] = []
        """Its own ``(action, observation)`` pairs: its whole context of the past."""
        self.visited: list[str] = []
        self.where = ""
        self.objective = fill_inputs(form.objective, self.inputs, False)
        success = fill_inputs(form.success, self.inputs, True)
        self.goal = re.compile(success) if success else None
        self.context: dict[str, Any] = {"inputs": dict(self.inputs), "history": []}

    def allowed(self, action: str) -> bool:
        """Whether ``action`` is one of its tools (a role it may play, or a prefix)."""
        if self.lexicon.role(action).role in set(self.form.tools) & ROLES:
            return True
        return any(action.startswith(tool) for tool in self.form.tools if tool not in ROLES)

    @property
    def exhausted(self) -> bool:
        """Whether its budget is spent or the episode is over."""
        limit = self.form.max_steps
        return self.steps >= limit or self.turns >= 2 * limit or self.world.done()

    def act(self, action: str) -> str | None:
        """Take ``action`` if it is one of its tools (``None``: refused, and recorded).

        Raises:
            OutOfBudget: its budget is spent or the episode is over.
        """
        if self.exhausted:
            raise OutOfBudget()
        self.turns += 1
        if not self.allowed(action):
            self.refused.append(action)
            return None
        self.steps += 1
        observation = self.world.act(action, f"subagent {self.form.id}: {self.objective}")
        self.history.append((action, observation))
        return observation

    def look(self) -> str:
        """The current room text, noting where it is."""
        text = self.world.look()
        scene = self.lexicon.scene(text)
        if scene is not None:
            self.where = scene.location
        return text

    def options(self) -> list[str]:
        """The actions the world accepts now that are among its tools."""
        return [a for a in self.world.valid() if self.allowed(a)]

    def reached(self, text: str) -> str | None:
        """The line of ``text`` (a room text with its scene lines, or an observation) that
        shows its success, if any."""
        if self.goal is None or not text:
            return None
        scene = self.lexicon.scene(text)
        seen = text + ("\n" + scene.as_text() if scene is not None else "")
        found = self.goal.search(seen)
        if found is None:
            return None
        at = found.start() + len(found.group()) - len(found.group().lstrip("\n"))
        start = seen.rfind("\n", 0, at) + 1
        end = seen.find("\n", at)
        return seen[start : end if end >= 0 else len(seen)].strip()

    def result(self, success: bool, reason: str, found: str = "") -> SubagentResult:
        """Its return, with its ledger, refusals and the context it started from."""
        return SubagentResult(
            status="success" if success else "failure",
            steps=self.steps,
            found=found,
            where=self.where,
            visited=list(self.visited),
            refused=list(self.refused),
            reason=reason,
            context=self.context,
        )


Policy = Callable[[Scope], SubagentResult]
"""How a subagent decides: an offline strategy or a model (it acts only through its scope)."""


def run_subagent(
    form: DelegateForm,
    inputs: dict[str, str],
    world: World,
    lexicon: Lexicon | None = None,
    policy: Policy | None = None,
) -> SubagentResult:
    """Run a subagent on its declared ``inputs`` in ``world`` (read through ``lexicon``, the
    world's; without one, by whichever installed world reads its texts), by ``policy`` or
    else its offline strategy. It ends with success, or failure when its budget is spent,
    the episode ends, or its strategy has nothing left to try."""
    scope = Scope(form, inputs, world, lexicon or INSTALLED)
    missing = [i.name for i in form.inputs if not scope.inputs.get(i.name)]
    if missing:
        return scope.result(False, f"missing inputs: {', '.join(missing)}")
    try:
        return (policy or STRATEGIES[form.strategy])(scope)
    except OutOfBudget:
        return scope.result(False, "episode ended" if world.done() else "step budget spent")


def delegation_record(
    form: DelegateForm, inputs: dict[str, str], result: SubagentResult, step: int
) -> dict[str, Any]:
    """What a parent records of a delegation (its episode's ``guidance_delegations``)."""
    return {"artifact": form.id, "step": step, "inputs": dict(inputs), **result.returned()}


# -- offline strategies -----------------------------------------------------------------------


def way_back(taken: Exit, left: Scene, arrived: Scene) -> Exit | None:
    """The exit of ``arrived`` that returns through ``taken``: the one named after the place
    left (worlds that name exits by room), else the opposite compass direction."""
    for name in (left.location, OPPOSITE.get(taken.name.lower(), "")):
        back = next((e for e in arrived.exits if name and e.name.lower() == name.lower()), None)
        if back is not None and back.go:
            return back
    return None


class _Walk:
    """A depth-first walk through exits: the subagent's private ledger of ways tried and the
    way back."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.tried: set[tuple[str, str]] = set()
        self.trail: list[str] = []
        """Actions that go back, from here to the start (last first)."""

    def untried(self, scene: Scene) -> Exit | None:
        """The first exit of ``scene`` not taken yet that leads somewhere not visited."""
        for way in scene.exits:
            if (scene.location, way.name) in self.tried or way.state == "locked":
                continue
            if way.name in self.scope.visited or not way.go:
                continue
            return way
        return None

    def go(self, scene: Scene, way: Exit) -> str | None:
        """Take ``way`` (opening it first), remembering how to come back; the room text
        where it arrived (``None`` when its tools do not let it through)."""
        self.tried.add((scene.location, way.name))
        if way.state == "closed" and way.open and self.scope.act(way.open) is None:
            return None
        if self.scope.act(way.go) is None:
            return None
        room_text = self.scope.look()
        arrived = self.scope.lexicon.scene(room_text)
        back = way_back(way, scene, arrived) if arrived is not None else None
        if arrived is not None and arrived.location != scene.location and back is not None:
            self.tried.add((arrived.location, back.name))
            self.trail.append(back.go)
        return room_text


def search_exits(scope: Scope) -> SubagentResult:
    """Depth first through the exits the room texts show until what it sees matches its
    success; failure once every reachable place is covered."""
    return _search(scope, containers=False)


def search_containers(scope: Scope) -> SubagentResult:
    """The exit search, opening every closed container the world lists in each place."""
    return _search(scope, containers=True)


def _search(scope: Scope, containers: bool) -> SubagentResult:
    walk = _Walk(scope)
    opened: set[str] = set()
    arrived: str | None = None  # the room text read on arriving, not read twice
    while True:
        room_text = arrived if arrived is not None else scope.look()
        arrived = None
        if scope.where and scope.where not in scope.visited:
            scope.visited.append(scope.where)
        found = scope.reached(room_text)
        if found is None and containers:
            found = _open_containers(scope, opened)
        if found is not None:
            return scope.result(True, f"objective reached in the {scope.where or 'place'}", found)
        scene = scope.lexicon.scene(room_text)
        way = walk.untried(scene) if scene is not None else None
        if way is not None:
            arrived = walk.go(scene, way)
        elif walk.trail:
            scope.act(walk.trail.pop())
        else:
            return scope.result(False, "covered every reachable place")


def _open_containers(scope: Scope, opened: set[str]) -> str | None:
    """Open each closed thing the world lists here that is no way out; what it shows if one
    holds the objective."""
    for action in scope.options():
        role = scope.lexicon.role(action)
        if role.role != "open" or scope.lexicon.is_navigation(action) or action in opened:
            continue
        opened.add(action)
        observation = scope.act(action)
        if observation is None:
            continue
        scope.visited.append(role.target)
        found = scope.reached(observation) or scope.reached(scope.look())
        if found is not None:
            return found
    return None


def try_candidates(scope: Scope) -> SubagentResult:
    """Its action on each candidate the world's valid actions offer, in their order, until an
    observation shows success; failure once every candidate is tried."""
    template = fill_inputs(scope.form.action, scope.inputs, False)
    if CANDIDATE not in template:
        return scope.result(False, f"its action {template!r} names no {CANDIDATE}")
    head, tail = (re.escape(part) for part in template.split(CANDIDATE, 1))
    pattern = re.compile(f"{head}(.+?){tail}")
    tried: list[str] = []
    while True:
        fresh = [
            found.group(1)
            for action in scope.options()
            if (found := pattern.fullmatch(action)) and found.group(1) not in tried
        ]
        if not fresh:
            return scope.result(False, f"tried every candidate ({len(tried)})")
        candidate = fresh[0]
        tried.append(candidate)
        scope.visited.append(candidate)
        observation = scope.act(template.replace(CANDIDATE, candidate))
        found = scope.reached(observation or "")
        if found is not None:
            return scope.result(True, f"'{candidate}' passed", found)


def wait_for_change(scope: Scope) -> SubagentResult:
    """Its action again and again until an observation (or the room text) shows the change;
    failure when its budget runs out first."""
    action = fill_inputs(scope.form.action, scope.inputs, False)
    if not action:
        return scope.result(False, "it has no action to repeat")
    while True:
        observation = scope.act(action)
        if observation is None:
            return scope.result(False, f"its action {action!r} is not one of its tools")
        scope.visited.append(observation.splitlines()[0][:80] if observation else "")
        found = scope.reached(observation) or scope.reached(scope.look())
        if found is not None:
            return scope.result(True, "the change showed", found)


STRATEGIES: dict[str, Policy] = {
    "search-exits": search_exits,
    "search-containers": search_containers,
    "test-candidates": try_candidates,
    "wait-for-change": wait_for_change,
}
"""The offline policies by :data:`~workbench.agents.guidance.Strategy` name."""
