"""A synthesis as the faces show it: the synthesized tasks, the episodes that played each, and
every example with its span's steps, provenance and checks — read from the store in one
place, so the terminal UI's Synthesis screen and the notebook's example browser show the same
thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from store import EpisodeFilter, Step, Store
from store.records import Episode
from store.synth import SYNTH_WORKSPACE, SynthExample, SynthTask
from store.texts import WINDOW
from workbench.synth.backward import PLAYED, TASK_KEY, played_instruction
from workbench.synth.filters import describe_checks

VERDICTS = ("kept", "rejected", "pending")
"""The verdicts an example can have, in the order the faces list them."""


@dataclass(frozen=True)
class PlayedEpisode:
    """A synthesized episode and how many examples it gave, by verdict."""

    episode: Episode
    examples: dict[str, int] = field(default_factory=dict)

    @property
    def n_examples(self) -> int:
        return sum(self.examples.values())

    @property
    def task_id(self) -> int | None:
        """The synthesized task it played (``None``: it recorded none)."""
        task_id = self.episode.metadata.get(TASK_KEY)
        return task_id if isinstance(task_id, int) else None


@dataclass(frozen=True)
class Catalog:
    """Every synthesized task, the episodes that played them and the examples' counts."""

    tasks: list[SynthTask] = field(default_factory=list)
    """In order of proposal."""
    episodes: dict[int | None, list[PlayedEpisode]] = field(default_factory=dict)
    """Synthesized episodes (replays left out), by the synthesized task they played; under
    ``None`` those that recorded no task of this store (e.g. ordinary runs recorded in the
    synth workspace)."""
    counts: dict[str, int] = field(default_factory=dict)
    """Examples by verdict."""

    def played(self, task_id: int | None) -> list[PlayedEpisode]:
        """The episodes that played a task, in recording order."""
        return self.episodes.get(task_id, [])

    @property
    def n_episodes(self) -> int:
        return sum(len(e) for e in self.episodes.values())

    @property
    def n_examples(self) -> int:
        return sum(self.counts.values())

    def listed(self) -> list[SynthTask]:
        """The tasks with episodes first (in order of proposal), then the others."""
        return sorted(self.tasks, key=lambda t: not self.played(t.id))


def read_catalog(store: Store, env: str | None = None) -> Catalog:
    """The synthesized tasks, episodes and example counts of ``store``'s database (of one
    world, or all)."""
    tasks = store.synth_tasks(env)
    known = {t.id for t in tasks}
    counts = store.synth_example_counts()
    where = EpisodeFilter(workspace=SYNTH_WORKSPACE, replays=False, environment=env)
    episodes: dict[int | None, list[PlayedEpisode]] = {}
    for episode in store.iter_episodes(where):
        played = PlayedEpisode(episode, counts.get(episode.id, {}))
        task_id = played.task_id if played.task_id in known else None
        episodes.setdefault(task_id, []).append(played)
    if env is not None:  # only the examples of the world's episodes
        shown = {p.episode.id for group in episodes.values() for p in group}
        counts = {e: c for e, c in counts.items() if e in shown}
    totals = {v: sum(c.get(v, 0) for c in counts.values()) for v in VERDICTS}
    return Catalog(tasks, episodes, {v: n for v, n in totals.items() if n})


# -- one example -------------------------------------------------------------------------------


SPAN_CHARS = WINDOW
"""Characters of each text of a span's step that :func:`read_example` reads (a reader's
window, :data:`store.texts.WINDOW`)."""


@dataclass(frozen=True)
class SpanStep:
    """A step of an example's span as its episode recorded it."""

    step: Step
    """The step, each of its texts cut to its first :data:`SPAN_CHARS` characters."""
    trimmed: bool = False
    """Left out of the example: it repeated the step before (action and observation)."""
    lengths: dict[str, int] = field(default_factory=dict)
    """Each text's full length in characters (:attr:`store.CutStep.lengths`)."""

    def more(self, text: str) -> str:
        """What the step leaves out of its text ``text`` (``action``, ``observation``...), as
        the faces say it: ``" … 1,234 more character(s)"``, or ``""``."""
        hidden = self.lengths.get(text, 0) - len(getattr(self.step, text))
        return f" … {hidden:,} more character(s)" if hidden > 0 else ""


@dataclass(frozen=True)
class ExampleDetail:
    """An example with what a face shows beside it."""

    example: SynthExample
    episode: Episode | None
    """Its episode (``None``: not in this database any more)."""
    task: SynthTask | None
    """The synthesized task its episode played, if any."""
    steps: list[SpanStep]
    """The span's steps as recorded (empty when the episode is gone)."""

    def provenance(self) -> list[tuple[str, str]]:
        """Where the example comes from, as ``(what, value)`` rows."""
        example, episode, task = self.example, self.episode, self.task
        rows = [
            ("episode", f"{example.episode_id} · steps {example.start}–{example.end}"),
            ("world", example.env),
        ]
        if episode is not None:
            rows += [("world task", episode.task_id), ("batch", episode.batch_id or "–")]
        if task is not None:
            rows.append(
                (
                    "synthesized task",
                    f"#{task.id} · {task.family} variation {task.variation} · proposed by "
                    f"{task.proposer} (seed {task.seed}) from {task.source}",
                )
            )
        played = played_instruction(episode) if episode is not None else ""
        if played:
            rows.append(("played with", played))
        rows += [
            (
                "instruction by",
                "the instruction it was played with"
                if example.relabeler == PLAYED
                else f"{example.relabeler} (backward)",
            ),
            ("effects", ", ".join(example.effects) or "none"),
            ("states", f"{example.start_state or '–'} → {example.end_state or '–'}"),
        ]
        return rows

    def checks(self) -> list[tuple[str, str, bool | None]]:
        """Every filter's verdict on it (:func:`~workbench.synth.filters.describe_checks`)."""
        return describe_checks(self.example.checks)


def read_example(store: Store, example: SynthExample) -> ExampleDetail:
    """An example with its episode, its synthesized task and its span's recorded steps (each
    text cut to :data:`SPAN_CHARS` characters)."""
    episode = store.episode(example.episode_id)
    task = store.synth_task(example.task_id) if example.task_id is not None else None
    removed = set(example.checks.get("repeats", {}).get("removed") or [])
    cut = (
        store.cut_steps(example.episode_id, example.start, example.end + 1, SPAN_CHARS)
        if episode is not None
        else []
    )
    steps = [SpanStep(c.step, c.step.index in removed, c.lengths) for c in cut]
    return ExampleDetail(example, episode, task, steps)
