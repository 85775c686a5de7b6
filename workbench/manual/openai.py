"""The Formulator's judgment by any OpenAI-compatible model (:class:`OpenAIFormulator`).

One structured-output call (purpose ``manual.formulate``, temperature 0) shows the model every
rule of the rule system — id, type, content and example — and asks for groups by target
scenario, each with a title, an introduction summarising its key points and the ids of its
rules in reading order. The answer is checked mechanically
(:func:`workbench.manual.formulate.check_groups`): every rule in exactly one group, no id that
is not a rule, no group without title, introduction or rules. A failing answer gets one
correction message naming the problems; a second failure raises
:class:`~workbench.llm.client.ModelError` naming them too — never a best-effort repair.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from store import ManualRule
from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient
from workbench.manual.formulate import RuleGroup, check_groups

PURPOSE = "manual.formulate"
EXAMPLE_CHARS = 800
"""Characters of a rule's example shown in the prompt (the rest is cut, and marked)."""

SYSTEM_PROMPT = """\
You are the Formulator. An agent acting in a text environment has built a rule system from \
its own episodes; you turn those rules into the chapters of a manual that a person, or the \
agent before its next task, reads from start to end.

Every rule has an id, a type, content that opens with the scope of situations it applies to, \
and usually an example taken from a trajectory. The types are: Special Phenomenon (what the \
environment shows), Special Mechanism (how it reacts to actions), Useful Helper Method (a \
reusable method), Success Process (a procedure that solved a task), Corrected Error (a \
mistake and the fix that worked) and Unsolved Error (a mistake nobody has fixed yet).

Group the rules by the scenario they target: the situation in which the agent needs them, \
not their type. Rules a reader should see together go in one group; a rule that fits no \
other may form a group of its own, but prefer a few meaningful groups to one per rule.

Answer with one JSON object with a field `groups`, a list in the order a reader meets the \
scenarios while working on a task. Each group has:

- title: the scenario, in a few words, e.g. `Moving between rooms`.
- introduction: two to four sentences on what the group's rules say together: the key \
points, the principle that governs the scenario and the mistakes its error rules warn \
about. Say only what the rules say; point out Unsolved Errors as open problems.
- rule_ids: the ids of its rules, in the order they are best read (general before \
specific, a procedure before the errors that break it).

Every listed rule id must appear in exactly one group: leave none out, repeat none, and use \
no id that is not listed."""

RULES_TEMPLATE = """\
The rule system holds {count} rule(s): {ids}.

{rules}"""

RULE_TEMPLATE = """\
<rule id="{id}" type="{type}">
<content>
{content}
</content>
{example}{logs}</rule>"""

LOGS_TEMPLATE = """\
<validation_logs>{logs}</validation_logs>
"""

EXAMPLE_TEMPLATE = """\
<example>
{example}
</example>
"""

CORRECTION_TEMPLATE = """\
Your grouping cannot be used: {problems}. The rules are {ids}; each must appear in exactly \
one group, and every group needs a title, an introduction and at least one rule. Answer \
again with the whole JSON object."""


class GroupingAnswer(BaseModel):
    """The model's chapters of the manual."""

    model_config = ConfigDict(extra="forbid")

    groups: list[RuleGroup]


class OpenAIFormulator:
    """The :class:`~workbench.manual.formulate.Formulator` over a chat model."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.name = f"openai:{client.model}"

    def group_rules(self, rules: list[ManualRule]) -> list[RuleGroup]:
        """The model's grouping of ``rules`` (purpose ``manual.formulate``), checked to place
        every rule exactly once.

        Raises:
            ModelError: the call failed, or the grouping still fails the check after one
                correction (the message names each rule concerned).
        """
        return group_rules(self.client, rules)


def group_rules(client: ChatClient, rules: Sequence[ManualRule]) -> list[RuleGroup]:
    """The model's grouping of ``rules``, checked; corrected once, else an error.

    Raises:
        ModelError: the call failed, or the grouping still fails the check after one
            correction.
    """
    if not rules:
        return []
    answer = checked_answer(
        client,
        [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": render_rule_system(rules)},
        ],
        GroupingAnswer,
        purpose=PURPOSE,
        check=lambda answer: check_groups(rules, answer.groups),
        correction=lambda problems: correction(problems, rules),
        failure="the model's grouping still does not place every rule exactly once after a "
        "correction",
    )
    return answer.groups


def render_rule_system(rules: Sequence[ManualRule]) -> str:
    """The user message: every rule with its type, content and (clipped) example."""
    return RULES_TEMPLATE.format(
        count=len(rules), ids=", ".join(r.id for r in rules), rules=render_rules(rules)
    )


def render_rules(rules: Sequence[ManualRule], *, logs: bool = False) -> str:
    """Every rule with its id, type, content, (clipped) example and, with ``logs``, its
    validation logs: how the Formulator and the Builder show the rule system."""
    blocks = []
    for rule in rules:
        example = rule.example.strip()
        if len(example) > EXAMPLE_CHARS:
            example = example[: EXAMPLE_CHARS - 1] + "…"
        blocks.append(
            RULE_TEMPLATE.format(
                id=rule.id,
                type=rule.type,
                content=rule.content.strip(),
                example=EXAMPLE_TEMPLATE.format(example=example) if example else "",
                logs=LOGS_TEMPLATE.format(logs=", ".join(rule.validation_logs)) if logs else "",
            )
        )
    return "\n\n".join(blocks)


def correction(problems: Sequence[str], rules: Sequence[ManualRule]) -> str:
    """The one correction message: what is wrong and which rules there are."""
    return CORRECTION_TEMPLATE.format(
        problems="; ".join(problems), ids=", ".join(r.id for r in rules)
    )
