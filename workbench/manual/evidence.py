"""What a rule's validation log shows, read back from the recorded episodes it names.

The Consolidator and the building stage's N_max guard rank rules by this evidence, never by
their wording: where a rule was written from (the episode its log names first, its task type
and whether that run ended in a critical failure), the later runs in which it acted, and
whether one of those runs, where it warned of a critical failure, ended without one — the
rule *prevented* it. A rule that prevents a critical failure is the last to go when the rule
system must shrink.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from store import Episode, ManualRule, Store
from workbench.analyze.causes import CRITICAL_REWARD
from workbench.manual.heuristic import scenario_key, scope_of

TYPE_RANK = {
    "Special Phenomenon": 0,
    "Special Mechanism": 1,
    "Unsolved Error": 2,
    "Useful Helper Method": 3,
    "Success Process": 4,
    "Corrected Error": 5,
}
"""How much a rule type weighs when rules otherwise tie (higher is kept longer)."""


@dataclass
class RuleEvidence:
    """What the recorded episodes a rule's validation log names say about it."""

    rule_id: str
    family: str = ""
    """The task type of the episode it was written from (empty when none is recorded)."""
    critical: bool = False
    """It was written from a run that ended in a critical failure (it warns of one)."""
    acted: list[str] = field(default_factory=list)
    """Logged episodes in which it acted (the agent followed it)."""
    prevented: list[str] = field(default_factory=list)
    """Logged episodes in which it acted and the run did not end in a critical failure,
    while it warns of one."""

    @property
    def protects(self) -> bool:
        """Its log still shows it preventing a critical failure."""
        return bool(self.prevented)


def logged_episodes(rule: ManualRule) -> list[str]:
    """The episode ids a rule's validation log names (citations ``episode@steps`` read as
    their episode; rule ids left out), in order, without repeats."""
    found = [entry.strip().split("@", 1)[0] for entry in rule.validation_logs]
    return list(dict.fromkeys(e for e in found if e and not e.startswith("rule_")))


def ended_critically(episode: Episode) -> bool:
    """Whether a run ended in a critical failure (its score at or below the critical
    reward)."""
    score = episode.outcome.score
    return score is not None and score <= CRITICAL_REWARD


def acted_in(episode: Episode, rule_id: str) -> bool:
    """Whether the agent followed ``rule_id`` in ``episode`` (its recorded guidance uses)."""
    return any(u.get("artifact") == rule_id for u in episode.metadata.get("guidance_uses", []))


def evidence_of(store: Store, rule: ManualRule) -> RuleEvidence:
    """The evidence for one rule."""
    episodes = [e for e in map(store.episode, logged_episodes(rule)) if e is not None]
    found = RuleEvidence(rule.id)
    if episodes:
        found.family = episodes[0].family
        found.critical = ended_critically(episodes[0])
    found.acted = [e.id for e in episodes if acted_in(e, rule.id)]
    if found.critical:
        by_id = {e.id: e for e in episodes}
        found.prevented = [i for i in found.acted if not ended_critically(by_id[i])]
    return found


def family_of_rule(store: Store, rule: ManualRule) -> str:
    """The task type a rule is about: its origin episode's, else the scope its content opens
    with (normalised)."""
    scope = scenario_key(scope_of(rule.content))
    return evidence_of(store, rule).family or re.sub(r"\s+tasks?$", "", scope)


def strength(rule: ManualRule, found: RuleEvidence) -> tuple:
    """A sort key, weakest first: whether it prevents a critical failure, whether it warns
    of one, how often it acted, whether it is executable, its type, how much evidence its log
    holds, and (for ties) the newer rule first."""
    number = int(rule.id.split("_", 1)[1])
    return (
        found.protects,
        found.critical,
        len(found.acted),
        rule.form is not None,
        TYPE_RANK[rule.type],
        len(rule.validation_logs),
        -number,
    )


def weakest_first(store: Store, rules: Sequence[ManualRule]) -> list[ManualRule]:
    """The rules in the order a Consolidator deletes them."""
    evidence = {rule.id: evidence_of(store, rule) for rule in rules}
    return sorted(rules, key=lambda rule: strength(rule, evidence[rule.id]))
