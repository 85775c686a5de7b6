"""The offline Builder and Consolidator (:class:`HeuristicBuilder`): rules read off one
episode's evidence, and rules merged or deleted when there are too many.

The Builder first decides the case — the outcome (direct success, indirect success, failure)
and the cause of what went wrong (imperfect rules or imperfect agent) — then writes only the
rule types that case allows (a failed run never yields a success-type rule). Every type is
written where the run's evidence supports it (read through the world's lexicon):

- **Success Process** (a success): the run's phases (:func:`~workbench.manual.procedures.phases`)
  for the task type, once; later successes add their episode to its validation log; and a
  skill-library procedure;
- **Useful Helper Method** (a success): two consecutive actions naming the same thing, done
  with two different things in the run, as a function over ``act``;
- **Special Mechanism** (a success): a repeated cycle of actions while what one of them shows
  changes — how the environment behaves as time passes;
- **Corrected Error**: in an indirect success, a rejected action the run got through by doing
  something else first (with a form that makes the correction after the rejection); and an
  *Unsolved Error* whose rule acted in a later success **of the same task type** — the
  correction shown working;
- **Special Phenomenon** (an indirect success): a rejection the run never needed to correct;
- **Unsolved Error** (a failure): the causal step located as the analyzer does and read like a
  compile spec (:mod:`workbench.compile.heuristic`), executable when the reading yields a
  single-decision rule; and a reflection-library entry with the faulty step. When a followed
  rule acted in the failed run, the rules are imperfect: that rule's validation log records
  the failure.

A rule that acted in an episode gets ``episode@step`` in its validation log, so the log
shows where it was followed (:mod:`workbench.manual.evidence` reads it back).

The Consolidator merges rules that say the same thing, then rules of one type and scope that
list facts, then deletes the weakest (:func:`~workbench.manual.evidence.weakest_first`) until
the rule system holds ``n_max`` — a rule whose log shows it preventing a critical failure last.
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
from workbench.envs.registry import lexicon_of
from workbench.manual import procedures
from workbench.manual.builder import BuildCase, BuilderAnswer
from workbench.manual.evidence import family_of_rule, weakest_first
from workbench.manual.heuristic import split_scope
from workbench.manual.operations import DeleteRule, UpdateRule, WriteRule

MAX_PHASES = 10
"""Phases a Success Process lists (the rest are counted)."""
MERGEABLE = ("Special Phenomenon", "Special Mechanism", "Unsolved Error")
"""Types whose rules of one scope the Consolidator may join into one (when they carry no
executable form): each lists facts that read as well side by side."""


def _log(rule: ManualRule, entry: str) -> UpdateRule:
    return UpdateRule(rule_id=rule.id, validation_logs=[*rule.validation_logs, entry])


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
    learnt = [*_mechanisms(case), *_helpers(case)]
    answer.operations = [*_followed(store, case), *answer.operations, *learnt]
    if learnt and answer.cause == "imperfect agent":
        answer.cause = "imperfect rules"
    return answer


def _acted(case: BuildCase, rule: ManualRule) -> str:
    """The validation-log entry of a rule that acted in the case: ``episode@step``."""
    step = case.fired_at.get(rule.id)
    return f"{case.episode_id}@{step}" if step is not None else case.episode_id


def _followed(store: Store, case: BuildCase) -> list[UpdateRule]:
    """Rules that acted in a successful run: an Unsolved Error of this task type is corrected
    by it (the correction shown working); any other rule gets the run in its log."""
    operations = []
    for rule in case.rules:
        if rule.id not in case.fired:
            continue
        entry = _acted(case, rule)
        if (
            rule.type == "Unsolved Error"
            and rule.form
            and family_of_rule(store, rule) == case.family
        ):
            operations.append(
                UpdateRule(
                    rule_id=rule.id,
                    type="Corrected Error",
                    content=rule.content.replace(
                        "; what to do instead is still unknown.",
                        "; not doing it worked in a later run of this task type.",
                    ),
                    validation_logs=[*rule.validation_logs, entry],
                    example=f"{rule.example}\nCorrected in {entry}: the rule acted and the task "
                    "succeeded.".lstrip("\n"),
                )
            )
        else:
            operations.append(_log(rule, entry))
    return operations


def _success(case: BuildCase) -> BuilderAnswer:
    procedure = _procedure(case)
    lexicon = lexicon_of(case.environment)
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
    found = procedures.phases(case.steps, case.instruction, lexicon)
    listed = [f"({k}) {p.describe(lexicon)}" for k, p in enumerate(found[:MAX_PHASES], 1)]
    more = len(found) - MAX_PHASES
    write = WriteRule(
        type="Success Process",
        content=f"{case.family} tasks: solved in {len(found)} phase"
        + ("s" if len(found) != 1 else "")
        + " — "
        + "; ".join(listed)
        + (f"; and {more} more" if more > 0 else "")
        + ". (<E1>, <E2>… stand for the phrases the task names, in order.)",
        example=f"{case.episode_id}: {len(case.steps)} actions, no rejected action; the phases "
        f"cover steps {found[0].steps[0]}–{found[-1].steps[-1]}"
        if found
        else f"{case.episode_id}: no accepted action",
        validation_logs=[case.episode_id],
    )
    return BuilderAnswer("imperfect rules", [write], [skill])


def _mechanisms(case: BuildCase) -> list[WriteRule | UpdateRule]:
    """A Special Mechanism for the first cycle whose result changed (once per task type and
    action; a later run adds itself to the rule's log)."""
    lexicon = lexicon_of(case.environment)
    for found in procedures.changing_cycles(case.steps, case.instruction, lexicon)[:1]:
        content = (
            f"In {case.family} tasks: what '{found.changed}' shows changes while the agent keeps "
            f"acting; repeating '{'; '.join(found.cycle)}' lets the change show, so keep "
            "repeating it until the result changes."
        )
        same = next((r for r in case.rules if r.content == content), None)
        if same is not None:
            return [_log(same, case.episode_id)]
        return [
            WriteRule(
                type="Special Mechanism",
                content=content,
                example=f"{case.episode_id}@{found.steps[0]}-{found.steps[-1]}: "
                f"'{found.changed}' showed '{found.first}' at first and '{found.last}' at "
                f"the end",
                validation_logs=[f"{case.episode_id}@{found.steps[0]}-{found.steps[-1]}"],
            )
        ]
    return []


def _helpers(case: BuildCase) -> list[WriteRule | UpdateRule]:
    """A Useful Helper Method for the first recurring pair of the run (a rule already
    holding its code gets the run in its log, and its scope widens when another task type
    uses it)."""
    lexicon = lexicon_of(case.environment)
    for helper in procedures.helpers(case.steps, case.instruction, lexicon)[:1]:
        code = helper.code(lexicon)
        cited = f"{case.episode_id}@{helper.steps[0]}-{helper.steps[-1]}"
        same = next(
            (r for r in case.rules if r.type == "Useful Helper Method" and r.example == code),
            None,
        )
        if same is not None:
            scope, rest = split_scope(same.content)
            if scope.lower() in (f"in {case.family} tasks", "in any task"):
                return [_log(same, cited)]
            return [
                UpdateRule(
                    rule_id=same.id,
                    content=f"In any task:{rest}",
                    validation_logs=[*same.validation_logs, cited],
                )
            ]
        things = len(helper.fillers)
        return [
            WriteRule(
                type="Useful Helper Method",
                content=f"In {case.family} tasks: {helper.name(lexicon)} — "
                f"{helper.words(lexicon)}; one run did it with {things} different values.",
                example=code,
                validation_logs=[cited],
            )
        ]
    return []


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
            "imperfect rules", [_log(r, _acted(case, r)) for r in fired], [reflection]
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


def consolidate(store: Store, rules: list[ManualRule], n_max: int) -> list[UpdateRule | DeleteRule]:
    """Merge rules that say the same thing (same type and form, or same type and content);
    while there are more than ``n_max``, join formless rules of one type and scope that list
    facts (:data:`MERGEABLE`), then delete the weakest
    (:func:`~workbench.manual.evidence.weakest_first`) until ``n_max`` hold. Merging keeps
    every example and validation-log entry (and the merged rule's id)."""
    operations: list[UpdateRule | DeleteRule] = []
    live = {rule.id: rule for rule in rules}

    def merge(keeper: ManualRule, rule: ManualRule, content: str | None = None) -> None:
        examples = "\n".join(dict.fromkeys(filter(None, [keeper.example, rule.example])))
        logs = list(dict.fromkeys([*keeper.validation_logs, *rule.validation_logs, rule.id]))
        update = {"example": examples, "validation_logs": logs}
        if content is not None:
            update["content"] = content
        live[keeper.id] = keeper.model_copy(update=update)
        del live[rule.id]
        operations.append(UpdateRule(rule_id=keeper.id, **update))
        operations.append(DeleteRule(rule_id=rule.id))

    kept: dict[tuple[str, str], str] = {}
    for rule in rules:
        key = (rule.type, repr(rule.form) if rule.form else _gist(rule.content))
        if key in kept:
            merge(live[kept[key]], rule)
        else:
            kept[key] = rule.id
    for rule in list(live.values()):
        if len(live) <= n_max:
            break
        if rule.id not in live or rule.form or rule.type not in MERGEABLE:
            continue
        scope, rest = split_scope(rule.content)
        keeper = next(
            (
                other
                for other in live.values()
                if other.id != rule.id
                and other.type == rule.type
                and not other.form
                and scope
                and split_scope(other.content)[0] == scope
            ),
            None,
        )
        if keeper is not None:
            content = keeper.content.rstrip().rstrip(".") + "; " + rest.strip()
            merge(keeper, rule, content)
    excess = len(live) - n_max
    if excess > 0:
        operations += [
            DeleteRule(rule_id=r.id) for r in weakest_first(store, list(live.values()))[:excess]
        ]
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
        return consolidate(self.store, rules, n_max)
