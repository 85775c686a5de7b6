"""Running agents on environments and recording the episodes.

A run is a batch whose parameters hold its configuration and its plan (one entry per
episode, with a deterministic id and seed). Each episode is sent as an :class:`EpisodeJob` to
the :class:`Executor` the caller passes (:mod:`workbench.executors`: worker processes that keep
their environment — with its simulator — across episodes), and every finished episode is
written at once, in its own transaction, by this process. Running a batch again skips the
episodes it already holds, so a killed run resumes without duplicating or losing episodes.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from store import Batch, Episode, LLMCall, Outcome, Source, Step, Store, Task, Usage
from store.records import BatchKind, Split
from workbench.agents.base import Agent, AgentSpec, Interaction, OutOfSteps
from workbench.agents.guidance import Guidance
from workbench.agents.registry import make_agent
from workbench.envs.base import Environment, EnvOptions, EnvTask
from workbench.envs.registry import default_environment, make_environment
from workbench.limits import Limits
from workbench.progress import NullProgress, Progress, check_cancel


class RunConfig(BaseModel):
    """Everything that determines a run's trajectories."""

    model_config = ConfigDict(extra="forbid")

    env: str = Field(default_factory=default_environment, min_length=1)
    """The environment plugin's name (entry-point group ``workbench.environments``); the
    workbench's own default when not given. Stored configurations always carry it."""
    families: list[str] = Field(min_length=1)
    split: Split = "train"
    episodes: int = Field(default=10, ge=1)
    """Episodes in the run, spread round-robin over the families."""
    seed: int = 0
    step_limit: int = Field(default=100, ge=1)
    simplifications: str = ""
    """The environment's variant of its world, in its own syntax (empty: the standard one)."""
    agent: AgentSpec = Field(default_factory=AgentSpec)
    guidance: Guidance = Field(default_factory=Guidance)
    """Artifacts the agent follows (empty: none)."""
    manual: str = ""
    """The formulated manual an LLM agent reads (empty: none)."""


