"""The scripted baseline: follows the simulator's gold path but makes seeded, realistic mistakes.

The mistakes are the kinds LLM agents make in text worlds. Each mode fires in an episode with
its configured probability, at one eligible point of the plan chosen by the episode's seed:

============================  =================================================================
``closed-door``               walks to a room without opening the door first
``wrong-focus``               focuses on the wrong object (a world may end the run at once)
``no-wait``                   does not wait for a state change to finish before going on
``decide-before-measure``     picks an answer box without measuring first (and guesses wrong)
``wrong-container``           moves a substance or object to the wrong container
``repeat-invalid``            repeats an action the simulator does not understand, to the end
``stop-early``                stops before the task is complete
``skip-route``                heads straight for a room that is not next to it, skipping the rooms
                              between, and carries on as if it had arrived
============================  =================================================================

Which mistakes fired, at which stored step index, is recorded in the episode's metadata under
:data:`TRUTH_KEY` — ground truth for measuring the analyzer, which never reads that key.

The agent follows **guidance** (:mod:`workbench.agents.guidance`): before each action it runs
applicable subagents and skills, then lets rules veto or replace the action it proposes. A
vetoed mistake is dropped and the agent takes its planned action instead.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.agents.base import AgentSpec, Interaction, OutOfSteps
from workbench.agents.guidance import (
    STOP,
    Act,
    Guidance,
    match,
    review,
    run_delegate,
    run_procedure,
)

TRUTH_KEY = "ground_truth"
"""Metadata key of the scripted agent's mistakes. The analyzer must never read it."""

MODES = (
    "closed-door",
    "wrong-focus",
    "no-wait",
    "decide-before-measure",
    "wrong-container",
    "repeat-invalid",
    "stop-early",
    "skip-route",
)

RESYNC_WINDOW = 12
"""How far ahead in its plan the agent looks for actions guidance already took for it."""

DEFAULT_RATES: dict[str, float] = dict.fromkeys(MODES, 0.12)
"""Probability that each mode fires in an episode (where the plan has a place for it)."""

_BOX = re.compile(r"^(?:move|put) (.+?) (?:to|in) (?:the )?(\w+) box$")
_MEASURE = re.compile(r"^(use thermometer|connect )")
_COLOURS = re.compile(r"\b(red|green|blue|orange|yellow|purple|violet)\b")


@dataclass
class Mistake:
    """A planned deviation from the gold path."""

    mode: str
    index: int
    """Plan index where the agent deviates."""
    proposed: str
    """The action the agent proposes instead (``STOP`` to stop; empty: chosen when reached)."""
    resume: int
    """Plan index the agent continues from after taking the mistaken action."""
    persistent: bool = False
    """The agent keeps proposing it (a loop) until guidance stops it or steps run out."""
    fired: bool = False
    """Whether the agent has taken the mistaken action yet."""


def plan_mistakes(
    gold: list[str], instruction: str, rates: dict[str, float], rng: random.Random
) -> list[Mistake]:
    """Choose which mistakes this episode makes and where (one per fired mode, no overlaps)."""
    chosen: dict[int, Mistake] = {}
    for mode in MODES:
        if rng.random() >= rates.get(mode, 0.0):
            continue
        candidates = _eligible(mode, gold, instruction, rng)
        if candidates:
            mistake = rng.choice(candidates)
            chosen.setdefault(mistake.index, mistake)
    return [chosen[i] for i in sorted(chosen)]


