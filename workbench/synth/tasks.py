"""Self-instruct from documentation (Learn-by-interact §2.2, Algorithm 1 lines 3-5): every
passage of a world's documentation is turned into task instructions by a
:class:`~workbench.synth.proposer.Proposer`, each stored as a :class:`~store.SynthTask` with its
source passage and the world task (family and train variation) it will be played in.

The documentation comes from the world's plugin (:attr:`EnvironmentPlugin.documentation`),
read without starting a simulator. Where a task may be played is decided here, the same for
every world and backend: a passage read from one variation is played there (other variations
of its family are offered for recombination); a family's passage, in the variations its
family's passages were read from (else its first train variation); a passage of no family (a
command, a kind of object), in the variations of every chosen family, those whose world holds
what the passage names first. Only train variations are ever used: synthesized data must not
come from held-out tasks.

Proposals of one passage are written in one transaction; a task equal to a stored one (same
world, family, variation and instruction) is not added again, so running again, or after a
cancelled run, adds only what is new.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from store import Store, SynthTask
from workbench.envs.base import DocPassage, EnvironmentPlugin, EnvOptions
from workbench.envs.registry import environment_plugin
from workbench.progress import NullProgress, Progress, check_cancel
from workbench.runner import cache_dir_beside
from workbench.synth.proposer import (
    DEFAULT_N,
    Ground,
    ProposalRequest,
    Proposer,
    documented_goal,
)

SPLIT = "train"
"""The only split synthesis plays."""
GROUNDS = 6
"""World tasks offered per passage (to a model: the list it picks from)."""


class NoDocumentation(ValueError):
    """A world documents nothing to synthesize tasks from."""


@dataclass
class SourceReport:
    """What one passage gave."""

    source: str
    """The passage's id."""
    proposed: int = 0
    """Tasks the proposer returned for it."""
    present: int = 0
    """Of those, how many were stored already (by an earlier run)."""

    @property
    def added(self) -> int:
        return self.proposed - self.present


@dataclass
class ProposalReport:
    """What :func:`propose_tasks` did."""

    env: str
    proposer: str
    seed: int
    sources: list[SourceReport] = field(default_factory=list)
    """One entry per passage read, in documentation order."""
    tasks: list[SynthTask] = field(default_factory=list)
    """Every task proposed (new or already stored), with its id."""

    @property
    def proposed(self) -> int:
        return sum(s.proposed for s in self.sources)

    @property
    def present(self) -> int:
        return sum(s.present for s in self.sources)

    @property
    def added(self) -> int:
        return self.proposed - self.present


