"""Executing examples again in the real simulator: the filter's replay check.

An example claims that its actions, taken from its start state, have its effects and lead to
its end state. The simulator cannot be put into a recorded state, so the replay resets the
episode's task with the episode's seed, plays the episode's actions before the span, then the
example's own actions, and reads the replayed steps with the same effect reading
(:mod:`workbench.synth.effects`). The example is reproduced when:

- the replay took every action (the world did not end it early, nothing failed);
- the state before the span and the state after it have the claimed digests;
- the span's effects are the claimed ones, in order;
- every observation of the span is the recorded one, modulo what the world randomises: numbers
  (a thermometer may read a degree off between loads) and the order of lines (a room may list
  its objects in another order). How many were identical and how many equal only modulo that
  is recorded.

Replays are ordinary episodes, played through the executor the caller passes
(:func:`workbench.runner.run_batch`) by the ``script`` agent
(:mod:`workbench.agents.script`), in ``replay`` batches of the synth workspace — never among
the researcher's runs, never taken for synthesized trajectories. A replay's episode id is
derived from the episode and the actions it plays, so examples whose actions extend one
another share one replay, and a filter killed halfway replays only what is missing when it
runs again.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from store import Episode, Store, SynthExample
from store.synth import SYNTH_WORKSPACE
from workbench.agents.base import AgentSpec
from workbench.envs.registry import lexicon_of
from workbench.progress import NullProgress, Progress
from workbench.runner import Executor, PlannedEpisode, RunConfig, run_batch
from workbench.synth.effects import read_trajectory

REPLAY_MARK = "~replay-"
"""What a replay episode's id carries between the episode's id and its digest."""
ATTEMPTS = 3
"""Replays of one sequence tried before a replay that keeps failing (its worker died, the
world raised) counts against the example."""


@dataclass(frozen=True)
class Origin:
    """How an episode was played: what a replay needs to play it again."""

    env: str
    family: str
    variation: int
    split: str
    seed: int
    step_limit: int
    simplifications: str

    @property
    def key(self) -> tuple[str, int, str]:
        """What replays sharing one run configuration have in common."""
        return self.env, self.step_limit, self.simplifications


def origin_of(store: Store, episode: Episode) -> Origin | str:
    """How ``episode`` was played, or why it cannot be replayed."""
    if episode.source.format != "run" or episode.seed is None:
        return "not recorded by a run (an imported log cannot be replayed)"
    batch = store.batch(episode.batch_id)
    task = store.task(episode.task_id)
    config = batch.params.get("config") if batch is not None else None
    variation = task.metadata.get("variation") if task is not None else None
    if not isinstance(config, dict) or not isinstance(variation, int):
        return "its batch keeps no run configuration or its task no variation"
    run = RunConfig.model_validate(config)
    return Origin(
        run.env,
        episode.family,
        variation,
        episode.split,
        episode.seed,
        run.step_limit,
        run.simplifications,
    )


def replay_id(episode_id: str, actions: list[str], attempt: int = 1) -> str:
    """The id of the ``attempt``-th replay of ``actions`` from the start of ``episode_id``'s
    task."""
    digest = hashlib.sha256("\n".join(actions).encode()).hexdigest()[:12]
    return f"{episode_id}{REPLAY_MARK}{digest}" + (f"~{attempt}" if attempt > 1 else "")


def broken(episode: Episode) -> str:
    """What ended a replay in error (its worker died, the world or the agent raised); empty
    when nothing did."""
    error = str(episode.metadata.get("error") or "").strip()
    return error.splitlines()[-1][:200] if error else ""


def attempt_of(store: Store, episode_id: str, actions: list[str]) -> tuple[str, int]:
    """The replay to use for ``actions``: the first attempt not recorded yet or recorded
    without error, else the last one (which failed every time)."""
    for attempt in range(1, ATTEMPTS + 1):
        rid = replay_id(episode_id, actions, attempt)
        recorded = store.episode(rid)
        if recorded is None or not broken(recorded):
            return rid, attempt
    return rid, ATTEMPTS


@dataclass
class Replay:
    """One replay to have: an episode's task played with these actions."""

    id: str
    episode_id: str
    origin: Origin
    actions: list[str]
    attempt: int = 1


@dataclass
class ReplayPlan:
    """Which replay shows each example, and where in it the example's span begins."""

    replays: dict[str, Replay] = field(default_factory=dict)
    of_example: dict[int, tuple[str, int]] = field(default_factory=dict)
    """Example id → (replay id, actions before the span)."""
    unplayable: dict[int, str] = field(default_factory=dict)
    """Example id → why it cannot be replayed."""


def plan_replays(store: Store, examples: Iterable[SynthExample]) -> ReplayPlan:
    """The fewest replays that show every example: per episode, one replay per action
    sequence that no other extends (a span's sequence is the episode's actions before it, then
    its own actions)."""
    plan = ReplayPlan()
    by_episode: dict[str, list[SynthExample]] = {}
    for example in examples:
        by_episode.setdefault(example.episode_id, []).append(example)
    for episode_id, group in by_episode.items():
        episode = store.episode(episode_id)
        origin = origin_of(store, episode) if episode else "its episode is gone"
        if isinstance(origin, str):
            plan.unplayable.update((e.id, origin) for e in group if e.id is not None)
            continue
        before = [s.action for s in store.steps(episode_id) if s.action]
        first = next((s.index for s in store.steps(episode_id) if s.action), 1)
        sequences = {}
        for example in group:
            prefix = before[: max(0, example.start - first)]
            sequences[example.id] = (prefix + example.actions, len(prefix))
        longest = _maximal([seq for seq, _ in sequences.values()])
        for example_id, (sequence, at) in sequences.items():
            full = next(s for s in longest if s[: len(sequence)] == sequence)
            rid, attempt = attempt_of(store, episode_id, full)
            plan.replays.setdefault(rid, Replay(rid, episode_id, origin, full, attempt))
            plan.of_example[example_id] = (rid, at)  # type: ignore[index]
    return plan


