"""Guidance: the active artifact repository as an agent sees it.

Three executable forms, all plain data (pydantic) that this module interprets — nothing an
artifact says is ever executed as code:

- :class:`RuleForm` — at one decision point, when the proposed action and the visible evidence
  match its trigger and its guard holds, it **vetoes** the action (the agent falls back to
  what it would otherwise do) or **replaces** it with one response action.
- :class:`ProcedureForm` (a skill) — when applicable, an ordered procedure the agent runs
  inside its own loop: steps in order, then a loop of steps until an observable result.
- :class:`DelegateForm` (a subagent) — a delegated objective run as its own loop with
  private state, scoped tools and success/failure termination, returning a structured result.

Patterns are Python regular expressions. Evidence patterns may use ``{1}``, ``{2}``, … for the
groups the action pattern captured (inserted escaped); templates use the same placeholders.
Patterns and templates may also use ``{E1}``, ``{E2}``, … for the phrases the task's
instruction names, numbered as :func:`workbench.compare.normalize_action` numbers them, so one
artifact applies across the variations of a task.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from workbench.compare import entity_phrases
from workbench.envs.lexicon import OPPOSITE, ROLES, Exit, Lexicon, Scene
from workbench.envs.registry import INSTALLED

STOP = "STOP"
"""The proposed action of an agent that wants to end the episode."""


class _Form(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    """Artifact id (stable across versions)."""

    description: str = ""
    """What the artifact does, in words (what an LLM agent is shown)."""

    when_action: str = ".*"
    """Regex the proposed action must match in full (its groups feed the templates)."""

    when_evidence: str = ""
    """Regex that must be found in the visible evidence; empty: no condition."""

    unless_evidence: str = ""
    """Regex that must *not* be found in the visible evidence (the guard); empty: no guard."""


class RuleForm(_Form):
    """One local decision: veto or replace the proposed action when the trigger holds."""

    kind: Literal["rule"] = "rule"
    response: Literal["veto", "replace"] = "veto"
    """What the rule does when it fires."""
    replacement: str = ""
    """Template of the action that replaces the proposed one (``response="replace"``)."""


class ProcedureForm(_Form):
    """An ordered procedure run inside the agent's loop (a skill)."""

    kind: Literal["skill"] = "skill"
    steps: list[str] = Field(default_factory=list)
    """Action templates run once, in order."""
    loop: list[str] = Field(default_factory=list)
    """Action templates repeated until ``until`` is observed (at most ``max_rounds`` times)."""
    until: str = ""
    """Regex on the latest observation that marks the expected result."""
    max_rounds: int = Field(default=10, ge=1)
    """Most repetitions of ``loop``."""


class DelegateForm(_Form):
    """A delegated objective run in its own loop with private state (a subagent)."""

    kind: Literal["subagent"] = "subagent"
    objective: str = ""
    """The objective, as a template (e.g. ``reach the {1}``)."""
    strategy: Literal["explore-exits", "explore-rooms"] = "explore-exits"
    """The delegated loop's policy. ``explore-exits``: depth first through the exits the
    world's room texts show (opening closed ones, going back the way it came) until the room
    text or its scene lines match ``success``; its private state is the places visited and the
    way back. ``explore-rooms`` is its older name (forms stored before it was renamed)."""
    tools: list[str] = Field(default_factory=lambda: ["move", "open", "check"])
    """What the subagent may do (its scope): action roles (``move``, ``open``, ``check``…, see
    :data:`workbench.envs.lexicon.Role`) read through the world's lexicon, or action prefixes
    (``go to``) that an action must start with."""
    success: str = ""
    """Regex (template) on the room text and its scene lines (``here: X``, ``exit: Y (open)``)
    that ends the loop successfully."""
    max_steps: int = Field(default=30, ge=1)
    """Step budget; running out ends the loop as a failure."""


Form = Annotated[RuleForm | ProcedureForm | DelegateForm, Field(discriminator="kind")]


class Guidance(BaseModel):
    """The artifacts an agent follows, in the order they are consulted."""

    model_config = ConfigDict(extra="forbid")

    forms: list[Form] = Field(default_factory=list)

    @property
    def rules(self) -> list[RuleForm]:
        return [f for f in self.forms if isinstance(f, RuleForm)]

    @property
    def procedures(self) -> list[ProcedureForm]:
        return [f for f in self.forms if isinstance(f, ProcedureForm)]

    @property
    def delegates(self) -> list[DelegateForm]:
        return [f for f in self.forms if isinstance(f, DelegateForm)]

    def as_text(self) -> str:
        """The guidance as prompt text (how an LLM agent receives it)."""
        lines = []
        for rule in self.rules:
            lines.append(f"- Rule {rule.id}: {rule.description}")
        for skill in self.procedures:
            steps = "; ".join([*skill.steps, *(f"repeat {s}" for s in skill.loop)])
            lines.append(f"- Skill {skill.id}: {skill.description} Steps: {steps}")
        for delegate in self.delegates:
            lines.append(
                f"- Subagent {delegate.id}: {delegate.description} (call with: delegate {delegate.id})"
            )
        return "\n".join(lines)


