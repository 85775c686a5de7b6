"""The skill and reflection libraries, looked up by task similarity.

When a new task comes, the Planner is shown the skill of the *most similar task* of its type
(AutoManual, §3.2): the entries of the task type are ranked by how similar the tasks they
were written from are to the new task's instruction, by BM25 (:func:`most_similar`, the one
function to point at another retriever). A task type without a skill shows its most similar
reflection instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from store import LibraryEntry, Store

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """The lower-case words of ``text`` (what BM25 compares)."""
    return _TOKEN.findall(text.lower())


def most_similar(query: str, documents: Sequence[str]) -> int | None:
    """The index of the document most similar to ``query`` by BM25 (``None`` for none; ties
    and a query sharing no word with any document go to the first, i.e. newest)."""
    if not documents:
        return None
    if len(documents) == 1:
        return 0
    import bm25s  # imported where used: the CLI's start-up stays light

    corpus = [tokens(d) or ["_"] for d in documents]
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    scores = index.get_scores(tokens(query) or ["_"])
    best = max(scores)
    return next(i for i, score in enumerate(scores) if score == best)


def instruction_of(store: Store, entry: LibraryEntry) -> str:
    """The instruction of the task ``entry`` was written from (empty when unknown)."""
    episode = store.episode(entry.episode_id) if entry.episode_id else None
    task = store.task(episode.task_id) if episode is not None else None
    return task.instruction if task is not None else ""


def library_note(store: Store, family: str, instruction: str = "") -> LibraryEntry | None:
    """The entry shown for a task of ``family``: the skill of the most similar task, else
    the reflection of the most similar task (without an instruction: the latest)."""
    for kind in ("skill", "reflection"):
        found = store.library(kind, family)  # type: ignore[arg-type]  # newest first
        if not found:
            continue
        if not instruction:
            return found[0]
        best = most_similar(instruction, [instruction_of(store, e) for e in found])
        return found[best or 0]
    return None
