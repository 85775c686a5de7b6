"""Rules read off recorded trajectories alone, for runs no simulator can replay (imported logs).

When none of the world mechanisms of :mod:`workbench.compile.heuristic` fits an imported
failure, its causal action and its contrastive success still say what went wrong: the failed
run took an action (``cancel_reservation(...)``) where the success first did something else
(``get_reservation_details(...)``). The rule read off that is a veto of the failed kind of
action — its tool or command and argument keys, literal values abstracted — unless the
success's first move is already in the recent history.

Its contract gate runs on the recorded decision points: it must fire at the cluster's causal
steps and stay silent at the contrastive successes' steps that take the same kind of action.
Nothing here replays anything; such rules are admitted only explicitly
(``workbench repo admit --without-replay``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from store import Activation, Citation, Claim, Execution, Observed, Scope
from workbench.compile.proposals import MemberCase
from workbench.llm.steps import CaseStep

MECHANISM = "recorded-divergence"
HISTORY = 6
"""Recent action steps an agent's evidence shows (the guard must be seen within them)."""
CALL = re.compile(r"^(?P<name>[A-Za-z_][\w.\-]*)\((?P<arguments>.*)\)$", re.DOTALL)
"""A stored tool call: ``name(<JSON arguments>)``."""
WORD = re.compile(r"^\s*(?P<head>[^\s(]+)")

NO_CONTRAST = (
    "no successful run of the same task or family to contrast with: import successful runs "
    "of this task (or a log with its expected actions) and run `workbench analyze` again"
)
NO_ACTION = (
    "the causal step is not an action: a rule screens the actions an agent proposes; mark the "
    "action that caused the failure as its causal span (`workbench spans import`) and analyse again"
)
SAME_MOVE = (
    "the successful run takes the same kind of action ({head}) where this one failed, and "
    "nothing recorded before it tells the two apart; mark the span where they differ by hand "
    "(`workbench spans import`) or import a success that acts differently"
)
ALREADY_DONE = (
    "the failed run had already done '{first}' before '{head}', as the successful one did; "
    "the difference lies elsewhere: mark the causal span by hand (`workbench spans import`)"
)


def head_of(action: str) -> str:
    """The kind of an action: its tool name (``name(...)``) or its command's first word."""
    call = CALL.match(action.strip())
    if call is not None:
        return call["name"]
    word = WORD.match(action)
    return word["head"] if word else ""


def argument_keys(action: str) -> list[str]:
    """The keys of a tool call's JSON object arguments (none for anything else)."""
    call = CALL.match(action.strip())
    if call is None:
        return []
    try:
        arguments = json.loads(call["arguments"])
    except ValueError:
        return []
    return sorted(arguments) if isinstance(arguments, dict) else []


def action_pattern(action: str) -> str:
    """A regex matching every action of the same structure: the same tool with the same
    argument keys (any values), or the same command word with any arguments."""
    head = re.escape(head_of(action))
    if CALL.match(action.strip()):
        keys = "".join(f'(?=.*"{re.escape(k)}"\\s*:)' for k in argument_keys(action))
        return f"(?s:\\s*{head}\\({keys}.*\\))"
    return f"(?s:\\s*{head}(?:\\s.*)?)"


def history_pattern(head: str) -> str:
    """A regex finding an action of kind ``head`` in the evidence's recent history (the head
    whole: not followed by a word character, whatever its own last character is)."""
    return f"(?:^|\\n)> \\s*{re.escape(head)}(?!\\w)"


def _cite(episode_id: str, index: int) -> Citation:
    return Citation(episode_id=episode_id, start=index, end=index)


def _first_move(contrast: Sequence[CaseStep], member: MemberCase) -> CaseStep | None:
    """The success's step that shows the change (the analyzer's), else its first action."""
    at = {s.index: s for s in contrast}
    chosen = at.get(member.contrast_step) if member.contrast_step is not None else None
    return chosen or next((s for s in contrast if s.action), None)


def _seen_before(steps: Sequence[CaseStep], index: int, head: str) -> bool:
    recent = [s for s in steps if s.index < index and s.action][-HISTORY:]
    return any(head_of(s.action) == head for s in recent)


def read(member: MemberCase):
    """The recorded-divergence reading of an imported member, or why there is none.

    Returns:
        a :class:`~workbench.compile.heuristic.Draft`-shaped tuple ``(key, activation, scope,
        execution)``, or the reason in words a researcher can act on.
    """
    case = member.case
    failed = next((s for s in case.steps if s.index == member.start and s.action), None)
    if failed is None:
        return NO_ACTION
    if case.contrast_id is None or not case.contrast_steps:
        return NO_CONTRAST
    move = _first_move(case.contrast_steps, member)
    head, pattern = head_of(failed.action), action_pattern(failed.action)
    if move is None or head_of(move.action) == head:
        return SAME_MOVE.format(head=head or "the same action")
    first = head_of(move.action)
    matching = [s for s in case.contrast_steps if re.fullmatch(pattern, s.action)]
    if _seen_before(case.steps, failed.index, first):
        return ALREADY_DONE.format(head=head, first=first)
    return _reading(member, failed, move, matching, head, first, pattern)


def _reading(
    member: MemberCase,
    failed: CaseStep,
    move: CaseStep,
    matching: list[CaseStep],
    head: str,
    first: str,
    pattern: str,
):
    case = member.case
    contrast = case.contrast_id or ""
    here = _cite(case.episode_id, failed.index)
    shown = [_cite(contrast, move.index)]
    boundary = [_cite(contrast, s.index) for s in matching] or shown
    activation = Activation(
        trigger=Claim(
            text=f"the agent proposes '{head}' ({', '.join(argument_keys(failed.action)) or 'any arguments'})",
            value=pattern,
            citations=[here],
        ),
        observations=[
            Observed(
                text=f"'{first}' was done in the recent history",
                value=history_pattern(first),
                absent=True,
                citations=[here, *shown],
            )
        ],
        boundary=Claim(
            text=f"'{head}' after '{first}', as the successful run does it", citations=boundary
        ),
    )
    scope = Scope(
        objective=Claim(
            text=f"do not {head} before {first}; first {first} "
            f"({', '.join(argument_keys(move.action)) or 'as recorded'}), as the successful run did",
            value="veto",
            citations=[here, *shown],
        ),
        decisions=[
            Claim(text=f"veto '{head}' until '{first}' is done", value="veto", citations=[here])
        ],
    )
    execution = Execution(
        state=Claim(
            text=f"none: whether '{first}' was done is in the recent history", citations=[here]
        ),
        completion=Claim(text=f"'{head}' is not taken before '{first}'", citations=[here]),
    )
    return (MECHANISM, pattern, first), activation, scope, execution
