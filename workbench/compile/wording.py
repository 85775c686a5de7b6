"""How an artifact's text says what its patterns mean, for every world alike.

- A guard is written with its polarity: an observation that must *not* be visible reads
  ``unless …`` (its claim's text says what the pattern finds; the ``absent`` flag alone says
  it must not be found).
- A template's placeholders are named by the role the value plays in the step that first
  uses it, read through the world's :class:`~workbench.envs.lexicon.Lexicon` (``<item>`` for
  what is taken, ``<place>`` for where one goes, ``<use-target>`` for what ``use`` acts on,
  ``<use-on>`` for what it is used on…), never by a number or one episode's value.
- An observed result is stated as the pattern it is checked with: numbers become
  ``<number>`` and the task's own phrases their input's name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from store import Observed
from workbench.envs.lexicon import PLAIN, Lexicon

_PLACEHOLDER = re.compile(r"\{(E?\d+)\}")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_MARK = "qqzx"
"""A word no world uses, put where a placeholder is to read the role of what stands there."""

ROLE_NOUNS = {"move": "place", "open": "opening", "take": "item", "wait": "duration"}
"""What a value is called when it is the target of an action of that role (other roles are
named after the verb)."""


def condition(observed: Observed) -> str:
    """One guard condition in words, with its polarity."""
    text = " ".join(observed.text.split())
    return f"unless {text}" if observed.absent else text


def guard_text(observations: Iterable[Observed]) -> str:
    """Every condition of a guard, with its polarity (``none`` when there is none)."""
    return "; ".join(condition(o) for o in observations) or "none"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def role_name(template: str, placeholder: str, lexicon: Lexicon = PLAIN) -> str:
    """What the value of ``{placeholder}`` is in the action ``template``: a noun for the role
    it plays there (``item``, ``place``, ``<verb>-target``) or, when it follows a preposition
    after the action's target, ``<verb>-<preposition>`` (``use-on``)."""
    marked = _PLACEHOLDER.sub(
        lambda m: _MARK if m.group(1) == placeholder else "something", template
    )
    acted = lexicon.role(marked)
    verb = _slug(acted.verb) or "act"
    if _MARK in acted.target.split():
        return ROLE_NOUNS.get(acted.role, f"{verb}-target")
    words = marked.lower().split()
    if _MARK in words:
        before = words[words.index(_MARK) - 1] if words.index(_MARK) > 0 else ""
        if before and before not in verb.split("-"):
            return f"{verb}-{_slug(before)}"
    return f"{verb}-value"


def input_names(templates: Sequence[str], lexicon: Lexicon = PLAIN) -> dict[str, str]:
    """A distinct role name for every placeholder the templates use, read from the first
    template whose action acts on it (else the first that uses it); a repeated name gets
    ``-2``, ``-3``…"""
    names: dict[str, str] = {}
    for placeholder in dict.fromkeys(p for t in templates for p in _PLACEHOLDER.findall(t)):
        using = [t for t in templates if "{" + placeholder + "}" in t]
        read = [role_name(t, placeholder, lexicon) for t in using]
        base = min(read, key=_preference)
        name, count = base, 1
        while name in names.values():
            count += 1
            name = f"{base}-{count}"
        names[placeholder] = name
    return names


def _preference(name: str) -> int:
    """Which reading names an input best: a role noun (a place before an item before an
    opening), then what a verb acts on, then what it is used with."""
    nouns = ("place", "item", "opening", "duration")
    if name in nouns:
        return nouns.index(name)
    return len(nouns) + (0 if name.endswith("-target") else 1 if not name.endswith("-value") else 2)


def readable(template: str, names: dict[str, str]) -> str:
    """A template with each placeholder written as its input's name (``<item>``)."""
    return _PLACEHOLDER.sub(lambda m: f"<{names.get(m.group(1), 'value')}>", template)


def as_pattern(text: str, phrases: dict[str, str], names: dict[str, str]) -> str:
    """An observed text stated as the pattern that checks it: every number is ``<number>``
    and every phrase of ``phrases`` (phrase → placeholder) its input's name."""
    out = _NUMBER.sub("<number>", text)
    for phrase in sorted(phrases, key=len, reverse=True):
        name = names.get(phrases[phrase])
        if name is None:
            continue  # the task's wording, not one of the inputs
        out = re.sub(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", f"<{name}>", out, flags=re.I)
    return out
