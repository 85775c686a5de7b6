"""Runner scaling: episodes per minute and CPU per episode, 1 worker against one per core,
the local pool against Ray, with the simulator's JVM options (and its class-data archive)
against the JVM's defaults or other options (which start without the archive).

Every run plays the same plan (the scripted agent on real ScienceWorld tasks) into a copy of
one database holding the plan's gold paths (made first, unmeasured: the simulator's search for
them is costly and not deterministic), so every run follows the same routes. Each run starts
its own workers, and their start-up (a process, its imports, one JVM, the first world loaded)
is included in its rate and CPU: it is measured first and printed per worker (a local worker, a
Ray actor). CPU is this process's plus every process under it (pool workers, Ray's processes,
their JVMs), read from ``/proc`` while they live, and printed by kind of process; per episode
it does not depend on how loaded the machine is, wall-clock rates do; the JVMs' share is split
by thread (the simulator's, the JIT compilers', the collector's). Each JVM compiles the
simulator's hot code again (9 s of CPU for its compilers by 400 episodes, 12 s by 1,200; slower
episodes until then), which K workers pay K times: so the rate is also printed over each run's
second half (``warm``), and so is the efficiency of those rates. Start-up and compiling are
what a worker pays once per run, in a user's run as here; the default 1,200 episodes (about two
minutes of one worker) make them less than a tenth of a run. At 400 episodes the second JVM's
compiling alone was an eighth of a two-worker run (efficiency 0.73 there, 0.88 at 1,200, the
same hour); at 48 episodes start-up dominated. Prints per run the rate, CPU per episode and the
JVMs' threads, then the parallel efficiency rate(K) / (K · rate(1)) (target ≥ 0.8) of the local
pool and of Ray (``--executor ray``: a Ray instance started here with K CPUs) against one local
worker, the CPU per episode against one worker's, the ceiling one worker sets (it keeps more
than a core busy, its JVM compiling and collecting beside the simulator: K workers at its CPU
per episode on K cores reach at most 1 / its cores), and which episodes each run played with
other actions or outcomes than the first — and in how many the simulator listed what the agent
saw in another order (its JVM's history: see
:data:`workbench.envs.scienceworld.JVM_OPTIONS_VARIABLE`).

Runs come in rounds (``--rounds``, default 3): 1 worker, then K local workers, then Ray, each
efficiency taken against the 1-worker run of its own round and reported as the median of the
rounds. On a shared virtual machine the speed of the cores drifts by a third within minutes
(a plain CPU loop does too), which one run of each can take for scaling or its absence; runs
of a round meet about the same machine.

    python bench/runner_scaling.py [--episodes 1200] [--rounds 3] [--executor local|ray|both]
        [--defaults] [--jvm OPTIONS] [--gold FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from store import EpisodeFilter, Store
from workbench.envs.scienceworld import JVM_OPTIONS, JVM_OPTIONS_VARIABLE, make_class_archive
from workbench.executors import Closing, LocalPool, RayExecutor
from workbench.runner import RunConfig, run_batch


@dataclass
class Run:
    """One measured run."""

    label: str
    rate: float
    """Episodes per minute (wall clock)."""
    cpu: float
    """CPU seconds per episode, every process counted."""
    jvm_threads: int
    """Threads of one JVM at the end (the largest)."""
    played: dict[str, str]
    """Each episode's actions and outcome (as JSON), by id."""
    seen: dict[str, str]
    """A digest of each episode's observations, by id."""
    kinds: dict[str, float]
    """CPU seconds per episode by kind of process (:func:`kind`)."""
    jvm_parts: dict[str, float]
    """The JVMs' CPU seconds per episode by kind of thread (:func:`thread_kind`)."""
    elapsed: float
    """Wall-clock seconds of the run."""
    warm: float
    """Episodes per minute over the run's second half (by the episodes' end times): the rate
    once every worker's JVM has compiled the simulator's hot code."""


def kind(process: psutil.Process) -> str:
    """What a process under the bench is: ``jvm`` (a simulator), ``worker`` (a pool worker or
    a Ray actor, which drives one), ``ray`` (Ray's own: raylet, GCS, agents, idle workers)."""
    name = process.name()
    if name == "java":
        return "jvm"
    if name.startswith("ray::EpisodeWorker") or "multiprocessing" in " ".join(process.cmdline()):
        return "worker"
    return "ray"


def thread_kind(name: str) -> str:
    """What a JVM thread is, by its name: ``jit`` (a compiler thread), ``gc`` (the VM thread,
    where the serial collector runs, or a collector's own), ``sim`` (the simulator's threads,
    and the JVM's few others)."""
    if "Compiler" in name:
        return "jit"
    if name == "VM Thread" or "GC" in name:
        return "gc"
    return "sim"


