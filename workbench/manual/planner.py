"""AutoManual's Planner: an agent whose plan is Python code, run against the environment.

At the start of an episode the Planner receives the rules (the manual), the library entry of
the most similar task of its type (:func:`~workbench.manual.library.library_note`: a skill's
code, else a reflection), the task and the first observation. Each *cycle* it answers in the
paper's four parts (:class:`PlannerReply`): **Analysis** of the situation (and of earlier
errors), the **Related Rules** it relies on (by id), the **Overall Plan**, and the **Code**
— a block of Python calling a narrow environment API (:mod:`workbench.manual.sandbox`),
run in a limited child process whose calls are relayed here, where the manual's executable
rules review every action as they do for any agent (:class:`Relay`). What the code did is the
next cycle's feedback; cycles go on until the episode ends or :attr:`PlannerAgent.max_cycles`.

Two Planners share this loop: the scripted one
(:class:`~workbench.manual.heuristic_planner.ScriptedPlanner`, offline: it writes the
scripted agent's plan as code over the library's helper functions) and the model
(:class:`~workbench.manual.openai_planner.OpenAIPlanner`). The code blocks that ran become
the episode's ``planner`` metadata; after a success, the building stage stores them as the
task type's skill.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from store import LibraryEntry, ManualRule, Store
from workbench.agents.base import Interaction, OutOfSteps
from workbench.agents.guidance import STOP, Guidance, review
from workbench.limits import Limits
from workbench.manual.library import library_note
from workbench.manual.sandbox import PLAN_LIMITS, VETO_PREFIX, CodeRun, run_code

RULE_NOTE = VETO_PREFIX
"""How an answer of ``act`` or ``stop`` starts when a rule of the manual vetoed or replaced
the action (the code's ``overruled(text)`` tests it)."""
MAX_CYCLES = 4
"""Cycles of one episode (the first plan and three replans, as in the paper's tests)."""


class PlannerReply(BaseModel):
    """One cycle's answer, in the paper's four parts."""

    model_config = ConfigDict(extra="forbid")

    # every part may be left out by a model: the Planner's check names what is missing
    analysis: str = Field("", description="The current situation, and what went wrong before.")
    related_rules: list[str] = Field(
        default_factory=list,
        description="Ids of the rules to consider here (e.g. rule_3); empty when none apply.",
    )
    overall_plan: str = Field("", description="The general plan to complete the task.")
    code: str = Field("", description="A block of Python code, divided into steps, using the API.")


@dataclass
class Helper:
    """A helper function the library offers: its name, parameter and action templates."""

    name: str
    parameter: str
    templates: list[str]
    source: str


@dataclass
class Cycle:
    """One reply and what its code did."""

    reply: PlannerReply
    run: CodeRun


@dataclass
class PlanTurn:
    """What the Planner knows when it writes the next cycle."""

    instruction: str
    observation: str
    rules: list[ManualRule]
    manual: str
    """The rules (or the formulated manual) as text."""
    note: LibraryEntry | None
    """The library entry of the most similar task of this type."""
    helpers: list[Helper]
    """Helper functions from the manual's Useful Helper Methods and the library's skill."""
    cycles: list[Cycle] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    """What the Planner keeps between its cycles of this episode."""

    @property
    def feedback(self) -> str:
        """What the last cycle's code did (empty before the first)."""
        return self.cycles[-1].run.feedback() if self.cycles else ""


class Planner(Protocol):
    """Who writes each cycle's reply."""

    name: str

    def reply(
        self, turn: PlanTurn, interaction: Interaction, rng: random.Random
    ) -> PlannerReply | None:
        """The next cycle's reply (``None``: the Planner has nothing more to do)."""
        ...


def helpers_in(code: str) -> list[Helper]:
    """The one-parameter functions of ``code`` whose body only calls ``act`` with
    f-strings of that parameter (read with :mod:`ast`, never run)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or len(node.args.args) != 1:
            continue
        parameter = node.args.args[0].arg
        templates = [_template(statement, parameter) for statement in node.body]
        if templates and all(templates):
            found.append(Helper(node.name, parameter, templates, ast.unparse(node)))  # type: ignore[arg-type]
    return found


def _template(statement: ast.stmt, parameter: str) -> str | None:
    """``act(f"... {parameter} ...")`` as ``... {1} ...`` (else ``None``)."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "act" and len(call.args) == 1):
        return None
    parts = call.args[0].values if isinstance(call.args[0], ast.JoinedStr) else [call.args[0]]
    out = []
    for part in parts:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(part.value.replace("{", "{{").replace("}", "}}"))
        elif isinstance(part, ast.FormattedValue) and getattr(part.value, "id", "") == parameter:
            out.append("{1}")
        else:
            return None
    text = "".join(out)
    return text if "{1}" in text else None


class Relay:
    """The environment API the code's calls reach: the episode, behind the manual's rules
    (a veto skips the action, a replacement is taken instead; both answer with a note that
    starts :data:`RULE_NOTE`)."""

    def __init__(self, interaction: Interaction, guidance: Guidance) -> None:
        self.io, self.guidance = interaction, guidance
        self.thought = ""
        """The thought recorded with the next action (the cycle's reply, once)."""

    def _reviewed(self, action: str) -> tuple[str, str, str] | None:
        """``(rule id, response, replacement)`` of the rule that acts on ``action``."""
        if not self.guidance.rules:
            return None
        verdict = review(self.guidance, action, self.io.evidence())
        if verdict is None:
            return None
        self.io.record_use(verdict.rule.id, "rule")
        return verdict.rule.id, verdict.response, verdict.action

    def act(self, action: str) -> str:
        action = " ".join(action.split())
        ruled = self._reviewed(action)
        if ruled is not None and ruled[1] == "veto":
            rule = next(r for r in self.guidance.rules if r.id == ruled[0])
            return f"{RULE_NOTE}{ruled[0]} vetoed '{action}': {rule.description}"
        taken = ruled[2] if ruled is not None else action
        source = f"rule:{ruled[0]}" if ruled is not None else "agent"
        thought, self.thought = self.thought or f"Plan code: {action}", ""
        try:
            observation = self.io.act(taken, thought, source).observation
        except OutOfSteps:
            return "The step limit is reached."
        if ruled is not None:
            return f"{RULE_NOTE}{ruled[0]} replaced '{action}' with '{taken}': {observation}"
        return observation

    def stop(self) -> str:
        ruled = self._reviewed(STOP)
        if ruled is not None:
            return f"{RULE_NOTE}{ruled[0]} vetoed stopping"
        self.io.done = True
        return "stopped"

    def look(self) -> str:
        return self.io.env.look()

    def inventory(self) -> str:
        return self.io.env.inventory()

    def valid_actions(self) -> list[str]:
        return list(self.io.env.valid_actions())

    def over(self) -> bool:
        return self.io.done


def thought_of(reply: PlannerReply, cycle: int) -> str:
    """The reply's first three parts, recorded as the thought of the cycle's first action."""
    rules = ", ".join(reply.related_rules) or "none"
    return (
        f"Cycle {cycle}. Analysis: {reply.analysis.strip()} Related rules: {rules}. "
        f"Overall plan: {reply.overall_plan.strip()}"
    )


class PlannerAgent:
    """The Planner as an agent: cycles of replies whose code runs in the sandbox.

    Args:
        planner: who writes the replies.
        db_path: the database holding the rules and the libraries (``None``: neither).
        manual: the manual an agent reads (the build loop's rules text, or a formulated one).
        max_cycles: most cycles per episode.
        limits: what one block of code may use.
    """

    def __init__(
        self,
        planner: Planner,
        db_path: str | None,
        manual: str = "",
        *,
        max_cycles: int = MAX_CYCLES,
        limits: Limits = PLAN_LIMITS,
    ) -> None:
        self.planner, self.db_path, self.manual = planner, db_path, manual
        self.name = f"planner:{planner.name}"
        self.max_cycles, self.limits = max_cycles, limits

    def turn(self, interaction: Interaction) -> PlanTurn:
        """What the Planner starts the episode with, read from the database."""
        rules: list[ManualRule] = []
        note = None
        if self.db_path is not None:
            with Store(self.db_path) as store:
                rules = store.manual_rules()
                family = interaction.family
                note = library_note(store, family, interaction.instruction) if family else None
        helpers = [
            h for r in rules if r.type == "Useful Helper Method" for h in helpers_in(r.example)
        ]
        if note is not None and note.kind == "skill":
            known = {h.name for h in helpers}
            helpers += [h for h in helpers_in(note.content) if h.name not in known]
        return PlanTurn(
            interaction.instruction, interaction.observation, rules, self.manual, note, helpers
        )

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        turn = self.turn(interaction)
        relay = Relay(interaction, guidance)
        while not interaction.done and len(turn.cycles) < self.max_cycles:
            reply = self.planner.reply(turn, interaction, rng)
            if reply is None:
                break
            relay.thought = thought_of(reply, len(turn.cycles) + 1)
            turn.cycles.append(Cycle(reply, run_code(reply.code, relay, self.limits)))
        found: dict[str, Any] = {"planner": _metadata(self.planner.name, turn)}
        if turn.note is not None:
            found["library"] = turn.note.id  # the entry it was shown
        return found


def _metadata(name: str, turn: PlanTurn) -> dict[str, Any]:
    """The episode's record of its cycles, and the code that ran (what a skill keeps)."""
    cycles = [
        {
            **cycle.reply.model_dump(),
            "status": cycle.run.status,
            "error": cycle.run.error,
            "actions": sum(1 for call in cycle.run.calls if call[0] == "act"),
        }
        for cycle in turn.cycles
    ]
    ran = [c.reply.code.strip() for c in turn.cycles if c.run.ok]
    found = {"name": name, "cycles": cycles, "code": organised(ran)}
    if turn.state.get("error"):
        found["error"] = turn.state["error"]
    return found


def organised(blocks: list[str]) -> str:
    """The code blocks that ran as one block, each function defined once (a later block's
    repeated definition of a function is left out; read with :mod:`ast`, never run)."""
    defined: set[str] = set()
    kept = []
    for block in blocks:
        lines = block.splitlines()
        try:
            tree = ast.parse(block)
        except SyntaxError:
            kept.append(block)
            continue
        drop: set[int] = set()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                if node.name in defined:
                    drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
                defined.add(node.name)
        kept.append("\n".join(line for i, line in enumerate(lines) if i not in drop).strip())
    return "\n\n".join(k for k in kept if k)
