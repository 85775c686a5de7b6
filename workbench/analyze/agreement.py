"""Agreement between the causal spans an analyzer proposes and those people mark, with the
trivial baselines beside it.

For every failure with a person's causal span (the earliest one, of one labeller if named),
each method's step is compared with the person's: the latest causal span of each analyzer
(``analyzer:<name>``), optionally the scorer learned from the *other* labelled failures
(k-fold cross-validated, :mod:`workbench.analyze.learned`), and three baselines — the first
agent step, the last step, and a step drawn uniformly at random (its expected value, not a
draw). Scores: exact start, start within ±1 and ±3 steps, mean IoU of the step ranges, and,
for logs of several agents, how often the method's step was taken by the agent the person
holds responsible.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from store import Episode, EpisodeFilter, Span, Store
from workbench.analyze.analyst import FailureCase
from workbench.analyze.scoring import agent_at
from workbench.llm.steps import CaseStep
from workbench.spans_io import by_author, is_human

BASELINES = ("first step", "last step", "random")
"""The trivial methods every agreement figure is printed beside."""


@dataclass(frozen=True)
class Agreement:
    """How well one method's causal steps match people's over a group of failures."""

    key: str
    """The group: ``all``, ``batch <name>`` or ``family <name>``."""
    episodes: int
    """Failures with both a person's causal span and one of this method."""
    exact: float
    """Share whose span starts on the same step."""
    within_one: float
    """Share whose starts are at most one step apart."""
    iou: float
    """Mean overlap (intersection over union of the step ranges)."""
    method: str = "analyzer"
    """``analyzer:<name>``, ``learned (k-fold)`` or a baseline of :data:`BASELINES`."""
    within_three: float = 0.0
    """Share whose starts are at most three steps apart."""
    agent: float | None = None
    """Share (of the failures of several agents) whose step was taken by the agent the
    person holds responsible; ``None`` when no failure of the group has several agents."""
    agent_episodes: int = 0
    """Failures of several agents counted in :attr:`agent`."""


def iou(a: Span, b: Span) -> float:
    """Intersection over union of two inclusive step ranges."""
    return _iou(a.start, a.end, b.start, b.end)


def _iou(a0: int, a1: int, b0: int, b1: int) -> float:
    inter = max(0, min(a1, b1) - max(a0, b0) + 1)
    union = (a1 - a0 + 1) + (b1 - b0 + 1) - inter
    return inter / union


@dataclass(frozen=True)
class Labelled:
    """One failure a person marked, with what the methods are compared on."""

    episode: Episode
    human: Span
    steps: list[CaseStep]
    """The episode's agent steps (index and agent)."""
    machine: dict[str, Span]
    """The latest causal span of each analyzer, by author."""

    @property
    def agents(self) -> bool:
        """Whether the log names several agents."""
        return len({s.agent for s in self.steps if s.agent}) > 1

    def agent_at(self, index: int) -> str:
        """The agent of the agent step at or before stored step ``index``."""
        return agent_at(self.steps, index)


@dataclass(frozen=True)
class Score:
    """One method's agreement on one failure (expected values for the random baseline)."""

    exact: float
    within_one: float
    within_three: float
    iou: float
    agent: float | None


def labelled_failures(
    store: Store, where: EpisodeFilter | None = None, author: str | None = None
) -> Iterator[Labelled]:
    """Episodes ``where`` selects that carry a person's causal span (of ``author`` when
    named: a name as given in a label file, ``human`` or ``human:<name>``)."""
    from workbench.analyze.causes import agent_steps, speaker

    for episode in store.iter_episodes(where or EpisodeFilter()):
        causal = [s for s in store.spans(episode.id) if s.kind == "causal"]
        human = [s for s in causal if _labelled_by(s.author, author)]
        if not human:
            continue
        machine: dict[str, Span] = {}
        for span in sorted(causal, key=lambda s: s.id or 0):
            if span.author.startswith("analyzer:"):
                machine[span.author] = span  # the latest of each analyzer
        task = store.task(episode.task_id)
        steps = [
            CaseStep(index=s.index, agent=speaker(s.agent))
            for s in agent_steps(store.steps(episode.id), task.instruction if task else "")
        ]
        yield Labelled(episode, human[0], steps, machine)


def score(item: Labelled, start: int, end: int | None = None) -> Score:
    """How a method that marks ``start``..``end`` agrees with the person on ``item``."""
    end = start if end is None else end
    h = item.human
    agent = None
    if item.agents:
        agent = float(item.agent_at(start) == item.agent_at(h.start))
    distance = abs(start - h.start)
    return Score(
        float(distance == 0),
        float(distance <= 1),
        float(distance <= 3),
        _iou(start, end, h.start, h.end),
        agent,
    )


def baseline(item: Labelled, name: str) -> Score | None:
    """The score of a baseline on ``item`` (``None`` when the episode has no agent step)."""
    if not item.steps:
        return None
    if name == "first step":
        return score(item, item.steps[0].index)
    if name == "last step":
        return score(item, item.steps[-1].index)
    each = [score(item, s.index) for s in item.steps]
    n = len(each)
    return Score(
        sum(s.exact for s in each) / n,
        sum(s.within_one for s in each) / n,
        sum(s.within_three for s in each) / n,
        sum(s.iou for s in each) / n,
        sum(s.agent for s in each if s.agent is not None) / n if item.agents else None,
    )