class Usage:
    """CPU seconds of this process and everything under it, sampled while they live."""

    def __init__(self, every: float = 0.2) -> None:
        self.every, self.seen, self.threads = every, {}, 0
        self.kinds: dict[int, str] = {}
        self.jvm: dict[tuple[int, int], tuple[str, float]] = {}
        """CPU seconds of each JVM thread seen, by (process, thread), with its kind."""
        self.me = psutil.Process()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _read(self) -> None:
        for process in self.me.children(recursive=True):
            try:
                with process.oneshot():
                    times, what = process.cpu_times(), kind(process)
                    self.seen[process.pid], self.kinds[process.pid] = (
                        times.user + times.system,
                        what,
                    )
                    if process.name() == "java":
                        self.threads = max(self.threads, process.num_threads())
                        self._read_jvm(process)
            except psutil.Error:  # it ended between the listing and the read
                pass

    def _read_jvm(self, process: psutil.Process) -> None:
        for thread in process.threads():
            key = process.pid, thread.id
            part = self.jvm[key][0] if key in self.jvm else None
            if part is None:  # a thread not seen yet: its name, read once
                try:
                    name = Path(f"/proc/{key[0]}/task/{key[1]}/comm").read_text().strip()
                except OSError:  # it ended since the listing
                    continue
                part = thread_kind(name)
            self.jvm[key] = (part, thread.user_time + thread.system_time)

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self._read()

    @contextmanager
    def measured(self) -> Iterator[Usage]:
        """Count the CPU spent inside the block (processes already running count from here)."""
        self._read()
        before, own = dict(self.seen), time.process_time()
        jvm_before = dict(self.jvm)
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join()
            self._read()
            self.by_kind = {"driver": time.process_time() - own}
            for pid, cpu in self.seen.items():
                name = self.kinds[pid]
                self.by_kind[name] = self.by_kind.get(name, 0.0) + cpu - before.get(pid, 0.0)
            self.total = sum(self.by_kind.values())
            self.jvm_parts: dict[str, float] = {}
            for key, (part, cpu) in self.jvm.items():
                spent = cpu - jvm_before.get(key, (part, 0.0))[1]
                self.jvm_parts[part] = self.jvm_parts.get(part, 0.0) + spent


def played(store: Store, batch: str) -> dict[str, str]:
    """What every episode of ``batch`` did: its actions and its outcome."""
    return {
        e.id: json.dumps(
            [e.outcome.success, e.outcome.score, [s.action for s in store.steps(e.id)]]
        )
        for e in store.episodes(EpisodeFilter(batch=batch))
    }


def seen(store: Store, batch: str) -> dict[str, str]:
    """A digest of what every episode of ``batch`` observed."""
    return {
        e.id: digest([s.observation for s in store.steps(e.id)])
        for e in store.episodes(EpisodeFilter(batch=batch))
    }


def warm_rate(store: Store, batch: str) -> float:
    """Episodes per minute between the end of the batch's middle episode and its last."""
    ends = sorted(e.ended_at for e in store.episodes(EpisodeFilter(batch=batch)) if e.ended_at)
    if len(ends) < 4:
        return float("nan")
    half = len(ends) // 2
    seconds = (ends[-1] - ends[half]).total_seconds()
    return (len(ends) - 1 - half) / seconds * 60 if seconds > 0 else float("nan")


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]


def with_gold_paths(config: RunConfig, folder: Path, kept: Path | None = None) -> Path:
    """A database holding the gold paths of every task ``config`` plays, made unmeasured
    (one step per episode): each measured run starts from a copy, so none pays for the
    simulator's gold-path search, and all follow the same gold paths (the search is not
    deterministic) — their actions and outcomes can then be compared. With ``kept``, that
    database is made there once and topped up for the tasks of later plans."""
    path = kept or folder / "gold.db"
    with Store(path) as store, LocalPool(1) as executor:
        warm = config.model_copy(update={"step_limit": 1})
        batch = f"gold-{digest(warm.model_dump(mode='json'))}"
        run_batch(store, warm, batch=batch, executor=executor)
    if kept is not None:
        shutil.copy(kept, folder / "gold.db")
    return folder / "gold.db"


