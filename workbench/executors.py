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
- :class:`RayExecutor` — Ray actors on a cluster (or a Ray instance started on this machine),
  each a :class:`RemotePlayer`: workers never open the run's database; they send back the
  episode, the reference solutions its world kept and the model calls it logged, and only the
  process that called :func:`workbench.runner.run_batch` writes them.

:func:`make_executor` builds the one an :class:`ExecutorChoice` names (what ``--executor``,
``--ray-address`` and ``--workers`` say on the command line, and the terminal UI's jobs use).
"""

from __future__ import annotations

import concurrent.futures as futures
import contextlib
import dataclasses
import inspect
import multiprocessing
import os
import shutil
import socket
import tempfile
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Literal, Self, TypeVar

from store import Store, locks
from workbench.agents.base import Agent
from workbench.envs.base import Environment
from workbench.limits import TimeLimit
from workbench.runner import (
    EpisodeJob,
    Played,
    build_agent,
    build_env,
    error_summary,
    play_episode,
)

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
            hook = locks.process_hook()
            self._pool = futures.ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=locks.report_waits,  # the workers' stores wait out loud too
                initargs=(hook if _importable(hook) else None,),
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


# -- Ray -------------------------------------------------------------------------------------

RAY_EXTRA = "pip install 'trajectory-workbench[ray]'"
"""How to get Ray (an optional extra)."""

FORWARDED_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
"""Environment variables a Ray worker gets from the driver when they are set there, with every
``WORKBENCH_*`` one (:func:`forwarded_env`): an LLM agent on a worker needs its endpoint, a
world its options. Nothing is written anywhere."""


def forwarded_env() -> dict[str, str]:
    """What of this process's environment a Ray worker gets (:data:`FORWARDED_ENV`)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name in FORWARDED_ENV or name.startswith("WORKBENCH_")
    }


WATCH_EVERY = 1.0
"""Seconds a Ray driver waits for an episode before it looks at the cluster again."""

PROBE_SECONDS = 5.0
"""How long the GCS or a raylet may take to accept a connection before it counts as gone."""


class ExecutorUnavailable(RuntimeError):
    """The executor asked for cannot be used here (one line saying why and what to do)."""


class ClusterLost(ExecutorUnavailable):
    """The Ray cluster a run plays on lost what the run needs — its GCS, the node (raylet)
    this process plays through, or every node left to play on — in one line naming it. The
    episodes recorded before stay recorded."""


