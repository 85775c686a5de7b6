"""The scripted baseline: follows the world's gold path but makes seeded, realistic mistakes.

The mistakes are the kinds LLM agents make in text worlds, planned on any world's gold path
through its lexicon (:mod:`workbench.agents.mistakes`): each world's plugin lists its mistake
modes (the generic ones when it lists none — acting on a closed door or container, a wrong
object or exit of the same verb, deciding before checking, repeating an invalid command,
stopping early, skipping a step, skipping rooms on a walk — and any of its own, e.g. focusing
on the wrong object or not waiting for a change to finish). Each mode fires in an episode with
its configured probability, at one eligible point of the plan chosen by the episode's seed.

Which mistakes fired, at which stored step index, is recorded in the episode's metadata under
:data:`TRUTH_KEY` — ground truth for measuring the analyzer, which never reads that key.

The agent follows **guidance** (:mod:`workbench.agents.guidance`): before each action it runs
applicable subagents and skills, then lets rules veto or replace the action it proposes. A
vetoed mistake is dropped and the agent takes its planned action instead.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from typing import Any

from workbench.agents.base import AgentSpec, Interaction, OutOfSteps
from workbench.agents.guidance import (
    STOP,
    Act,
    DelegateForm,
    Guidance,
    bind_inputs,
    match,
    review,
    run_procedure,
)
from workbench.agents.mistakes import (
    Mistake,
    choose_when_reached,
    current_rates,
    default_rates,
    plan_mistakes,
    world_modes,
)
from workbench.agents.subagents import delegation_record, run_subagent
from workbench.envs.lexicon import PLAIN, Lexicon, Role

TRUTH_KEY = "ground_truth"
"""Metadata key of the scripted agent's mistakes. The analyzer must never read it."""

RESYNC_WINDOW = 12
"""How far ahead in its plan the agent looks for actions guidance already took for it."""

THOUGHTS: dict[Role, str] = {
    "move": "I need to be somewhere else for the next part: {a}.",
    "open": "The way is blocked; I should {a}.",
    "take": "I will need this: {a}.",
    "check": "I should check before deciding: {a}.",
    "decide": "I have what I need to decide: {a}.",
    "wait": "The change takes time, so I {a}.",
    "other": "Next I {a}.",
}
"""A reasoning line per action role, so recorded runs read like an agent's."""


def thought_for(action: str, lexicon: Lexicon = PLAIN) -> str:
    """A short reasoning line for ``action``, chosen by the role it plays in the world."""
    return THOUGHTS[lexicon.role(action).role].format(a=action)


class ScriptedAgent:
    """The offline baseline agent (deterministic given the episode seed and guidance).

    Args:
        rates: probability per mistake mode (any installed world's, or a former name); missing
            modes never fire, nor do modes the world played lacks. Defaults to
            :func:`~workbench.agents.mistakes.default_rates`.

    Raises:
        ValueError: a mode no installed world has (one line listing the known ones).
    """

    name = "scripted"

    def __init__(self, rates: dict[str, float] | None = None) -> None:
        self.rates = default_rates() if rates is None else current_rates(rates)

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        gold = interaction.env.gold_path()
        lexicon, modes = world_modes(interaction.env.name)
        mistakes = plan_mistakes(gold, interaction.instruction, self.rates, rng, modes, lexicon)
        run = _Run(interaction, gold, mistakes, rng, guidance, lexicon)
        with contextlib.suppress(OutOfSteps):
            run.play()
        return {
            TRUTH_KEY: {"mistakes": run.fired, "prevented": run.prevented, "gold_length": len(gold)}
        }


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> ScriptedAgent:
    """The scripted agent with the spec's mistake rates (registered as ``scripted``; it reads
    neither the database nor a manual)."""
    return ScriptedAgent(spec.rates)


