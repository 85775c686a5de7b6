"""The retrieval query: a judgment of the synthesis stage.

Learn-by-interact's model-based retrieval (Algorithm 2, line 8) asks a model to write a query
from the task instruction, the interaction history and the current observation: what kind of
example would help to choose the next action. :class:`QueryWriter` is that judgment; its two
backends are :class:`~workbench.synth.heuristic_queries.HeuristicQueryWriter` (offline: the
instruction plus the current observation) and
:class:`~workbench.synth.openai_queries.OpenAIQueryWriter` (any OpenAI-compatible model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

QUERY_CHARS = 600
"""Most characters of a query (a longer one is cut)."""


class QueryWriter(Protocol):
    """Writes the model-based retrieval query at one step of an episode."""

    name: str
    """``heuristic`` or ``openai:<model>``."""

    def write(self, instruction: str, history: Sequence[tuple[str, str]], observation: str) -> str:
        """The query for this step.

        Args:
            instruction: the task.
            history: the ``(action, observation)`` pairs taken so far, oldest first.
            observation: the current observation.
        """
        ...


def cut(text: str, limit: int = QUERY_CHARS) -> str:
    """``text`` with whitespace collapsed, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]
