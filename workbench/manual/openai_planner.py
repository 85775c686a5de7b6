"""The Planner backed by a chat model (:class:`OpenAIPlanner`).

Each cycle is one structured-output call (purpose ``manual.plan``, temperature 0) of a running
conversation: the system prompt gives the role, the environment API the code may call,
the response guidelines and a small example; the first user message gives the rules (the
manual), the library entry of the most similar task (a skill's code or a reflection), the
task and the first observation; each later one gives what the last code did (its actions and
observations, how it ended: an error, a time or memory limit). The answer has the paper's four
parts — ``analysis``, ``related_rules``, ``overall_plan``, ``code`` — and is checked before any
of its code runs: every part filled, the code valid Python (parsed, never run here), the rule
ids real. A failing answer gets one correction turn
(:func:`~workbench.llm.answers.checked_answer`); a second failure ends the episode's planning
with the error recorded. The code then runs in the sandbox (:mod:`workbench.manual.sandbox`).
"""

from __future__ import annotations

import ast
import random
from typing import Any

from store import Store
from workbench.agents.base import AgentSpec, Interaction
from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient, ModelError
from workbench.manual.planner import PlannerAgent, PlannerReply, PlanTurn

PURPOSE = "manual.plan"
MANUAL_CHARS = 6000
"""Characters of the rules (or manual) a prompt carries."""
NOTE_CHARS = 3000

SYSTEM = """\
You are the Planner. You complete a task in a text environment by writing Python code that \
acts in it. Your code runs in a separate process and may call only these functions:

- act(action: str) -> str: take one action (a command the environment understands) and \
return what the environment answered. When a rule of the manual vetoes or replaces the \
action, the answer starts with "RULE " and says what the rule did; overruled(text) tells.
- look() -> str: describe the current place (takes no step).
- inventory() -> str: what the agent carries (takes no step).
- valid_actions() -> list[str]: commands the environment accepts now (takes no step).
- stop(): end the episode here.
Calls raise EpisodeOver once the episode has ended. Your code may not import anything, and \
it is stopped if it runs for seconds without calling the environment or uses too much \
memory.

Each reply is one JSON object with four parts:

- analysis: your understanding of the current situation and, when earlier code went wrong, \
why it did.
- related_rules: the ids of the rules (e.g. rule_3) you rely on in this situation; an empty \
list when none applies.
- overall_plan: the general plan to complete the task.
- code: a block of Python code divided into steps (a comment before each). Define helper \
functions for subtasks you may meet again. Read what act() returns and react to it.

After your code runs you see what it did, and you write the next block from where it \
stopped. Example reply:

{"analysis": "I am in the hallway; the kitchen door is closed.", "related_rules": \
["rule_1"], "overall_plan": "Go to the kitchen, then take the thermometer.", "code": \
"# step 1: reach the kitchen\\ndef enter(place):\\n    act(f'open door to {place}')\\n    \
return act(f'go to {place}')\\n\\nenter('kitchen')\\n# step 2: take the thermometer\\n\
print(act('pick up thermometer'))"}"""

FIRST = """\
<rules>
{manual}
</rules>

{note}Task: {instruction}

Observation:
{observation}

Write the first block of code."""

NOTE = """\
<library kind="{kind}" from="the most similar task of this type">
{content}
</library>

"""

NEXT = """\
What your last code did:
{feedback}

{state}Write the next block of code from here (or call stop() if the task cannot be done)."""

CORRECTION = """\
Your reply cannot be used: {problems}. Answer again with the whole JSON object and all four \
parts."""


def check_reply(reply: PlannerReply, rule_ids: set[str]) -> list[str]:
    """What keeps a reply from being run (empty when nothing does)."""
    problems = [
        f"the part '{name}' is missing or empty"
        for name in ("analysis", "overall_plan", "code")
        if not getattr(reply, name).strip()
    ]
    unknown = [r for r in reply.related_rules if r.strip() not in rule_ids]
    if unknown:
        known = ", ".join(sorted(rule_ids)) or "none"
        problems.append(f"related_rules names {', '.join(unknown)}, not rules (the rules: {known})")
    if reply.code.strip():
        try:
            ast.parse(reply.code)
        except SyntaxError as error:
            problems.append(f"the code is not valid Python (line {error.lineno}: {error.msg})")
    return problems


class OpenAIPlanner:
    """The :class:`~workbench.manual.planner.Planner` over a chat model.

    Args:
        client: the logged, cached model client.
    """

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.name = f"openai:{client.model}"

    def reply(
        self, turn: PlanTurn, interaction: Interaction, rng: random.Random
    ) -> PlannerReply | None:
        """The model's next reply, checked; ``None`` after a reply that failed its check
        twice (the error is kept in the turn's state)."""
        conversation: list[dict[str, str]] = turn.state.setdefault("conversation", [])
        if not conversation:
            conversation += [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": first_message(turn)},
            ]
        else:
            conversation.append({"role": "user", "content": next_message(turn, interaction)})
        rule_ids = {r.id for r in turn.rules}
        try:
            reply = checked_answer(
                self.client,
                conversation,
                PlannerReply,
                purpose=PURPOSE,
                check=lambda r: check_reply(r, rule_ids),
                correction=lambda problems: CORRECTION.format(problems="; ".join(problems)),
            )
        except ModelError as error:
            turn.state["error"] = str(error)
            return None
        conversation.append({"role": "assistant", "content": reply.model_dump_json()})
        return reply


def first_message(turn: PlanTurn) -> str:
    """The first cycle's user message."""
    manual = turn.manual.strip() or "(no rules yet)"
    note = ""
    if turn.note is not None:
        note = NOTE.format(kind=turn.note.kind, content=turn.note.content[:NOTE_CHARS])
    return FIRST.format(
        manual=manual[:MANUAL_CHARS],
        note=note,
        instruction=turn.instruction,
        observation=turn.observation,
    )


def next_message(turn: PlanTurn, interaction: Interaction) -> str:
    """A later cycle's user message: what the last code did."""
    state = f"{interaction.steps_left} steps are left.\n\n"
    return NEXT.format(feedback=turn.feedback, state=state)


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> PlannerAgent:
    """The model Planner on the configured endpoint, logging its calls to the run's database
    (registered as ``openai-planner``)."""
    if db_path is None:
        raise ValueError("the model Planner needs the database to log and cache its calls")
    options: dict[str, Any] = {"model": spec.model} if spec.model else {}
    client = ChatClient.from_env(Store(db_path), **options)
    return PlannerAgent(OpenAIPlanner(client), db_path, manual)
