"""The building stage: episodes and rule updates alternate, online.

Each planned episode runs on the environment with the rules that have an executable form as
guidance (the scripted agent follows them; an LLM agent also gets every rule as text) and
the latest skill (else reflection) of its task type retrieved from the library (recorded
with the episode); the episode is recorded at once. The Builder then reads it and its operations are applied in one transaction; when
the rules exceed ``n_max`` the Consolidator merges and deletes, in a bounded loop. Episodes
go to one batch (kind ``run``); running the same build again resumes after the last recorded
episode, with the rule system as it was left.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from store import LibraryEntry, ManualRule, Store
from workbench.agents.guidance import Guidance, RuleForm
from workbench.envs.base import Environment
from workbench.llm.steps import CaseStep
from workbench.manual.builder import BuildCase, Builder, Outcome
from workbench.manual.operations import SUCCESS_ONLY, apply
from workbench.progress import NullProgress, Progress, check_cancel
from workbench.runner import RunConfig, build_agent, build_env, open_batch, plan_run, play_episode

CONSOLIDATION_ROUNDS = 3
"""Most Consolidator rounds after one episode."""


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


def library_note(store: Store, family: str) -> LibraryEntry | None:
    """The entry shown for the next task of ``family``: its latest skill, else reflection."""
    for kind in ("skill", "reflection"):
        found = store.library(kind, family)  # type: ignore[arg-type]
        if found:
            return found[0]
    return None


def build(
    store: Store,
    builder: Builder,
    config: RunConfig,
    *,
    batch: str = "manual-build",
    n_max: int = 12,
    env: Environment | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> BuildReport:
    """Run the building stage for ``config.episodes`` episodes (resumable by ``batch``)."""
    progress = progress or NullProgress()
    db_path = None if store.path == ":memory:" else store.path
    own_env = env is None
    env = env or build_env(config, db_path)
    try:
        record, plan = open_batch(store, batch, config, lambda name: plan_run(config, env, name))
        have = store.episode_ids(record.id)
        report = BuildReport(batch_id=record.id, skipped=len(have))
        agent = build_agent(config.agent, db_path)
        todo = [job for job in plan if job.id not in have]
        progress.start(len(todo), "building rules")
        for job in todo:
            check_cancel(cancel)
            rules = store.manual_rules()  # the rule system this episode runs with
            note = library_note(store, job.family)
            guidance = _forms(rules)
            manual = rules_text(rules, note)
            if config.agent.kind != "scripted":  # a model reads every rule and the library
                agent = build_agent(config.agent, db_path, manual)
            played = play_episode(
                env,
                agent,
                job,
                config.model_copy(update={"guidance": guidance, "manual": manual}),
                record.id,
            )
            task, episode, steps = played.records()
            episode.metadata["manual_rules"] = [f.id for f in guidance.forms]
            if note is not None:
                episode.metadata["library"] = note.id
            with store.transaction():
                store.put_task(task)
                store.add_episode(episode, steps)
            case = BuildCase(
                episode_id=episode.id,
                family=task.family,
                instruction=task.instruction,
                steps=[
                    CaseStep(
                        index=s.index, action=s.action, observation=s.observation, reward=s.reward
                    )
                    for s in steps
                    if s.action
                ],
                success=bool(episode.outcome.success),
                rules=rules,
                fired=[u["artifact"] for u in episode.metadata.get("guidance_uses", [])],
                thoughts={s.index: s.thought for s in steps if s.thought},
            )
            _learn(store, builder, case, report, n_max)
            report.episodes += 1
            progress.advance(1, f"building rules ({len(store.manual_rules())} rules)")
    finally:
        progress.finish()
        if own_env:
            env.close()
    return report


def _learn(
    store: Store, builder: Builder, case: BuildCase, report: BuildReport, n_max: int
) -> None:
    outcome: Outcome = case.outcome
    report.outcomes[outcome] = report.outcomes.get(outcome, 0) + 1
    answer = builder.build_rules(case)
    allowed = []
    for operation in answer.operations:
        if outcome == "failure" and getattr(operation, "type", None) in SUCCESS_ONLY:
            report.refused.append(f"{case.episode_id}: {operation.type} from a failed run")
            continue
        allowed.append(operation)
    actor = f"builder:{builder.name}"
    with store.transaction():
        apply(store, allowed, actor, case.episode_id)
        for entry in answer.library:
            store.add_library_entry(entry)
    report.written += sum(1 for op in allowed if op.op == "write_rule")
    for _ in range(CONSOLIDATION_ROUNDS):
        rules = store.manual_rules()
        if len(rules) <= n_max:
            break
        operations = builder.consolidate(rules, n_max)
        if not operations:
            break
        apply(store, operations, f"consolidator:{builder.name}", case.episode_id)
        report.consolidations += 1
