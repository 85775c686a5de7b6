"""Learn-by-interact's effect offline: held-out success of the exemplar agent with no
examples, with whole-trajectory examples, and with backward-constructed, filtered examples —
on the same held-out episodes (same test variations, same seeds), in each world.

On a fresh database (a temporary folder, or ``--keep DIR``), for each world:

1. arm (a), **no examples**: the held-out episodes (the world's *test* split, never used by
   synthesis, which proposes and plays train variations only) are played by the exemplar
   agent before any example exists. With no example it takes the scripted explorer's greedy
   choice at every step (``example_fallback="explorer"``: the valid action naming the
   instruction's words, with an observable effect, not repeated) — so (a) is that explorer,
   the same agent the other arms fall back to wherever no example applies;
2. synthesis: tasks proposed from the world's documentation (offline proposer, ``--n`` per
   passage), played by the scripted explorer (``--tasks`` of them), backward construction
   (offline relabeler) and the filters (replays in the real simulator);
3. arm (b), **whole trajectories**: the exemplar agent retrieving only the ``whole`` examples
   — one per explored trajectory, under the instruction it was played with, as the paper's
   *data distill* baseline (no backward construction). By default they are not filtered (every
   explored trajectory is one example); ``--filter-whole`` passes them through the same filters;
4. arm (c), **backward + filtered**: the exemplar agent retrieving only the kept
   ``backward`` examples.

Success is the world's own verdict on its own task. Prints per world and overall: successes
with Wilson 95% intervals per arm (and, per world, the mean final score: partial progress),
the discordant pairs and the exact McNemar p of (c) vs (b) and (c) vs (a), what synthesis
made, and every held-out episode's task and seed. ``--reread DIR`` prints the table a kept
folder holds without playing anything.

    python bench/synthesis_effect.py [--episodes 15] [--seed 0] [--workers 2] [--keep DIR]
        [--tasks 60] [--n 3] [--step-limit 30] [--filter-whole] [--reread DIR]
        [--family scienceworld=find-living-thing --family textworld=tw-cooking-level1]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from store import EpisodeFilter, Store
from store.synth import SYNTH_WORKSPACE
from workbench.admit.stats import mcnemar_exact, wilson_interval
from workbench.backends import make_backends
from workbench.executors import LocalPool
from workbench.runner import AgentSpec, Executor, RunConfig, run_batch
from workbench.synth.backward import construct
from workbench.synth.explore import explore
from workbench.synth.filters import filter_examples
from workbench.synth.tasks import propose_tasks

FAMILIES = {"scienceworld": ["find-living-thing"], "textworld": ["tw-cooking-level1"]}
"""The worlds measured and the families of each (documentation, tasks and held-out runs)."""

ARMS = {
    "a": ("no examples", None),
    "b": ("whole trajectories", "whole"),
    "c": ("backward + filtered", "backward"),
}
"""Each arm's label and the kind of examples its agent retrieves (``None``: none exist yet)."""

UNFILTERED = {"unfiltered": "arm (b) of bench/synthesis_effect.py: every trajectory kept"}
"""The checks of a whole example kept without the filters."""


@dataclass(frozen=True)
class Settings:
    """Everything a measurement depends on."""

    episodes: int = 15
    """Held-out episodes per world."""
    seed: int = 0
    """Seed of the proposals, the exploration and the held-out run."""
    n: int = 3
    """Tasks proposed per documentation passage (the paper samples three)."""
    tasks: int = 60
    """Proposed tasks explored per world (spread evenly over the proposals, so every kind
    of passage is played; 0: all)."""
    step_limit: int = 30
    """Most actions per explored and per held-out episode."""
    filter_whole: bool = False
    """Pass the whole examples through the filters too (default: every one kept)."""