# -- interpretation ---------------------------------------------------------------------------


@dataclass
class Evidence:
    """What the agent can see at a decision point (the parent-visible state)."""

    instruction: str
    observation: str
    look: str = ""
    inventory: str = ""
    score: float = 0.0
    history: list[tuple[str, str]] = field(default_factory=list)
    """Recent ``(action, observation)`` pairs, oldest first."""
    scene: Callable[[], tuple[str, str]] | None = field(default=None, repr=False, compare=False)
    """Reads ``(look, inventory)`` the first time the text is needed, instead of up front
    (each costs a simulator call, and most decisions never search the evidence)."""
    lexicon: Lexicon | None = field(default=None, repr=False, compare=False)
    """How the world's room texts read; ``None``: by whichever installed world reads them."""

    def text(self) -> str:
        """The evidence as one text that patterns search. The room text is followed by its
        scene lines (``here: X``, ``exit: Y (closed)``), the same shape in every world."""
        if self.scene is not None:
            self.look, self.inventory = self.scene()
            self.scene = None
        recent = "\n".join(f"> {a}\n{o}" for a, o in self.history[-6:])
        found = (self.lexicon or INSTALLED).scene(self.look) if self.look else None
        lines = f"\n{found.as_text()}" if found is not None else ""
        return (
            f"instruction: {self.instruction}\nobservation: {self.observation}\n"
            f"look: {self.look}{lines}\ninventory: {self.inventory}\nscore: {self.score:g}\n"
            f"history:\n{recent}"
        )


class Bindings(tuple[str, ...]):
    """The groups an action pattern captured, with the instruction's entity phrases."""

    entities: dict[str, str]

    def __new__(cls, groups: tuple[str, ...], entities: dict[str, str]) -> Bindings:
        bound = super().__new__(cls, groups)
        bound.entities = entities
        return bound


_PLACEHOLDER = re.compile(r"\{(E?\d+)\}")


def placeholders(template: str) -> set[str]:
    """The placeholders a pattern or template uses (``1``, ``E2``...)."""
    return set(_PLACEHOLDER.findall(template))


def neutral(pattern: str) -> str:
    """A pattern with its placeholders replaced by a plain word (to check that it compiles)."""
    return _PLACEHOLDER.sub("x", pattern)


def _fill(template: str, groups: tuple[str, ...], escape: bool) -> str:
    entities = getattr(groups, "entities", {})

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("E"):
            text = entities.get(name, "")
        else:
            index = int(name) - 1
            text = groups[index] if 0 <= index < len(groups) else ""
        return re.escape(text) if escape else text

    return _PLACEHOLDER.sub(value, template)


def match(form: _Form, action: str, evidence: Evidence) -> Bindings | None:
    """The action pattern's groups when ``form`` applies to ``action`` here, else ``None``."""
    entities = entity_phrases(evidence.instruction)
    found = re.fullmatch(_fill(form.when_action, Bindings((), entities), True), action)
    if found is None:
        return None
    groups = Bindings(tuple(g or "" for g in found.groups()), entities)
    text = evidence.text()
    if form.when_evidence and not re.search(_fill(form.when_evidence, groups, True), text):
        return None
    if form.unless_evidence and re.search(_fill(form.unless_evidence, groups, True), text):
        return None
    return groups


@dataclass
class Verdict:
    """What a rule decided about a proposed action."""

    rule: RuleForm
    response: Literal["veto", "replace"]
    action: str = ""
    """The replacement action (``replace`` only)."""


def review(guidance: Guidance, action: str, evidence: Evidence) -> Verdict | None:
    """The first rule that fires on ``action``, if any."""
    for rule in guidance.rules:
        groups = match(rule, action, evidence)
        if groups is not None:
            replacement = (
                _fill(rule.replacement, groups, False) if rule.response == "replace" else ""
            )
            return Verdict(rule, rule.response, replacement)
    return None


Act = Callable[[str, str], str]
"""Takes ``(action, thought)``, performs it, returns the observation."""