class RemotePlayer:
    """Plays jobs where the run's database cannot be reached (a Ray worker on any node).

    It keeps a scratch database of its own: before each job it receives there the reference
    solution the driver's database already holds for the job's task, and only that one (so
    the episode follows the same canonical path as anywhere else, never one an earlier job —
    of another database, say — left behind), plays the job against it with a :class:`Player`,
    and hands back with the episode what the job left there — the reference solutions its
    world kept and the model calls its agent logged — for the driver to record.

    Args:
        folder: where the scratch database lives (removed by :meth:`close`).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db_path = str(folder / "worker.db")
        self.store = Store(self.db_path)
        """The scratch database, open for the player's life (opening it costs a millisecond
        or two: twice an episode, that was a percent of a Ray worker's CPU)."""
        self.player = Player()

    def play(self, job: EpisodeJob, gold_paths: dict[str, list[str]]) -> Played:
        store = self.store
        with store.transaction():
            store.forget_gold_paths()
            for key, actions in gold_paths.items():
                store.put_gold_path(key, actions)
        last_call = store.last_call_id()
        played = self.player.play(job.model_copy(update={"db_path": self.db_path}))
        new = [key for key in store.gold_path_keys() if key not in gold_paths]
        played.gold_paths = {key: store.gold_path(key) or [] for key in new}
        played.calls = [c.model_dump(mode="json") for c in store.calls_after(last_call)]
        return played

    def close(self) -> None:
        self.player.close()
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class RayExecutor(Closing):
    """Episodes played by Ray actors, one per worker, each keeping its environment (and its
    simulator) across episodes like a local pool's worker.

    Ray is connected on first use: to ``address`` (``auto`` for the cluster this machine is
    part of, ``ray://host:10001`` for a remote one), or to a Ray instance started here with
    ``workers`` CPUs when no address is given. Each actor holds up to :data:`IN_FLIGHT` jobs
    (the next one waits there while it plays one). A job whose actor dies while playing it
    (its node lost, its process killed) is retried once on a new actor before it is given
    back as lost — the jobs waiting behind it go back to the queue as they were — and since
    only the caller records episodes, a retried episode is recorded once. Stopping early (the
    caller closes the iterator, Ctrl-C) kills the actors still playing, so nothing goes on
    running on the cluster.

    Ray waits forever for an actor whose node's raylet died, so while a run waits for
    episodes the driver looks at the cluster every ``watch_every`` seconds (:class:`_Watch`)
    and raises :class:`ClusterLost` when the GCS or its own node's raylet no longer answers,
    or every node with CPUs it saw is dead: the episodes recorded so far stay recorded, and
    running the batch again resumes it.

    Args:
        address: the Ray cluster; ``None`` starts a local Ray instance.
        workers: actors (episodes played at once); default: the cluster's CPUs.
        init_options: more keyword arguments for ``ray.init`` (tests pin ports with them).
        watch_every: seconds between two looks at the cluster while a run waits for episodes.
    """

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        *,
        init_options: dict[str, Any] | None = None,
        watch_every: float = WATCH_EVERY,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"a Ray executor needs at least one worker, not {workers}")
        if watch_every <= 0:
            raise ValueError(f"watch_every must be positive, not {watch_every}")
        self.address = address
        self.workers = workers
        self.init_options = init_options or {}
        self.watch_every = watch_every
        self._actors: list[Any] = []
        self._started_ray = False
        self._watch: _Watch | None = None
        self._look_at = 0.0
        """When (:func:`time.monotonic`) the cluster is next looked at."""
        self._lost = False

    def _ray(self) -> Any:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailable(f"the Ray executor needs Ray: {RAY_EXTRA}") from None
        if not ray.is_initialized():
            _check_reachable(self.address)
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if self.address is None:
                options |= {"num_cpus": self.workers or LOCAL_WORKERS}
            try:  # "local": a new instance even where `ray start` or RAY_ADDRESS names one
                ray.init(address=self.address or "local", **(options | self.init_options))
            except (ConnectionError, RuntimeError, ValueError) as error:
                where = self.address or "a local Ray instance"
                raise ExecutorUnavailable(f"cannot connect to Ray at {where}: {error}") from None
            self._started_ray = True
        return ray

    def _new_actor(self, ray: Any) -> Any:
        # The driver's variables go with the actor's arguments, not as a Ray runtime
        # environment: Ray cannot hand an actor with a runtime environment of its own to a
        # worker process it started beforehand, and starting one costs seconds per actor.
        return _worker_class(ray).remote(forwarded_env())

    def _pool(self, ray: Any) -> list[Any]:
        """The actors, started on first use and topped up after a run stopped early."""
        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._actors += [self._new_actor(ray) for _ in range(count - len(self._actors))]
        return self._actors

    def run(self, jobs: list[EpisodeJob]) -> Iterator[tuple[EpisodeJob, Played | BaseException]]:
        if not jobs:
            return
        ray = self._ray()
        self._check(ray)
        flight = _Flight(jobs, self._pool(ray))
        try:
            while flight.queue or flight.running:
                flight.send()
                ref = self._finished(ray, flight)
                job, actor = flight.running.pop(ref)
                try:
                    played = ray.get(ref)
                except ray.exceptions.RayActorError as error:  # the worker is gone
                    self._check(ray)  # with its node, or the whole cluster?
                    if flight.died(actor):
                        flight.held[self._replace(ray, actor)] = deque()
                    if flight.requeued(job, ref):
                        continue
                    yield job, error
                    continue
                except ray.exceptions.RayTaskError as error:
                    flight.done(job, actor, ref)
                    yield job, _cause(error)
                    continue
                flight.done(job, actor, ref, played)
                yield job, played
        finally:  # stopped early: nothing keeps playing on the cluster
            for actor in {actor for _, actor in flight.running.values()} & set(flight.held):
                self._replace(ray, actor, start=False)

    def _finished(self, ray: Any, flight: _Flight) -> Any:
        """The first call in flight to finish. The cluster is looked at every
        :attr:`watch_every` seconds meanwhile — Ray alone would wait forever for a dead
        raylet — and between results too: actors whose raylet died may go on playing."""
        while True:
            if time.monotonic() >= self._look_at:
                self._check(ray)
            ready, _ = ray.wait(list(flight.running), num_returns=1, timeout=self.watch_every)
            if ready:
                return ready[0]

    def _check(self, ray: Any) -> None:
        """Raise :class:`ClusterLost` if the cluster lost what the run needs."""
        self._watch = self._watch or _Watch.of(ray)
        try:
            self._watch.check(ray)
        except ClusterLost:
            self._lost = True
            raise
        self._look_at = time.monotonic() + self.watch_every

    def _replace(self, ray: Any, actor: Any, *, start: bool = True) -> Any:
        """Kill ``actor`` (if it still lives) and put a new one in its place."""
        ray.kill(actor)
        fresh = self._new_actor(ray) if start else None
        self._actors = [a for a in self._actors if a is not actor] + ([fresh] if fresh else [])
        return fresh

    def close(self) -> None:
        if not self._actors and not self._started_ray:
            return
        import ray

        if not self._lost:  # a lost cluster would keep the actors' goodbyes waiting
            with contextlib.suppress(ray.exceptions.RayError):  # a worker already gone
                ray.get([actor.close.remote() for actor in self._actors], timeout=60)
        for actor in self._actors:
            ray.kill(actor)
        self._actors, self._watch, self._lost = [], None, False
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False


