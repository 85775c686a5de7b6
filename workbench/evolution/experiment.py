"""The repository-evolution experiment (AutoRefine's RQ3, offline, in any environment).

One ordered learning stream and one fixed held-out set are planned once and stored with the
experiment. Each admission regime then walks the same stream in its own workspace: every
``every`` learning tasks it runs the next stretch of the stream with the repository it has so
far, analyses all its learning failures, compiles them, admits the staged candidates under its
regime, freezes the repository and scores it on the held-out set. Held-out episodes live in a
workspace of their own, so they never feed analysis, compilation or replay.

Checkpoint 0 is the artifact-free reference every regime shares. Signed degradation at a
checkpoint is computed over the *baseline-success ledger* — the held-out cases the reference
solved — as ``(lost - recovered) / |ledger|``, where ``lost`` ledger cases passed at the
previous checkpoint and fail now and ``recovered`` ones failed then and pass now: positive is
a net loss of capability the agent had without artifacts, negative a net recovery.

Everything resumes: runs skip recorded episodes, analysis continues its run, compiling an
unchanged spec writes nothing, only staged versions face admission, and a checkpoint is
written (in one transaction) only when it is complete.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from store import (
    DEFAULT_REGIMES,
    MASKS,
    REGIMES,
    ArtifactVersion,
    Checkpoint,
    EpisodeFilter,
    Evolution,
    Gate,
    GateCheck,
    Regime,
    Store,
)
from workbench.admit.repository import (
    active_guidance,
    admission_order,
    admit,
    guidance_of,
)
from workbench.agents.guidance import Guidance
from workbench.analyze.analyzer import analyze
from workbench.backends import Backends
from workbench.compile.compiler import compile_run
from workbench.compile.contracts import form_of
from workbench.envs.registry import default_environment
from workbench.progress import NullProgress, Progress, check_cancel
from workbench.runner import (
    AgentSpec,
    Executor,
    PlannedEpisode,
    RunConfig,
    build_env,
    plan_run,
    run_batch,
)


class EvolveConfig(BaseModel):
    """What an experiment runs; stored with it, so a resumed experiment cannot drift."""

    model_config = ConfigDict(extra="forbid")

    env: str = Field(default_factory=default_environment, min_length=1)
    """The environment plugin's name; the workbench's own default when not given."""
    stream: list[str] = Field(min_length=1)
    """Families of the learning stream (train variations, in a seeded order)."""
    stream_size: int = Field(default=60, ge=1)
    heldout: list[str] = Field(min_length=1)
    """Families of the held-out set (test variations; never learned from)."""
    heldout_size: int = Field(default=40, ge=1)
    every: int = Field(default=20, ge=1)
    """Learning tasks between checkpoints."""
    seed: int = 0
    step_limit: int = Field(default=100, ge=1)
    agent: AgentSpec = Field(default_factory=AgentSpec)

    @property
    def checkpoints(self) -> int:
        """Checkpoints after the reference (the last one may cover a shorter stretch)."""
        return -(-self.stream_size // self.every)

    def run(self, held_out: bool, guidance: Guidance | None = None) -> RunConfig:
        """The run configuration of the stream (train) or of the held-out set (test)."""
        return RunConfig(
            env=self.env,
            families=self.heldout if held_out else self.stream,
            split="test" if held_out else "train",
            episodes=self.heldout_size if held_out else self.stream_size,
            seed=self.seed,
            step_limit=self.step_limit,
            agent=self.agent,
            guidance=guidance or Guidance(),
        )


def workspace(name: str, regime: str) -> str:
    """Where a regime of an experiment learns (``heldout`` holds every scored run)."""
    return f"evolve/{name}/{regime}"


def start_evolution(store: Store, name: str, config: EvolveConfig) -> Evolution:
    """Create the experiment with its stream and held-out plans (seeded), or return the stored
    one when it has the same configuration.

    Raises:
        ValueError: an experiment of that name exists with another configuration.
    """
    existing = store.evolution(name)
    if existing is not None:
        stored = EvolveConfig.model_validate(existing.params["config"])
        if stored != config:
            raise ValueError(
                f"experiment {name!r} exists with another configuration; resume it with the same "
                "options or pick another --name"
            )
        return existing
    env = build_env(config.run(held_out=False))
    try:
        # plan ids are relative ('family:variation[:trial]'); each batch prefixes its name
        stream = _relative(plan_run(config.run(held_out=False), env, ""))
        heldout = _relative(plan_run(config.run(held_out=True), env, ""))
    finally:
        env.close()
    evolution = Evolution(
        name=name,
        params={
            "config": config.model_dump(mode="json"),
            "stream": [p.model_dump() for p in stream],
            "heldout": [p.model_dump() for p in heldout],
        },
    )
    return store.put_evolution(evolution)


def _relative(plan: list[PlannedEpisode]) -> list[PlannedEpisode]:
    return [p.model_copy(update={"id": p.id.lstrip(":")}) for p in plan]


def _plan(evolution: Evolution, key: str) -> list[PlannedEpisode]:
    return [PlannedEpisode.model_validate(p) for p in evolution.params[key]]


def _prefixed(plan: list[PlannedEpisode], batch: str) -> list[PlannedEpisode]:
    """The plan's episodes as episodes of ``batch`` (ids ``<batch>:<case>``)."""
    return [p.model_copy(update={"id": f"{batch}:{p.id}"}) for p in plan]


