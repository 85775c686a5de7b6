"""The :class:`~workbench.synth.relabeler.Relabeler` backed by a chat model
(:class:`OpenAIRelabeler`).

:meth:`OpenAIRelabeler.relabel` (purpose ``synth.relabel``) shows the span — the observation it
starts from, each action with the environment's answer, and the effects read from them — and
asks for the instruction it accomplished: a summary of a sub-trajectory's steps, or the
abstraction of a whole trajectory's purpose (the paper's two kinds). The answer is checked
mechanically: one instruction of at most :data:`MAX_CHARS` characters, not a list of steps, that
names at least one thing or place the span acted on.

:meth:`OpenAIRelabeler.vote` (purpose ``synth.vote``) is the committee member: it judges the
instruction and the span on the paper's four criteria (aligned, coherent, natural, reasonable)
and keeps the example only when all four hold; a criterion it says fails must come with a
reason. Both calls use temperature 0, are logged and cached by the client, and get one
correction turn when the check fails.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient
from workbench.llm.steps import render_steps
from workbench.synth.effects import CHANGED, DECIDED, OPENED, REACHED, SCORE, TOOK
from workbench.synth.relabeler import SpanCase, Vote

RELABEL_PURPOSE = "synth.relabel"
VOTE_PURPOSE = "synth.vote"
STEPS_CHARS = 6000
"""Characters the span's step listing may take in a prompt."""
MAX_CHARS = 400
"""Longest instruction accepted."""

RELABEL_SYSTEM = """\
You write task instructions after the fact. An agent acted in a text environment; you see \
part of what happened: the observation it started from, each action it took with the \
environment's answer, and the effects the environment showed (places reached, things opened \
or taken, decisions, score changes). Write the instruction a user could have given for which \
these steps are a fitting solution. Describe what the steps really achieved, not what the \
agent may have been trying to do. Name the objects and places involved, in the words the \
environment uses.

Answer with one JSON object with one field, `instruction`: a single imperative instruction, \
not a numbered list of steps."""

PURPOSES = {
    "summary": "These steps are a part of a longer episode. Write the instruction that asks "
    "for exactly what they achieved, in one sentence.",
    "abstraction": "These steps are a whole episode. The instruction it was played with is "
    "shown, but the agent may not have done what it asked: write the task the episode as a "
    "whole accomplished, in one or two sentences.",
}

CASE_TEMPLATE = """\
{purpose}

Environment: {env} (task family {family})
Instruction it was played with: {played}

<start>
{before}
</start>

<steps from="{start}" to="{end}">
{steps}
</steps>

Effects the environment showed: {effects}"""

VOTE_SYSTEM = """\
You sit on a committee that keeps only good examples for teaching agents. An example is a \
task instruction and a trajectory (observations and actions) meant to accomplish it. Judge it \
on four criteria:

1. aligned: the trajectory accomplishes what the instruction asks;
2. coherent: every action makes sense after the observation before it, and no action \
contradicts another;
3. natural: a person using the environment could plausibly act this way;
4. reasonable: the trajectory reaches the goal without detours, going back and forth between \
states, or a needlessly complicated route.

Answer with one JSON object with the fields `aligned`, `coherent`, `natural` and \
`reasonable` (true or false) and `reason`: one sentence; when any criterion is false, say \
which step breaks it."""

VOTE_TEMPLATE = """\
Task instruction: {instruction}

<start>
{before}
</start>

<trajectory from="{start}" to="{end}">
{steps}
</trajectory>"""

CORRECTION = "Your answer cannot be used: {problems}. Answer again with the whole JSON object."

CRITERIA = ("aligned", "coherent", "natural", "reasonable")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RelabelAnswer(_Answer):
    """The instruction a span accomplished."""

    instruction: str


class VoteAnswer(_Answer):
    """One committee member's judgment of an example."""

    aligned: bool
    coherent: bool
    natural: bool
    reasonable: bool
    reason: str


_LIST = re.compile(r"(?m)^\s*(?:\d+[.)]|[-*•])\s+")
_WORD = re.compile(r"[a-z0-9]+")
_PREFIXES = (REACHED, OPENED, TOOK, DECIDED, CHANGED)


