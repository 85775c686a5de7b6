"""Interaction (Learn-by-interact §2.2, Algorithm 1 lines 6-14): every proposed task is
played by an agent in the world task it was proposed for, and recorded as an ordinary episode
in a batch of the ``synth`` workspace (:data:`~store.synth.SYNTH_WORKSPACE`), where the
researcher's own listings, analysis, compilation and replay never see it.

The agent is asked the *synthesized* instruction (:attr:`PlannedEpisode.instruction`); the
stored task keeps the world's own, and the episode's metadata records both and the
synthesized task's id (``synth_task_id``). Episodes are played through the caller's executor by
:func:`workbench.runner.run_batch`, one per task, with ids and seeds derived from the batch and
the task, so running again resumes a batch without duplicating an episode.

Batches. Without a name, a world and agent have a series ``synth/explore-<env>-<agent>-<k>``:
an unfinished last batch is resumed; otherwise the tasks no batch of that agent has planned
yet go into the next one (a batch's plan is fixed when it is created). A named batch
(``synth/<name>``) resumes when it exists, else plans the tasks not yet planned for that agent.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Iterator, Sequence

from store import SYNTH_WORKSPACE, Batch, Store, SynthTask
from workbench.agents.base import AgentSpec
from workbench.progress import Progress
from workbench.runner import Executor, PlannedEpisode, RunConfig, RunReport, run_batch
from workbench.synth.tasks import SPLIT

BATCH_PREFIX = f"{SYNTH_WORKSPACE}/"
"""Every synthesis batch id starts with it (batch ids are shared by all workspaces)."""
DEFAULT_STEP_LIMIT = 30
"""Most actions per explored episode."""
TASK_KEY = "synth_task_id"
"""Episode metadata key of the synthesized task an episode plays (the key backward
construction reads, :data:`workbench.synth.backward.TASK_KEY`)."""


class NothingToExplore(ValueError):
    """The world has no synthesized task yet."""


@contextlib.contextmanager
def synth_store(store: Store) -> Iterator[Store]:
    """The ``synth`` workspace of ``store``'s database: ``store`` itself when it is in that
    workspace, else a second connection to the same file (closed on exit).

    Raises:
        ValueError: ``store`` is an in-memory database in another workspace.
    """
    if store.workspace == SYNTH_WORKSPACE:
        yield store
        return
    if store.path == ":memory:":
        raise ValueError("an in-memory store cannot be opened in the synth workspace")
    with Store(store.path, workspace=SYNTH_WORKSPACE) as synth:
        yield synth


def batch_id(name: str) -> str:
    """The id of the synthesis batch called ``name`` (``explore-1`` → ``synth/explore-1``)."""
    return name if name.startswith(BATCH_PREFIX) else BATCH_PREFIX + name


def task_seed(seed: int, task: SynthTask) -> int:
    """The episode seed of a synthesized task's exploration, from the run seed."""
    digest = hashlib.sha256(f"{seed}:synth:{task.env}:{task.id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def plan_exploration(tasks: Sequence[SynthTask], batch: str, seed: int) -> list[PlannedEpisode]:
    """One episode per task, in the task's world task, asked the task's instruction."""
    return [
        PlannedEpisode(
            id=f"{batch}:task{task.id}",
            family=task.family,
            variation=task.variation,
            split=SPLIT,
            trial=0,
            seed=task_seed(seed, task),
            instruction=task.instruction,
            metadata={TASK_KEY: task.id},
        )
        for task in tasks
    ]


def explore(
    store: Store,
    *,
    executor: Executor,
    env: str,
    agent: AgentSpec | str = "explorer",
    batch: str | None = None,
    limit: int | None = None,
    only: Sequence[int] | None = None,
    step_limit: int = DEFAULT_STEP_LIMIT,
    seed: int = 0,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RunReport:
    """Play the world's synthesized tasks with ``agent`` and record the episodes in the
    ``synth`` workspace of ``store``'s database (resumable; see the module docstring).

    Args:
        store: any store on the database (its workspace is not used).
        executor: where episodes are played (the caller's; it stays open).
        env: the world whose tasks are played.
        agent: the agent (a spec, or an agent plugin's name): ``explorer`` offline, ``openai``
            for the LLM agent.
        batch: the batch's name (default: the world and agent's series).
        limit: most tasks a new batch plans (default: all not yet planned).
        only: plan only the tasks with these ids (default: any of the world's).
        step_limit: most actions per episode.
        seed: the run seed episode seeds derive from.
        progress: one unit per finished episode.
        cancel: set it to stop after the episodes in flight; finished ones stay recorded.

    Returns:
        The batch's run report (a batch with nothing left to play reports every episode as
        already recorded).

    Raises:
        NothingToExplore: the world has no synthesized task.
        ValueError: the named (or unfinished) batch was started with other settings.
        Cancelled: ``cancel`` was set.
    """
    spec = agent if isinstance(agent, AgentSpec) else AgentSpec(kind=agent)
    with synth_store(store) as synth:
        tasks = synth.synth_tasks(env)
        if not tasks:
            raise NothingToExplore(
                f"{env} has no synthesized task yet; propose some with "
                f"`workbench synth tasks --env {env}`"
            )
        chosen, name = _batch(synth, env, spec, batch, step_limit, seed)
        if chosen is None:
            wanted = tasks if only is None else [t for t in tasks if t.id in set(only)]
            fresh = _unplanned(synth, env, spec.kind, wanted)[: limit or None]
            if not fresh:
                return RunReport(batch_id=name, planned=0, skipped=0)
            config = _config(env, fresh, spec, step_limit, seed)
            plan = plan_exploration(fresh, name, seed)
        else:
            config = RunConfig.model_validate(chosen.params["config"])
            plan = None
        return run_batch(
            synth,
            config,
            executor=executor,
            batch=name,
            progress=progress,
            cancel=cancel,
            plan=plan,
            kind="synth",
        )


def _config(
    env: str, tasks: Sequence[SynthTask], spec: AgentSpec, step_limit: int, seed: int
) -> RunConfig:
    return RunConfig(
        env=env,
        families=sorted({t.family for t in tasks}),
        split=SPLIT,
        episodes=len(tasks),
        seed=seed,
        step_limit=step_limit,
        agent=spec,
    )


def _batch(
    synth: Store, env: str, spec: AgentSpec, name: str | None, step_limit: int, seed: int
) -> tuple[Batch | None, str]:
    """The batch to resume (``None``: a new one) and the batch's id."""
    if name is not None:
        wanted = batch_id(name)
        existing = synth.batch(wanted)
        if existing is not None:
            _check_resumable(existing, env, spec, step_limit, seed)
        return existing, wanted
    series = explore_series(synth, env, spec.kind)
    if series and not finished(synth, series[-1]):
        _check_resumable(series[-1], env, spec, step_limit, seed)
        return series[-1], series[-1].id
    if series and not _unplanned(synth, env, spec.kind, synth.synth_tasks(env)):
        return series[-1], series[-1].id  # nothing new: report the last batch as recorded
    return None, f"{_series_prefix(env, spec.kind)}{len(series) + 1}"


def _series_prefix(env: str, agent: str) -> str:
    return f"{BATCH_PREFIX}explore-{env}-{agent}-"


def explore_series(store: Store, env: str, agent: str) -> list[Batch]:
    """The default batches of a world and agent kind, in order."""
    pattern = re.compile(re.escape(_series_prefix(env, agent)) + r"(\d+)$")
    numbered = [(int(m.group(1)), b) for b in _synth_batches(store) if (m := pattern.match(b.id))]
    return [b for _, b in sorted(numbered, key=lambda pair: pair[0])]


def _synth_batches(store: Store) -> list[Batch]:
    with synth_store(store) as synth:
        return [b for b in synth.batches() if b.kind == "synth"]


def finished(store: Store, batch: Batch) -> bool:
    """Whether every planned episode of ``batch`` is recorded."""
    planned = {p["id"] for p in batch.params.get("plan", [])}
    return planned <= store.episode_ids(batch.id)


def planned_tasks(store: Store, env: str, agent: str) -> set[int]:
    """The synthesized tasks some batch of ``env`` and agent kind ``agent`` has planned."""
    found = set()
    for batch in _synth_batches(store):
        config = batch.params.get("config", {})
        if config.get("env") != env or config.get("agent", {}).get("kind") != agent:
            continue
        for entry in batch.params.get("plan", []):
            task = (entry.get("metadata") or {}).get(TASK_KEY)
            if isinstance(task, int):
                found.add(task)
    return found


def _unplanned(store: Store, env: str, agent: str, tasks: Sequence[SynthTask]) -> list[SynthTask]:
    planned = planned_tasks(store, env, agent)
    return [t for t in tasks if t.id not in planned]


def _check_resumable(batch: Batch, env: str, spec: AgentSpec, step_limit: int, seed: int) -> None:
    """A batch resumes only with the settings it was started with (one line naming them)."""
    if batch.kind != "synth":
        raise ValueError(f"batch {batch.id!r} is not a synthesis batch; pick another --batch")
    config = RunConfig.model_validate(batch.params.get("config", {}))
    asked = (env, spec, step_limit, seed)
    if (config.env, config.agent, config.step_limit, config.seed) != asked:
        raise ValueError(
            f"batch {batch.id!r} explores {config.env} with agent {config.agent.kind}, "
            f"step limit {config.step_limit} and seed {config.seed}; resume it with those "
            "settings or name another --batch"
        )