def documentation(
    plugin: EnvironmentPlugin,
    options: EnvOptions | None = None,
    families: Sequence[str] = (),
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> list[DocPassage]:
    """The plugin's documentation for ``families`` (empty: every family), read one family at
    a time (a world may generate files to read, e.g. games): each family's own passages, then
    the passages of no family (commands, kinds of objects) once, their examples gathered from
    every family's reading.

    Raises:
        NoDocumentation: the plugin documents nothing (or nothing for those families).
        ValueError: a family the world does not have (its own one-line message).
        Cancelled: ``cancel`` was set between two families.
    """
    if plugin.documentation is None:
        raise NoDocumentation(
            f"{plugin.name} documents nothing to synthesize tasks from: its plugin sets no "
            "`documentation` (see EnvironmentPlugin.documentation)"
        )
    known = plugin.families()
    unknown = [f for f in families if f not in known]
    if unknown:
        raise ValueError(f"{plugin.name} has no family {unknown[0]!r}; known: {', '.join(known)}")
    wanted = list(families) or known
    progress = progress or NullProgress()
    own: dict[str, DocPassage] = {}
    shared: dict[str, DocPassage] = {}
    progress.start(len(wanted), "reading documentation")
    try:
        for family in wanted:
            check_cancel(cancel)
            for passage in plugin.documentation(options or EnvOptions(), [family]):
                _merge(shared if not passage.family else own, passage)
            progress.advance(1, f"reading documentation ({family})")
    finally:
        progress.finish()
    if not own and not shared:
        scope = f" for {', '.join(families)}" if families else ""
        raise NoDocumentation(f"{plugin.name} documents nothing{scope} to synthesize tasks from")
    return [*own.values(), *shared.values()]


def _merge(passages: dict[str, DocPassage], passage: DocPassage) -> None:
    """Keep ``passage`` under its id; a passage read again adds the examples it has more."""
    kept = passages.setdefault(passage.id, passage)
    if kept is not passage:
        examples = tuple(dict.fromkeys([*kept.examples, *passage.examples]))
        passages[passage.id] = replace(kept, examples=examples)


def world_tasks(
    plugin: EnvironmentPlugin, passages: Sequence[DocPassage], options: EnvOptions
) -> list[Ground]:
    """Every world task the documentation was read from (a passage with a family and a
    variation); a documented family with none gets its first train variation, with what its
    passages name."""
    grounds = [_ground(p, p.variation) for p in passages if p.family and p.variation is not None]
    covered = {g.family for g in grounds}
    missing = list(
        dict.fromkeys(p.family for p in passages if p.family and p.family not in covered)
    )
    if missing:
        env = plugin.make(options)
        try:
            for family in missing:
                tasks = env.tasks(family, SPLIT)
                if tasks:
                    own = [p for p in passages if p.family == family]
                    grounds.append(_ground(own[0], tasks[0].variation, own))
        finally:
            env.close()
    return grounds


def _ground(passage: DocPassage, variation: int | None, more: Sequence[DocPassage] = ()) -> Ground:
    passages = [passage, *more]
    return Ground(
        family=passage.family,
        variation=int(variation or 0),
        source=passage.id,
        goal=documented_goal(passage),
        entities=tuple(dict.fromkeys(e for p in passages for e in p.entities)),
        places=tuple(dict.fromkeys(e for p in passages for e in p.places)),
        examples=tuple(dict.fromkeys(e for p in passages for e in p.examples)),
    )


def grounds_for(passage: DocPassage, grounds: Sequence[Ground], seed: int) -> tuple[Ground, ...]:
    """Where tasks from ``passage`` may be played (at most :data:`GROUNDS`): its own world
    task first, then its family's others in a seeded order; for a passage of no family, the
    world tasks whose world holds what it names first, each group in a seeded order."""
    rng = random.Random(f"{seed}:{passage.id}:grounds")
    if passage.family:
        own = [g for g in grounds if g.source == passage.id]
        family = [g for g in grounds if g.family == passage.family and g not in own]
        rng.shuffle(family)
        return tuple([*own, *family][:GROUNDS])
    holding = [g for g in grounds if any(g.knows(e) for e in passage.entities)]
    rest = [g for g in grounds if g not in holding]
    rng.shuffle(holding)
    rng.shuffle(rest)
    return tuple([*holding, *rest][:GROUNDS])


def propose_tasks(
    store: Store,
    env: str,
    n: int = DEFAULT_N,
    *,
    proposer: Proposer,
    seed: int = 0,
    families: Sequence[str] = (),
    options: EnvOptions | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ProposalReport:
    """Propose ``n`` task instructions from every passage of the world's documentation and
    store them (Learn-by-interact's self-instruct).

    Args:
        store: where the tasks go (``synth_tasks``; they belong to no workspace).
        env: the environment plugin's name.
        n: instructions asked per passage (the paper asks three).
        proposer: the judgment (``make_backends(...).proposer``).
        seed: what the heuristic draws with and ground choices are seeded by (recorded).
        families: the families to read and play (empty: every one the world documents).
        options: where the world may keep generated files (default: beside the database).
        progress: one unit per family read, then one per passage.
        cancel: set it to stop after the current family or passage; stored passages stay
            stored.

    Returns:
        Per passage, how many tasks were proposed and how many were already stored.

    Raises:
        NoDocumentation: the world documents nothing (one line naming it).
        ValueError: an unknown family.
        Cancelled: ``cancel`` was set (the passages done so far are stored).
        ModelError: a model-backed proposer failed (the passages done so far are stored).
    """
    plugin = environment_plugin(env)
    path = None if store.path == ":memory:" else store.path
    options = options or EnvOptions(cache_dir=cache_dir_beside(path))
    passages = documentation(plugin, options, families, progress=progress, cancel=cancel)
    grounds = world_tasks(plugin, passages, options)
    actions = tuple(p for p in passages if p.kind == "action" and p.template)
    report = ProposalReport(env=env, proposer=proposer.name, seed=seed)
    progress = progress or NullProgress()
    progress.start(len(passages), "proposing tasks")
    try:
        for passage in passages:
            check_cancel(cancel)
            request = ProposalRequest(
                passage, grounds_for(passage, grounds, seed), actions, n, seed, plugin.lexicon
            )
            report.sources.append(_store_proposals(store, env, request, proposer, report))
            progress.advance(1, f"proposing tasks ({report.proposed} so far)")
    finally:
        progress.finish()
    return report


def _store_proposals(
    store: Store, env: str, request: ProposalRequest, proposer: Proposer, report: ProposalReport
) -> SourceReport:
    """Ask for one passage's proposals and store them in one transaction."""
    passage = request.passage
    tasks = [
        SynthTask(
            env=env,
            family=p.ground.family,
            variation=p.ground.variation,
            instruction=p.instruction,
            source=passage.id,
            passage=passage.text,
            entities=list(p.entities),
            proposer=proposer.name,
            seed=request.seed,
        )
        for p in proposer.propose(request)
    ]
    before = {(t.family, t.variation, t.instruction): t.id for t in store.synth_tasks(env)}
    stored = store.add_synth_tasks(tasks)
    report.tasks += stored
    present = sum((t.family, t.variation, t.instruction) in before for t in stored)
    return SourceReport(passage.id, proposed=len(stored), present=present)