def _check_reachable(address: str | None, seconds: float = 10.0) -> None:
    """Fail at once when a ``host:port`` address has nothing listening: Ray itself keeps
    retrying such an address for many minutes. (``auto`` and ``ray://`` addresses are left to
    Ray.)"""
    if not address or "://" in address or ":" not in address:
        return
    if reason := _unanswered(address, seconds):
        raise ExecutorUnavailable(f"cannot connect to Ray at {address}: {reason}")


def _unanswered(address: str, seconds: float) -> str:
    """Why nothing accepts a connection at ``host:port`` within ``seconds``; empty if
    something does."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except (OSError, ValueError) as error:
        return getattr(error, "strerror", None) or str(error) or type(error).__name__
    return ""


@dataclass
class _Watch:
    """What a Ray driver looks at while it waits for episodes: whether the cluster's GCS and
    the raylet of its own node still accept connections (at once: a killed raylet refuses
    them, while the GCS takes some 15 s to mark its node dead), and whether the nodes it
    plays on are alive, as the GCS says. Through a Ray client (``ray://``) only the GCS's
    word counts: the cluster's ports may not be reachable from here."""

    node: str
    """This process's Ray node (its id)."""
    gcs: str | None
    """The GCS's ``host:port``; ``None`` through a Ray client."""
    raylet: str | None
    """The ``host:port`` of this node's raylet; ``None`` through a Ray client."""
    cpu_nodes: dict[str, str] = dataclasses.field(default_factory=dict)
    """The nodes with CPUs (where actors play) seen alive, by id: their addresses."""

    @classmethod
    def of(cls, ray: Any) -> _Watch:
        """The watch of the cluster this process is connected to."""
        node = ray.get_runtime_context().get_node_id()
        if ray.util.client.ray.is_connected():
            return cls(node, None, None)
        mine = next((n for n in _nodes(ray) if n["NodeID"] == node), {})
        raylet = f"{mine['NodeManagerAddress']}:{mine['NodeManagerPort']}" if mine else None
        return cls(node, ray.get_runtime_context().gcs_address, raylet)

    def check(self, ray: Any) -> None:
        """Raise :class:`ClusterLost` naming what the cluster lost, if it lost what the run
        needs."""
        if self.gcs and (reason := _unanswered(self.gcs, PROBE_SECONDS)):
            raise ClusterLost(f"lost the Ray cluster: its GCS at {self.gcs} is gone ({reason})")
        if self.raylet and (reason := _unanswered(self.raylet, PROBE_SECONDS)):
            raise ClusterLost(
                f"lost the Ray node {_host(self.raylet)}: its raylet at {self.raylet} is gone "
                f"({reason})"
            )
        self._check_nodes(_nodes(ray))

    def _check_nodes(self, nodes: list[dict[str, Any]]) -> None:
        """Raise :class:`ClusterLost` if this process's node is dead, or every node with CPUs
        seen alive is."""
        alive = {n["NodeID"]: n for n in nodes if n.get("Alive")}
        self.cpu_nodes |= {
            id_: node["NodeManagerAddress"]
            for id_, node in alive.items()
            if node.get("Resources", {}).get("CPU", 0) > 0
        }
        if self.node not in alive:
            dead = next((n for n in nodes if n["NodeID"] == self.node), {})
            name = dead.get("NodeManagerAddress", self.node[:8])
            reason = dead.get("DeathReasonMessage") or "the cluster no longer lists it"
            why = reason.splitlines()[0]
            raise ClusterLost(f"lost the Ray node {name} this process plays through: {why}")
        if self.cpu_nodes and not self.cpu_nodes.keys() & alive.keys():
            names = ", ".join(sorted(set(self.cpu_nodes.values())))
            raise ClusterLost(f"lost every Ray node with CPUs to play on: {names}")


def _nodes(ray: Any) -> list[dict[str, Any]]:
    """The cluster's nodes as the GCS lists them (:class:`ClusterLost` if it cannot)."""
    try:
        return ray.nodes()
    except (ConnectionError, ray.exceptions.RayError) as error:
        raise ClusterLost(f"lost the Ray cluster: {error_summary(error)}") from None


def _host(address: str) -> str:
    """The host of a ``host:port`` address."""
    return address.rpartition(":")[0]


def _importable(function: Any) -> bool:
    """Whether ``function`` can be handed to a worker process (a module's own function)."""
    return inspect.isfunction(function) and "<locals>" not in function.__qualname__


def _known_gold_paths(jobs: list[EpisodeJob]) -> dict[str, list[str]]:
    """The reference solutions the jobs' database holds for their tasks (read here, in the
    driver, so workers follow the same canonical paths)."""
    db_path = next((job.db_path for job in jobs if job.db_path), None)
    if db_path is None:
        return {}
    with Store(db_path) as store:
        tasks = {job.planned.task.task_id(job.config.env) for job in jobs}
        return {task: path for task in tasks if (path := store.gold_path(task)) is not None}


IN_FLIGHT = 2
"""Jobs each Ray actor holds at once. An actor plays its calls in order, so with the next job
already there it starts it as soon as an episode ends, instead of idling while the result
travels to the driver and the next job comes back."""


def _task(job: EpisodeJob) -> str:
    return job.planned.task.task_id(job.config.env)


class _Flight:
    """One :meth:`RayExecutor.run` under way: the jobs waiting, the calls each actor holds
    (oldest first: the one it is playing), the reference solutions known so far.

    A job goes with the reference solution of its task when the driver knows one. Jobs of a
    task with none go to one actor at a time (jobs of other tasks go first meanwhile): the
    simulator may find another solution on every search, and every episode of a task must
    follow the one found first — the one the database keeps.
    """

    def __init__(self, jobs: list[EpisodeJob], actors: list[Any]) -> None:
        self.queue = deque(jobs)
        self.gold = _known_gold_paths(jobs)
        self.held: dict[Any, deque[Any]] = {actor: deque() for actor in actors}
        self.running: dict[Any, tuple[EpisodeJob, Any]] = {}
        self.searched: set[str] = set()
        """Tasks whose reference solution a job in flight is finding."""
        self.playing: set[Any] = set()
        """Calls that were being played when their actor died (those behind had not started)."""
        self.retried: set[str] = set()

    def send(self) -> None:
        """Give every actor up to :data:`IN_FLIGHT` jobs, the least busy first."""
        while self.queue:
            actor = min(self.held, key=lambda a: len(self.held[a]))
            job = self._next() if len(self.held[actor]) < IN_FLIGHT else None
            if job is None:
                return
            task = _task(job)
            paths = {task: self.gold[task]} if task in self.gold else {}
            if not paths:
                self.searched.add(task)
            ref = actor.play.remote(job.model_dump_json(), paths)
            self.held[actor].append(ref)
            self.running[ref] = (job, actor)

    def _next(self) -> EpisodeJob | None:
        """The first waiting job whose task's solution no job in flight is finding."""
        for i, job in enumerate(self.queue):
            if _task(job) not in self.searched:
                del self.queue[i]
                return job
        return None

    def done(self, job: EpisodeJob, actor: Any, ref: Any, played: Played | None = None) -> None:
        """``actor`` finished ``job``; keep the reference solutions it found."""
        self.searched.discard(_task(job))
        with contextlib.suppress(KeyError, ValueError):
            self.held[actor].remove(ref)
        for key, actions in played.gold_paths.items() if played else ():
            self.gold.setdefault(key, actions)

    def died(self, actor: Any) -> bool:
        """A call of ``actor`` found it dead: True the first time (it must be replaced). The
        call it was playing then is the oldest it held."""
        calls = self.held.pop(actor, None)
        if calls is None:
            return False
        if calls:
            self.playing.add(calls[0])
        return True

    def requeued(self, job: EpisodeJob, ref: Any) -> bool:
        """Put a job whose actor died back in the queue, unless it was being played for the
        second time: a job that had not started goes back without counting."""
        self.searched.discard(_task(job))
        if ref in self.playing:
            if job.planned.id in self.retried:
                return False
            self.retried.add(job.planned.id)
        self.queue.appendleft(job)
        return True


def _cause(error: Any) -> BaseException:
    """The exception a Ray task raised (Ray wraps it)."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, BaseException) else error


_WORKER_CLASS: Any = None


def _worker_class(ray: Any) -> Any:
    """The Ray actor class that plays episodes (made once Ray is imported)."""
    global _WORKER_CLASS
    if _WORKER_CLASS is None:

        class EpisodeWorker:
            def __init__(self, env: dict[str, str]) -> None:
                os.environ.update(env)  # this actor's own process: nothing else sees them
                self.player = RemotePlayer(Path(tempfile.mkdtemp(prefix="workbench-ray-")))

            def play(self, job_json: str, gold_paths: dict[str, list[str]]) -> Played:
                return self.player.play(EpisodeJob.model_validate_json(job_json), gold_paths)

            def close(self) -> None:
                self.player.close()

        _WORKER_CLASS = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(EpisodeWorker)
    return _WORKER_CLASS


# -- the executor a face asks for --------------------------------------------------------------

ExecutorKind = Literal["local", "ray"]


@dataclass(frozen=True)
class ExecutorChoice:
    """Where a face's episodes are played: ``--executor``, ``--ray-address``, ``--workers``."""

    kind: ExecutorKind = "local"
    workers: int | None = None
    """Episodes at once (local: worker processes, default :data:`LOCAL_WORKERS`; Ray: actors,
    default the cluster's CPUs)."""
    address: str | None = None
    """The Ray cluster (``ray`` only; ``None``: a Ray instance started here)."""

    def with_workers(self, workers: int) -> ExecutorChoice:
        """The same choice with ``workers`` episodes at once (e.g. one for a manual build)."""
        return dataclasses.replace(self, workers=workers)

    def describe(self) -> str:
        if self.kind == "local":
            return f"local pool ({self.workers or LOCAL_WORKERS} workers)"
        return f"Ray at {self.address or 'a local instance'}"


def make_executor(choice: ExecutorChoice | None = None) -> LocalPool | RayExecutor:
    """The executor ``choice`` names (default: a local pool); the caller closes it."""
    choice = choice or ExecutorChoice()
    if choice.kind == "ray":
        return RayExecutor(choice.address, choice.workers)
    if choice.address is not None:
        raise ExecutorUnavailable("--ray-address needs --executor ray")
    return LocalPool(choice.workers or LOCAL_WORKERS)
