"""Backward construction (Learn-by-interact, Algorithm 1 lines 15-22): new instructions for
spans of played trajectories, written from what the spans actually achieved.

The paper relabels every sub-trajectory ``T[i:j]`` — n(n+1)/2 model calls for n steps. Here
the spans are chosen so the cost is O(n·k): every span ends at a step with an observable
effect (:mod:`workbench.synth.effects`) and covers one to a few *segments* (the steps since
the previous effect, leading refused steps left out), is at most ``max_span_steps`` long, and
an episode gets at most ``max_spans_per_episode`` relabel calls in all — one of them for the
whole trajectory's abstraction (the paper's second kind of instruction). When there are more
candidates than calls, single segments come first, then pairs, then triples…, each level spread
evenly over the trajectory. Spans with no observable effect get no example.

Every episode also gets one ``whole`` example: the whole trajectory under the instruction it
was played with (the paper's "data distill" ablation, without backward construction), so a
benchmark can compare both.

Inside every span, a step repeating the previous step's action *and* observation is removed
(the paper's first filter: an invalid action or inactivity repeated); the removal is recorded
in the example's ``checks["repeats"]`` and the filter's replay later verifies that the trimmed
actions still reproduce the claimed effects.

An episode's examples are written in one transaction, so an interrupted construction resumes
with the episodes that have none, and running it again adds no duplicate.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from store import EpisodeFilter, Store, SynthExample
from store.records import Episode, Step
from store.synth import SYNTH_WORKSPACE
from workbench.envs.registry import lexicon_of
from workbench.llm.client import ModelError
from workbench.llm.steps import CaseStep
from workbench.progress import NullProgress, Progress, check_cancel
from workbench.synth.effects import Reading, StepReading, read_trajectory
from workbench.synth.relabeler import Purpose, Relabeler, SpanCase, Vote

DEFAULT_MAX_SPANS = 8
"""Relabel calls per episode by default (the whole trajectory's abstraction included)."""
DEFAULT_MAX_SPAN_STEPS = 10
"""Longest span by default (the paper's "short" and "medium" examples are under 10 steps)."""

INSTRUCTION_KEYS = ("synth_instruction", "instruction")
"""Episode metadata that may hold the instruction a synthesized episode was played with
(else its task's instruction)."""
TASK_KEY = "synth_task_id"
"""Episode metadata holding the id of the synthesized task it played, if any."""
PLAYED = "played"
"""The ``relabeler`` of a ``whole`` example: its instruction is the one it was played with."""


@dataclass(frozen=True)
class SpanChoice:
    """The spans one episode is relabelled on."""

    spans: list[tuple[int, int]]
    """Sub-trajectory spans, by stored step index (inclusive)."""
    whole: tuple[int, int] | None
    """The whole trajectory's span, when it had an effect (its abstraction is relabelled)."""
    candidates: int
    """Spans that were eligible (ending at an effect, short enough)."""
    all_spans: int
    """Every sub-trajectory the paper's full enumeration would relabel, n(n+1)/2."""
    no_effect: int
    """Of those, how many have no observable effect at all."""


@dataclass
class BackwardReport:
    """What a backward construction did."""

    episodes: int = 0
    """Episodes relabelled now."""
    skipped: int = 0
    """Episodes left alone because they have examples already (from an earlier run)."""
    relabel_calls: int = 0
    """Calls of the relabeler (at most ``max_spans_per_episode`` per episode)."""
    examples: int = 0
    """``backward`` examples written."""
    whole: int = 0
    """``whole`` examples written."""
    trimmed: int = 0
    """Examples whose span lost repeated (action, observation) pairs."""
    all_spans: int = 0
    """Sub-trajectories the paper's full enumeration would relabel (n(n+1)/2 per episode)."""
    no_effect: int = 0
    """Of those, the ones with no observable effect: they get no example."""
    capped: int = 0
    """Eligible spans left out by ``max_spans_per_episode``."""
    failed: list[str] = field(default_factory=list)
    """Episodes left without examples because the relabeler failed (retried next run)."""
    errors: Counter[str] = field(default_factory=Counter)
    """How often each relabeler error happened."""


# -- which episodes --------------------------------------------------------------------------


def pending_episodes(store: Store, batches: Sequence[str] = ()) -> list[str]:
    """Episodes of the synth workspace's batches (replays excluded) that have no examples
    yet, in recording order; ``batches`` (ids or names) narrows them.

    Raises:
        ValueError: a batch holds no episode of the synth workspace.
    """
    have = store.synth_example_episodes()
    where = EpisodeFilter(workspace=SYNTH_WORKSPACE, replays=False)
    filters = [replace(where, batch=name) for name in batches] or [where]
    for narrowed in filters:
        if batches and not store.count_episodes(narrowed):
            raise ValueError(f"batch {narrowed.batch!r} has no episode in the synth workspace")
    return [e.id for f in filters for e in store.iter_episodes(f) if e.id not in have]


# -- which spans -----------------------------------------------------------------------------


def choose_spans(reading: Reading, max_spans: int, max_steps: int) -> SpanChoice:
    """The spans of a trajectory to relabel, at most ``max_spans`` calls in all (see the
    module docstring)."""
    steps = reading.steps
    n = len(steps)
    all_spans = n * (n + 1) // 2
    no_effect = _no_effect_spans(steps)
    effect_at = [p for p, s in enumerate(steps) if s.effects]
    if not effect_at:
        return SpanChoice([], None, 0, all_spans, no_effect)
    whole = (steps[0].index, steps[-1].index)
    starts = _segment_starts(steps, effect_at, max_steps)
    candidates: list[tuple[int, int, int]] = []  # (width, start position, end position)
    for m, end in enumerate(effect_at):
        for width in range(1, m + 2):
            start = starts[m - width + 1]
            if end - start + 1 > max_steps:
                break
            if (steps[start].index, steps[end].index) != whole:
                candidates.append((width, start, end))
    chosen: list[tuple[int, int, int]] = []
    for width in sorted({c[0] for c in candidates}):
        room = max_spans - 1 - len(chosen)
        if room <= 0:
            break
        chosen += spread([c for c in candidates if c[0] == width], room)
    spans = sorted((steps[s].index, steps[e].index) for _, s, e in chosen)
    return SpanChoice(spans, whole, len(candidates), all_spans, no_effect)


def _segment_starts(steps: list[StepReading], effect_at: list[int], max_steps: int) -> list[int]:
    """Where each effect's segment starts: after the previous effect, past refused steps,
    within ``max_steps`` of the effect."""
    starts = []
    previous = -1
    for end in effect_at:
        start = max(previous + 1, end - max_steps + 1)
        while start < end and steps[start].refused:
            start += 1
        starts.append(start)
        previous = end
    return starts


def _no_effect_spans(steps: list[StepReading]) -> int:
    """How many sub-trajectories contain no step with an effect."""
    total = run = 0
    for step in steps:
        run = 0 if step.effects else run + 1
        total += run
    return total


def spread(items: list[tuple[int, int, int]], k: int) -> list[tuple[int, int, int]]:
    """At most ``k`` of ``items``, evenly spaced (the last one always among them)."""
    if len(items) <= k:
        return items
    if k == 1:
        return items[-1:]
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


# -- one span as a case and an example --------------------------------------------------------


def trimmed(span: list[StepReading]) -> tuple[list[StepReading], list[int]]:
    """The span without steps repeating the previous step's action and observation, and the
    indices removed."""
    kept: list[StepReading] = []
    removed: list[int] = []
    for position, step in enumerate(span):
        earlier = span[position - 1] if position else None
        if earlier is not None and (step.action, step.observation) == (
            earlier.action,
            earlier.observation,
        ):
            removed.append(step.index)
        else:
            kept.append(step)
    return kept, removed


def revisits(reading: Reading, start: int, kept: list[StepReading]) -> dict[int, int]:
    """Steps with an effect that take the span back to a state it was in before the previous
    one (going back and forth; a step that leaves the state as it was is no revisit)."""
    previous = reading.state_before(start)
    seen = {previous: start - 1}
    found = {}
    for step in kept:
        if step.effects and step.state != previous and step.state in seen:
            found[step.index] = seen[step.state]
        seen.setdefault(step.state, step.index)
        previous = step.state
    return found


@dataclass(frozen=True)
class EpisodeView:
    """An episode with what relabelling its spans needs."""

    episode: Episode
    env: str
    played: str
    """The instruction it was played with."""
    task_id: int | None
    """The synthesized task it played, if any."""
    steps: list[Step]
    reading: Reading

    def before(self, start: int) -> str:
        """The observation step ``start`` acted on."""
        earlier = [s for s in self.steps if s.index < start]
        return earlier[-1].observation if earlier else ""

    def case(self, start: int, end: int, purpose: Purpose) -> tuple[SpanCase, list[int]]:
        """The relabeler's case for a span, and the repeated steps left out of it."""
        kept, removed = trimmed(self.reading.span(start, end))
        case = SpanCase(
            episode_id=self.episode.id,
            env=self.env,
            family=self.episode.family,
            start=start,
            end=end,
            purpose=purpose,
            played=self.played,
            before=self.before(start),
            steps=[_case_step(s, self.steps) for s in kept],
            effects=[e for s in kept for e in s.effects],
            step_effects={s.index: list(s.effects) for s in kept if s.effects},
            places={s.index: self.reading.location_before(s.index) for s in kept},
            refused={s.index: s.refused for s in kept if s.refused},
            revisits=revisits(self.reading, start, kept),
        )
        return case, removed

    def example(
        self, case: SpanCase, removed: list[int], kind: str, instruction: str, relabeler: str
    ) -> SynthExample:
        """The example of a case, with its provenance and state digests."""
        return SynthExample(
            episode_id=self.episode.id,
            start=case.start,
            end=case.end,
            kind=kind,  # type: ignore[arg-type]
            task_id=self.task_id,
            env=self.env,
            instruction=instruction,
            actions=[s.action for s in case.steps],
            observations=[s.observation for s in case.steps],
            effects=case.effects,
            start_state=self.reading.state_before(case.start),
            end_state=self.reading.steps[self.reading.position(case.end)].state,
            relabeler=relabeler,
            checks={"repeats": {"removed": removed}},
        )


def _case_step(step: StepReading, steps: list[Step]) -> CaseStep:
    reward = next((s.reward for s in steps if s.index == step.index), None)
    return CaseStep(
        index=step.index, action=step.action, observation=step.observation, reward=reward
    )


def played_instruction(episode: Episode) -> str:
    """The instruction a synthesized episode was played with, from its metadata ("" when it
    recorded none: then its task's instruction was asked)."""
    return next((str(episode.metadata[k]) for k in INSTRUCTION_KEYS if episode.metadata.get(k)), "")


def view_of(store: Store, episode_id: str) -> EpisodeView:
    """An episode read for relabelling.

    Raises:
        ValueError: no such episode, or its task is not recorded.
    """
    episode = store.episode(episode_id)
    if episode is None:
        raise ValueError(f"no episode {episode_id!r}")
    task = store.task(episode.task_id)
    if task is None:
        raise ValueError(f"episode {episode_id!r} names unknown task {episode.task_id!r}")
    steps = store.steps(episode_id)
    played = played_instruction(episode) or task.instruction
    task_id = episode.metadata.get(TASK_KEY)
    known = isinstance(task_id, int) and store.synth_task(task_id) is not None
    reading = read_trajectory(task.id, steps, lexicon_of(task.environment))
    return EpisodeView(
        episode,
        task.environment,
        played or "(no instruction recorded)",
        task_id if known else None,
        steps,
        reading,
    )


# -- the stage -------------------------------------------------------------------------------


def relabel_episode(
    view: EpisodeView, relabeler: Relabeler, choice: SpanChoice
) -> list[SynthExample]:
    """The examples of one episode: its ``whole`` example and one ``backward`` example per
    chosen span (the whole trajectory's abstraction first).

    Raises:
        ModelError: the relabeler failed on a span.
    """
    steps = view.reading.steps
    if not steps:
        return []
    full, removed = view.case(steps[0].index, steps[-1].index, "abstraction")
    examples = [view.example(full, removed, "whole", view.played, PLAYED)]
    spans: list[tuple[tuple[int, int], Purpose]] = [(s, "summary") for s in choice.spans]
    if choice.whole is not None:
        spans.insert(0, (choice.whole, "abstraction"))
    for (start, end), purpose in spans:
        case, removed = view.case(start, end, purpose)
        instruction = relabeler.relabel(case)
        examples.append(view.example(case, removed, "backward", instruction, relabeler.name))
    return examples


def construct(
    store: Store,
    *,
    relabeler: Relabeler,
    episodes: Sequence[str] | None = None,
    max_spans_per_episode: int = DEFAULT_MAX_SPANS,
    max_span_steps: int = DEFAULT_MAX_SPAN_STEPS,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> BackwardReport:
    """Relabel spans of episodes and store their examples (one transaction per episode).

    Args:
        store: where the episodes are and the examples go.
        relabeler: who writes the instructions.
        episodes: the episodes (ids) to relabel; default :func:`pending_episodes`. Episodes
            that have examples already are skipped.
        max_spans_per_episode: most relabel calls per episode (>= 1).
        max_span_steps: longest span (>= 1).
        progress: one unit per episode.
        cancel: stop before the next episode; the finished ones stay stored.

    Raises:
        ValueError: a bound is below 1, or an episode is unknown.
        Cancelled: ``cancel`` was set.
    """
    if max_spans_per_episode < 1 or max_span_steps < 1:
        raise ValueError("max_spans_per_episode and max_span_steps must be at least 1")
    progress = progress or NullProgress()
    todo = list(pending_episodes(store) if episodes is None else episodes)
    have = store.synth_example_episodes()
    report = BackwardReport(skipped=sum(1 for e in todo if e in have))
    todo = [e for e in todo if e not in have]
    views = _views(store, todo)
    progress.start(len(todo), "backward construction")
    try:
        for view in views:
            check_cancel(cancel)
            _construct_one(store, view, relabeler, max_spans_per_episode, max_span_steps, report)
            progress.advance(1, f"backward construction ({report.relabel_calls} relabel calls)")
    finally:
        progress.finish()
    return report


def _views(store: Store, episode_ids: list[str]) -> Iterator[EpisodeView]:
    for episode_id in episode_ids:
        if store.episode(episode_id) is None:
            raise ValueError(f"no episode {episode_id!r}")
    for episode_id in episode_ids:
        yield view_of(store, episode_id)


def _construct_one(
    store: Store,
    view: EpisodeView,
    relabeler: Relabeler,
    max_spans: int,
    max_steps: int,
    report: BackwardReport,
) -> None:
    choice = choose_spans(view.reading, max_spans, max_steps)
    counted = _Counted(relabeler)
    try:
        examples = relabel_episode(view, counted, choice)
    except ModelError as error:
        report.failed.append(view.episode.id)
        report.errors[str(error).splitlines()[0][:200]] += 1
        return
    finally:
        report.relabel_calls += counted.calls
    stored = store.add_synth_examples(examples)
    report.episodes += 1
    report.examples += sum(1 for e in stored if e.kind == "backward")
    report.whole += sum(1 for e in stored if e.kind == "whole")
    report.trimmed += sum(1 for e in stored if e.checks.get("repeats", {}).get("removed"))
    report.all_spans += choice.all_spans
    report.no_effect += choice.no_effect
    report.capped += choice.candidates - len(choice.spans)


class _Counted:
    """A relabeler that counts its relabel calls."""

    def __init__(self, inner: Relabeler) -> None:
        self.inner, self.name, self.calls = inner, inner.name, 0

    def relabel(self, case: SpanCase) -> str:
        self.calls += 1
        return self.inner.relabel(case)

    def vote(self, case: SpanCase, instruction: str) -> Vote:
        return self.inner.vote(case, instruction)
