"""The offline :class:`~workbench.synth.relabeler.Relabeler`: instructions composed from a span's
observable effects, and a deterministic committee vote.

The instruction lists what the span did, in order, in the world's own words: each step that
had an effect contributes its action as the world spells its commands (``take banana from
counter``, ``focus on dove``), except moves, which become ``go to the <place>`` — consecutive
moves collapse to the last place reached, and the door or exit opened on the way to it is left
out. A whole trajectory's abstraction keeps only the steps the world rewarded or that decided
something (what the task was about), or the summary when there are none.

The vote rejects a span that goes back to a state it was already in (a detour: the paper's
"going back and forth") or whose steps the world refused more than a quarter of the time (not
coherent). It reads only the case, so it is the same in every world.
"""

from __future__ import annotations

from workbench.envs.lexicon import Lexicon
from workbench.envs.registry import lexicon_of
from workbench.llm.steps import CaseStep
from workbench.synth.effects import DECIDED, REACHED, SCORE
from workbench.synth.relabeler import SpanCase, Vote

REFUSED_SHARE = 0.25
"""The largest share of a span's steps the world may refuse for the vote to keep it."""

NAME = "heuristic"


class HeuristicRelabeler:
    """Backward construction and the committee vote from observable effects alone."""

    name = NAME

    def relabel(self, case: SpanCase) -> str:
        """One sentence listing what the span did (see the module docstring)."""
        phrases = self.abstraction(case) if case.purpose == "abstraction" else []
        phrases = phrases or self.phrases(case)
        return sentence(phrases) if phrases else f"Reproduce steps {case.start} to {case.end}."

    def abstraction(self, case: SpanCase) -> list[str]:
        """The steps the world rewarded or that decided something, each preceded by the place
        it happened in when that changed; a phrase said twice is kept where it is said last."""
        lexicon = lexicon_of(case.env)
        here = case.places.get(case.steps[0].index, "") if case.steps else ""
        phrases: list[str] = []
        for step in case.steps:
            effects = case.step_effects.get(step.index, [])
            if not any(e.startswith((SCORE, DECIDED)) for e in effects):
                continue
            place = case.places.get(step.index, "")
            if place and place != here and not lexicon.is_navigation(step.action):
                phrases.append(f"go to the {place}")
            here = place
            reached = [e[len(REACHED) :] for e in effects if e.startswith(REACHED)]
            phrases.append(f"go to the {reached[-1]}" if reached else " ".join(step.action.split()))
            here = reached[-1] if reached else here
        return [p for i, p in enumerate(phrases) if p not in phrases[i + 1 :]]

    def phrases(self, case: SpanCase) -> list[str]:
        """What each step with an effect did, as a short imperative."""
        lexicon = lexicon_of(case.env)
        steps = [s for s in case.steps if case.step_effects.get(s.index)]
        phrases: list[str] = []
        for position, step in enumerate(steps):
            effects = case.step_effects[step.index]
            reached = [e[len(REACHED) :] for e in effects if e.startswith(REACHED)]
            walking_on = _walk_goes_on(steps[position + 1 :], case, lexicon)
            if reached:
                if not walking_on:  # else the walk goes on: name where it ends
                    phrases.append(f"go to the {reached[-1]}")
            elif lexicon.is_navigation(step.action) and walking_on:
                continue  # the door opened on the way
            else:
                phrases.append(" ".join(step.action.split()))
        return phrases

    def vote(self, case: SpanCase, instruction: str) -> Vote:
        """Keep unless the span makes a detour or is mostly refused actions."""
        if case.revisits:
            step, earlier = min(case.revisits.items())
            where = "it started in" if earlier < case.start else f"it was in after step {earlier}"
            return Vote(NAME, False, f"detour: after step {step} the state is the one {where}")
        refused = sorted(case.refused)
        if case.steps and len(refused) / len(case.steps) > REFUSED_SHARE:
            listed = ", ".join(f"{i} ({case.refused[i]})" for i in refused[:4])
            return Vote(
                NAME,
                False,
                f"incoherent: the world refused {len(refused)} of "
                f"{len(case.steps)} steps: {listed}",
            )
        return Vote(NAME, True)


def _moves(index: int, case: SpanCase) -> bool:
    return any(e.startswith(REACHED) for e in case.step_effects.get(index, []))


def _walk_goes_on(later: list[CaseStep], case: SpanCase, lexicon: Lexicon) -> bool:
    """Whether the next steps with effects move on (past doors opened on the way)."""
    for step in later:
        if _moves(step.index, case):
            return True
        if not lexicon.is_navigation(step.action):
            return False
    return False


def sentence(phrases: list[str]) -> str:
    """``["a", "b", "c"]`` → ``"A, b, then c."``."""
    text = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + ", then " + phrases[-1]
    return text[:1].upper() + text[1:] + "."
