"""The offline query writer: the instruction plus the current observation."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.synth.queries import QUERY_CHARS, cut


class HeuristicQueryWriter:
    """Writes the query a model would start from, without one: the task's instruction and
    the current observation (the history is left to observation-based retrieval)."""

    name = "heuristic"

    def write(self, instruction: str, history: Sequence[tuple[str, str]], observation: str) -> str:
        head = cut(instruction, QUERY_CHARS // 2)
        return cut(f"{head} {observation}", QUERY_CHARS)