@dataclass(frozen=True)
class LedgerChange:
    """How the baseline-success ledger moved between two checkpoints."""

    ledger: int
    lost: int
    recovered: int

    @property
    def degradation(self) -> float:
        """Signed degradation: net loss (positive) or net recovery (negative) as a fraction
        of the ledger."""
        return (self.lost - self.recovered) / self.ledger if self.ledger else 0.0


def ledger_change(
    reference: dict[str, bool], before: dict[str, bool], now: dict[str, bool]
) -> LedgerChange:
    """Compare two checkpoints' outcomes on the cases the reference solved: ``lost`` passed
    before and fail now, ``recovered`` failed before and pass now (a case missing from a
    checkpoint counts as failed)."""
    ledger = [case for case, passed in reference.items() if passed]
    lost = sum(before.get(c, False) and not now.get(c, False) for c in ledger)
    recovered = sum(not before.get(c, False) and now.get(c, False) for c in ledger)
    return LedgerChange(len(ledger), lost, recovered)


class _Stage:
    """Forwards one stage's progress to the experiment's progress as a description."""

    def __init__(self, outer: Progress, label: str) -> None:
        self.outer, self.label = outer, label
        self.total: float | None = None
        self.done = 0.0
        self.what = ""

    def start(self, total: float | None, description: str = "") -> None:
        self.total, self.done, self.what = total, 0.0, description
        self.outer.advance(0, f"{self.label}: {description}")

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        self.done += amount
        self.what = description or self.what
        of = f"/{self.total:.0f}" if self.total else ""
        self.outer.advance(0, f"{self.label}: {self.what} {self.done:.0f}{of}")

    def finish(self) -> None:
        pass