def agreement(
    store: Store,
    where: EpisodeFilter | None = None,
    author: str | None = None,
    *,
    baselines: bool = False,
    folds: int | None = None,
    heuristic: bool = False,
) -> list[Agreement]:
    """Agreement per group (``all`` first, then per batch and per family where there are
    several) and per method: each analyzer's latest spans; with ``baselines``, the three
    trivial methods; with ``folds``, the learned scorer cross-validated over that many folds.

    Args:
        store: the spans' store.
        where: which episodes.
        author: only this labeller's spans count as the people's (default: everyone's).
        baselines: add the baselines of :data:`BASELINES` for the same failures.
        folds: add the learned scorer's ``folds``-fold cross-validated agreement.
        heuristic: add the offline analyst's spans as it finds them now (method
            ``heuristic``, in place of the stored ``analyzer:heuristic`` spans): failures a
            person marked before any analysis have no analyzer span stored.
    """
    items = list(labelled_failures(store, where, author))
    scored: dict[str, list[tuple[Labelled, Score]]] = defaultdict(list)
    cases = _Cases(store) if heuristic or folds else None
    if heuristic:
        for item, (start, end) in heuristic_spans(store, items, cases):
            scored["heuristic"].append((item, score(item, start, end)))
    for item in items:
        for method, span in item.machine.items():
            if heuristic and method == "analyzer:heuristic":
                continue
            scored[method].append((item, score(item, span.start, span.end)))
        if baselines:
            for name in BASELINES:
                if (found := baseline(item, name)) is not None:
                    scored[name].append((item, found))
    if folds:
        for item, step in learned_picks(store, items, folds, cases):
            scored[f"learned ({folds}-fold)"].append((item, score(item, step)))
    methods = ["heuristic"] if "heuristic" in scored else []
    methods += sorted(m for m in scored if m.startswith("analyzer:"))
    methods += [m for m in scored if m.startswith("learned")]
    methods += [m for m in BASELINES if m in scored]
    rows = []
    for key, members in _groups(items):
        for method in methods:
            chosen = [s for item, s in scored[method] if item.episode.id in members]
            if chosen:
                rows.append(_summed(key, method, chosen))
    return rows


class _Cases:
    """Labelled failures as the analyst sees them, each read from the store once, with one
    offline analyst (its errors that successes survive read once per family) for all."""

    def __init__(self, store: Store) -> None:
        from workbench.analyze.heuristic import HeuristicAnalyst

        self.store = store
        self.analyst = HeuristicAnalyst(store)
        self._read: dict[str, FailureCase] = {}

    def of(self, item: Labelled) -> FailureCase:
        from workbench.analyze.causes import build_case

        if item.episode.id not in self._read:
            self._read[item.episode.id] = build_case(self.store, item.episode)
        return self._read[item.episode.id]


def heuristic_spans(
    store: Store, items: Sequence[Labelled], cases: _Cases | None = None
) -> list[tuple[Labelled, tuple[int, int]]]:
    """The causal span the offline analyst finds now in each labelled failure (blind to the
    person's span)."""
    cases = cases or _Cases(store)
    found = []
    for item in items:
        case = cases.of(item)
        if case.steps:
            proposal = cases.analyst.analyze_failure(case)
            found.append((item, (proposal.start, proposal.end)))
    return found


def learned_picks(
    store: Store, items: Sequence[Labelled], folds: int, cases: _Cases | None = None
) -> list[tuple[Labelled, int]]:
    """Each labelled failure's causal step by the scorer fitted on the other folds' failures
    (:func:`~workbench.analyze.learned.cross_validated`), as a stored step index."""
    from workbench.analyze.causes import benign_check
    from workbench.analyze.learned import cross_validated, labelled

    cases = cases or _Cases(store)
    kept = []
    for item in items:
        case = cases.of(item)
        benign = benign_check(case, cases.analyst.benign(case.family))
        example = labelled(case, item.human.start, benign)
        if example is not None:
            kept.append((item, example))
    picks = cross_validated([example for _, example in kept], folds)
    return [
        (item, example.case.steps[pick].index)
        for (item, example), pick in zip(kept, picks, strict=True)
    ]


def _groups(items: Sequence[Labelled]) -> list[tuple[str, set[str]]]:
    groups = [("all", {i.episode.id for i in items})]
    for field in ("batch_id", "family"):
        by: dict[str, set[str]] = defaultdict(set)
        for item in items:
            by[getattr(item.episode, field)].add(item.episode.id)
        if len(by) > 1 or (field == "family" and "" not in by):
            name = "batch" if field == "batch_id" else "family"
            groups += [(f"{name} {value or '(none)'}", by[value]) for value in sorted(by)]
    return groups


def _summed(key: str, method: str, scores: list[Score]) -> Agreement:
    n = len(scores)
    agents = [s.agent for s in scores if s.agent is not None]
    return Agreement(
        key=key,
        episodes=n,
        exact=sum(s.exact for s in scores) / n,
        within_one=sum(s.within_one for s in scores) / n,
        iou=sum(s.iou for s in scores) / n,
        method=method,
        within_three=sum(s.within_three for s in scores) / n,
        agent=sum(agents) / len(agents) if agents else None,
        agent_episodes=len(agents),
    )


def _labelled_by(stored: str, author: str | None) -> bool:
    """Whether a span's stored author is a person, and ``author`` when one is named."""
    if author is None:
        return is_human(stored)
    return by_author(stored, author) and is_human(stored)


def summary(rows: Sequence[Agreement]) -> str:
    """One line for the overall group: each analyzer's exact and ±1 agreement beside the
    baselines' (what the Clusters screen shows)."""
    overall = [r for r in rows if r.key == "all"]
    if not overall:
        return ""
    parts = [
        f"{r.method.removeprefix('analyzer:')} {r.exact:.0%} exact, {r.within_one:.0%} ±1"
        + (f", agent {r.agent:.0%}" if r.agent is not None else "")
        for r in overall
    ]
    return f"agreement with {overall[0].episodes} marked failure(s): " + " · ".join(parts)
