"""The offline Formulator (:class:`HeuristicFormulator`): rules grouped by the scope their content opens with, and an
introduction composed from the group's rule types and contents. Deterministic: the same rules
always give the same groups, in the same order, with the same words."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from store import RULE_TYPES, ManualRule, RuleType
from workbench.manual.formulate import RuleGroup

MAX_SCOPE_CHARS = 120
"""A 'scope' longer than this is a sentence that happens to hold a colon, not a scope."""
MAX_POINTS = 4
"""Key points quoted in an introduction (the rest are counted)."""
POINT_CHARS = 140

_QUOTED = re.compile(r"(?<!\w)(['\"`])(?:(?!\1).)*\1(?!\w)")
_CONNECTOR = re.compile(
    r"^(?:when(?:ever)?|if|in|on|for|while|during|at|after|before|within)\s+(?:(?:the|a|an)\s+)?"
)

TYPE_NOTES: dict[RuleType, str] = {
    "Special Phenomenon": "what the environment shows in this situation",
    "Special Mechanism": "how the environment behaves when acted on",
    "Useful Helper Method": "methods worth reusing",
    "Success Process": "procedures that solved the task",
    "Corrected Error": "mistakes that were made and how they were fixed",
    "Unsolved Error": "errors no run has solved yet: treat them as warnings, not procedures",
}
"""What each rule type contributes to a scenario, as an introduction says it."""


def scope_of(content: str) -> str:
    """The scope a rule's content opens with: the text before its first colon outside quotes
    (empty when there is none, or when it is too long to be a scope)."""
    return split_scope(content)[0]


def split_scope(content: str) -> tuple[str, str]:
    """``(scope, the rest)`` of a rule's content; ``("", content)`` when it names no scope."""
    masked = _QUOTED.sub(lambda m: "x" * len(m.group(0)), content)
    colon = masked.find(":")
    scope = " ".join(content[: max(colon, 0)].split()).rstrip(" .,;")
    if colon <= 0 or not scope or len(scope) > MAX_SCOPE_CHARS:
        return "", content
    return scope, content[colon + 1 :]


def scenario_key(scope: str) -> str:
    """A scope normalised so that ``In boil tasks`` and ``boil tasks`` are one scenario."""
    text = " ".join(scope.lower().split()).strip(" .,;")
    return _CONNECTOR.sub("", text)


def group_rules(rules: Sequence[ManualRule]) -> list[RuleGroup]:
    """One group per scenario the rules' scopes name (rules without a scope are grouped by
    type), in order of the scenarios' first rule; rules keep their order of writing."""
    members: dict[tuple[str, str], list[ManualRule]] = {}
    titles: dict[tuple[str, str], str] = {}
    for rule in rules:
        scope = scope_of(rule.content)
        scenario = scenario_key(scope)
        key = ("scope", scenario) if scenario else ("type", rule.type)
        members.setdefault(key, []).append(rule)
        titles.setdefault(key, _capitalised(scope) if key[0] == "scope" else _type_title(rule.type))
    return [
        RuleGroup(
            title=titles[key],
            introduction=introduction(group, scoped=key[0] == "scope"),
            rule_ids=[rule.id for rule in group],
        )
        for key, group in members.items()
    ]


def introduction(rules: Sequence[ManualRule], scoped: bool = True) -> str:
    """What a group holds, by type, and its key points (the rules' contents after the scope)."""
    types = Counter(rule.type for rule in rules)
    kinds = [t for t in RULE_TYPES if types[t]]
    count = f"{len(rules)} rule{'s' if len(rules) != 1 else ''}"
    where = "for this scenario" if scoped else "without a narrower scope"
    parts = [
        f"{count} {where}: " + "; ".join(f"{types[t]} {t} ({TYPE_NOTES[t]})" for t in kinds) + "."
    ]
    points = [_point(rule) for rule in rules[:MAX_POINTS]]
    more = len(rules) - MAX_POINTS
    parts.append(
        "Key points: "
        + " ".join(points)
        + (f" And {more} more rule{'s' if more != 1 else ''} below." if more > 0 else "")
    )
    if "Unsolved Error" in kinds and "Success Process" not in kinds:
        parts.append("No successful procedure is recorded here yet.")
    return " ".join(parts)


def _point(rule: ManualRule) -> str:
    rest = split_scope(rule.content)[1]
    first = re.split(r"(?<=[.!?])\s", " ".join(rest.split()), maxsplit=1)[0]
    first = first or " ".join(rule.content.split())
    text = first if len(first) <= POINT_CHARS else first[: POINT_CHARS - 1] + "…"
    return f"{_capitalised(text.rstrip('.!?'))} ({rule.id})."


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _type_title(rule_type: RuleType) -> str:
    return f"{rule_type} rules"


class HeuristicFormulator:
    """The offline :class:`~workbench.manual.formulate.Formulator`."""

    name = "heuristic"

    def group_rules(self, rules: list[ManualRule]) -> list[RuleGroup]:
        """Groups by the scenario each rule's scope names, with template introductions
        (see :func:`group_rules`)."""
        return group_rules(rules)