@dataclass
class Evolver:
    """Runs (or resumes) one experiment's checkpoints for some regimes."""

    db: str
    evolution: Evolution
    backends: Callable[[Store], Backends]
    """Builds the stage backends for one stretch of learning from the regime's store (the
    heuristic reads benign errors from the successes it can see)."""
    executor: Executor
    """Plays every episode: the stream's stretches, their replays and the held-out scoring."""
    progress: Progress | None = None
    cancel: threading.Event | None = None

    def __post_init__(self) -> None:
        self.config = EvolveConfig.model_validate(self.evolution.params["config"])
        self.stream = _plan(self.evolution, "stream")
        self.heldout = _plan(self.evolution, "heldout")
        self.name = self.evolution.name
        self._outer: Progress = self.progress or NullProgress()

    # -- one regime's steps ----------------------------------------------------------------------

    def _score(self, regime: str, position: int, guidance: Guidance) -> dict[str, Any]:
        """Run the held-out set with ``guidance``; outcomes and artifact uses per case."""
        batch = f"{workspace(self.name, 'heldout')}/{regime}-{position}"
        with Store(self.db, workspace=workspace(self.name, "heldout")) as store:
            run_batch(
                store,
                self.config.run(held_out=True, guidance=guidance),
                batch=batch,
                plan=_prefixed(self.heldout, batch),
                executor=self.executor,
                progress=_Stage(self._outer, f"{regime} · checkpoint {position} · held-out"),
                cancel=self.cancel,
            )
            outcomes: dict[str, bool] = {}
            uses: Counter[str] = Counter()
            for episode in store.iter_episodes(EpisodeFilter(batch=batch)):
                outcomes[episode.id.removeprefix(f"{batch}:")] = bool(episode.outcome.success)
                uses.update({u["artifact"] for u in episode.metadata.get("guidance_uses", [])})
        return {"outcomes": outcomes, "uses": dict(uses), "batch_id": batch}

    def reference(self) -> Checkpoint:
        """Checkpoint 0: the held-out set without artifacts (shared by every regime)."""
        scored = self._score("reference", 0, Guidance())
        passed = sum(scored["outcomes"].values())
        return Checkpoint(
            evolution=self.name,
            regime="gated",
            position=0,
            tasks=0,
            passed=passed,
            total=len(scored["outcomes"]),
            stored=0,
            used=0,
            ledger=passed,
            lost=0,
            recovered=0,
            degradation=0.0,
            outcomes=scored["outcomes"],
            batch_id=scored["batch_id"],
        )

    def learn(self, regime: Regime, position: int) -> list[dict[str, Any]]:
        """Run the stream's next stretch with the current repository, analyse, compile and
        admit under the regime; returns what admission decided."""
        label = f"{regime} · checkpoint {position}"
        start, stop = (position - 1) * self.config.every, position * self.config.every
        batch = f"{workspace(self.name, regime)}/learn-{position}"
        admissions = []
        with Store(self.db, workspace=workspace(self.name, regime)) as store:
            run_batch(
                store,
                self.config.run(held_out=False, guidance=active_guidance(store)),
                batch=batch,
                plan=_prefixed(self.stream[start:stop], batch),
                executor=self.executor,
                progress=_Stage(self._outer, f"{label} · learning"),
                cancel=self.cancel,
            )
            check_cancel(self.cancel)
            # every learning failure the regime has seen (replays are left out by analyze)
            backends = self.backends(store)
            report = analyze(
                store,
                EpisodeFilter(split="train"),
                backends.analyst,
                progress=_Stage(self._outer, f"{label} · analyzing"),
                cancel=self.cancel,
            )
            compile_run(
                store,
                backends.compiler,
                run_id=report.run.id,
                closure=regime != "no-closure",
                progress=_Stage(self._outer, f"{label} · compiling"),
                cancel=self.cancel,
            )
            for version in admission_order(store.versions(status="staged")):
                check_cancel(self.cancel)
                twin = _judged_twin(store, version)
                if twin is not None:
                    _set_aside(store, version, twin)
                    continue
                result = admit(
                    store,
                    version.id or 0,
                    executor=self.executor,
                    progress=_Stage(self._outer, f"{label} · admitting {version.artifact}"),
                    cancel=self.cancel,
                    regime=regime,
                )
                admissions.append(_admission(result.version))
        return admissions

    def checkpoint(
        self, regime: Regime, position: int, reference: Checkpoint, admissions: list[dict]
    ) -> Checkpoint:
        """Freeze the regime's repository and score it on the held-out set."""
        active = self.repository(regime, position)
        scored = self._score(regime, position, guidance_of(active))
        with Store(self.db) as store:
            previous = store.checkpoints(self.name, regime)
        before = max(previous, key=lambda c: c.position) if previous else reference
        now = scored["outcomes"]
        change = ledger_change(reference.outcomes, before.outcomes, now)
        names = {v.artifact for v in active}
        return Checkpoint(
            evolution=self.name,
            regime=regime,
            position=position,
            tasks=min(position * self.config.every, self.config.stream_size),
            passed=sum(now.values()),
            total=len(now),
            sizes=dict(Counter(v.kind for v in active)),
            stored=len(active),
            used=sum(scored["uses"].get(n, 0) > 0 for n in names),
            ledger=change.ledger,
            lost=change.lost,
            recovered=change.recovered,
            degradation=change.degradation,
            outcomes=now,
            uses={n: scored["uses"].get(n, 0) for n in sorted(names)},
            admissions=admissions,
            batch_id=scored["batch_id"],
        )

    def repository(self, regime: Regime, position: int) -> list[ArtifactVersion]:
        """The versions the regime's agent follows at a checkpoint: its own active ones, or
        for a masking regime the gated repository of that checkpoint without the masked
        kinds (rebuilt from the gated checkpoints' admissions, so a later gated stretch does
        not leak in)."""
        if regime not in MASKS:
            with Store(self.db, workspace=workspace(self.name, regime)) as store:
                return store.versions(status="active")
        with Store(self.db) as store:
            gated = {c.position: c for c in store.checkpoints(self.name, "gated")}
        if position not in gated:
            raise ValueError(
                f"{regime} at checkpoint {position} masks the gated repository, which has no "
                f"checkpoint {position} yet; run the gated regime with it"
            )
        chosen: dict[str, int] = {}
        for k in range(1, position + 1):
            for admission in gated[k].admissions if k in gated else []:
                if admission["status"] == "active":
                    chosen[admission["artifact"]] = admission["id"]
        if set(chosen) != set(gated[position].uses):
            raise ValueError(
                f"the gated repository of experiment {self.name!r} at checkpoint {position} "
                "cannot be rebuilt from its admissions (was it changed outside the experiment?)"
            )
        with Store(self.db, workspace=workspace(self.name, "gated")) as store:
            versions = [store.version(i) for i in chosen.values()]
        return [v for v in versions if v is not None and v.kind not in MASKS[regime]]

    # -- the whole experiment --------------------------------------------------------------------

    def run(self, regimes: list[Regime]) -> Iterator[Checkpoint]:
        """Every missing checkpoint, regimes interleaved so that they advance together; yields
        each checkpoint as it is stored."""
        with Store(self.db) as store:
            done = {(c.regime, c.position) for c in store.checkpoints(self.name)}
        todo = [
            (r, k)
            for k in range(self.config.checkpoints + 1)
            for r in regimes
            if (r, k) not in done
        ]
        self._outer.start(len(todo), f"evolution {self.name}")
        try:
            reference = self._reference(regimes, done)
            for regime, position in todo:
                if position == 0:
                    continue
                admissions = [] if regime in MASKS else self.learn(regime, position)
                checkpoint = self.checkpoint(regime, position, reference, admissions)
                with Store(self.db) as store:
                    yield store.put_checkpoint(checkpoint)
                self._outer.advance(1, f"{regime} · checkpoint {position} stored")
        finally:
            self._outer.finish()

    def _reference(self, regimes: list[Regime], done: set[tuple[str, int]]) -> Checkpoint:
        with Store(self.db) as store:
            stored = [c for c in store.checkpoints(self.name) if c.position == 0]
            reference = stored[0] if stored else self.reference()
            for regime in regimes:
                if (regime, 0) not in done:
                    store.put_checkpoint(
                        reference.model_copy(update={"regime": regime, "id": None})
                    )
                    self._outer.advance(1, f"{regime} · reference stored")
        return reference