def _eligible(mode: str, gold: list[str], instruction: str, rng: random.Random) -> list[Mistake]:
    n = len(gold)
    if mode == "closed-door":
        return [
            Mistake(mode, i, gold[i + 1], i + 2)
            for i in range(n - 1)
            if gold[i].startswith("open door to ")
            and gold[i + 1] == "go to " + gold[i][len("open door to ") :]
        ]
    if mode == "wrong-focus":
        return [
            Mistake(mode, i, "", i + 1) for i, a in enumerate(gold) if a.startswith("focus on ")
        ]
    if mode == "no-wait":
        found = []
        for i in range(n):
            end = _waiting_end(gold, i)
            if end is not None and end < n and (i == 0 or _waiting_end(gold, i - 1) is None):
                found.append(Mistake(mode, i, gold[end], end + 1))
        return found
    if mode == "decide-before-measure":
        colours = sorted(set(_COLOURS.findall(instruction)))
        found = []
        for d, action in enumerate(gold):
            decision = _BOX.match(action)
            measures = [m for m in range(d) if _MEASURE.match(gold[m])]
            wrong = [c for c in colours if decision and c != decision.group(2)]
            if decision and measures and wrong:
                guess = action.replace(f"{decision.group(2)} box", f"{rng.choice(wrong)} box")
                first = min(m for m in measures if m > _last_focus(gold, d))
                found.append(Mistake(mode, first, guess, d + 1))
        return found
    if mode == "wrong-container":
        return [
            Mistake(mode, i, "", i + 1)
            for i, a in enumerate(gold)
            if a.startswith("move ") and not _BOX.match(a)
        ]
    if mode == "repeat-invalid":
        return [
            Mistake(mode, i, _garble(gold[i], rng), i, persistent=True) for i in range(1, n - 1)
        ]
    if mode == "stop-early":
        return [Mistake(mode, i, STOP, n) for i in range(max(1, n // 3), n - 1)]
    if mode == "skip-route":
        return [Mistake(mode, i, gold[end], end + 1) for i, end in _routes(gold)]
    raise ValueError(f"unknown mistake mode {mode!r}")


def _waiting_end(gold: list[str], i: int) -> int | None:
    """If a waiting segment starts at ``i``, the index just after it.

    Waiting is either ``wait`` actions or monitoring repeated while a change happens (the
    same two actions alternating at least three times, e.g. examine + use thermometer).
    """
    n = len(gold)
    if gold[i].startswith("wait"):
        end = i
        while end < n and gold[end].startswith("wait"):
            end += 1
        return end
    if (
        i + 5 < n
        and gold[i] == gold[i + 2] == gold[i + 4]
        and gold[i + 1] == gold[i + 3] == gold[i + 5]
    ):
        end = i + 2
        while end < n and gold[end] == gold[end - 2]:
            end += 1
        return end
    return None


def _routes(gold: list[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of every walk through two rooms or more: navigation actions only,
    ending with the ``go to`` of the room it leads to."""
    routes = []
    i, n = 0, len(gold)
    while i < n:
        end = i
        while end < n and gold[end].startswith(("open door to ", "go to ")):
            end += 1
        moves = [k for k in range(i, end) if gold[k].startswith("go to ")]
        if len(moves) >= 2:
            routes.append((i, moves[-1]))
        i = max(end, i + 1)
    return routes


def _last_focus(gold: list[str], before: int) -> int:
    return max((i for i in range(before) if gold[i].startswith("focus on ")), default=-1)


def _garble(action: str, rng: random.Random) -> str:
    """An action the simulator will not understand, phrased the way a model might."""
    return rng.choice([f"{action} carefully", f"try to {action}", f"{action} now please"])


def thought_for(action: str) -> str:
    """A short reasoning line for an action, so recorded runs read like an agent's."""
    verb = action.split(" ", 1)[0]
    templates = {
        "open": "The way is blocked; I should {a}.",
        "go": "I need to be somewhere else for the next part: {a}.",
        "pick": "I will need this object: {a}.",
        "focus": "The task asks me to focus on the right thing: {a}.",
        "use": "I should measure before deciding: {a}.",
        "move": "Time to place it: {a}.",
        "wait": "The change takes time, so I {a}.",
        "wait1": "I let one step pass to see the change: {a}.",
        "look": "Let me look around to see what is here.",
        "activate": "I need this running: {a}.",
        "connect": "I build the circuit: {a}.",
    }
    return templates.get(verb, "Next I {a}.").format(a=action)


class ScriptedAgent:
    """The offline baseline agent (deterministic given the episode seed and guidance).

    Args:
        rates: probability per mistake mode; missing modes never fire. Defaults to
            :data:`DEFAULT_RATES`.
    """

    name = "scripted"

    def __init__(self, rates: dict[str, float] | None = None) -> None:
        unknown = set(rates or {}) - set(MODES)
        if unknown:
            raise ValueError(f"unknown mistake modes {sorted(unknown)}; known: {', '.join(MODES)}")
        self.rates = dict(DEFAULT_RATES if rates is None else rates)

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        gold = interaction.env.gold_path()
        run = _Run(
            interaction,
            gold,
            plan_mistakes(gold, interaction.instruction, self.rates, rng),
            rng,
            guidance,
        )
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
    ) -> None:
        self.io, self.gold, self.rng, self.guidance = interaction, gold, rng, guidance
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
            self.io.act(proposed, thought_for(proposed))
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
        if mistake.mode == "wrong-focus":
            options = [a for a in valid if a.startswith("focus on ") and a != planned]
        else:  # wrong-container
            thing = planned[len("move ") :].rsplit(" to ", 1)[0]
            options = [
                a
                for a in valid
                if a.startswith(f"move {thing} to ") and a != planned and " box" not in a
            ]
        if not options:
            return None
        mistake.proposed = self.rng.choice(sorted(options))
        return mistake.proposed

    def _guided(self, proposed: str, planned: str, mistake: Mistake | None) -> bool:
        """Let guidance act on the proposal; True when it already took the step."""
        evidence = self.io.evidence()
        for delegate in self.guidance.delegates:
            groups = match(delegate, proposed, evidence)
            if groups is not None and self._hand_over(
                delegate.id,
                "subagent",
                lambda act, form=delegate, groups=groups: run_delegate(
                    form, groups, act, self.io.env.look, lambda: self.io.done
                ),
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
                self.io.act(planned, thought_for(planned), f"rule:{verdict.rule.id}")
                self.index += 1
            return True
        self.io.act(verdict.action, thought_for(verdict.action), f"rule:{verdict.rule.id}")
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