@dataclass
class WorldResult:
    """One world's measurement."""

    world: str
    families: list[str]
    seeds: dict[str, int] = field(default_factory=dict)
    """Held-out episode (``family:variation[:trial]``) → its seed, the same in every arm."""
    outcomes: dict[str, dict[str, bool]] = field(default_factory=dict)
    """Arm → held-out episode → whether the world judged its task done."""
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    """Arm → held-out episode → the world's final score (partial progress)."""
    examples: dict[str, int] = field(default_factory=dict)
    """Arm → how many examples its agent retrieved from."""
    fallback_share: dict[str, float] = field(default_factory=dict)
    """Arm → share of its actions the fallback chose (no example applied)."""
    synthesis: dict[str, object] = field(default_factory=dict)
    """What synthesis did (tasks, episodes, examples by verdict, seconds)."""


def spread(items: list[int], k: int) -> list[int]:
    """``k`` of ``items`` spread evenly (their first and every ``len/k``-th); all of them
    when ``k`` is 0 or at least their number."""
    if k <= 0 or k >= len(items):
        return list(items)
    return [items[(j * len(items)) // k] for j in range(k)]


def held_out_config(world: str, families: list[str], settings: Settings) -> RunConfig:
    """The held-out run every arm plays (only the agent differs between arms)."""
    return RunConfig(
        env=world,
        families=families,
        split="test",
        episodes=settings.episodes,
        seed=settings.seed,
        step_limit=settings.step_limit,
    )


@dataclass
class Arm:
    """One arm's held-out run, as recorded."""

    played: dict[str, tuple[int, bool, float]]
    """Held-out episode (``family:variation[:trial]``) → its seed, success and final score."""
    examples: int
    """Examples its agent retrieved from."""
    fallback: float
    """Share of its actions the fallback chose."""


def arm_batch(world: str, arm: str) -> str:
    return f"heldout-{world}-{arm}"


def play_arm(store: Store, config: RunConfig, arm: str, executor: Executor) -> Arm:
    """Play the held-out run with arm ``arm``'s agent (resumes a batch already started)."""
    spec = AgentSpec(kind="exemplar", example_kind=ARMS[arm][1], example_fallback="explorer")
    batch = arm_batch(config.env, arm)
    run_batch(store, config.model_copy(update={"agent": spec}), executor=executor, batch=batch)
    return read_arm(store, config.env, arm)


def read_arm(store: Store, world: str, arm: str) -> Arm:
    """An arm's held-out run as the database holds it."""
    batch = arm_batch(world, arm)
    played = {}
    examples, fallback, actions = set(), 0, 0
    for episode in store.episodes(EpisodeFilter(batch=batch)):
        outcome = episode.outcome
        played[episode.id.removeprefix(f"{batch}:")] = (
            episode.seed or 0,
            outcome.success,
            outcome.score or 0.0,
        )
        record = episode.metadata.get("exemplar", {})
        examples.add(record.get("examples", 0))
        fallback += record.get("fallback_steps", 0)
        actions += len(record.get("steps", []))
    return Arm(played, max(examples, default=0), fallback / max(1, actions))


def synthesize(
    store: Store, world: str, families: list[str], settings: Settings, executor: Executor
) -> dict[str, object]:
    """Tasks from the world's documentation, explored, constructed backward and filtered (the
    whole examples kept as they are unless ``settings.filter_whole``)."""
    started = time.perf_counter()
    backends = make_backends(store)
    proposed = propose_tasks(
        store,
        world,
        settings.n,
        proposer=backends.proposer,
        seed=settings.seed,
        families=families,
    )
    explored = explore(
        store,
        executor=executor,
        env=world,
        batch=f"effect-{world}",
        only=spread([t.id for t in store.synth_tasks(world)], settings.tasks),
        step_limit=settings.step_limit,
        seed=settings.seed,
    )
    with Store(store.path, workspace=SYNTH_WORKSPACE) as synth:
        built = construct(synth, relabeler=backends.relabeler)
        pending = synth.synth_examples(env=world, verdict="pending")
        whole = [e for e in pending if e.kind == "whole"]
        judged = [e.id for e in pending if settings.filter_whole or e.kind != "whole"]
        filtered = filter_examples(synth, executor=executor, examples=judged)
        if not settings.filter_whole:
            synth.set_example_verdicts(
                [
                    e.model_copy(update={"verdict": "kept", "checks": e.checks | UNFILTERED})
                    for e in whole
                ]
            )
        counts = Counter((e.kind, e.verdict) for e in synth.synth_examples(env=world))
    return {
        "tasks": proposed.proposed,
        "explored": explored.finished,
        "solved": explored.finished - explored.failed,
        "relabel calls": built.relabel_calls,
        "examples": {f"{kind} {verdict}": n for (kind, verdict), n in sorted(counts.items())},
        "rejected": dict(filtered.rejected),
        "seconds": round(time.perf_counter() - started, 1),
    }


def measure_world(
    store: Store, world: str, families: list[str], settings: Settings, executor: Executor
) -> WorldResult:
    """Arm (a) before any example of the world exists, then synthesis, then arms (b), (c)."""
    config = held_out_config(world, families, settings)
    result = WorldResult(world, families)
    for arm in ARMS:
        if arm == "b":
            result.synthesis = synthesize(store, world, families, settings, executor)
        add_arm(result, arm, play_arm(store, config, arm, executor))
    if result.examples["a"]:
        raise RuntimeError(f"{world}: arm (a) found examples (the database was not fresh)")
    return result


def add_arm(result: WorldResult, arm: str, played: Arm) -> None:
    """Record an arm in a world's result; its episodes and seeds must be the first arm's."""
    seeds = {key: seed for key, (seed, _, _) in played.played.items()}
    if result.seeds and seeds != result.seeds:
        raise RuntimeError(f"{result.world}: arm ({arm}) played other episodes than arm (a)")
    result.seeds = seeds
    result.outcomes[arm] = {key: success for key, (_, success, _) in played.played.items()}
    result.scores[arm] = {key: score for key, (_, _, score) in played.played.items()}
    result.examples[arm], result.fallback_share[arm] = played.examples, played.fallback


def reread(path: Path, families: dict[str, list[str]]) -> list[WorldResult]:
    """The measurement a kept database holds (its held-out batches and examples)."""
    results = []
    with Store(path) as store, Store(path, workspace=SYNTH_WORKSPACE) as synth:
        for world, chosen in families.items():
            if store.batch(arm_batch(world, "a")) is None:
                continue
            result = WorldResult(world, chosen)
            for arm in ARMS:
                add_arm(result, arm, read_arm(store, world, arm))
            counts = Counter((e.kind, e.verdict) for e in synth.synth_examples(env=world))
            result.synthesis = {"examples": {f"{k} {v}": n for (k, v), n in sorted(counts.items())}}
            results.append(result)
    return results


def measure(
    path: Path, families: dict[str, list[str]], settings: Settings, executor: Executor
) -> list[WorldResult]:
    """Every world's measurement on the database at ``path`` (fresh)."""
    with Store(path) as store:
        return [measure_world(store, w, f, settings, executor) for w, f in families.items()]


# -- the statistics and the table ------------------------------------------------------------


@dataclass(frozen=True)
class Paired:
    """One arm against another on the same episodes."""

    fixed: int
    """Episodes the first arm solved and the second did not."""
    broken: int
    """Episodes the second arm solved and the first did not."""

    @property
    def p(self) -> float:
        return mcnemar_exact(self.fixed, self.broken)


def paired(first: dict[str, bool], second: dict[str, bool]) -> Paired:
    """The discordant pairs of two arms over the same episodes.

    Raises:
        ValueError: the arms did not play the same episodes.
    """
    if first.keys() != second.keys():
        raise ValueError("the arms played different episodes: no paired comparison")
    fixed = sum(first[k] and not second[k] for k in first)
    broken = sum(second[k] and not first[k] for k in first)
    return Paired(fixed, broken)


def merged(results: Sequence[WorldResult]) -> dict[str, dict[str, bool]]:
    """Every world's outcomes per arm, episodes keyed by world."""
    return {
        arm: {f"{r.world}/{k}": v for r in results for k, v in r.outcomes[arm].items()}
        for arm in ARMS
    }


def table(
    name: str,
    outcomes: dict[str, dict[str, bool]],
    scores: dict[str, dict[str, float]] | None = None,
) -> list[str]:
    """The lines of one block of the table: each arm's successes with its Wilson 95%
    interval (and mean final score), then (c) vs (b) and (c) vs (a) with the exact McNemar
    p."""
    lines = []
    for arm, (label, _) in ARMS.items():
        won, total = sum(outcomes[arm].values()), len(outcomes[arm])
        low, high = wilson_interval(won, total)
        mean = ""
        if scores is not None and scores.get(arm):
            mean = f"   {sum(scores[arm].values()) / len(scores[arm]):>6.1f}"
        lines.append(
            f"{name:<13} ({arm}) {label:<20} {won:>3}/{total:<3} {won / max(1, total):>5.0%}"
            f"   [{low:.0%}, {high:.0%}]" + mean
        )
    for other in ("b", "a"):
        pair = paired(outcomes["c"], outcomes[other])
        lines.append(
            f"{'':<13} (c) vs ({other}): {pair.fixed} solved only by (c), {pair.broken} only by "
            f"({other}); McNemar exact p = {pair.p:.3g}"
        )
    return lines


def report(results: Sequence[WorldResult], settings: Settings) -> list[str]:
    """The whole printout: per world, then overall."""
    lines = [f"{'world':<13} arm {'':<20} {'solved':>7} {'rate':>5}   Wilson 95%   mean score"]
    for result in results:
        lines += table(result.world, result.outcomes, result.scores)
    lines += table("overall", merged(results))
    lines.append("")
    for r in results:
        share = ", ".join(
            f"({a}) {r.examples[a]} examples, {r.fallback_share[a]:.0%} fallback actions"
            for a in ARMS
        )
        lines.append(f"{r.world} ({', '.join(r.families)}): {share}")
        lines.append(f"  synthesis: {r.synthesis}")
        seeds = " ".join(f"{k}@{s}" for k, s in sorted(r.seeds.items()))
        lines.append(f"  held-out (test split, run seed {settings.seed}): {seeds}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = Settings()
    parser.add_argument("--episodes", type=int, default=defaults.episodes, help="per world")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--n", type=int, default=defaults.n, help="tasks per passage")
    parser.add_argument("--tasks", type=int, default=defaults.tasks, help="explored per world")
    parser.add_argument("--step-limit", type=int, default=defaults.step_limit)
    parser.add_argument("--filter-whole", action="store_true")
    parser.add_argument("--family", action="append", default=[], metavar="WORLD=FAMILY")
    parser.add_argument("--keep", type=Path, help="keep the database in this folder")
    parser.add_argument(
        "--reread", type=Path, metavar="DIR", help="print the table a kept folder holds, no run"
    )
    args = parser.parse_args()
    families = {w: list(f) for w, f in FAMILIES.items()}
    chosen: dict[str, list[str]] = {}
    for text in args.family:
        world, family = text.split("=", 1)
        chosen.setdefault(world, []).append(family)
    families = chosen or families
    settings = Settings(
        args.episodes, args.seed, args.n, args.tasks, args.step_limit, args.filter_whole
    )
    if args.reread:
        print("\n".join(report(reread(args.reread / "effect.db", families), settings)))
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="synthesis-effect-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "effect.db"
    if path.exists():
        raise SystemExit(f"{path} exists: the measurement needs a fresh database")
    started, cpu = time.perf_counter(), time.process_time()
    with LocalPool(args.workers) as pool:
        results = measure(path, families, settings, pool)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)  # the pool's, once it is closed
    print(f"database: {path}")
    print("\n".join(report(results, settings)))
    print(
        f"{time.perf_counter() - started:.0f} s wall; CPU {time.process_time() - cpu:.0f} s in "
        f"this process, {workers.ru_utime + workers.ru_stime:.0f} s in the workers and the "
        "simulators they started"
    )


if __name__ == "__main__":
    main()