class PlannedEpisode(BaseModel):
    """One episode of a run's plan."""

    id: str
    family: str
    variation: int
    split: Split
    trial: int
    """Repeat number when the plan needs more episodes than the split has variations."""
    seed: int
    instruction: str | None = None
    """What the agent is asked to do instead of the world's own instruction (e.g. a
    synthesized task); ``None``: the world's. The stored task keeps the world's; the episode's
    metadata records both (``instruction`` and ``world_instruction``)."""
    metadata: dict[str, Any] | None = None
    """Facts recorded in the episode's metadata (e.g. the synthesized task it plays)."""

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A plan entry without an instruction or metadata serializes exactly as before they
        existed (stored plans and job payloads of ordinary runs do not change)."""
        data = handler(self)
        for key in ("instruction", "metadata"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    @property
    def task(self) -> EnvTask:
        """The task instance the episode plays."""
        return EnvTask(self.family, self.variation, self.split)


def episode_seed(seed: int, family: str, variation: int, trial: int) -> int:
    """A stable per-episode seed derived from the run seed."""
    digest = hashlib.sha256(f"{seed}:{family}:{variation}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def plan_run(config: RunConfig, env: Environment, batch_id: str) -> list[PlannedEpisode]:
    """The run's episodes: families in turn, each family's variations in a seeded order."""
    orders: dict[str, list[EnvTask]] = {}
    for family in config.families:
        tasks = env.tasks(family, config.split)
        if not tasks:
            raise ValueError(f"{env.name} has no {config.split} variations of {family!r}")
        orders[family] = random.Random(f"{config.seed}:{family}").sample(tasks, len(tasks))
    plan = []
    for k in range(config.episodes):
        family = config.families[k % len(config.families)]
        turn = k // len(config.families)
        tasks = orders[family]
        task, trial = tasks[turn % len(tasks)], turn // len(tasks)
        plan.append(
            PlannedEpisode(
                id=f"{batch_id}:{family}:{task.variation}" + (f":{trial}" if trial else ""),
                family=family,
                variation=task.variation,
                split=config.split,
                trial=trial,
                seed=episode_seed(config.seed, family, task.variation, trial),
            )
        )
    return plan


# -- one episode --------------------------------------------------------------------------------


@dataclass
class Played:
    """A finished episode, as plain data that crosses processes."""

    task: dict[str, Any]
    episode: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    """What ended the episode in error, in one line (:func:`error_summary`); empty if nothing did."""
    gold_paths: dict[str, list[str]] = field(default_factory=dict)
    """Reference solutions the world kept while the episode was played away from the database
    (on a remote worker): written by the process that records the episode, first one kept."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Model calls logged away from the database, as records: the recording process logs them
    and links them to the episode (in place of ``call_ids`` in its metadata)."""

    def records(self) -> tuple[Task, Episode, list[Step]]:
        return (
            Task.model_validate(self.task),
            Episode.model_validate(self.episode),
            [Step.model_validate(s) for s in self.steps],
        )


def play_episode(
    env: Environment, agent: Agent, planned: PlannedEpisode, config: RunConfig, batch_id: str
) -> Played:
    """Play one planned episode; an exception inside becomes a failed episode, not a crash."""
    started = datetime.now(UTC)
    reset = env.reset(planned.task, planned.seed)
    shown = (
        reset if planned.instruction is None else replace(reset, instruction=planned.instruction)
    )
    interaction = Interaction(
        env, shown, config.step_limit, episode_id=planned.id, family=planned.family
    )
    metadata: dict[str, Any] = {
        "trial": planned.trial,
        "step_limit": config.step_limit,
        **reset.info,
    }
    if planned.instruction is not None:
        metadata |= {"instruction": planned.instruction, "world_instruction": reset.instruction}
    metadata |= planned.metadata or {}
    error = summary = ""
    try:
        metadata.update(agent.play(interaction, random.Random(planned.seed), config.guidance))
    except OutOfSteps:
        pass
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        summary = error_summary(exc)
        metadata["error"] = traceback.format_exc(limit=20)
    if interaction.uses:
        metadata["guidance_uses"] = interaction.uses
    if interaction.delegations:
        metadata["guidance_delegations"] = interaction.delegations
    usage = Usage.model_validate(metadata.get("usage") or {})
    success = env.success() and not error
    task = Task(
        id=planned.task.task_id(env.name),
        environment=env.name,
        family=planned.family,
        instruction=reset.instruction,
        split=planned.split,
        metadata={"variation": planned.variation},
    )
    episode = Episode(
        id=planned.id,
        task_id=task.id,
        agent=agent.name,
        batch_id=batch_id,
        seed=planned.seed,
        outcome=Outcome(
            success=success, score=interaction.score, message=_verdict(interaction, success, error)
        ),
        usage=usage,
        source=Source(format="run", record=planned.id),
        started_at=started,
        ended_at=datetime.now(UTC),
        metadata=metadata,
    )
    steps = [
        Step(
            episode_id=planned.id,
            index=0,
            kind="observation",
            role="environment",
            observation=reset.observation,
        )
    ]
    steps += [
        Step(
            episode_id=planned.id,
            index=i,
            kind="action",
            role="agent",
            thought=t.thought,
            action=t.action,
            observation=t.observation,
            reward=t.reward,
            raw={**t.info, "source": t.source, "score": t.score},
        )
        for i, t in enumerate(interaction.taken, start=1)
    ]
    return Played(
        task=task.model_dump(mode="json"),
        episode=episode.model_dump(mode="json"),
        steps=[s.model_dump(mode="json") for s in steps],
        error=summary,
    )


def error_summary(error: BaseException) -> str:
    """One line saying what went wrong, the same for every episode it happened to: an agent
    process that exited by itself is ``agent exited with code N``, anything else its type and
    first line; then the last line the agent wrote to stderr, if any (e.g. ``agent exited with
    code 2: python: can't open file …``)."""
    first = next(iter(str(error).splitlines()), "")
    code = getattr(error, "returncode", None)  # an agent process (any agent plugin) that ended
    if isinstance(code, int) and code >= 0 and first.endswith(f"(exit status {code})"):
        head = f"agent exited with code {code}"
    else:
        head = f"{type(error).__name__}: {first}" if first else type(error).__name__
    said = [line.strip() for line in getattr(error, "stderr", "").splitlines() if line.strip()]
    return f"{head}: {said[-1]}" if said else head


def _verdict(interaction: Interaction, success: bool, error: str) -> str:
    """The evaluator-visible message: how the episode ended, in the environment's terms."""
    score = f"score {interaction.score:g}"
    last = interaction.taken[-1].action if interaction.taken else ""
    if error:
        return f"Agent error: {error} ({score})"
    if success:
        return f"Task completed ({score})"
    if interaction.score < 0:
        return f"Critical failure ({score}) after: {last}"
    if len(interaction.taken) >= interaction.step_limit:
        return f"Step limit {interaction.step_limit} reached ({score})"
    return f"Agent stopped before completing the task ({score})"


# -- what a worker builds, and the executor seam -----------------------------------------------


def build_env(config: RunConfig, db_path: str | None = None) -> Environment:
    """The environment a run uses (its plugin builds it); with a database, gold paths are kept
    canonical in it."""
    gold_paths = Store(db_path) if db_path else None
    options = EnvOptions(
        config.step_limit, config.simplifications, gold_paths, cache_dir_beside(db_path)
    )
    return make_environment(config.env, options)


def cache_dir_beside(db_path: str | None) -> str:
    """The folder worlds keep generated files in for the database ``db_path``
    (``runs/w.db`` → ``runs/w.cache``); empty for an in-memory store (the world's default)."""
    if not db_path or db_path == ":memory:":
        return ""
    return str(Path(db_path).with_suffix(".cache"))


def build_agent(spec: AgentSpec, db_path: str | None, manual: str = "") -> Agent:
    """The agent a spec describes, built by its plugin inside the worker that runs it; an
    agent that reads a manual gets ``manual``."""
    return make_agent(spec, db_path, manual)


class EpisodeJob(BaseModel):
    """One episode to play, with everything needed to play it anywhere (plain data, so it
    crosses processes and machines)."""

    model_config = ConfigDict(frozen=True)

    planned: PlannedEpisode
    config: RunConfig
    """The run configuration it is played with (environment, agent, guidance, manual)."""
    batch_id: str
    db_path: str | None = None
    """The database the agent logs and caches its model calls in, and the environment keeps
    its gold paths in (``None``: neither is kept)."""
    limits: Limits | None = None
    """Time and memory the episode may use (``None``: unlimited); episodes that follow
    candidate artifacts carry them."""


class Executor(Protocol):
    """Where episodes are played (the scale-out seam; :mod:`workbench.executors` holds the
    implementations). The caller creates one, passes it to every stage that plays episodes —
    any number of batches and run configurations, one batch at a time — and closes it."""

    def run(self, jobs: list[EpisodeJob]) -> Iterator[tuple[EpisodeJob, Played | BaseException]]:
        """Play the jobs, each under its own limits; yield ``(job, the played episode or the
        exception that lost it)`` in completion order. Closing the iterator early drops the
        jobs not yet started and waits for those in flight."""
        ...

    def close(self) -> None:
        """Stop the workers and close their environments."""
        ...


# -- a whole run -----------------------------------------------------------------------------------


@dataclass
class RunReport:
    """What a run did."""

    batch_id: str
    planned: int
    skipped: int
    """Episodes already in the batch (from an earlier, interrupted run)."""
    finished: int = 0
    failed: int = 0
    lost: list[str] = field(default_factory=list)
    """Episodes whose worker died twice: recorded as failed with the error."""
    errors: Counter[str] = field(default_factory=Counter)
    """How many episodes each distinct error ended (:func:`error_summary`), most first."""


def open_batch(
    store: Store,
    name: str | None,
    config: RunConfig,
    planner: Callable[[str], list[PlannedEpisode]],
    kind: BatchKind = "run",
) -> tuple[Batch, list[PlannedEpisode]]:
    """The run's batch and plan: an existing batch of that name resumes with its own plan
    (its configuration must match), a new one is created with a fresh plan."""
    existing = store.batch(name) if name else None
    if existing is not None:
        stored = RunConfig.model_validate(existing.params.get("config", {}))
        if existing.kind != kind or stored != config:
            raise ValueError(
                f"batch {name!r} exists with a different configuration; resume it with "
                f"`workbench run --resume {name}` or pick another --batch name"
            )
        return existing, [PlannedEpisode.model_validate(p) for p in existing.params["plan"]]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    batch_id = name or f"run-{stamp}"
    plan = planner(batch_id)
    batch = Batch(
        id=batch_id,
        name=batch_id,
        kind=kind,
        params={"config": config.model_dump(mode="json"), "plan": [p.model_dump() for p in plan]},
    )
    store.put_batch(batch)
    return batch, plan


def plan_batch(config: RunConfig, batch_id: str) -> list[PlannedEpisode]:
    """A new batch's plan, read from an environment started for it (and closed)."""
    env = build_env(config)
    try:
        return plan_run(config, env, batch_id)
    finally:
        env.close()


def run_batch(
    store: Store,
    config: RunConfig,
    *,
    executor: Executor,
    batch: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    plan: list[PlannedEpisode] | None = None,
    kind: BatchKind = "run",
    limits: Limits | None = None,
) -> RunReport:
    """Run (or resume) a batch of episodes and record each as it finishes.

    Args:
        store: where episodes go; its file is shared with the workers that log model calls.
        config: what to run.
        executor: where episodes are played (the caller's; it stays open).
        batch: batch name; an existing run batch of that name is resumed.
        progress: receives one unit per finished episode.
        cancel: set it to stop after the episodes in flight; finished ones stay recorded.
        plan: the episodes to run (default: planned from ``config``), e.g. a replay's cases.
        kind: the batch's kind (``replay`` for a candidate's replay).
        limits: what each episode may use; they travel with every job to the executor
            (episodes that follow candidate artifacts run under them).
    """
    progress = progress or NullProgress()

    def planner(batch_id: str) -> list[PlannedEpisode]:
        return plan if plan is not None else plan_batch(config, batch_id)

    record, planned = open_batch(store, batch, config, planner, kind)
    have = store.episode_ids(record.id)
    todo = [job for job in planned if job.id not in have]
    report = RunReport(batch_id=record.id, planned=len(planned), skipped=len(planned) - len(todo))
    if not todo:
        return report
    db_path = None if store.path == ":memory:" else store.path
    jobs = [
        EpisodeJob(planned=p, config=config, batch_id=record.id, db_path=db_path, limits=limits)
        for p in todo
    ]
    progress.start(len(todo), "running")
    try:
        with contextlib.closing(executor.run(jobs)) as results:  # closing drops unstarted jobs
            for job, result in results:
                _record(store, report, job, result)
                progress.advance(1, f"running ({report.failed} failed)")
                check_cancel(cancel)
    finally:
        progress.finish()
    return report


def _record(
    store: Store, report: RunReport, job: EpisodeJob, result: Played | BaseException
) -> None:
    """Write one finished (or lost) episode in its own transaction and count it."""
    if isinstance(result, BaseException):
        result = _lost(job.planned, job.config, job.batch_id, result)
        report.lost.append(job.planned.id)
    task, episode, steps = result.records()
    with store.transaction():
        for key, actions in result.gold_paths.items():
            store.put_gold_path(key, actions)
        if result.calls:  # logged on a remote worker: logged here, under this database's ids
            logged = [
                store.log_call(LLMCall.model_validate({**c, "id": None})) for c in result.calls
            ]
            episode.metadata["call_ids"] = [c.id for c in logged]
        store.put_task(task)
        store.add_episode(episode, steps)
        store.link_calls(episode.metadata.get("call_ids", []), episode.id)
    report.finished += 1
    report.failed += not episode.outcome.success
    if result.error:
        report.errors[result.error] += 1


def _lost(job: PlannedEpisode, config: RunConfig, batch_id: str, error: BaseException) -> Played:
    """A failed episode standing for one whose worker process died."""
    task = Task(
        id=job.task.task_id(config.env),
        environment=config.env,
        family=job.family,
        split=job.split,
    )
    episode = Episode(
        id=job.id,
        task_id=task.id,
        agent=config.agent.kind,
        batch_id=batch_id,
        seed=job.seed,
        outcome=Outcome(success=False, message=f"Worker died: {type(error).__name__}: {error}"),
        source=Source(format="run", record=job.id),
        metadata={"trial": job.trial, "error": repr(error), **(job.metadata or {})},
    )
    return Played(
        task=task.model_dump(mode="json"),
        episode=episode.model_dump(mode="json"),
        error=f"worker died: {error_summary(error)}",
    )