def _maximal(sequences: list[list[str]]) -> list[list[str]]:
    """The sequences no other one extends (longest first)."""
    kept: list[list[str]] = []
    for sequence in sorted(sequences, key=len, reverse=True):
        if not any(k[: len(sequence)] == sequence for k in kept):
            kept.append(sequence)
    return kept


def run_replays(
    store: Store,
    plan: ReplayPlan,
    *,
    executor: Executor,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> tuple[int, int]:
    """Play the plan's replays that are not recorded yet (one ``replay`` batch of the synth
    workspace per run configuration). Returns (played, already recorded).

    Raises:
        ValueError: ``store`` is not the synth workspace's.
        Cancelled: ``cancel`` was set (the replays finished so far stay recorded).
    """
    if store.workspace != SYNTH_WORKSPACE:
        raise ValueError(f"replays are recorded in the {SYNTH_WORKSPACE!r} workspace's store")
    missing = [r for r in plan.replays.values() if store.episode(r.id) is None]
    groups: dict[tuple[str, int, str], list[Replay]] = {}
    for replay in missing:
        groups.setdefault(replay.origin.key, []).append(replay)
    progress = progress or NullProgress()
    progress.start(len(missing), "replaying")
    try:
        for (env, step_limit, simplifications), group in sorted(groups.items()):
            config = RunConfig(
                env=env,
                families=sorted({r.origin.family for r in group}),
                split=group[0].origin.split,  # type: ignore[arg-type]
                episodes=len(group),
                step_limit=step_limit,
                simplifications=simplifications,
                agent=AgentSpec(kind="script", script={r.id: r.actions for r in group}),
            )
            digest = hashlib.sha256(config.model_dump_json().encode()).hexdigest()[:10]
            run_batch(
                store,
                config,
                executor=executor,
                batch=f"synth-replay-{digest}",
                plan=[_planned(r) for r in group],
                kind="replay",
                progress=_Forward(progress),
                cancel=cancel,
            )
    finally:
        progress.finish()
    return len(missing), len(plan.replays) - len(missing)


def _planned(replay: Replay) -> PlannedEpisode:
    origin = replay.origin
    return PlannedEpisode(
        id=replay.id,
        family=origin.family,
        variation=origin.variation,
        split=origin.split,  # type: ignore[arg-type]
        trial=0,
        seed=origin.seed,
    )


class _Forward:
    """Passes one batch's progress on to the whole replay's."""

    def __init__(self, outer: Progress) -> None:
        self.outer = outer

    def start(self, total: float | None, description: str = "") -> None:
        pass

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        self.outer.advance(amount, "replaying")

    def finish(self) -> None:
        pass


# -- judging an example by its replay ------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def loosely(observation: str) -> list[str]:
    """An observation modulo numbers and the order of its lines."""
    lines = (_NUMBER.sub("#", line.strip().lower()) for line in observation.splitlines())
    return sorted(line for line in lines if line)


def judge_replay(store: Store, example: SynthExample, replay: Replay, at: int) -> dict[str, Any]:
    """What ``replay`` shows of ``example`` (whose span starts after ``at`` actions):
    ``{"verdict": "reproduced" | "failed" | "error", "episode": …, "detail": …, …}``;
    ``error``: the replay itself went wrong and will be tried again (no verdict yet)."""
    base: dict[str, Any] = {"episode": replay.id}
    episode = store.episode(replay.id)
    if episode is None:
        return {**base, "verdict": "error", "detail": "the replay was not recorded"}
    error = broken(episode)
    if error:
        final = replay.attempt >= ATTEMPTS
        detail = f"the replay failed{f' {ATTEMPTS} times' if final else ''}: {error}"
        return {**base, "verdict": "failed" if final else "error", "detail": detail}
    task = store.task(episode.task_id)
    env = task.environment if task is not None else example.env
    reading = read_trajectory(episode.task_id, store.steps(replay.id), lexicon_of(env))
    span = reading.steps[at : at + len(example.actions)]
    if len(span) < len(example.actions):
        taken = max(0, len(reading.steps) - at)
        detail = f"the world ended the replay after {taken} of {len(example.actions)} actions"
        return {**base, "verdict": "failed", "detail": detail}
    start = reading.steps[at - 1].state if at else reading.start_state
    effects = [e for s in span for e in s.effects]
    identical = sum(s.observation == o for s, o in zip(span, example.observations, strict=True))
    loose = [
        k
        for k, (s, o) in enumerate(zip(span, example.observations, strict=True))
        if loosely(s.observation) != loosely(o)
    ]
    base["observations"] = {
        "identical": identical,
        "modulo_numbers_and_order": len(span) - identical - len(loose),
        "differ": len(loose),
    }
    problems = []
    if start != example.start_state:
        problems.append("the state before the span is not the claimed one")
    if effects != example.effects:
        problems.append(f"effects {effects} instead of the claimed {example.effects}")
    if span[-1].state != example.end_state:
        problems.append("the state after the span is not the claimed one")
    if loose:
        step = example.start + loose[0]
        problems.append(f"the observation of action {loose[0] + 1} (near step {step}) differs")
    if problems:
        return {**base, "verdict": "failed", "detail": "; ".join(problems)}
    return {**base, "verdict": "reproduced", "detail": ""}