def ordered_regimes(regimes: Iterable[Regime]) -> list[Regime]:
    """``regimes`` in the order of :data:`store.REGIMES`, with ``gated`` added when a masking
    regime needs its repository (gated comes first, so each checkpoint has it to mask)."""
    chosen = set(regimes)
    if chosen & set(MASKS):
        chosen.add("gated")
    return [r for r in REGIMES if r in chosen]


def _behaviour(version: ArtifactVersion) -> dict[str, Any]:
    """What an agent following the version does (its guidance form)."""
    return form_of(version.contract).model_dump(mode="json")


def _judged_twin(store: Store, version: ArtifactVersion) -> ArtifactVersion | None:
    """An already judged version of the same artifact that behaves exactly like this staged
    one (more evidence, same rule): judging it again would only repeat the replay."""
    behaviour = _behaviour(version)
    for other in store.versions(artifact=version.artifact):
        if other.id != version.id and other.status != "staged" and _behaviour(other) == behaviour:
            return other
    return None


def _set_aside(store: Store, version: ArtifactVersion, twin: ArtifactVersion) -> None:
    """Close a staged version that behaves like an already judged one without judging it
    again: it stays in the repository, superseded (twin active) or rejected (twin rejected)."""
    passed = twin.status != "rejected"
    detail = f"behaves like {twin.artifact} v{twin.version} ({twin.status}); not judged again"
    verdict = Gate(
        passed=passed, checks=[GateCheck(name="unchanged", passed=passed, detail=detail)]
    )
    store.record_gate(version.id or 0, "contract", verdict, "superseded" if passed else "rejected")


def _admission(version: ArtifactVersion) -> dict[str, Any]:
    failed = [
        f"{gate}: {check.name} ({check.detail})"
        for gate, verdict in (("contract", version.contract_gate), ("replay", version.replay_gate))
        if verdict is not None
        for check in verdict.checks
        if not check.passed
    ]
    return {
        "artifact": version.artifact,
        "version": version.version,
        "id": version.id,
        "kind": version.kind,
        "status": version.status,
        "why": "; ".join(failed),
    }


def evolve(
    db: str,
    name: str,
    config: EvolveConfig,
    backends: Callable[[Store], Backends],
    *,
    executor: Executor,
    regimes: list[Regime] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    on_checkpoint: Callable[[Checkpoint], None] | None = None,
) -> list[Checkpoint]:
    """Create (or resume) the experiment and run its missing checkpoints; returns all of
    them, by regime (in the order of :data:`store.REGIMES`) then position. Every episode
    is played on ``executor``. ``regimes`` defaults to :data:`store.DEFAULT_REGIMES`; a
    masking regime brings the gated one with it (it masks the gated repository)."""
    with Store(db) as store:
        evolution = start_evolution(store, name, config)
    evolver = Evolver(db, evolution, backends, executor, progress, cancel)
    for checkpoint in evolver.run(ordered_regimes(regimes or DEFAULT_REGIMES)):
        if on_checkpoint is not None:
            on_checkpoint(checkpoint)
    with Store(db) as store:
        return sorted(store.checkpoints(name), key=lambda c: (REGIMES.index(c.regime), c.position))