def named_things(case: SpanCase) -> set[str]:
    """Words (3+ letters) of what the span's effects acted on: places, objects, commands."""
    words: set[str] = set()
    for effect in case.effects:
        if effect.startswith(SCORE):
            continue
        rest = next((effect[len(p) :] for p in _PREFIXES if effect.startswith(p)), effect)
        words |= {w for w in _WORD.findall(rest.lower()) if len(w) >= 3}
    return words


def check_instruction(answer: RelabelAnswer, case: SpanCase) -> list[str]:
    """What is wrong with a proposed instruction (empty when nothing is)."""
    text = answer.instruction.strip()
    if not text:
        return ["the instruction is empty"]
    problems = []
    if len(text) > MAX_CHARS:
        problems.append(f"the instruction has {len(text)} characters (at most {MAX_CHARS})")
    if _LIST.search(text):
        problems.append("the instruction is a list of steps; write one instruction")
    things = named_things(case)
    if things and not things & set(_WORD.findall(text.lower())):
        shown = ", ".join(sorted(things)[:8])
        problems.append(f"the instruction names nothing the steps acted on (e.g. {shown})")
    return problems


def check_vote(answer: VoteAnswer) -> list[str]:
    """What is wrong with a vote: a failed criterion without a reason."""
    failed = [c for c in CRITERIA if not getattr(answer, c)]
    if failed and not answer.reason.strip():
        return [f"say which step breaks {', '.join(failed)} in `reason`"]
    return []


class OpenAIRelabeler:
    """Backward construction and the committee vote over a chat model.

    Args:
        client: the logged, cached model client.
        max_steps_chars: characters the step listing may take in a prompt.
    """

    def __init__(self, client: ChatClient, *, max_steps_chars: int = STEPS_CHARS) -> None:
        self.client = client
        self.max_steps_chars = max_steps_chars
        self.name = f"openai:{client.model}"

    def relabel(self, case: SpanCase) -> str:
        """The model's instruction for the span.

        Raises:
            ModelError: the call failed, or the answer still fails its check after one
                correction.
        """
        answer = checked_answer(
            self.client,
            [
                {"role": "system", "content": RELABEL_SYSTEM},
                {"role": "user", "content": self.render_case(case)},
            ],
            RelabelAnswer,
            purpose=RELABEL_PURPOSE,
            check=lambda a: check_instruction(a, case),
            correction=lambda problems: CORRECTION.format(problems="; ".join(problems)),
            episode_id=case.episode_id,
        )
        return " ".join(answer.instruction.split())

    def vote(self, case: SpanCase, instruction: str) -> Vote:
        """The model's verdict on ``instruction`` and the span.

        Raises:
            ModelError: as :meth:`relabel`.
        """
        answer = checked_answer(
            self.client,
            [
                {"role": "system", "content": VOTE_SYSTEM},
                {"role": "user", "content": self.render_vote(case, instruction)},
            ],
            VoteAnswer,
            purpose=VOTE_PURPOSE,
            check=check_vote,
            correction=lambda problems: CORRECTION.format(problems="; ".join(problems)),
            episode_id=case.episode_id,
        )
        failed = [c for c in CRITERIA if not getattr(answer, c)]
        reason = answer.reason.strip()
        if failed:
            reason = f"not {', '.join(failed)}: {reason}"
        return Vote(self.name, not failed, reason)

    def render_case(self, case: SpanCase) -> str:
        """The relabel prompt's case."""
        return CASE_TEMPLATE.format(
            purpose=PURPOSES[case.purpose],
            env=case.env,
            family=case.family or "unknown",
            played=" ".join(case.played.split()),
            before=case.before.strip() or "(nothing recorded)",
            start=case.start,
            end=case.end,
            steps=render_steps(case.steps, self.max_steps_chars),
            effects="; ".join(case.effects) or "none",
        )

    def render_vote(self, case: SpanCase, instruction: str) -> str:
        """The vote prompt's case."""
        return VOTE_TEMPLATE.format(
            instruction=" ".join(instruction.split()),
            before=case.before.strip() or "(nothing recorded)",
            start=case.start,
            end=case.end,
            steps=render_steps(case.steps, self.max_steps_chars),
        )
