"""The offline Builder and Consolidator (:class:`HeuristicBuilder`): rules read off one
episode's evidence, and rules merged when there are too many.

The Builder first decides the case — the outcome (direct success, indirect success, failure)
and the cause of what went wrong (imperfect rules or imperfect agent) — then writes only the
rule types that case allows (a failed run never yields a success-type rule):

- **direct success** → a *Success Process* for the task type (once; later successes add their
  episode to its validation log) and a skill-library procedure;
- **indirect success** → a *Corrected Error* for each rejected action the run later got
  through by doing something else first (with a form that makes the correction after the
  rejection), and a *Special Phenomenon* for each rejection it never needed to correct;
- **failure** → the causal step is located as the analyzer does and read like a compile spec
  (:mod:`workbench.compile.heuristic`): an *Unsolved Error* rule, executable when the reading
  yields a single-decision rule, and a reflection-library entry with the faulty step. When a
  followed rule fired in the failed run, the rules are imperfect: that rule's validation log
  records the failure.
"""

from __future__ import annotations

import re

from store import LibraryEntry, ManualRule, Store
from workbench.analyze.causes import (
    benign_errors,
    build_case,
    error_signature,
    is_critical,
    locate,
    trigger_of,
)
from workbench.compare import normalize_action, shape
from workbench.compile import heuristic as compile_heuristic
from workbench.compile.proposals import MemberCase
from workbench.compile.specs import first_observation, regime_of, to_spec
from workbench.manual.builder import BuildCase, BuilderAnswer
from workbench.manual.operations import DeleteRule, UpdateRule, WriteRule


def _log(rule: ManualRule, episode_id: str) -> UpdateRule:
    return UpdateRule(rule_id=rule.id, validation_logs=[*rule.validation_logs, episode_id])


def _procedure(case: BuildCase) -> list[str]:
    """The run's actions with the task's own entities abstracted, repeats collapsed."""
    actions: list[str] = []
    for step in case.steps:
        if error_signature(step.observation):
            continue
        action = normalize_action(step.action, case.instruction)
        if not actions or actions[-1] != action:
            actions.append(action)
    return actions


def build_rules(store: Store, case: BuildCase) -> BuilderAnswer:
    """The heuristic Builder's answer for one episode."""
    if case.outcome == "failure":
        return _failure(store, case)
    answer = _success(case) if case.outcome == "direct success" else _indirect(case)
    answer.operations = [*_corrected(case), *answer.operations]
    return answer


def _corrected(case: BuildCase) -> list[UpdateRule]:
    """An unsolved error whose rule acted in a successful run is corrected by that rule."""
    return [
        UpdateRule(
            rule_id=rule.id,
            type="Corrected Error",
            validation_logs=[*rule.validation_logs, case.episode_id],
            example=f"{rule.example}\nCorrected in {case.episode_id}: the rule acted and the task succeeded.",
        )
        for rule in case.rules
        if rule.id in case.fired and rule.type == "Unsolved Error" and rule.form
    ]


def _success(case: BuildCase) -> BuilderAnswer:
    procedure = _procedure(case)
    existing = [
        r
        for r in case.rules
        if r.type == "Success Process" and r.content.startswith(f"{case.family} tasks:")
    ]
    skill = LibraryEntry(
        kind="skill", family=case.family, content="\n".join(procedure), episode_id=case.episode_id
    )
    if existing:
        return BuilderAnswer("imperfect agent", [_log(existing[0], case.episode_id)], [skill])
    write = WriteRule(
        type="Success Process",
        content=f"{case.family} tasks: a procedure that solved one — {'; '.join(procedure[:12])}"
        + (" …" if len(procedure) > 12 else ""),
        example=f"{case.episode_id}: {len(case.steps)} actions, no rejected action",
        validation_logs=[case.episode_id],
    )
    return BuilderAnswer("imperfect rules", [write], [skill])


def _indirect(case: BuildCase) -> BuilderAnswer:
    operations: list[WriteRule | UpdateRule | DeleteRule] = []
    known = {r.content for r in case.rules}
    steps = case.steps
    for i, step in enumerate(steps):
        signature = error_signature(step.observation)
        if signature is None:
            continue
        later = next(
            (
                k
                for k in range(i + 1, len(steps))
                if steps[k].action == step.action and not error_signature(steps[k].observation)
            ),
            None,
        )
        verb, argument = compile_heuristic.split_action(step.action)
        rejection = compile_heuristic.first_line(step.observation)
        if later is not None and later - i >= 2 and verb and argument:
            fix = steps[later - 1].action
            template = compile_heuristic.template_of(fix, {argument: "1"})
            if "{1}" not in template:
                continue
            content = f"When '{verb} <X>' is rejected with '{rejection}': do '{template.replace('{1}', '<X>')}' first, then retry."
            if content in known:
                continue
            known.add(content)
            form = {
                "kind": "rule",
                "id": "x",
                "when_action": compile_heuristic.escape(verb) + " (.+)",
                "when_evidence": r"> {1}\n" + compile_heuristic.pattern_of(rejection),
                "response": "replace",
                "replacement": template,
            }
            operations.append(
                WriteRule(
                    type="Corrected Error",
                    content=content,
                    example=f"{case.episode_id}@{step.index}: '{step.action}' → '{rejection}'; "
                    f"'{fix}' at step {steps[later - 1].index}, then '{step.action}' worked",
                    validation_logs=[case.episode_id],
                    form=form,
                )
            )
        elif later is None:
            content = f"In {case.family} tasks: '{shape(step.action, case.instruction)}' can meet '{rejection}'."
            if content not in known:
                known.add(content)
                operations.append(
                    WriteRule(
                        type="Special Phenomenon",
                        content=content,
                        example=f"{case.episode_id}@{step.index}: '{step.action}' → '{rejection}'",
                        validation_logs=[case.episode_id],
                    )
                )
    return BuilderAnswer("imperfect rules" if operations else "imperfect agent", operations)


