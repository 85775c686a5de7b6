"""The offline Planner (:class:`ScriptedPlanner`): the scripted agent's plan, written as code.

It plans as the scripted agent does (:mod:`workbench.agents.scripted`): the world's gold path
with the episode's seeded mistakes, read through the world's lexicon. Each cycle it writes
that plan as Python source over the narrow environment API — a consecutive pair of actions
that a library helper does (a Useful Helper Method of the manual, or a function of the most
similar task's skill) becomes a call of that helper; a planned mistake is an action whose
overruling by a rule of the manual (a veto or a replacement) leads back to the plan:

.. code-block:: python

    def open_door_to_then_go_to(place):
        act(f"open door to {place}")
        act(f"go to {place}")

    open_door_to_then_go_to("kitchen")
    if overruled(act("focus on chair")):  # if a rule overrules it, the plan's own steps
        act("focus on thermometer")

A mistake whose action depends on what is valid when it is reached (another object of the
same verb) ends the cycle before it: the next cycle chooses it from the actions valid then,
as the scripted agent would. The source runs in the sandbox like a model's code; the same
seed writes the same code.
"""

from __future__ import annotations

import ast
import random

from workbench.agents.base import AgentSpec, Interaction
from workbench.agents.guidance import STOP
from workbench.agents.mistakes import (
    Mistake,
    choose_when_reached,
    current_rates,
    default_rates,
    plan_mistakes,
    world_modes,
)
from workbench.envs.lexicon import Lexicon
from workbench.llm.steps import CaseStep
from workbench.manual.planner import Helper, PlannerAgent, PlannerReply, PlanTurn
from workbench.manual.procedures import phases


class _Plan:
    """The episode's plan: the gold path, its pending mistakes and where the code got to."""

    def __init__(self, gold: list[str], mistakes: list[Mistake], lexicon: Lexicon) -> None:
        self.gold, self.lexicon = gold, lexicon
        self.pending = {m.index: m for m in mistakes}
        self.index = 0


class ScriptedPlanner:
    """The offline :class:`~workbench.manual.planner.Planner` (deterministic given the seed).

    Args:
        rates: probability per mistake mode, as for the scripted agent (its defaults when
            ``None``).
    """

    name = "scripted"

    def __init__(self, rates: dict[str, float] | None = None) -> None:
        self.rates = default_rates() if rates is None else current_rates(rates)

    def reply(
        self, turn: PlanTurn, interaction: Interaction, rng: random.Random
    ) -> PlannerReply | None:
        plan = self._plan(turn, interaction, rng)
        if plan.index > len(plan.gold):
            return None
        start = plan.index
        lines = with_helpers(self._segment(plan, interaction, rng), turn.helpers)
        used = [h for h in turn.helpers if any(line.startswith(f"{h.name}(") for line in lines)]
        code = "\n".join(
            [
                *(f"{h.source}\n" for h in used),
                f"# steps {start + 1}-{plan.index} of the plan",
                *lines,
            ]
        )
        return PlannerReply(
            analysis=self._analysis(turn, plan, start),
            related_rules=[r.id for r in turn.rules if r.form],
            overall_plan=overall_plan(plan.gold, turn.instruction, plan.lexicon),
            code=code,
        )

    def _plan(self, turn: PlanTurn, interaction: Interaction, rng: random.Random) -> _Plan:
        plan = turn.state.get("plan")
        if plan is None:
            gold = interaction.env.gold_path()
            lexicon, modes = world_modes(interaction.env.name)
            mistakes = plan_mistakes(gold, turn.instruction, self.rates, rng, modes, lexicon)
            plan = turn.state["plan"] = _Plan(gold, mistakes, lexicon)
        return plan

    def _analysis(self, turn: PlanTurn, plan: _Plan, start: int) -> str:
        said = [f"The plan has {len(plan.gold)} steps; this code starts at step {start + 1}."]
        if turn.cycles:
            run = turn.cycles[-1].run
            said.append(
                f"The last code ended: {run.status}" + (f" ({run.error})." if run.error else ".")
            )
        if turn.note is not None:
            said.append(f"The library's {turn.note.kind} of the most similar task is at hand.")
        return " ".join(said)

    def _segment(self, plan: _Plan, interaction: Interaction, rng: random.Random) -> list[str]:
        """The code lines from the plan's position up to the next mistake that must be
        chosen when reached (or the end, where the plan stops)."""
        lines: list[str] = []
        gold, lexicon = plan.gold, plan.lexicon
        while plan.index < len(gold):
            i = plan.index
            mistake = plan.pending.get(i)
            if mistake is not None and not mistake.proposed:
                if lines:
                    return lines  # chosen from what is valid when the next cycle starts
                valid = interaction.env.valid_actions()
                if choose_when_reached(mistake, gold[i], valid, lexicon, rng) is None:
                    plan.pending.pop(i)
                    continue
            if mistake is not None:
                plan.pending.pop(i)
                lines += _mistake_lines(mistake, gold)
                plan.index = i if mistake.persistent or mistake.proposed == STOP else mistake.resume
                continue
            lines.append(_act(gold[i]))
            plan.index += 1
        lines.append("stop()  # the plan is done")
        plan.index = len(gold) + 1
        return lines