def run_procedure(
    form: ProcedureForm, groups: tuple[str, ...], act: Act, done: Callable[[], bool]
) -> bool:
    """Run a skill; returns whether its expected result was observed."""
    until = _fill(form.until, groups, True)
    observation = ""
    for template in form.steps:
        if done():
            return False
        observation = act(_fill(template, groups, False), f"skill {form.id}: step")
    if not form.loop:
        return not until or re.search(until, observation) is not None
    for _ in range(form.max_rounds):
        if until and re.search(until, observation):
            return True
        for template in form.loop:
            if done():
                return False
            observation = act(
                _fill(template, groups, False), f"skill {form.id}: repeat until result"
            )
    return bool(until) and re.search(until, observation) is not None


@dataclass
class DelegateResult:
    """The structured return of a subagent."""

    success: bool
    steps: int
    visited: list[str]
    reason: str


def way_back(taken: Exit, left: Scene, arrived: Scene) -> Exit | None:
    """The exit of ``arrived`` that returns through ``taken``: the one named after the place
    left (worlds that name exits by room), else the opposite compass direction."""
    for name in (left.location, OPPOSITE.get(taken.name.lower(), "")):
        back = next((e for e in arrived.exits if name and e.name.lower() == name.lower()), None)
        if back is not None and back.go:
            return back
    return None


class _Explorer:
    """A depth-first walk through exits: the subagent's private ledger."""

    def __init__(self, form: DelegateForm, lexicon: Lexicon, use: Callable[[str], str]) -> None:
        self.form, self.lexicon, self.use = form, lexicon, use
        self.visited: list[str] = []
        self.tried: set[tuple[str, str]] = set()
        self.trail: list[str] = []
        """Actions that go back, from here to the start (last first)."""

    def untried(self, scene: Scene) -> Exit | None:
        """The first exit of ``scene`` not taken yet that leads somewhere not visited."""
        for way in scene.exits:
            if (scene.location, way.name) in self.tried or way.state == "locked":
                continue
            if way.name in self.visited or not way.go:
                continue
            return way
        return None

    def go(self, scene: Scene, way: Exit, look: Callable[[], str]) -> str:
        """Take ``way`` (opening it first), remembering how to come back; the room text
        where it arrived."""
        self.tried.add((scene.location, way.name))
        if way.state == "closed" and way.open:
            self.use(way.open)
        self.use(way.go)
        room_text = look()
        arrived = self.lexicon.scene(room_text)
        back = way_back(way, scene, arrived) if arrived is not None else None
        if arrived is not None and arrived.location != scene.location and back is not None:
            self.tried.add((arrived.location, back.name))
            self.trail.append(back.go)
        return room_text


def run_delegate(
    form: DelegateForm,
    groups: tuple[str, ...],
    act: Act,
    look: Callable[[], str],
    done: Callable[[], bool],
    lexicon: Lexicon | None = None,
) -> DelegateResult:
    """Run a subagent's loop. It sees only its declared inputs (``groups``), its own
    observations and the room texts (read through ``lexicon``, the world's; without one, by
    whichever installed world reads them, see :data:`~workbench.envs.registry.INSTALLED`); it
    may use only its scoped tools."""
    goal = re.compile(_fill(form.success, groups, True)) if form.success else None
    steps = 0

    def use(action: str) -> str:
        nonlocal steps
        if not _allowed(form, action, reader):
            raise PermissionError(f"subagent {form.id} may not use {action!r}")
        steps += 1
        return act(action, f"subagent {form.id}: {_fill(form.objective, groups, False)}")

    reader = lexicon or INSTALLED
    walk = _Explorer(form, reader, use)
    arrived: str | None = None  # the room text read on arriving, not read twice
    while steps < form.max_steps and not done():
        room_text = arrived if arrived is not None else look()
        arrived = None
        scene = reader.scene(room_text)
        here = scene.location if scene is not None else "?"
        if here not in walk.visited:
            walk.visited.append(here)
        seen = room_text + ("\n" + scene.as_text() if scene is not None else "")
        if goal is not None and goal.search(seen):
            return DelegateResult(True, steps, walk.visited, f"objective reached in the {here}")
        way = walk.untried(scene) if scene is not None else None
        if way is not None:
            arrived = walk.go(scene, way, look)
        elif walk.trail:
            use(walk.trail.pop())
        else:
            return DelegateResult(False, steps, walk.visited, "explored every reachable room")
    return DelegateResult(
        False, steps, walk.visited, "step budget exhausted" if not done() else "episode ended"
    )


def _allowed(form: DelegateForm, action: str, lexicon: Lexicon) -> bool:
    """Whether ``action`` is in the subagent's scope (a role it may play, or a prefix)."""
    if lexicon.role(action).role in set(form.tools) & ROLES:
        return True
    return any(action.startswith(tool) for tool in form.tools if tool not in ROLES)
