"""The building stage: episodes and rule updates alternate, online.

Each planned episode runs on the environment with the rules that have an executable form as
guidance (every agent's actions are reviewed by them; an LLM agent or Planner also reads
every rule as text) and the library entry of the most similar task of its type
(:func:`~workbench.manual.library.library_note`; a Planner retrieves it itself once it has read
the task, recorded with the episode); the episode is recorded at once. The Builder then reads
it and its operations are applied in one transaction — after a success the Planner's code
becomes the task type's skill — and when the rules exceed ``n_max`` the Consolidator merges
and deletes until they hold (:func:`consolidate`). Episodes go to one batch (kind ``run``);
running the same build again resumes after the last recorded episode, with the rule system
as it was left.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

from store import Episode, LibraryEntry, ManualRule, Step, Store
from workbench.agents.guidance import Guidance, RuleForm
from workbench.llm.steps import CaseStep
from workbench.manual.builder import BuildCase, Builder, Outcome
from workbench.manual.evidence import evidence_of, family_of_rule, weakest_first
from workbench.manual.library import library_note
from workbench.manual.operations import SUCCESS_ONLY, DeleteRule, UpdateRule, apply
from workbench.progress import NullProgress, Progress, check_cancel
from workbench.runner import (
    EpisodeJob,
    Executor,
    Played,
    RunConfig,
    error_summary,
    open_batch,
    plan_batch,
)

CONSOLIDATION_ROUNDS = 3
"""Most Consolidator rounds after one episode."""
PLANNERS = ("planner", "openai-planner")
"""Agents that retrieve their own library entry from the database, with the task in hand."""
LIMIT_ACTOR = "consolidator:n-max"
"""Who the rule events name when the limit itself deletes the weakest rules."""


@dataclass
class BuildReport:
    """What a build did."""

    batch_id: str
    episodes: int = 0
    skipped: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    written: int = 0
    consolidations: int = 0
    refused: list[str] = field(default_factory=list)
    """Operations the case did not allow (e.g. a success-type rule from a failed run)."""


def guidance_of(store: Store) -> Guidance:
    """What the agent follows: every rule with an executable form (its content as the text an
    LLM agent reads)."""
    return _forms(store.manual_rules())


def _forms(rules: list[ManualRule]) -> Guidance:
    return Guidance(
        forms=[
            RuleForm.model_validate({**rule.form, "id": rule.id, "description": rule.content})
            for rule in rules
            if rule.form
        ]
    )


def rules_text(rules: list[ManualRule], note: LibraryEntry | None) -> str:
    """The rule system as an LLM agent reads it, with the task type's skill or reflection."""
    lines = ["Rules (from earlier episodes):"]
    for rule in rules:
        lines.append(f"- {rule.id} ({rule.type}): {rule.content}")
        if rule.example:
            lines.append(f"  Example: {rule.example}")
    if note is not None:
        title = (
            "Skill that solved this task type"
            if note.kind == "skill"
            else "Reflection on this task type"
        )
        lines += ["", f"{title}:", note.content]
    return "\n".join(lines) if len(lines) > 1 else ""


