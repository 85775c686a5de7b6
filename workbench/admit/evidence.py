"""Recorded decision points: what an agent could see before each stored action, rebuilt from
the store, and where an episode can be replayed from (its task, seed and run configuration)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from store import ArtifactVersion, Citation, Episode, Gate, GateCheck, Step, Store
from workbench.compile.contracts import TriggerCase
from workbench.envs.registry import lexicon_of
from workbench.runner import RunConfig

HISTORY = 6
"""Recent ``(action, observation)`` pairs in the evidence (as the agents keep them)."""


def decision_points(
    store: Store, episode_id: str, instruction: str | None = None
) -> Iterator[tuple[Step, TriggerCase]]:
    """Every action step of an episode with the evidence the agent had before taking it (the
    latest room text is the latest observation its world's lexicon reads as a scene)."""
    episode = store.episode(episode_id)
    task = store.task(episode.task_id) if episode else None
    if instruction is None:
        instruction = task.instruction if task else ""
    lexicon = lexicon_of(task.environment if task else "")
    observation, look = "", ""
    history: list[tuple[str, str]] = []
    for step in store.steps(episode_id):
        if step.action:
            yield (
                step,
                TriggerCase(
                    action=step.action,
                    instruction=instruction,
                    observation=observation,
                    look=look,
                    history=history[-HISTORY:],
                    citation=Citation(episode_id=episode_id, start=step.index, end=step.index),
                ),
            )
            history.append((step.action, step.observation))
        observation = step.observation or observation
        if step.observation and lexicon.scene(step.observation) is not None:
            look = step.observation


def trigger_cases(store: Store, citations: list[Citation]) -> list[TriggerCase]:
    """The decision points the citations cover (each step of each cited span)."""
    cases: list[TriggerCase] = []
    by_episode: dict[str, list[Citation]] = {}
    for citation in citations:
        by_episode.setdefault(citation.episode_id, []).append(citation)
    for episode_id, cited in by_episode.items():
        for step, case in decision_points(store, episode_id):
            if any(c.start <= step.index <= c.end for c in cited):
                cases.append(case)
    return cases


@dataclass(frozen=True)
class Origin:
    """Where a recorded episode can be replayed from."""

    episode: Episode
    config: RunConfig
    variation: int


def origin_of(store: Store, episode: Episode) -> Origin | None:
    """The run that produced ``episode`` (``None`` for imported episodes and replays)."""
    if episode.source.format != "run" or episode.seed is None:
        return None
    batch = store.batch(episode.batch_id) if episode.batch_id else None
    task = store.task(episode.task_id)
    if batch is None or batch.kind != "run" or task is None or "config" not in batch.params:
        return None
    variation = task.metadata.get("variation")
    if not isinstance(variation, int):
        return None
    return Origin(episode, RunConfig.model_validate(batch.params["config"]), variation)


NOT_REPLAYED = "not replayed"
"""The check a version admitted without replay carries in place of a replay gate."""


def recorded_only(store: Store, version: ArtifactVersion) -> bool:
    """Whether every run a version's evidence comes from is an imported log (no run
    configuration to replay it from): its replay gate cannot run."""
    cited = {
        case.citation.episode_id
        for key in ("positive", "negative")
        for case in map(TriggerCase.model_validate, version.contract.get(key, []))
        if case.citation is not None
    }
    cited |= {case.episode_id for case in version.cases}
    episodes = [store.episode(episode_id) for episode_id in sorted(cited)]
    known = [e for e in episodes if e is not None]
    return bool(known) and all(imported(e) for e in known)


def imported(episode: Episode) -> bool:
    """Whether an episode was read from a log by an importer (its source names the format;
    not recorded by the workbench's own runner): nothing can replay it."""
    return episode.source.format not in ("", "run")


def not_replayed(version: ArtifactVersion) -> bool:
    """Whether the version was admitted without a replay gate (explicitly)."""
    gate = version.replay_gate
    return gate is not None and any(check.name == NOT_REPLAYED for check in gate.checks)


def without_replay_gate(decision_points: int) -> Gate:
    """What stands in for the replay gate of a version admitted explicitly without one."""
    return Gate(
        passed=True,
        checks=[
            GateCheck(
                name=NOT_REPLAYED,
                passed=True,
                detail=f"admitted explicitly without replay: its contract gate ran on "
                f"{decision_points} recorded decision point(s) of imported runs; whether it "
                "helps or harms a live agent was never measured",
            )
        ],
        stats={"not_replayed": True},
    )
