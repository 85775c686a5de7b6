"""The filters of synthesized examples (Learn-by-interact §2.3), executed rather than trusted.

Every pending example goes through, in this order (cheapest first; an example rejected by one
is not shown to the next):

1. **committee, heuristic member** — the deterministic vote of
   :class:`~workbench.synth.heuristic_relabeler.HeuristicRelabeler`: no detour back to a state
   the span was already in, no more than a quarter of its steps refused by the world;
2. **provenance and replay** — the example's actions must be the episode's over its span
   (less the repeated pairs construction removed), and replaying them in the real simulator
   from the start state must reproduce the claimed effects, states and observations
   (:mod:`workbench.synth.replays`);
3. **duplicates by state** — examples of one kind that reach the same end state from the same
   start state collapse to one: an example already kept stays, else the shortest (fewest
   actions, then the oldest) is kept and the others are rejected as ``duplicate of example N``;
4. **committee, model member** — with a model relabeler, its vote on the instruction and the
   span (aligned, coherent, natural, reasonable).

The paper's other filter — a step repeating the previous step's action and observation — is
applied while the examples are built (:mod:`workbench.synth.backward` trims such steps and
records it under ``checks["repeats"]``); step 2 verifies that the trimmed actions still
reproduce the span.

Every filter that ran writes its verdict under its key of ``checks`` (``committee`` by member,
``replay``, ``dedup``); a rejected example keeps its reason. Checks are written as each stage
finishes (the model votes one by one), so a filter killed halfway resumes where it stopped:
replays already recorded are reused, votes already written are not asked again (and the
client's cache answers any asked but not written).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store import Store, SynthExample
from workbench.llm.client import ModelError
from workbench.progress import NullProgress, Progress, check_cancel
from workbench.runner import Executor
from workbench.synth.backward import EpisodeView, trimmed, view_of
from workbench.synth.heuristic_relabeler import HeuristicRelabeler
from workbench.synth.relabeler import Relabeler, SpanCase
from workbench.synth.replays import judge_replay, plan_replays, run_replays

COMMITTEE, REPLAY, DEDUP = "committee", "replay", "dedup"
"""Keys of ``checks``."""


@dataclass
class FilterReport:
    """What a filter run decided."""

    examined: int = 0
    """Pending examples at the start."""
    kept: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    """Rejections by reason (``duplicate``, ``replay``, ``committee: <member>``, …)."""
    replays_played: int = 0
    replays_reused: int = 0
    """Replays recorded by an earlier, interrupted run and used again."""
    votes: int = 0
    """Model votes asked."""
    pending: int = 0
    """Examples left pending (a model vote failed; retried next run)."""
    errors: Counter[str] = field(default_factory=Counter)


def category(reason: str) -> str:
    """The reason's kind, for counting: ``duplicate``, ``replay``, ``committee: heuristic``…"""
    if reason.startswith("duplicate of"):
        return "duplicate"
    if reason.startswith(COMMITTEE):
        return ": ".join(part.split(" voted")[0] for part in reason.split(": ")[:2])
    return reason.split(":", 1)[0]


class _Examples:
    """The pending examples with the episode views they need, and their writes."""

    def __init__(self, store: Store, examples: list[SynthExample]) -> None:
        self.store = store
        self.items = {e.id: e for e in examples if e.id is not None}
        self.views: dict[str, EpisodeView] = {}

    def view(self, example: SynthExample) -> EpisodeView:
        if example.episode_id not in self.views:
            self.views[example.episode_id] = view_of(self.store, example.episode_id)
        return self.views[example.episode_id]

    def case(self, example: SynthExample) -> SpanCase:
        view = self.view(example)
        steps = view.reading.steps
        whole = example.kind == "whole" or (steps[0].index, steps[-1].index) == (
            example.start,
            example.end,
        )
        case, _ = view.case(example.start, example.end, "abstraction" if whole else "summary")
        return case

    def alive(self) -> list[SynthExample]:
        return [e for e in self.items.values() if e.verdict == "pending"]

    def check(self, example: SynthExample, key: str, value: object) -> SynthExample:
        checks = {**example.checks, key: value}
        updated = example.model_copy(update={"checks": checks})
        self.items[example.id] = updated  # type: ignore[index]
        return updated

    def reject(self, example: SynthExample, reason: str) -> SynthExample:
        updated = example.model_copy(update={"verdict": "rejected", "reason": reason})
        self.items[example.id] = updated  # type: ignore[index]
        return updated

    def write(self, examples: Sequence[SynthExample]) -> None:
        self.store.set_example_verdicts([self.items[e.id] for e in examples])  # type: ignore[index]