class _Run:
    """One scripted episode: a pointer into the gold path and the pending mistakes."""

    def __init__(
        self,
        interaction: Interaction,
        gold: list[str],
        mistakes: list[Mistake],
        rng: random.Random,
        guidance: Guidance,
        lexicon: Lexicon,
    ) -> None:
        self.io, self.gold, self.rng, self.guidance = interaction, gold, rng, guidance
        self.lexicon = lexicon
        self.pending = {m.index: m for m in mistakes}
        self.index = 0
        self.fired: list[dict[str, Any]] = []
        self.prevented: list[dict[str, Any]] = []

    def play(self) -> None:
        while not self.io.done:
            mistake = self.pending.get(self.index)
            planned = self.gold[self.index] if self.index < len(self.gold) else STOP
            proposed = self._proposal(mistake, planned) if mistake else planned
            if proposed is None:  # the mistake has nothing to act on here
                self.pending.pop(self.index)
                continue
            if self.guidance.forms and self._guided(proposed, planned, mistake):
                continue
            if proposed == STOP:
                if mistake is not None:
                    self.fired.append({"mode": mistake.mode, "step": self.io.next_step})
                return
            self.io.act(proposed, self._thought(proposed))
            if mistake is not None and proposed == mistake.proposed:
                if not mistake.fired:
                    mistake.fired = True
                    self.fired.append({"mode": mistake.mode, "step": self.io.next_step - 1})
                self.index = mistake.resume
                if not mistake.persistent:
                    self.pending.pop(mistake.index, None)
            else:
                self.index += 1

    def _proposal(self, mistake: Mistake, planned: str) -> str | None:
        """The mistaken action; for modes that need the current scene, chosen now."""
        if mistake.proposed:
            return mistake.proposed
        valid = self.io.env.valid_actions()
        return choose_when_reached(mistake, planned, valid, self.lexicon, self.rng)

    def _thought(self, action: str) -> str:
        return thought_for(action, self.lexicon)

    def _guided(self, proposed: str, planned: str, mistake: Mistake | None) -> bool:
        """Let guidance act on the proposal; True when it already took the step."""
        evidence = self.io.evidence()
        for delegate in self.guidance.delegates:
            groups = match(delegate, proposed, evidence)
            if groups is not None and self._hand_over(
                delegate.id,
                "subagent",
                lambda act, form=delegate, groups=groups: self._delegate(form, groups),
            ):
                self._prevent(mistake, proposed, delegate.id)
                return True
        for skill in self.guidance.procedures:
            groups = match(skill, proposed, evidence)
            if groups is not None and self._hand_over(
                skill.id,
                "skill",
                lambda act, form=skill, groups=groups: run_procedure(
                    form, groups, act, lambda: self.io.done
                ),
            ):
                self._prevent(mistake, proposed, skill.id)
                return True
        verdict = review(self.guidance, proposed, evidence)
        if verdict is None:
            return False
        self.io.record_use(verdict.rule.id, "rule")
        self._prevent(mistake, proposed, verdict.rule.id)
        if verdict.response == "veto":
            if planned == STOP:  # nothing left to do instead: the episode ends here
                self.io.done = True
            elif planned == proposed:  # a planned action vetoed: the agent skips it
                self.index += 1
            else:  # a mistake vetoed: the agent takes its planned action instead
                self.io.act(planned, self._thought(planned), f"rule:{verdict.rule.id}")
                self.index += 1
            return True
        self.io.act(verdict.action, self._thought(verdict.action), f"rule:{verdict.rule.id}")
        if verdict.action == planned:
            self.index += 1
        return True

    def _prevent(self, mistake: Mistake | None, proposed: str, by: str) -> None:
        """Guidance acted on a mistaken proposal: the mistake is not made (nor retried)."""
        if mistake is not None and proposed == mistake.proposed:
            self.prevented.append({"mode": mistake.mode, "step": self.io.next_step, "by": by})
            self.pending.pop(mistake.index, None)

    def _hand_over(self, artifact: str, kind: str, run: Callable[[Act], object]) -> bool:
        """Let a skill or subagent take steps, then skip the planned actions it took.
        Returns whether it acted (one that did nothing, e.g. a subagent whose objective
        already holds, leaves the decision to the agent)."""
        self.io.record_use(artifact, kind)
        before = len(self.io.taken)
        run(self._act_as(f"{kind}:{artifact}"))
        if len(self.io.taken) == before:
            self.io.uses.pop()
            return False
        self._resync(before)
        return True

    def _delegate(self, form: DelegateForm, groups: tuple[str, ...]) -> None:
        """Run a subagent on the inputs the match binds (its offline strategy: this agent
        has no model), and record what it returned."""
        inputs = bind_inputs(form, groups)
        step = self.io.next_step
        world = self.io.world(f"subagent:{form.id}")
        result = run_subagent(form, inputs, world, self.io.lexicon)
        if result.steps or result.refused:  # one that did nothing leaves the decision here
            self.io.delegations.append(delegation_record(form, inputs, result, step))

    def _act_as(self, source: str) -> Act:
        def act(action: str, thought: str) -> str:
            return self.io.act(action, thought, source).observation

        return act

    def _resync(self, before: int) -> None:
        """After a skill or subagent acted, resume the plan where it left off: after the
        planned action it ended with (a subagent may have taken another way there), else
        after the planned actions it took in order."""
        taken = [t.action.lower() for t in self.io.taken[before:]]
        ahead = range(self.index, min(len(self.gold), self.index + RESYNC_WINDOW))
        last = next((k for k in ahead if self.gold[k].lower() == taken[-1]), None)
        if last is not None:
            self.index = last + 1
        else:
            while self.index < len(self.gold) and self.gold[self.index].lower() in taken:
                self.index += 1
        for index in [i for i in self.pending if i < self.index]:
            self.pending.pop(index)
