"""Carrying an action from one task to another: which phrases of an example's task stand for
which phrases of the current one.

Two variations of a task differ in the things they name (``the red box`` in one, ``the orange
box`` in the other; a recipe of ``orange bell pepper`` or of ``block of cheese``). Aligning
the two tasks' texts word by word (:class:`difflib.SequenceMatcher`) shows them: where the
texts agree around a differing run of words, that run in the example's text stands for the
run in the current one. The texts aligned are the two instructions, then observations the two
episodes met at matching points (the current observation with the example's, and so on back
through the history). A pair is kept only when both sides are short runs of content words, and
it is extended over the content words both texts share after it (``red`` → ``orange`` becomes
``red box`` → ``orange box``), so a colour is not replaced everywhere.

Nothing here knows a world: the texts are whatever the world printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

MAX_WORDS = 4
"""Longest run (in words) either side of a pair may have."""

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_FUNCTION = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "to",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "you",
        "your",
        "there",
        "here",
        "some",
        "any",
        "as",
        "not",
        "no",
    ]
)
"""Words that never start or end a phrase (they carry a sentence's structure)."""


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` (hyphens and apostrophes inside a word kept)."""
    return _WORD.findall(text.lower())


BOUNDARY = "."
"""The token that stands for punctuation and line breaks when texts are aligned."""
_TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*|[.,:;!?()\n]+")


def tokens(text: str) -> list[str]:
    """``text`` as words and :data:`BOUNDARY` tokens (a phrase never crosses one)."""
    return [t if _WORD.fullmatch(t) else BOUNDARY for t in _TOKEN.findall(text.lower())]


@dataclass(frozen=True)
class Pair:
    """A phrase of the example's task and the phrase standing for it in the current one."""

    source: str
    target: str
    origin: str
    """Where it was read: ``instruction`` or ``observation``."""


def phrase_pairs(theirs: str, ours: str, origin: str) -> list[Pair]:
    """The differing runs of two texts that agree around them, as pairs (example → current).

    The texts' common parts (runs of two or more tokens, or one content word) are anchors;
    between two anchors, a short differing run on both sides is a pair, and in a longer gap
    the runs of content words next to the anchors are. A pair that ends at an anchor is
    extended over the content words the anchor starts with (``red`` → ``orange`` before
    ``box in the kitchen`` becomes ``red box`` → ``orange box``).

    Args:
        theirs: the example's text.
        ours: the current episode's text.
        origin: recorded with each pair (``instruction`` or ``observation``).
    """
    a, b = tokens(theirs), tokens(ours)
    if not a or not b or a == b:
        return []
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    anchors = [
        m
        for m in matcher.get_matching_blocks()
        if m.size >= 2 or (m.size == 1 and _content(a[m.a])) or m.size == 0
    ]
    pairs: list[Pair] = []
    start_a = start_b = 0
    for anchor in anchors:
        gap_a, gap_b = a[start_a : anchor.a], b[start_b : anchor.b]
        follow = a[anchor.a : anchor.a + anchor.size]
        for run_a, run_b, at_anchor in _runs(gap_a, gap_b):
            if at_anchor:
                grow = _content_prefix(follow, MAX_WORDS - max(len(run_a), len(run_b)))
                run_a, run_b = run_a + grow, run_b + grow
            if run_a != run_b:
                pairs.append(Pair(" ".join(run_a), " ".join(run_b), origin))
        start_a, start_b = anchor.a + anchor.size, anchor.b + anchor.size
    return pairs


def _runs(gap_a: list[str], gap_b: list[str]) -> list[tuple[list[str], list[str], bool]]:
    """The candidate runs of two gaps between the same anchors: the whole gaps when both are
    short phrases, else the content runs at each end; each marked when it ends at the next
    anchor."""
    whole_a, whole_b = _trimmed(gap_a), _trimmed(gap_b)
    if _phrase(whole_a) and _phrase(whole_b) and BOUNDARY not in whole_a + whole_b:
        return [(whole_a, whole_b, _trimmed_end(gap_a) and _trimmed_end(gap_b))]
    found = []
    head_a, head_b = _edge_run(gap_a, first=True), _edge_run(gap_b, first=True)
    tail_a, tail_b = _edge_run(gap_a, first=False), _edge_run(gap_b, first=False)
    if head_a and head_b:
        found.append((head_a, head_b, False))
    if tail_a and tail_b and (tail_a, tail_b) != (head_a, head_b):
        found.append((tail_a, tail_b, gap_a[-1] == tail_a[-1] and gap_b[-1] == tail_b[-1]))
    return found


def _content(word: str) -> bool:
    return word != BOUNDARY and word not in _FUNCTION


def _trimmed(run: list[str]) -> list[str]:
    """``run`` without function words at either end."""
    start, end = 0, len(run)
    while start < end and not _content(run[start]):
        start += 1
    while end > start and not _content(run[end - 1]):
        end -= 1
    return run[start:end]


def _trimmed_end(run: list[str]) -> bool:
    """Whether ``run`` ends with a content word (so a pair from it touches the anchor)."""
    return bool(run) and _content(run[-1])


def _edge_run(gap: list[str], first: bool) -> list[str]:
    """The content words at one end of ``gap`` (at most :data:`MAX_WORDS`), up to the first
    function word or boundary."""
    ordered = gap if first else list(reversed(gap))
    run: list[str] = []
    for word in ordered:
        if not _content(word) or len(run) == MAX_WORDS:
            break
        run.append(word)
    return run if first else list(reversed(run))


def _content_prefix(words_: list[str], room: int) -> list[str]:
    """The content words ``words_`` starts with, at most ``room``."""
    prefix: list[str] = []
    for word in words_:
        if not _content(word) or len(prefix) >= room:
            break
        prefix.append(word)
    return prefix


def _phrase(run: Sequence[str]) -> bool:
    """Whether a run of words can be one side of a pair: short, content words at both ends."""
    return 0 < len(run) <= MAX_WORDS and _content(run[0]) and _content(run[-1])


@dataclass
class EntityMap:
    """The pairs that carry an example's actions into the current task, instruction pairs
    first (they hold wherever the phrase appears), then observation pairs (used only for
    phrases the current episode has not met)."""

    pairs: list[Pair] = field(default_factory=list)

    def add(self, found: Iterable[Pair]) -> None:
        """Keep new pairs; a source already mapped keeps its first target."""
        known = {p.source for p in self.pairs}
        for pair in found:
            if pair.source not in known and pair.source != pair.target:
                self.pairs.append(pair)
                known.add(pair.source)

    def carry(self, action: str, seen: str) -> tuple[str, list[Pair]]:
        """``action`` with the example's phrases replaced by the current task's (whole words,
        longest phrase first, in one pass), and the pairs used. An observation pair is used
        only for a phrase the current episode has not met: one not in ``seen`` (the words of
        what it has seen, see :func:`seen_text`)."""
        around = f" {seen} "
        eligible = [
            p for p in self.pairs if p.origin == "instruction" or f" {p.source} " not in around
        ]
        if not eligible or not action.strip():
            return action, []
        eligible.sort(key=lambda p: -len(p.source))
        by_source = {p.source: p for p in eligible}
        alternatives = "|".join(re.escape(p.source) for p in eligible)
        pattern = re.compile(rf"(?<![\w'-])(?:{alternatives})(?![\w'-])")
        used: list[Pair] = []

        def swap(found: re.Match[str]) -> str:
            pair = by_source[found.group()]
            used.append(pair)
            return pair.target

        text = pattern.sub(swap, " ".join(words(action)))
        return (text if used else action), used


def seen_text(texts: Iterable[str]) -> str:
    """The words of ``texts``, joined by single spaces (what :meth:`EntityMap.carry` looks
    phrases up in)."""
    return " ".join(w for text in texts for w in words(text))