def _failure(store: Store, case: BuildCase) -> BuilderAnswer:
    episode = store.episode(case.episode_id)
    assert episode is not None
    failure_case = build_case(store, episode)
    finding = locate(failure_case, benign_errors(store, case.family))
    at = next((s for s in case.steps if s.index == finding.step), None)
    reflection = LibraryEntry(
        kind="reflection",
        family=case.family,
        content=(
            f"Step {finding.step}: '{finding.failed_action or 'stopped'}'"
            + (
                f" → '{compile_heuristic.first_line(finding.observation)}'"
                if finding.observation
                else ""
            )
            + (
                f"; instead: '{finding.change}'"
                if finding.change
                else "; no success showed what to do instead"
            )
        ),
        episode_id=case.episode_id,
    )
    fired = [r for r in case.rules if r.id in case.fired]
    if fired:  # a followed rule did not prevent the failure: the rules are imperfect
        return BuilderAnswer(
            "imperfect rules", [_log(r, case.episode_id) for r in fired], [reflection]
        )
    if at is None:
        return BuilderAnswer("imperfect agent", [], [reflection])
    member = MemberCase(
        analysis_id=0,
        cluster_id=0,
        case=failure_case,
        initial_observation=first_observation(store, episode.id),
        contrast_initial_observation=first_observation(store, failure_case.contrast_id)
        if failure_case.contrast_id
        else "",
        start=finding.step,
        change=finding.change,
        trigger=trigger_of(finding, case.instruction),
        correction=shape(finding.change, case.instruction) if finding.change else "",
        contrast_step=finding.change_step,
        regime=regime_of(store, case.family),
    )
    form = None
    [proposal] = compile_heuristic.extract_specs([member])
    spec = to_spec(proposal, 0, "heuristic", {0: member})
    if spec.status == "supported":
        contract = compile_heuristic.contract_for(spec, "rule")
        form = contract["form"] if contract else None
    rejection = compile_heuristic.first_line(at.observation) or "no visible error"
    critical = is_critical(at)
    content = (
        f"In {case.family} tasks: '{shape(at.action, case.instruction)}' "
        + ("ended the task (critical)" if critical else f"met '{rejection}'")
        + (
            f"; do '{shape(finding.change, case.instruction)}' instead."
            if finding.change
            else "; what to do instead is still unknown."
        )
    )
    same = [r for r in case.rules if r.content == content]
    if same:
        return BuilderAnswer("imperfect agent", [_log(same[0], case.episode_id)], [reflection])
    write = WriteRule(
        type="Unsolved Error",
        content=content,
        example=f"{case.episode_id}@{at.index}: '{at.action}' → '{rejection}'",
        validation_logs=[case.episode_id],
        form=form,
    )
    return BuilderAnswer("imperfect rules", [write], [reflection])


def consolidate(rules: list[ManualRule], n_max: int) -> list[UpdateRule | DeleteRule]:
    """Merge rules that say the same thing (same type and form, or same type and content);
    then, while there are still more than ``n_max``, drop the least-evidenced phenomena and
    errors. Merging keeps every example and validation-log entry."""
    operations: list[UpdateRule | DeleteRule] = []
    kept: dict[tuple[str, str], ManualRule] = {}
    remaining = []
    for rule in rules:
        key = (rule.type, repr(rule.form) if rule.form else _gist(rule.content))
        keeper = kept.get(key)
        if keeper is None:
            kept[key] = rule
            remaining.append(rule)
            continue
        examples = "\n".join(dict.fromkeys(filter(None, [keeper.example, rule.example])))
        logs = list(dict.fromkeys([*keeper.validation_logs, *rule.validation_logs, rule.id]))
        keeper = keeper.model_copy(update={"example": examples, "validation_logs": logs})
        kept[key] = keeper
        operations.append(UpdateRule(rule_id=keeper.id, example=examples, validation_logs=logs))
        operations.append(DeleteRule(rule_id=rule.id))
    excess = len(remaining) - n_max
    if excess > 0:
        removable = sorted(
            (
                r
                for r in remaining
                if r.type in ("Special Phenomenon", "Unsolved Error") and not r.form
            ),
            key=lambda r: (
                "still unknown" not in r.content,  # errors nobody knows a fix for go first
                len(kept.get((r.type, _gist(r.content)), r).validation_logs),
            ),
        )
        operations += [DeleteRule(rule_id=r.id) for r in removable[:excess]]
    return operations


def _gist(content: str) -> str:
    """A rule's content with numbers and quoted specifics reduced (for spotting repeats)."""
    return re.sub(r"\d+", "N", content.lower())


class HeuristicBuilder:
    """The offline :class:`~workbench.manual.builder.Builder` and Consolidator over one
    store."""

    name = "heuristic"

    def __init__(self, store: Store) -> None:
        self.store = store

    def build_rules(self, case: BuildCase) -> BuilderAnswer:
        return build_rules(self.store, case)

    def consolidate(self, rules: list[ManualRule], n_max: int) -> list[UpdateRule | DeleteRule]:
        return consolidate(rules, n_max)
