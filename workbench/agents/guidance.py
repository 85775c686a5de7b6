"""Guidance: the active artifact repository as an agent sees it.

Three executable forms, all plain data (pydantic) that this module interprets — nothing an
artifact says is ever executed as code:

- :class:`RuleForm` — at one decision point, when the proposed action and the visible evidence
  match its trigger and its guard holds, it **vetoes** the action (the agent falls back to
  what it would otherwise do) or **replaces** it with one response action.
- :class:`ProcedureForm` (a skill) — when applicable, an ordered procedure the agent runs
  inside its own loop: steps in order, then a loop of steps until an observable result.
- :class:`DelegateForm` (a subagent) — a delegated objective run as a sub-policy of its own
  (:mod:`workbench.agents.subagents`): a fresh context holding only its named inputs, scoped
  tools, its own step budget, success/failure termination and a typed return.

Patterns are Python regular expressions. Evidence patterns may use ``{1}``, ``{2}``, … for the
groups the action pattern captured (inserted escaped); templates use the same placeholders.
Patterns and templates may also use ``{E1}``, ``{E2}``, … for the phrases the task's
instruction names, numbered as :func:`workbench.compare.normalize_action` numbers them, so one
artifact applies across the variations of a task. A subagent's own templates name its declared
inputs instead (``{target}``): the parent binds each input from what it matched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workbench.compare import entity_phrases
from workbench.envs.lexicon import Lexicon
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


Strategy = Literal["search-exits", "search-containers", "test-candidates", "wait-for-change"]
"""A subagent's offline policy, chosen from what the world offers (see
:mod:`workbench.agents.subagents`): walk through the exits room texts show, open the containers
on the way too, try an action on each candidate the world lists, or repeat an action until a
change shows."""

FORM_VERSION = 2
"""The stored format of :class:`DelegateForm`. Version 1 (no ``format``) bound its templates to
the parent's numbered groups and named its one strategy ``explore-exits`` or
``explore-rooms``; it is read as version 2 (see :func:`upgrade_delegate`)."""

INPUT_NAME = r"^[a-z][a-z0-9_]{0,39}$"
"""What an input may be called (a name, never a number)."""


class DelegateInput(BaseModel):
    """One declared input of a subagent."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=INPUT_NAME)
    """Its name (the templates write ``{name}``; the input schema's property)."""
    description: str = ""
    """What it is, in words."""
    bind: str = ""
    """How the parent fills it from what it matched: a template of the trigger's groups and
    the task's named phrases (``{1}``, ``{E2}``); empty: the caller passes it by name."""


class DelegateForm(_Form):
    """A delegated objective run as a sub-policy with a context of its own (a subagent)."""

    kind: Literal["subagent"] = "subagent"
    format: Literal[2] = FORM_VERSION
    """Stored format version (see :data:`FORM_VERSION`)."""
    inputs: list[DelegateInput] = Field(default_factory=list)
    """Its declared inputs: all it is given of the parent's state."""
    objective: str = ""
    """The objective, as a template over its inputs (e.g. ``reach the {target}``)."""
    strategy: Strategy = "search-exits"
    """Its policy offline (and wherever no model runs it)."""
    action: str = ""
    """The action template ``test-candidates`` tries on each candidate (``{candidate}``) and
    ``wait-for-change`` repeats; inputs may fill it too."""
    prompt: str = ""
    """Its own instructions when a model runs it (a fresh prompt with only its inputs, not the
    parent's history); empty: it runs its strategy."""
    tools: list[str] = Field(default_factory=lambda: ["move", "open", "check"])
    """What the subagent may do (its scope): action roles (``move``, ``open``, ``check``…, see
    :data:`workbench.envs.lexicon.Role`) read through the world's lexicon, or action prefixes
    (``go to``) that an action must start with. Anything else it proposes is refused and
    recorded."""
    success: str = ""
    """Regex (template over its inputs) on what it observes — the room text and its scene
    lines (``here: X``, ``exit: Y (open)``), or its latest observation — that ends its loop
    successfully."""
    max_steps: int = Field(default=30, ge=1)
    """Step budget; running out ends the loop as a failure."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: object) -> object:
        return upgrade_delegate(data) if isinstance(data, dict) else data


_OLD_STRATEGIES = {"explore-exits": "search-exits", "explore-rooms": "search-exits"}


def upgrade_delegate(data: dict) -> dict:
    """A stored subagent form of an older format as the current one: its numbered groups
    become named inputs bound to them (``{1}`` → ``{target}``), its strategy's old name the
    current one. Current forms pass unchanged."""
    if data.get("format", 1) != 1 or data.get("inputs"):
        return data
    data = dict(data)
    data["strategy"] = _OLD_STRATEGIES.get(data.get("strategy", ""), data.get("strategy"))
    if data["strategy"] is None:
        del data["strategy"]
    numbered = {p for key in ("objective", "success") for p in placeholders(data.get(key, ""))}
    used = sorted((p for p in numbered if not p.startswith("E")), key=int)
    names = {number: old_input_name(number, len(used)) for number in used}
    for key in ("objective", "success"):
        if key in data:
            data[key] = _PLACEHOLDER.sub(
                lambda m: "{" + names.get(m.group(1), m.group(1)) + "}", data[key]
            )
    data["inputs"] = [{"name": names[n], "bind": "{" + n + "}"} for n in used]
    data["format"] = FORM_VERSION
    return data


def old_input_name(number: str, count: int) -> str:
    """The name an older form's numbered group gets: ``target`` (``target_2``… when several)."""
    return "target" if count == 1 or number == "1" else f"target_{number}"


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
            names = " ".join(f"{i.name}=<{i.description or i.name}>" for i in delegate.inputs)
            call = f"delegate {delegate.id}" + (f" {names}" if names else "")
            lines.append(f"- Subagent {delegate.id}: {delegate.description} (call with: {call})")
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
_NAMED = re.compile(r"\{([a-z][a-z0-9_]{0,39})\}")


def placeholders(template: str) -> set[str]:
    """The placeholders a pattern or template uses (``1``, ``E2``...)."""
    return set(_PLACEHOLDER.findall(template))


def input_names(template: str) -> set[str]:
    """The named inputs a subagent's pattern or template uses (``target``...)."""
    return set(_NAMED.findall(template))


def neutral(pattern: str) -> str:
    """A pattern with its placeholders (numbered or named) replaced by a plain word (to check
    that it compiles)."""
    return _NAMED.sub("x", _PLACEHOLDER.sub("x", pattern))


def fill_inputs(template: str, inputs: dict[str, str], escape: bool) -> str:
    """``template`` with each ``{name}`` of a declared input replaced by its value (escaped
    for a pattern); other braces stay as they are."""

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in inputs:
            return found.group(0)
        return re.escape(inputs[name]) if escape else inputs[name]

    return _NAMED.sub(value, template)


def bind_inputs(form: DelegateForm, groups: tuple[str, ...]) -> dict[str, str]:
    """The subagent's inputs as the parent fills them from what its pattern matched (each
    input's ``bind`` template over the groups and the task's named phrases)."""
    return {i.name: _fill(i.bind, groups, False) for i in form.inputs if i.bind}


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
