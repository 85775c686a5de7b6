"""Steps as every model prompt shows them: one ``[index] action -> observation (reward)``
line per step, trimmed to a character budget around the region that matters.

Every stage that asks a model about a trajectory (analysis, spec extraction, the manual's
Builder) renders its steps here, so a listing reads the same in every prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

OMITTED_GAP = "[... {count} steps omitted ...]"
OMITTED_TOTAL = "({omitted} of {total} steps omitted to fit the prompt)"

MIN_STEPS_CHARS = 1000
"""The smallest step budget accepted: room for the first and last steps at least."""
LINE_SHARE = 4
"""One step's line may take at most this fraction (1/n) of its run's budget."""
MIN_LINE_CHARS = 160
FOCUS_RADIUS = 4
"""Steps kept on each side of the focus (where two runs first differ), budget permitting."""
CONTRAST_SHARE = 3
"""When a failed and a successful run do not both fit, the success gets at most 1/n."""


class CaseStep(BaseModel):
    """One step of an episode as a judgment sees it."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """The step's stored index in its episode."""
    action: str = ""
    observation: str = ""
    reward: float | None = None
    agent: str = ""
    """The agent that took the step, in a log of several agents (empty for one agent's)."""


def render_steps(steps: Sequence[CaseStep], budget: int, focus: int | None = None) -> str:
    """``steps`` as `[index] action -> observation (reward)` lines, at most ``budget`` chars.

    When they do not all fit, the first and last steps are kept, then the steps around
    position ``focus`` (where the runs first differ), then steps from both ends inwards;
    each gap is marked with its size and a last line says how many steps were omitted.
    """
    cap = max(MIN_LINE_CHARS, budget // LINE_SHARE)
    lines = [_step_line(step, cap) for step in steps]
    if _joined_length(lines) <= budget:
        return "\n".join(lines)
    total = len(lines)
    gap = len(OMITTED_GAP.format(count=total)) + 1
    used = len(OMITTED_TOTAL.format(omitted=total, total=total)) + gap
    kept: set[int] = set()
    for position in _priority(total, focus):
        cost = len(lines[position]) + 1 + gap  # the line and, at worst, one more gap marker
        if used + cost <= budget:
            kept.add(position)
            used += cost
    return _assemble(lines, kept)


def step_ranges(indices: Iterable[int]) -> str:
    """``0–12, 15, 17–20``: sorted indices as compact ranges (for correction messages)."""
    ordered = sorted(set(indices))
    parts: list[str] = []
    start = previous = ordered[0]
    for index in [*ordered[1:], None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        parts.append(str(start) if start == previous else f"{start}–{previous}")
        if index is not None:
            start = previous = index
    return ", ".join(parts)


def _step_line(step: CaseStep, cap: int) -> str:
    action = _one_line(step.action) or "(no action)"
    reward = "" if step.reward is None else f" (reward {step.reward:g})"
    speaker = f"{step.agent}: " if step.agent else ""
    head = f"[{step.index}] {speaker}{action} -> "
    room = max(40, cap - len(head) - len(reward))
    observation = _clip(_one_line(step.observation) or "(no observation)", room)
    return _clip(head + observation + reward, cap)


def _one_line(text: str) -> str:
    return " / ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _joined_length(lines: Sequence[str]) -> int:
    return sum(len(line) for line in lines) + max(0, len(lines) - 1)


def _priority(total: int, focus: int | None) -> list[int]:
    """Positions in the order they are worth keeping (each once)."""
    order = [0, total - 1]
    if focus is not None:
        focus = min(max(focus, 0), total - 1)
        order.append(focus)
        for offset in range(1, FOCUS_RADIUS + 1):
            order += [focus - offset, focus + offset]
    for offset in range(1, total):
        order += [offset, total - 1 - offset]
    return list(dict.fromkeys(p for p in order if 0 <= p < total))


def _assemble(lines: Sequence[str], kept: set[int]) -> str:
    out: list[str] = []
    skipped = 0
    for position, line in enumerate(lines):
        if position in kept:
            if skipped:
                out.append(OMITTED_GAP.format(count=skipped))
                skipped = 0
            out.append(line)
        else:
            skipped += 1
    if skipped:
        out.append(OMITTED_GAP.format(count=skipped))
    out.append(OMITTED_TOTAL.format(omitted=len(lines) - len(kept), total=len(lines)))
    return "\n".join(out)
