"""Where episodes are played: the executors a caller creates once and passes to every stage
that plays episodes (runs, replays, evolution, the manual's building stage).

An executor receives :class:`~workbench.runner.EpisodeJob`\\ s — each carries its planned
episode, run configuration, database path and limits — so one executor serves any number of
batches and configurations. Whatever plays a job does it through a :class:`Player`, which keeps
the environment and the agent of the latest configuration (starting an environment is
expensive: a simulator may start a JVM) and applies the job's limits around the episode.

- :class:`LocalPool` — worker processes on this machine, started on first use and kept until
  :meth:`LocalPool.close`.
- :class:`InProcess` — one episode after another in this process (tests, debugging); it
  refuses jobs with limits, which only a separate process can enforce.

A distributed executor is one more class with the same two methods whose workers call
:func:`play_job`.
"""

from __future__ import annotations

import concurrent.futures as futures
import multiprocessing
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Generic, Self, TypeVar

from workbench.agents.base import Agent
from workbench.envs.base import Environment
from workbench.limits import TimeLimit
from workbench.runner import EpisodeJob, Played, build_agent, build_env, play_episode

T = TypeVar("T")

LOCAL_WORKERS = min(2, os.cpu_count() or 1)
"""Worker processes of a local pool by default (the CLI's ``--workers`` default, the terminal
UI's and the widgets' jobs)."""


class LimitsUnsupported(ValueError):
    """An executor that cannot enforce a job's limits was given one."""


class _Latest(Generic[T]):
    """The one thing (an environment, an agent) built for the latest key: kept while jobs
    keep asking for that key, replaced — and closed, if it can be — when one asks for another."""

    def __init__(self, build: Callable[[EpisodeJob], T], key: Callable[[EpisodeJob], str]) -> None:
        self.build, self.key = build, key
        self.held: tuple[str, T] | None = None

    def get(self, job: EpisodeJob) -> T:
        key = self.key(job)
        if self.held is None or self.held[0] != key:
            self.drop()
            self.held = (key, self.build(job))
        return self.held[1]

    def drop(self) -> None:
        if self.held is not None:
            close = getattr(self.held[1], "close", None)
            self.held = None
            if close is not None:
                close()


def _env_key(job: EpisodeJob) -> str:
    """What an environment depends on (not guidance, families or seeds)."""
    config = job.config
    return f"{config.env}|{config.step_limit}|{config.simplifications}|{job.db_path}"


def _agent_key(job: EpisodeJob) -> str:
    """What an agent depends on: its spec, the manual it reads and its call log."""
    return f"{job.config.agent.model_dump_json()}|{job.config.manual}|{job.db_path}"


class Player:
    """Plays jobs in this process, one at a time, re-using the environment and agent while
    the jobs' configurations need the same ones.

    Args:
        env: play every job on this environment (owned by the caller, never closed here);
            default: build one per configuration.
    """

    def __init__(self, env: Environment | None = None) -> None:
        self.env = env
        self.envs = _Latest(lambda job: build_env(job.config, job.db_path), _env_key)
        self.agents: _Latest[Agent] = _Latest(
            lambda job: build_agent(job.config.agent, job.db_path, job.config.manual), _agent_key
        )

    def play(self, job: EpisodeJob) -> Played:
        """Play one job, under its limits if it has any. An environment interrupted by a
        time limit (or by anything that escapes the episode) is not used again."""
        env = self.env or self.envs.get(job)
        agent = self.agents.get(job)
        if job.limits is None:
            return play_episode(env, agent, job.planned, job.config, job.batch_id)
        try:
            with job.limits.applied():
                played = play_episode(env, agent, job.planned, job.config, job.batch_id)
        except BaseException:
            self.envs.drop()
            raise
        if played.error.startswith(f"{TimeLimit.__name__}:"):
            self.envs.drop()
        return played

    def close(self) -> None:
        """Close the environment this player built (a given one stays open)."""
        self.envs.drop()
        self.agents.drop()


_player: Player | None = None
"""This worker process's player, built on its first job and kept for its lifetime."""


def play_job(job_json: str) -> Played:
    """Play one job (as JSON) in a worker process, with the process's player."""
    global _player
    _player = _player or Player()
    return _player.play(EpisodeJob.model_validate_json(job_json))


class Closing(ABC):
    """An executor as a context manager: ``with LocalPool(2) as pool:`` closes it on the way
    out."""

    @abstractmethod
    def close(self) -> None:
        """Release what the executor holds (worker processes, environments)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


class LocalPool(Closing):
    """Worker processes on this machine (``spawn``: each builds its own JVM), started on the
    first job and kept, with their environments, until :meth:`close`.

    A worker that dies (e.g. its JVM crashes) breaks the pool; the pool is rebuilt and the
    jobs in flight are retried once before they are given back as lost.

    Args:
        workers: worker processes (episodes played at once).
    """

    def __init__(self, workers: int = LOCAL_WORKERS) -> None:
        if workers < 1:
            raise ValueError(f"a local pool needs at least one worker, not {workers}")
        self.workers = workers
        self._pool: futures.ProcessPoolExecutor | None = None

    def _started(self) -> futures.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = futures.ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    def run(self, jobs: list[EpisodeJob]) -> Iterator[tuple[EpisodeJob, Played | BaseException]]:
        retried: set[str] = set()
        queue = list(jobs)
        while queue:
            pool = self._started()
            pending = {pool.submit(play_job, job.model_dump_json()): job for job in queue}
            queue, broken = [], False
            try:
                for done in futures.as_completed(pending):
                    job = pending[done]
                    try:
                        yield job, done.result()
                    except futures.process.BrokenProcessPool as error:
                        broken = True
                        if job.planned.id in retried:
                            yield job, error
                        else:
                            retried.add(job.planned.id)
                            queue.append(job)
                    except Exception as error:  # e.g. a time limit outside the episode's guard
                        yield job, error
            finally:  # also when the caller stops early: drop what has not started
                _settle(pending)
            if broken:
                self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _settle(pending: dict[futures.Future[Played], EpisodeJob]) -> None:
    """Cancel the jobs not started and wait for those in flight (their results are dropped:
    the pool is free for the next batch)."""
    for future in pending:
        future.cancel()
    futures.wait(pending)


class InProcess(Closing):
    """Plays jobs one after another in this process (tests, debugging).

    It refuses jobs with limits: a time or memory limit on this process would reach the
    caller (a UI, a notebook kernel), and an episode that follows a candidate artifact must
    not be able to hang or exhaust it. Use :class:`LocalPool` for those.

    Args:
        env: play every job on this environment (the caller's; it stays open); default: build
            one per configuration, closed with the executor.
    """

    def __init__(self, env: Environment | None = None) -> None:
        self.player = Player(env)

    def run(self, jobs: list[EpisodeJob]) -> Iterator[tuple[EpisodeJob, Played | BaseException]]:
        limited = [job.planned.id for job in jobs if job.limits is not None]
        if limited:
            raise LimitsUnsupported(
                f"{len(limited)} episode(s) carry time/memory limits (e.g. {limited[0]}), which "
                "the in-process executor cannot enforce; play them with a LocalPool"
            )
        for job in jobs:
            yield job, self.player.play(job)

    def close(self) -> None:
        self.player.close()