def build(
    store: Store,
    builder: Builder,
    config: RunConfig,
    *,
    executor: Executor,
    batch: str = "manual-build",
    n_max: int = 12,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> BuildReport:
    """Run the building stage for ``config.episodes`` episodes (resumable by ``batch``), each
    played on ``executor`` with the rules as they stand after the previous one.

    Raises:
        RuntimeError: the executor lost an episode (its worker died); nothing of it is
            recorded, so building again resumes there.
    """
    progress = progress or NullProgress()
    db_path = None if store.path == ":memory:" else store.path
    record, plan = open_batch(store, batch, config, lambda name: plan_batch(config, name))
    have = store.episode_ids(record.id)
    report = BuildReport(batch_id=record.id, skipped=len(have))
    todo = [job for job in plan if job.id not in have]
    progress.start(len(todo), "building rules")
    try:
        for planned in todo:
            check_cancel(cancel)
            rules = store.manual_rules()  # the rule system this episode runs with
            note = None
            if config.agent.kind not in PLANNERS:  # a Planner looks it up once it reads the task
                known = store.task(planned.task.task_id(config.env))
                note = library_note(store, planned.family, known.instruction if known else "")
            guidance = _forms(rules)
            # a model reads every rule and the library; the scripted agent follows the forms
            episode_config = config.model_copy(
                update={"guidance": guidance, "manual": rules_text(rules, note)}
            )
            played = _play(
                executor,
                EpisodeJob(
                    planned=planned, config=episode_config, batch_id=record.id, db_path=db_path
                ),
            )
            task, episode, steps = played.records()
            episode.metadata["manual_rules"] = [f.id for f in guidance.forms]
            if note is not None:
                episode.metadata.setdefault("library", note.id)
            with store.transaction():
                store.put_task(task)
                store.add_episode(episode, steps)
            _learn(
                store,
                builder,
                _case(task.family, task.instruction, episode, steps, rules, task.environment),
                report,
                n_max,
            )
            report.episodes += 1
            progress.advance(1, f"building rules ({len(store.manual_rules())} rules)")
    finally:
        progress.finish()
    return report


def learn_from(store: Store, builder: Builder, episode_id: str, *, n_max: int = 12) -> BuildReport:
    """What the Builder learns from one recorded episode, as the building loop does right
    after playing it: the case read from the store (with the rule system as it stands now),
    the Builder's operations applied, the rules consolidated to ``n_max``.

    Raises:
        ValueError: there is no such episode, or its task is not recorded.
    """
    episode = store.episode(episode_id)
    task = store.task(episode.task_id) if episode is not None else None
    if episode is None or task is None:
        raise ValueError(f"episode {episode_id!r} (or its task) is not in the database")
    report = BuildReport(batch_id=episode.batch_id)
    case = _case(
        task.family,
        task.instruction,
        episode,
        store.steps(episode.id),
        store.manual_rules(),
        task.environment,
    )
    _learn(store, builder, case, report, n_max)
    report.episodes = 1
    return report


def _play(executor: Executor, job: EpisodeJob) -> Played:
    """One episode, played on the executor (the next one depends on what it teaches)."""
    with contextlib.closing(executor.run([job])) as results:
        for _, result in results:
            if isinstance(result, BaseException):
                raise RuntimeError(
                    f"episode {job.planned.id} was lost ({error_summary(result)}); "
                    "build again to resume"
                ) from result
            return result
    raise RuntimeError(f"the executor returned nothing for episode {job.planned.id}")


def _case(
    family: str,
    instruction: str,
    episode: Episode,
    steps: list[Step],
    rules: list[ManualRule],
    environment: str = "",
) -> BuildCase:
    """What the Builder reads of a played episode."""
    uses = episode.metadata.get("guidance_uses", [])
    fired_at: dict[str, int] = {}
    for use in uses:
        fired_at.setdefault(use["artifact"], use["step"])
    return BuildCase(
        episode_id=episode.id,
        family=family,
        instruction=instruction,
        steps=[
            CaseStep(index=s.index, action=s.action, observation=s.observation, reward=s.reward)
            for s in steps
            if s.action
        ],
        success=bool(episode.outcome.success),
        rules=rules,
        fired=[u["artifact"] for u in uses],
        fired_at=fired_at,
        thoughts={s.index: s.thought for s in steps if s.thought},
        environment=environment,
        plan_code=(episode.metadata.get("planner") or {}).get("code", ""),
    )


def _learn(
    store: Store, builder: Builder, case: BuildCase, report: BuildReport, n_max: int
) -> None:
    outcome: Outcome = case.outcome
    report.outcomes[outcome] = report.outcomes.get(outcome, 0) + 1
    answer = builder.build_rules(case)
    allowed = []
    for operation in answer.operations:
        refusal = _refusal(store, operation, case)
        if refusal:
            report.refused.append(f"{case.episode_id}: {refusal}")
            continue
        allowed.append(operation)
    actor = f"builder:{builder.name}"
    with store.transaction():
        apply(store, allowed, actor, case.episode_id)
        for entry in library_entries(case, answer.library):
            store.add_library_entry(entry)
    report.written += sum(1 for op in allowed if op.op == "write_rule")
    consolidate(store, builder, n_max, report, case.episode_id)


def library_entries(case: BuildCase, notes: list[LibraryEntry]) -> list[LibraryEntry]:
    """What the libraries keep of an episode: after a success the Planner's code, when a
    Planner played it (the paper's skill), else the Builder's skill note; after a failure the
    Builder's reflection."""
    if case.success and case.plan_code.strip():
        skill = LibraryEntry(
            kind="skill", family=case.family, content=case.plan_code, episode_id=case.episode_id
        )
        return [skill, *(n for n in notes if n.kind != "skill")]
    return notes


def _refusal(store: Store, operation: object, case: BuildCase) -> str:
    """Why the case does not allow ``operation`` (empty when it does): a success-type rule
    from a failed run, or an error called corrected where no run of its own task type shows
    the correction working (a failed run, or a rule of another task type)."""
    kind = getattr(operation, "type", None)
    if case.outcome == "failure" and kind in (*SUCCESS_ONLY, "Corrected Error"):
        return f"{kind} from a failed run"
    if kind == "Corrected Error" and isinstance(operation, UpdateRule):
        rule = store.manual_rule(operation.rule_id)
        if rule is not None and rule.type != kind:
            family = family_of_rule(store, rule)
            if family and family != case.family:
                return (
                    f"{rule.id} called corrected by a {case.family} run, but it is about "
                    f"{family} tasks"
                )
    return ""


def consolidate(
    store: Store, builder: Builder, n_max: int, report: BuildReport, episode_id: str | None
) -> None:
    """Bring the rule system to at most ``n_max`` rules: the Consolidator's rounds (a delete
    that would drop a rule still preventing a critical failure while a weaker rule stays is
    refused), then — whatever the backend answered — the weakest rules deleted until the
    limit holds (:func:`~workbench.manual.evidence.weakest_first`)."""
    for _ in range(CONSOLIDATION_ROUNDS):
        rules = store.manual_rules()
        if len(rules) <= n_max:
            return
        operations = _spare_protected(store, rules, builder.consolidate(rules, n_max), report)
        if not operations:
            break
        apply(store, operations, f"consolidator:{builder.name}", episode_id)
        report.consolidations += 1
    rules = store.manual_rules()
    if len(rules) > n_max:
        excess = weakest_first(store, rules)[: len(rules) - n_max]
        apply(store, [DeleteRule(rule_id=r.id) for r in excess], LIMIT_ACTOR, episode_id)
        report.consolidations += 1


def _spare_protected(
    store: Store,
    rules: list[ManualRule],
    operations: list[UpdateRule | DeleteRule],
    report: BuildReport,
) -> list[UpdateRule | DeleteRule]:
    """The Consolidator's operations without deletes of rules whose validation log still
    shows them preventing a critical failure while an unprotected rule is kept (a merge into
    a rule with the same executable form is not a loss and stays)."""
    deleted = {op.rule_id for op in operations if isinstance(op, DeleteRule)}
    evidence = {r.id: evidence_of(store, r) for r in rules}
    weaker_kept = any(not evidence[r.id].protects and r.id not in deleted for r in rules)
    by_id = {r.id: r for r in rules}
    kept = []
    for op in operations:
        if isinstance(op, DeleteRule) and op.rule_id in evidence and evidence[op.rule_id].protects:
            merged = any(
                isinstance(other, UpdateRule)
                and op.rule_id in (other.validation_logs or [])
                and by_id.get(other.rule_id) is not None
                and by_id[other.rule_id].form == by_id[op.rule_id].form
                for other in operations
            )
            if weaker_kept and not merged:
                report.refused.append(
                    f"delete {op.rule_id}: its log shows it preventing a critical failure "
                    "while weaker rules remain"
                )
                continue
        kept.append(op)
    return kept
