"""The regime an episode belongs to: its family, or one inferred when its log names none.

Imported logs often say nothing of a task family. Episodes of one benchmark that offer the
agent the same tools face the same regime, so the inferred family is the benchmark (the
task's environment) and the tool set the log declares (``tools`` in the episode's or task's
metadata, as chat-completions requests carry it); without a declared tool set, the benchmark
alone.

A benchmark often holds several kinds of task behind one tool set, and its instructions say
which: tasks of one kind are written from one template with different entities ("boil water",
"boil chocolate"). So the benchmark's instructions are grouped by the words they share with
other instructions (an entity named by one task alone drops out), and when the groups recur —
at least two of them, and most tasks in a group with another task — each is a family of its
own, labelled by the words that set it apart (``~bench [tools] /boil·combusting``). Free-form
instructions (a user's story per task) do not recur, and stay one family.
"""

from __future__ import annotations

import re
import weakref
from collections import Counter
from collections.abc import Iterator
from typing import Any

from store import Episode, EpisodeFilter, Store

INFERRED = "~"
"""First character of an inferred family (a stored family never starts with it)."""

TEMPLATE_WORDS = 60
"""Words read from the start of an instruction (its template is in its opening)."""
TEMPLATED = 0.5
"""Least share of an instruction's words it must share with other instructions to be read as
written from a template (a story told once shares only its common words)."""
SAME_TEMPLATE = 0.5
"""Least share of shared words (Jaccard) of an instruction and a group's first one."""
RECURRING = 0.8
"""Least share of a benchmark's tasks that must sit in groups of two or more for its
instructions' groups to count as families."""
LABEL_WORDS = 2
"""Words in a template family's label."""

_WORD = re.compile(r"[a-z][a-z'-]+")
_templates: weakref.WeakKeyDictionary[Store, dict[str, Any]] = weakref.WeakKeyDictionary()
"""Per store and benchmark: the episodes table's change token and each task's template."""


def declared_tools(metadata: dict[str, Any]) -> list[str]:
    """Tool names a ``tools`` list declares (chat-completions, Anthropic or plain names)."""
    tools = metadata.get("tools")
    names = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, str):
            names.append(tool)
        elif isinstance(tool, dict):
            spec = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if isinstance(spec.get("name"), str):
                names.append(spec["name"])
    return sorted(set(names))


def family_of(store: Store, episode: Episode) -> str:
    """``episode``'s family as stored, else ``~<benchmark>`` plus ``[tool,…]`` when its log
    declares its tools."""
    if episode.family:
        return episode.family
    task = store.task(episode.task_id)
    environment = task.environment if task else ""
    tools = declared_tools(episode.metadata) or (declared_tools(task.metadata) if task else [])
    family = f"{INFERRED}{environment}" + (f" [{','.join(tools)}]" if tools else "")
    template = task_templates(store, environment).get(episode.task_id)
    return f"{family} /{template}" if template else family


def task_templates(store: Store, environment: str) -> dict[str, str]:
    """Task id → the label of its instruction's template, for the tasks of ``environment``
    that name no family; empty when the benchmark's instructions do not recur (see the
    module's docstring). Cached per store until episodes are added or removed."""
    token = store.change_token()
    cached = _templates.setdefault(store, {}).get(environment)
    if cached is not None and cached[0] == token:
        return cached[1]
    rows = store.conn.execute(
        "SELECT id, instruction FROM tasks WHERE environment = ? AND family = '' ORDER BY id",
        (environment,),
    ).fetchall()
    labels = group_templates({task_id: instruction for task_id, instruction in rows})
    _templates[store][environment] = (token, labels)
    return labels


def group_templates(instructions: dict[str, str]) -> dict[str, str]:
    """Task id → template label for instructions written from recurring templates (empty
    when they do not recur). Deterministic: groups form in the order of the ids."""
    ordered = {t: _WORD.findall(text.lower())[:TEMPLATE_WORDS] for t, text in instructions.items()}
    words = {t: set(ws) for t, ws in ordered.items()}
    shared = Counter(w for ws in words.values() for w in ws)
    signatures = {t: frozenset(w for w in ws if shared[w] > 1) for t, ws in words.items()}
    groups: list[tuple[frozenset[str], list[str]]] = []
    for task_id in sorted(signatures):
        signature = signatures[task_id]
        if len(signature) < TEMPLATED * len(words[task_id]):
            groups.append((frozenset(), [task_id]))  # a group of its own, joined by none
            continue
        for first, members in groups:
            union = first | signature
            if first and len(first & signature) / len(union) >= SAME_TEMPLATE:
                members.append(task_id)
                break
        else:
            groups.append((signature, [task_id]))
    recurring = sum(len(members) for _, members in groups if len(members) > 1)
    if len(groups) < 2 or recurring < RECURRING * len(signatures):
        return {}
    labels: dict[str, str] = {}
    seen: Counter[str] = Counter()
    for _, members in groups:
        label = _label([words[t] for t in members], ordered[members[0]], shared, len(signatures))
        seen[label] += 1
        label = label if seen[label] == 1 else f"{label}#{seen[label]}"
        labels.update(dict.fromkeys(members, label))
    return labels


def _label(members: list[set[str]], first: list[str], shared: Counter[str], total: int) -> str:
    """The words that set a group apart: most frequent in it, least outside it, earliest in
    its first instruction."""
    inside = Counter(w for ws in members for w in ws)
    outside = total - len(members)

    position = {w: i for i, w in reversed(list(enumerate(first)))}

    def apart(word: str) -> tuple[float, int, str]:
        share_in = inside[word] / len(members)
        share_out = (shared[word] - inside[word]) / outside if outside else 0.0
        return (share_out - share_in, position.get(word, len(first)), word)

    return "·".join(sorted(inside, key=apart)[:LABEL_WORDS])


def short_name(family: str) -> str:
    """What names made from a family (artifact names) use of it: a stored family as it is, an
    inferred one's template label, else its benchmark."""
    if not is_inferred(family):
        return family
    base, _, template = family.partition(" /")
    return template or base[len(INFERRED) :].split(" [", 1)[0]


def is_inferred(family: str) -> bool:
    """Whether ``family`` was inferred (see :func:`family_of`)."""
    return family.startswith(INFERRED)


def episodes_of(store: Store, family: str, where: EpisodeFilter | None = None) -> Iterator[Episode]:
    """Episodes ``where`` selects whose family (stored or inferred) is ``family``."""
    base = vars(where or EpisodeFilter())
    if not is_inferred(family):
        yield from store.iter_episodes(EpisodeFilter(**{**base, "family": family}))
        return
    environment = family[len(INFERRED) :].split(" [", 1)[0]
    unnamed = EpisodeFilter(**{**base, "family": "", "environment": environment})
    yield from (e for e in store.iter_episodes(unnamed) if family_of(store, e) == family)