def filter_examples(
    store: Store,
    *,
    executor: Executor,
    relabeler: Relabeler | None = None,
    examples: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> FilterReport:
    """Judge the pending examples and store every verdict.

    Args:
        store: a store of the synth workspace (replays are recorded there).
        executor: where replays are played (the caller's; it stays open).
        relabeler: with a model relabeler, its vote joins the committee (a heuristic one
            adds nothing: the heuristic member always votes).
        examples: only these pending examples (ids); default every pending one.
        progress: the replays, then the model votes.
        cancel: stop after the replays in flight, or before the next vote; what was decided
            stays stored.

    Raises:
        ValueError: ``store`` is not the synth workspace's.
        Cancelled: ``cancel`` was set.
    """
    progress = progress or NullProgress()
    pending = store.synth_examples(verdict="pending")
    if examples is not None:
        wanted = set(examples)
        pending = [e for e in pending if e.id in wanted]
    state = _Examples(store, pending)
    report = FilterReport(examined=len(pending))
    _provenance(state)
    _heuristic_votes(state)
    check_cancel(cancel)
    report.replays_played, report.replays_reused = _replays(
        state, executor, progress, cancel, report.errors
    )
    _deduplicate(state)
    members = [HeuristicRelabeler.name]
    if relabeler is not None and relabeler.name != HeuristicRelabeler.name:
        _model_votes(state, relabeler, report, progress, cancel)
        members.append(relabeler.name)
    kept = [
        e.model_copy(update={"verdict": "kept"})
        for e in state.alive()
        if REPLAY in e.checks
        and DEDUP in e.checks
        and all(m in e.checks.get(COMMITTEE, {}) for m in members)
    ]
    for example in kept:
        state.items[example.id] = example  # type: ignore[index]
    state.write(kept)
    report.kept = len(kept)
    for example in state.items.values():
        if example.verdict == "rejected":
            report.rejected[category(example.reason)] += 1
    report.pending = sum(1 for e in state.items.values() if e.verdict == "pending")
    return report


def _heuristic_votes(state: _Examples) -> None:
    member = HeuristicRelabeler()
    done = []
    for example in state.alive():
        votes = example.checks.get(COMMITTEE, {})
        if member.name in votes:
            continue
        vote = member.vote(state.case(example), example.instruction)
        example = state.check(example, COMMITTEE, {**votes, vote.member: vote.as_check()})
        if not vote.keep:
            state.reject(example, f"{COMMITTEE}: {vote.member} voted no: {vote.reason}")
        done.append(example)
    state.write(done)


def _provenance(state: _Examples) -> None:
    rejected = []
    for example in state.alive():
        if REPLAY in example.checks:
            continue
        wrong = provenance(state, example)
        if wrong:
            example = state.check(example, REPLAY, {"verdict": "failed", "detail": wrong})
            rejected.append(state.reject(example, f"provenance: {wrong}"))
    state.write(rejected)


def provenance(state: _Examples, example: SynthExample) -> str:
    """Why the example's actions are not its episode's over its span (empty when they are)."""
    view = state.view(example)
    try:
        span = view.reading.span(example.start, example.end)
    except KeyError:
        return f"steps {example.start}-{example.end} are not actions of {example.episode_id}"
    kept, _ = trimmed(span)
    if [s.action for s in kept] != example.actions:
        return f"its actions are not those of steps {example.start}-{example.end} of its episode"
    return ""


def _replays(
    state: _Examples,
    executor: Executor,
    progress: Progress,
    cancel: threading.Event | None,
    errors: Counter[str],
) -> tuple[int, int]:
    todo = [e for e in state.alive() if REPLAY not in e.checks]
    plan = plan_replays(state.store, todo)
    counts = run_replays(state.store, plan, executor=executor, progress=progress, cancel=cancel)
    judged = []
    for example in todo:
        if example.id in plan.unplayable:
            why = plan.unplayable[example.id]  # type: ignore[index]
            example = state.check(example, REPLAY, {"verdict": "failed", "detail": why})
            judged.append(state.reject(example, f"not replayable: {why}"))
            continue
        replay, at = plan.of_example[example.id]  # type: ignore[index]
        result = judge_replay(state.store, example, plan.replays[replay], at)
        if result["verdict"] == "error":  # no verdict: the next run replays it again
            errors[result["detail"]] += 1
            continue
        example = state.check(example, REPLAY, result)
        if result["verdict"] != "reproduced":
            example = state.reject(example, f"replay did not reproduce: {result['detail']}")
        judged.append(example)
    state.write(judged)
    return counts


def _deduplicate(state: _Examples) -> None:
    groups: dict[tuple[str, str, str], list[SynthExample]] = {}
    for example in state.alive():
        if REPLAY not in example.checks:
            continue  # its replay went wrong: judged next run
        groups.setdefault((example.kind, example.start_state, example.end_state), []).append(
            example
        )
    holders = {
        (k.kind, k.start_state, k.end_state): k.id
        for k in state.store.synth_examples(verdict="kept")
    }
    written = []
    for key, group in groups.items():
        best = holders.get(key) or min(group, key=lambda e: (len(e.actions), e.id or 0)).id
        for example in group:
            if example.id == best:
                written.append(state.check(example, DEDUP, {"unique": len(group) == 1}))
                continue
            example = state.check(example, DEDUP, {"duplicate_of": best})
            written.append(state.reject(example, f"duplicate of example {best}"))
    state.write(written)


def _model_votes(
    state: _Examples,
    relabeler: Relabeler,
    report: FilterReport,
    progress: Progress,
    cancel: threading.Event | None,
) -> None:
    todo = [
        e
        for e in state.alive()
        if DEDUP in e.checks and relabeler.name not in e.checks.get(COMMITTEE, {})
    ]
    progress.start(len(todo), "committee vote")
    try:
        for example in todo:
            check_cancel(cancel)
            try:
                vote = relabeler.vote(state.case(example), example.instruction)
            except ModelError as error:
                report.errors[str(error).splitlines()[0][:200]] += 1
                progress.advance(1)
                continue
            finally:
                report.votes += 1
            votes = {**example.checks.get(COMMITTEE, {}), vote.member: vote.as_check()}
            example = state.check(example, COMMITTEE, votes)
            if not vote.keep:
                example = state.reject(
                    example, f"{COMMITTEE}: {vote.member} voted no: {vote.reason}"
                )
            state.write([example])
            progress.advance(1)
    finally:
        progress.finish()


# -- what the checks say, for the faces --------------------------------------------------------

ORDER = ("repeats", COMMITTEE, REPLAY, DEDUP)
"""The order the checks ran in (:func:`describe_checks` lists them so, others after)."""


def describe_checks(checks: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """Every check of an example as ``(name, what it found, passed)``, in the order they ran;
    ``passed`` is ``None`` for a check that decides nothing (the repeats trimmed while the
    example was built)."""
    keys = [k for k in ORDER if k in checks] + sorted(k for k in checks if k not in ORDER)
    return [(key, *_describe(key, checks[key])) for key in keys]


def _describe(key: str, value: Any) -> tuple[str, bool | None]:
    if not isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False), None
    if key == "repeats":
        removed = value.get("removed") or []
        return ("steps " + ", ".join(map(str, removed)) + " trimmed" if removed else "none"), None
    if key == COMMITTEE:
        votes = [
            f"{member}: {vote.get('vote', '?')}"
            + (f" ({vote['reason']})" if vote.get("reason") else "")
            for member, vote in value.items()
        ]
        return "; ".join(votes) or "no vote", all(v.get("vote") == "yes" for v in value.values())
    if key == REPLAY:
        return _replay_text(value), value.get("verdict") == "reproduced"
    if key == DEDUP:
        if "duplicate_of" in value:
            return f"duplicate of example {value['duplicate_of']}", False
        return ("unique" if value.get("unique") else "kept among duplicates by state"), True
    return json.dumps(value, ensure_ascii=False), None


def _replay_text(value: dict[str, Any]) -> str:
    parts = [str(value.get("verdict", "?"))]
    seen = value.get("observations")
    if isinstance(seen, dict):
        parts.append(
            f"observations {seen.get('identical', 0)} identical, "
            f"{seen.get('modulo_numbers_and_order', 0)} modulo numbers and order, "
            f"{seen.get('differ', 0)} differ"
        )
    if value.get("detail"):
        parts.append(str(value["detail"]))
    if value.get("episode"):
        parts.append(f"replay {value['episode']}")
    return " · ".join(parts)
