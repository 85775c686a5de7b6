"""The skill and reflection libraries, looked up by task similarity.

When a new task comes, the Planner is shown the skill of the *most similar task* of its type
(AutoManual, §3.2): the entries of the task type are ranked by how similar the tasks they
were written from are to the new task's instruction, by BM25 — the synthesis stage's retrieval
(:func:`workbench.synth.retrieval.scores`), the same words and parameters it retrieves
examples with. A task type without a skill shows its most similar reflection instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from store import LibraryEntry, Store


def most_similar(query: str, documents: Sequence[str]) -> int | None:
    """The index of the document most similar to ``query`` by BM25 (``None`` for none; ties
    and a query sharing no word with any document go to the first, i.e. newest)."""
    if not documents:
        return None
    if len(documents) == 1:
        return 0
    from workbench.synth.retrieval import scores  # loads bm25s: imported where used

    ranked = scores(query, documents)
    best = max(ranked)
    return next(i for i, score in enumerate(ranked) if score == best)


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
