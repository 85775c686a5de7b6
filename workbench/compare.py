"""Step-aligned comparison of a failed run against a successful one.

The failed run's actions and a successful run's actions are normalised (lowercase, whitespace
collapsed, numbers and the task's own entities abstracted, so two variations of one task line
up) and aligned globally with :class:`difflib.SequenceMatcher`. The first pair that is not a
match is the *first divergence*: where the failed run stopped doing what the success did.

Every index here is a stored step index: only steps with a non-empty action take part, and
each keeps the index it has in its episode.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, NamedTuple

from store import Episode, EpisodeFilter, Step, Store
from store.texts import WINDOW
from workbench.analyze.families import episodes_of, family_of, is_inferred
from workbench.envs.lexicon import Lexicon

Op = Literal["match", "substitute", "insert", "delete"]
"""How a pair lines up, read from the failed run's side: ``insert`` = the failed run took an
extra action the success did not; ``delete`` = the failed run lacks an action the success took."""

Normalizer = Callable[[str], str]
_PARTICLES = frozenset(("to", "on", "at", "around", "up", "down", "off", "out", "in", "into"))
"""Words that belong to the verb when they follow its first word (``look around``, ``put
down``, ``teleport to``) in an action no lexicon knows."""


def verb_of(action: str, lexicon: Lexicon | None = None) -> str:
    """An action's verb phrase (lower case): the longest verb ``lexicon`` knows at its start
    (without one: any installed world's, see :class:`~workbench.envs.registry.InstalledLexicons`),
    else its first word; a one-word verb takes a particle that follows it (``look around``,
    ``put down``). Empty for an empty action."""
    text = _collapse(action)
    known = (lexicon or _installed()).known_verb(text)
    words = text.split(" ", 2)
    if known and (" " in known or len(words) < 2 or words[1] not in _PARTICLES):
        return known
    return " ".join(words[:2]) if len(words) > 1 and words[1] in _PARTICLES else words[0]


def _installed() -> Lexicon:
    from workbench.envs.registry import INSTALLED

    return INSTALLED


Action = tuple[int, str]
"""A stored step index and that step's action text."""

_NUMBER = re.compile(r"(?<![\w<])[-+]?\d+(?:\.\d+)?(?![\w>])")
_WORD = re.compile(r"<n>|[a-z0-9_]+(?:['-][a-z0-9_]+)*")
_STRUCTURE_WORDS = """
    a an the this that these those it its it's they them their there here your you yours my
    me i we our us he she his her is are was were be been being am do does did done has have
    had will would should could can may might must shall to of in on at by for with from into
    onto over under above below up down out off about after before between through during
    and or but if then else when while which who whom whose what where why how than as so not
    no yes all any each every some more most less least first second third next last finally
    again also only just very too once
    task goal objective instruction step steps degrees degree located location around
    place put move moving use using used focus go going open close pick take get set make
    determine measure find identify check change changed state states first-order
    n
"""
_STRUCTURE = frozenset(_STRUCTURE_WORDS.split())
"""Words that carry a sentence's structure or an action's verb, never a task's entity."""


def _collapse(text: str) -> str:
    return " ".join(text.lower().split())


@lru_cache(maxsize=256)
def _entities(instruction: str) -> tuple[tuple[str, str], ...]:
    """The instruction's entity phrases, longest first, each with its placeholder.

    An entity is a maximal run of non-structure words (``unknown substance b``, ``red box``);
    runs are numbered ``<E1>``, ``<E2>``... in order of first appearance, so variations of one
    task template number them alike. Every suffix of a run (``substance b``, ``b``) maps to the
    run's placeholder, so an action that names only the head noun still matches.
    """
    text = _NUMBER.sub(" <n> ", _collapse(instruction))
    runs: list[list[str]] = [[]]
    position = 0
    for match in _WORD.finditer(text):
        word = match.group()
        gap = text[position : match.start()]
        position = match.end()
        if word in _STRUCTURE or word == "<n>" or re.search(r"[^\s]", gap):
            runs.append([])  # punctuation or a structure word ends a run
        if word not in _STRUCTURE and word != "<n>":
            runs[-1].append(word)
    numbered: dict[str, int] = {}
    for run in runs:
        if run and " ".join(run) not in numbered:
            numbered[" ".join(run)] = len(numbered) + 1
    phrases: dict[str, str] = {}
    for run_text, number in numbered.items():
        words = run_text.split()
        for start in range(len(words)):
            phrases.setdefault(" ".join(words[start:]), f"<E{number}>")
    return tuple(sorted(phrases.items(), key=lambda item: (-len(item[0]), item[0])))


@lru_cache(maxsize=64)
def _entity_pattern(instruction: str) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    entities = _entities(instruction)
    if not entities:
        return None, {}
    alternatives = "|".join(re.escape(phrase) for phrase, _ in entities)
    return re.compile(rf"(?<![\w<-])(?:{alternatives})(?![\w>-])"), dict(entities)


@lru_cache(maxsize=256)
def entity_phrases(instruction: str) -> dict[str, str]:
    """Each entity placeholder's phrase as the instruction writes it (case kept), e.g.
    ``{"E2": "unknown substance B"}`` — the whole run, not its suffixes."""
    phrases: dict[str, str] = {}
    for phrase, placeholder in _entities(_collapse(instruction)):
        name = placeholder[1:-1]
        if name in phrases:
            continue  # longest first: the first phrase seen is the whole run
        found = re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", instruction, re.IGNORECASE)
        phrases[name] = found.group() if found else phrase
    return phrases


_CALL = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*\((.*)\)\s*$", re.DOTALL)
REPLY = "reply"
"""The tool-like name a text reply (an assistant message without a tool call) is given as a
case step's action: ``reply({"text": ...})``."""


def tool_call(action: str) -> tuple[str, dict] | None:
    """``(tool name, arguments)`` of an action rendered as ``name({...json...})`` or
    ``name()`` (how importers store tool calls); ``None`` for any other action."""
    found = _CALL.match(action)
    if found is None:
        return None
    body = found.group(2).strip()
    try:
        arguments = json.loads(body) if body else {}
    except ValueError:
        return None
    return (found.group(1), arguments) if isinstance(arguments, dict) else None


def reply_action(text: str) -> str:
    """A text reply as a case step's action (see :data:`REPLY`)."""
    return f"{REPLY}({json.dumps({'text': text}, ensure_ascii=False)})"


def is_reply(action: str) -> bool:
    """Whether a case step's action is a text reply (see :func:`reply_action`)."""
    return action.startswith(f"{REPLY}(")


def reply_text(action: str) -> str:
    """What a text reply said (``""`` for an action that is no reply)."""
    call = tool_call(action) if is_reply(action) else None
    return str(call[1].get("text", "")) if call else ""


def call_name(action: str) -> str | None:
    """The name of an action written ``name(...)``, whatever its arguments' syntax (a
    Python dict as well as JSON); ``None`` for any other action."""
    found = _CALL.match(action)
    return found.group(1) if found else None


def normalize_action(action: str, instruction: str = "") -> str:
    """An action in a form that lines up across runs and task variations.

    Lowercased and whitespace-collapsed; numbers become ``<N>``; phrases that name one of the
    instruction's entities (objects, locations, values) become ``<E1>``, ``<E2>``... numbered by
    where the entity first appears in the instruction.

    >>> normalize_action("Move  Unknown Substance B to red box",
    ...                  "Measure unknown substance B. If above 50.0 degrees, place it in the red box.")
    'move <E1> to <E2>'
    """
    call = tool_call(action)
    if call is not None:  # one spelling of the same call: keys sorted, compact JSON
        action = f"{call[0]}({json.dumps(call[1], sort_keys=True, ensure_ascii=False)})"
    text = _NUMBER.sub("<N>", _collapse(action))
    pattern, placeholders = _entity_pattern(_collapse(instruction))
    if pattern is None:
        return text
    return pattern.sub(lambda match: placeholders[match.group()], text)


def shape(action: str, instruction: str, lexicon: Lexicon | None = None) -> str:
    """An action reduced to its verb and abstracted arguments, e.g. ``go to <X>``.

    Entities the instruction names keep their numbered placeholder (``focus on <E1>``), so a
    correction that must name the task's object stays distinct from one that must not. The
    verb is read through ``lexicon`` (see :func:`verb_of`). A tool call is abstracted
    structurally (:func:`call_shape`).
    """
    call = tool_call(action)
    if call is not None:
        return call_shape(call[0], call[1], instruction)
    verb = verb_of(action, lexicon)
    if not verb:
        return ""
    rest = normalize_action(_collapse(action)[len(verb) :], instruction).strip()
    if not rest:
        return verb
    entities = " ".join(re.findall(r"<E\d+>", rest))
    return f"{verb} {entities or '<X>'}"


def call_shape(name: str, arguments: dict, instruction: str = "") -> str:
    """A tool call's structure: its name and sorted argument keys, literal values (ids,
    numbers, quoted text) left out; a value that names one of the instruction's entities
    keeps its placeholder, e.g. ``get_order(order_id=<E1>)``, ``search(query)``."""
    keys = []
    for key in sorted(arguments):
        value = arguments[key]
        text = value if isinstance(value, str) else ""
        entities = re.findall(r"<E\d+>", normalize_action(text, instruction)) if text else []
        keys.append(f"{key}={' '.join(entities)}" if entities else key)
    return f"{name}({', '.join(keys)})"


class Pair(NamedTuple):
    """One row of an alignment: stored step indices on each side (``None``: no counterpart)."""

    failed: int | None
    success: int | None
    op: Op


@dataclass(frozen=True)
class Divergence:
    """Where the failed run first parts from the successful one.

    ``pair`` indexes :attr:`Alignment.pairs`. ``failed_step`` and ``success_step`` are the
    stored step indices at the divergence; on the side that has no step in that pair, they
    name the step where that side resumes (``None`` when it has no further action).
    """

    pair: int
    op: Op
    failed_step: int | None
    success_step: int | None


@dataclass(frozen=True)
class Alignment:
    """A global alignment of two runs' actions."""

    pairs: list[Pair]
    failed_keys: dict[int, str]
    """Normalised action of each failed-run step that took part."""
    success_keys: dict[int, str]
    """Normalised action of each successful-run step that took part."""

    @property
    def first_divergence(self) -> Divergence | None:
        """The first pair that is not a match, or ``None`` when the runs agree throughout."""
        for position, pair in enumerate(self.pairs):
            if pair.op != "match":
                return Divergence(
                    position,
                    pair.op,
                    self._resume(position, "failed"),
                    self._resume(position, "success"),
                )
        return None

    def divergences(self) -> list[int]:
        """Positions in :attr:`pairs` where a run of non-matching pairs begins."""
        return [
            i
            for i, pair in enumerate(self.pairs)
            if pair.op != "match" and (i == 0 or self.pairs[i - 1].op == "match")
        ]

    def _resume(self, position: int, side: Literal["failed", "success"]) -> int | None:
        for pair in self.pairs[position:]:
            step = getattr(pair, side)
            if step is not None:
                return step
        return None

    @property
    def matched(self) -> int:
        """How many pairs match."""
        return sum(pair.op == "match" for pair in self.pairs)


def _as_actions(actions: Iterable[Action | str]) -> list[Action]:
    return [
        item if isinstance(item, tuple) else (position, item)
        for position, item in enumerate(actions)
    ]


def align(
    failed_actions: Sequence[Action | str],
    success_actions: Sequence[Action | str],
    normalize: Normalizer | tuple[Normalizer, Normalizer] = _collapse,
) -> Alignment:
    """Align a failed run's actions with a successful run's.

    Args:
        failed_actions: ``(step index, action)`` pairs of the failed run, in order (plain
            strings are numbered from 0).
        success_actions: the same for the successful run.
        normalize: how an action becomes its comparison key; one function for both sides, or
            ``(for the failed run, for the successful run)`` when each has its own
            instruction (see :func:`normalize_action`).

    Returns:
        The alignment: matches, substitutions (paired one to one), and actions only one side
        took (``insert``: only the failed run; ``delete``: only the successful run).
    """
    failed, success = _as_actions(failed_actions), _as_actions(success_actions)
    norm_failed, norm_success = normalize if isinstance(normalize, tuple) else (normalize,) * 2
    failed_keys = {index: norm_failed(action) for index, action in failed}
    success_keys = {index: norm_success(action) for index, action in success}
    a = [success_keys[index] for index, _ in success]
    b = [failed_keys[index] for index, _ in failed]
    pairs: list[Pair] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, s0, s1, f0, f1 in matcher.get_opcodes():
        if tag == "equal":
            pairs += [
                Pair(failed[f][0], success[s][0], "match")
                for s, f in zip(range(s0, s1), range(f0, f1), strict=True)
            ]
            continue
        common = min(s1 - s0, f1 - f0) if tag == "replace" else 0
        pairs += [Pair(failed[f0 + k][0], success[s0 + k][0], "substitute") for k in range(common)]
        pairs += [Pair(failed[f][0], None, "insert") for f in range(f0 + common, f1)]
        pairs += [Pair(None, success[s][0], "delete") for s in range(s0 + common, s1)]
    return Alignment(pairs, failed_keys, success_keys)


def actions_of(steps: Iterable[Step]) -> list[Action]:
    """The ``(index, action)`` of every step that has a non-empty action."""
    return [(step.index, step.action) for step in steps if step.action.strip()]


ACTION_CHARS = WINDOW
"""Characters of each step's texts read to align two runs (a reader's window,
:data:`store.texts.WINDOW`). A longer action is aligned, and shown, by its first
``ACTION_CHARS``."""


def episode_actions(store: Store, episode: Episode, chunk: int = 1000) -> list[Action]:
    """An episode's actions, read from the store a range of steps at a time, each cut to its
    first :data:`ACTION_CHARS` characters (:meth:`~store.Store.cut_steps`)."""
    found: list[Action] = []
    for start in range(0, episode.n_steps, chunk):
        cut = store.cut_steps(episode.id, start, start + chunk, ACTION_CHARS)
        found += actions_of(c.step for c in cut)
    return found


def contrast_for(store: Store, episode: Episode) -> Episode | None:
    """A successful episode to compare ``episode`` with, chosen deterministically.

    Preference order: same task and agent, same task, same family and agent, same family
    (inferred when the log names none, see :func:`~workbench.analyze.families.family_of`);
    within one, the earliest stored. Never ``episode`` itself.
    """
    same_task = contrast_of_task(store, episode)
    return same_task or contrast_of_family(store, episode)


def contrast_of_task(store: Store, episode: Episode) -> Episode | None:
    """The earliest stored success of ``episode``'s task, one of its agent first."""
    for agent in (episode.agent, None):
        where = EpisodeFilter(outcome="passed", task=episode.task_id, agent=agent)
        found = _other_with_steps(store.iter_episodes(where, page=CONTRAST_PAGE), episode)
        if found is not None:
            return found
    return None


CONTRAST_PAGE = 16
"""Successes read at a time while looking for a contrast."""


def _other_with_steps(found: Iterable[Episode], episode: Episode) -> Episode | None:
    """The first of ``found`` that is not ``episode`` and has steps to compare with (an
    outcome imported alone, from a results file, has none)."""
    return next((c for c in found if c.id != episode.id and c.n_steps), None)


def contrast_of_family(store: Store, episode: Episode) -> Episode | None:
    """The earliest stored success of ``episode``'s family (stored or inferred), one of its
    agent first."""
    family = family_of(store, episode)
    if not family:
        return None
    for agent in (episode.agent, None):
        found = (
            episodes_of(store, family, EpisodeFilter(outcome="passed", agent=agent))
            if is_inferred(family)  # read until one matches; a stored family by its index
            else store.iter_episodes(
                EpisodeFilter(outcome="passed", agent=agent, family=family), page=CONTRAST_PAGE
            )
        )
        match = _other_with_steps(found, episode)
        if match is not None:
            return match
    return None


@dataclass(frozen=True)
class Comparison:
    """A failed episode aligned against a successful one."""

    failed: Episode
    success: Episode
    alignment: Alignment
    failed_actions: list[Action]
    """``(step index, action)`` of the failed run, as stored (cut to :data:`ACTION_CHARS`)."""
    success_actions: list[Action]
    """``(step index, action)`` of the successful run, as stored (cut to
    :data:`ACTION_CHARS`)."""


def compare_episodes(store: Store, failed: Episode, success: Episode) -> Comparison:
    """Align two stored episodes, each action normalised against its own task's instruction."""
    instructions = []
    for episode in (failed, success):
        task = store.task(episode.task_id)
        instructions.append(task.instruction if task else "")
    normalizers = tuple(
        (lambda action, text=text: normalize_action(action, text)) for text in instructions
    )
    failed_actions = episode_actions(store, failed)
    success_actions = episode_actions(store, success)
    alignment = align(failed_actions, success_actions, normalize=(normalizers[0], normalizers[1]))
    return Comparison(failed, success, alignment, failed_actions, success_actions)