def _act(action: str) -> str:
    return f"act({action!r})"


def _mistake_lines(mistake: Mistake, gold: list[str]) -> list[str]:
    """A planned mistake as code: overruled by a rule, the plan's own steps instead (the
    code does not say it is a mistake: it is what the agent believes it should do)."""
    note = "  # if a rule overrules it, the plan's own steps"
    if mistake.proposed == STOP:
        return ["stop()  # if a rule vetoes stopping, the plan goes on"]
    if mistake.persistent:
        return [f"while not overruled(act({mistake.proposed!r})):{note}", "    pass"]
    instead = gold[mistake.index : mistake.resume] or []
    body = [f"    {_act(a)}" for a in instead] or ["    pass"]
    return [f"if overruled(act({mistake.proposed!r})):{note}", *body]


def with_helpers(lines: list[str], helpers: list[Helper]) -> list[str]:
    """Consecutive top-level action lines that a helper does with one argument, as a call."""
    out: list[str] = []
    position = 0
    while position < len(lines):
        call = next(
            (
                c
                for h in helpers
                if (c := _call(h, lines[position : position + len(h.templates)])) is not None
            ),
            None,
        )
        if call is None:
            out.append(lines[position])
            position += 1
        else:
            text, used = call
            out.append(text)
            position += used
    return out


def _call(helper: Helper, lines: list[str]) -> tuple[str, int] | None:
    """``(helper call, lines it replaces)`` when ``lines`` are the helper's actions."""
    if len(lines) < len(helper.templates) or not all(line.startswith("act(") for line in lines):
        return None
    value = None
    for template, line in zip(helper.templates, lines, strict=False):
        action = eval_literal(line)
        head, _, tail = template.partition("{1}")
        if action is None or not (action.startswith(head) and action.endswith(tail)):
            return None
        filler = action[len(head) : len(action) - len(tail)] if tail else action[len(head) :]
        if not filler or (value is not None and filler != value):
            return None
        value = filler
    return f"{helper.name}({value!r})", len(helper.templates)


def eval_literal(line: str) -> str | None:
    """The string of an ``act('...')`` line (read as a literal, never run)."""
    try:
        node = ast.parse(line, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) else None
    return None


def overall_plan(gold: list[str], instruction: str, lexicon: Lexicon) -> str:
    """The plan's phases in a few words (as a Success Process would list them)."""
    steps = [CaseStep(index=i, action=a, observation="") for i, a in enumerate(gold, 1)]
    found = phases(steps, instruction, lexicon)
    return "; ".join(f"({k}) {p.describe(lexicon)}" for k, p in enumerate(found, 1)) or "stop"


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> PlannerAgent:
    """The scripted Planner with the spec's mistake rates (registered as ``planner``)."""
    return PlannerAgent(ScriptedPlanner(spec.rates), db_path, manual)