def measure(
    label: str, config: RunConfig, executor: Closing, gold: Path, *, quiet: bool = False
) -> Run:
    """Play ``config`` on ``executor`` into a copy of the ``gold`` database, measured."""
    path = gold.with_name(f"{label.replace(' ', '-')}.db")
    shutil.copy(gold, path)
    with Store(path) as store, executor:
        usage = Usage()
        with usage.measured():
            started = time.perf_counter()
            report = run_batch(store, config, batch="bench", executor=executor)
            elapsed = time.perf_counter() - started
        assert report.finished == config.episodes, report
        n = config.episodes
        run = Run(
            label,
            n / elapsed * 60,
            usage.total / n,
            usage.threads,
            played(store, "bench"),
            seen(store, "bench"),
            {name: cpu / n for name, cpu in sorted(usage.by_kind.items())},
            {part: cpu / n for part, cpu in sorted(usage.jvm_parts.items())},
            elapsed,
            warm_rate(store, "bench"),
        )
    if not quiet:
        kinds = ", ".join(f"{name} {cpu:.3f}" for name, cpu in run.kinds.items())
        parts = ", ".join(f"{part} {cpu:.3f}" for part, cpu in run.jvm_parts.items())
        kinds += f"; jvm: {parts}" if parts else ""
        print(
            f"  {label:22}: {run.rate:6.1f} episodes/min ({run.warm:6.1f} warm)  "
            f"{run.cpu:5.3f} s CPU/episode "
            f"({kinds})  JVM threads {run.jvm_threads:3}  played "
            f"{digest(sorted(run.played.items()))}  load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    return run


def start_up(label: str, config: RunConfig, executor: Closing, gold: Path, steady: Run) -> str:
    """What starting one worker costs: one episode on a fresh ``executor``, less what an
    episode costs once it runs (``steady``)."""
    one = measure(label, config.model_copy(update={"episodes": 1}), executor, gold, quiet=True)
    wall = one.elapsed - steady.elapsed / len(steady.played)
    return f"{label}: {wall:.1f} s wall, {one.cpu - steady.cpu:.1f} s CPU"


@contextmanager
def local_ray(workers: int) -> Iterator[Callable[[int], RayExecutor]]:
    """A Ray instance started here with ``workers`` CPUs (its start-up outside the runs);
    yields a maker of executors on it. Their actors get the simulator's JVM options of this
    process's environment as every Ray executor forwards them (``forwarded_env``)."""
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    for attempt in range(3):  # a loaded machine may not start the raylet in Ray's 30 s
        try:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            break
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise
    try:
        yield lambda actors: RayExecutor(workers=actors)
    finally:
        ray.shutdown()


def _spin(n: int) -> int:
    """A fixed amount of plain CPU work (a loop over a few integers: no memory traffic)."""
    x = 0
    for i in range(n):
        x = (x + i * i) % 1_000_003
    return x


def machine(workers: int, n: int = 15_000_000) -> float:
    """The machine's own parallel efficiency: the wall time of one process spinning
    :func:`_spin` alone (the mean of once before and once after) over that of ``workers``
    processes spinning the same each at once (the processes started beforehand). Two
    virtual cores that share a physical one, or a host busy with other machines, deliver less
    than twice one core to any work."""

    def timed(count: int) -> float:
        started = time.perf_counter()
        pool.map(_spin, [n] * count, chunksize=1)
        return time.perf_counter() - started

    with multiprocessing.Pool(workers) as pool:
        pool.map(_spin, [1000] * workers, chunksize=1)
        before, many, after = timed(1), timed(workers), timed(1)
    return (before + after) / 2 / many


@dataclass
class Round:
    """One round's runs, by kind (``one``, ``local``, ``ray``), and the machine's own
    efficiency measured just before them (:func:`machine`)."""

    machine: float
    runs: dict[str, Run]


def efficiency(rounds: list[Round], kind: str, workers: int) -> str:
    """The parallel efficiency of ``kind`` runs against the 1-worker run of the same round:
    the median over the rounds (each round's runs met about the same machine), with every
    round's value; the median of each round's against the machine's own that round, the
    median CPU per episode against one worker's, and the ceiling one worker sets: it keeps
    more than a core busy (its JVM compiles and collects beside the simulator), and K workers
    at its CPU per episode cannot use more cores than the machine has."""
    values = [r.runs[kind].rate / (workers * r.runs["one"].rate) for r in rounds]
    busy = statistics.median(r.runs["one"].cpu * r.runs["one"].rate / 60 for r in rounds)
    cores = os.cpu_count() or workers
    ceiling = min(1.0, cores / (workers * busy))
    of_machine = statistics.median(v / r.machine for v, r in zip(values, rounds, strict=True))
    cpu = statistics.median(r.runs[kind].cpu / r.runs["one"].cpu for r in rounds)
    warm = statistics.median(r.runs[kind].warm / (workers * r.runs["one"].warm) for r in rounds)
    value = statistics.median(values)
    verdict = "OK" if value >= 0.8 else "BELOW TARGET"
    each = ", ".join(f"{v:.2f}" for v in sorted(values))
    return (
        f"{value:.2f} (target >= 0.8) {verdict}, median of {len(values)} round(s): {each}; "
        f"{of_machine:.2f} of the machine's own; CPU per episode x{cpu:.2f} of 1 worker's; "
        f"warm (each run's second half): {warm:.2f}; one worker keeps {busy:.2f} cores busy, "
        f"so {workers} on {cores} cores reach at most {ceiling:.2f} at its CPU per episode"
    )


def play_round(
    args: argparse.Namespace,
    config: RunConfig,
    gold: Path,
    name: str,
    costs: list[str] | None = None,
) -> Round:
    """One round: the machine's own efficiency, 1 worker, then K local workers and/or Ray
    with K CPUs (a Ray instance started for the round, so that its own processes idle through
    no other run). With ``costs``, also what starting one worker costs (appended to it)."""
    own = machine(args.workers)
    print(f"  {name} machine: a plain CPU loop in {args.workers} processes: {own:.2f}")
    one = measure(f"{name} 1 worker", config, LocalPool(1), gold)
    runs = {"one": one}
    if costs is not None:
        costs.append(start_up("a local worker", config, LocalPool(1), gold, one))
    if args.executor in ("local", "both"):
        workers = LocalPool(args.workers)
        runs["local"] = measure(f"{name} {args.workers} workers", config, workers, gold)
    if args.executor in ("ray", "both"):
        with local_ray(args.workers) as executor:
            ray_run = measure(f"{name} ray {args.workers}", config, executor(args.workers), gold)
            if costs is not None:
                costs.append(start_up("a Ray actor", config, executor(1), gold, ray_run))
        runs["ray"] = ray_run
    return Round(own, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1200)
    parser.add_argument("--families", default="use-thermometer,find-living-thing")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="K (default: cores)"
    )
    parser.add_argument("--executor", choices=["local", "ray", "both"], default="both")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of 1 worker, then K workers (default 3)"
    )
    parser.add_argument(
        "--defaults", action="store_true", help="also run with the JVM's default options"
    )
    parser.add_argument(
        "--jvm",
        metavar="OPTIONS",
        help="also run with these JVM options (space-separated; no class-data archive)",
    )
    parser.add_argument(
        "--gold", type=Path, help="keep the gold paths' database here and reuse it next time"
    )
    parser.add_argument("--keep", type=Path, help="keep every run's database in this folder")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    config = RunConfig(families=args.families.split(","), episodes=args.episodes, seed=11)
    variants: dict[str, str | None] = {"ours": None}
    if args.defaults:
        variants["defaults"] = ""
    if args.jvm is not None:
        variants["given"] = args.jvm
    print(f"{args.episodes} episodes of {args.families}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        gold, every = with_gold_paths(config, folder, args.gold), []
        for name, options in variants.items():
            if options is None:  # the world's own: its options and its class-data archive
                os.environ.pop(JVM_OPTIONS_VARIABLE, None)
                archive = "from a class-data archive" if make_class_archive() else "no archive"
                print(f"JVM options {name}: {' '.join(JVM_OPTIONS)}, {archive}")
            else:
                os.environ[JVM_OPTIONS_VARIABLE] = options
                print(f"JVM options {name}: {options or '(none: the JVM defaults)'}")
            costs: list[str] = []
            rounds = [
                play_round(args, config, gold, f"{name} r{k + 1}", costs if k == 0 else None)
                for k in range(args.rounds)
            ]
            for kind, what in (("local", "local pool"), ("ray", "Ray")):
                if kind in rounds[0].runs:
                    print(f"  {what} efficiency: {efficiency(rounds, kind, args.workers)}")
            print(f"  start-up of one worker, included in every run: {'; '.join(costs)}")
            own = statistics.median(r.machine for r in rounds)
            print(f"  the machine's own efficiency (a plain CPU loop): median {own:.2f}")
            every += [run for r in rounds for run in r.runs.values()]
    first = every[0]
    for run in every[1:]:
        differ = [key for key in first.played if run.played[key] != first.played[key]]
        reordered = sum(run.seen[key] != first.seen[key] for key in first.seen)
        print(
            f"{run.label} played differently from {first.label}: {len(differ)} of "
            f"{len(first.played)} episodes {' '.join(differ[:5])}; saw something else (the "
            f"simulator's JVM history) in {reordered}"
        )
    print("(wall-clock rates and efficiency need an idle machine; CPU per episode does not)")


if __name__ == "__main__":
    main()
