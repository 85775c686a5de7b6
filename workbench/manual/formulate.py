"""The Formulating stage of AutoManual: the rule system and the active repository compiled
into one versioned Markdown manual.

The :class:`Formulator` groups the rules by the scenario they target and writes an
introduction per group; whatever the backend, the grouping is checked mechanically before
anything is rendered: every rule of the rule system appears in exactly one group. The manual
then has a table of contents, one section per group (its introduction, then each rule with
its id, type, content, example and validation log), a section for the active artifacts of the
repository grouped by kind (description, contract summary, gate results, cited evidence) and
an evidence appendix: every cited episode or step span gets its own heading there, with the
steps' actions and observations, so every citation is an in-document link.

Anchors are the headings' slugs as GitHub and Textual compute them (lowercase, punctuation
dropped, spaces to dashes, ``-1``, ``-2``... for repeats), assigned in document order.
"""

from __future__ import annotations

import difflib
import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from store import (
    RULE_TYPES,
    SCHEMA_ORDER,
    ArtifactVersion,
    Citation,
    Episode,
    Gate,
    Manual,
    ManualRule,
    Step,
    Store,
)
from workbench.compile.specs import claims_of
from workbench.escapes import shown
from workbench.markdown import code_span, escaped, fenced, prose, write_atomically


class RuleGroup(BaseModel):
    """One chapter of the manual: the rules that target one scenario."""

    model_config = ConfigDict(extra="forbid")

    title: str
    """The scenario the rules target, in a few words."""
    introduction: str
    """The group's key points and the principles that govern the scenario."""
    rule_ids: list[str]
    """The group's rules, in reading order."""


class Formulator(Protocol):
    """Groups the rule system into the manual's chapters. Backends:
    :class:`~workbench.manual.heuristic.HeuristicFormulator` (offline) and
    :class:`~workbench.manual.openai.OpenAIFormulator` (any OpenAI-compatible endpoint)."""

    name: str
    """Recorded on the manual (its ``reasoner``) and named in its errors."""

    def group_rules(self, rules: list[ManualRule]) -> list[RuleGroup]:
        """Group ``rules`` by the scenario they target, each group with a title and an
        introduction summarising its key points. Every rule must appear in exactly one
        group (the formulating stage checks)."""
        ...


class ManualError(ValueError):
    """A manual that cannot be formulated, found or written (the message says why)."""


# -- the mechanical check ---------------------------------------------------------------------


def check_groups(rules: Sequence[ManualRule], groups: Sequence[RuleGroup]) -> list[str]:
    """What keeps ``groups`` from placing every rule of ``rules`` exactly once (empty when
    nothing does): a rule in no group, a rule listed twice, an id that is not a rule, a group
    without title, introduction or rules."""
    problems: list[str] = []
    placed: dict[str, list[str]] = {}
    for position, group in enumerate(groups, start=1):
        name = repr(group.title.strip()) if group.title.strip() else f"group {position}"
        if not group.title.strip():
            problems.append(f"group {position} has no title")
        if not group.introduction.strip():
            problems.append(f"group {name} has no introduction")
        if not group.rule_ids:
            problems.append(f"group {name} has no rules")
        for rule_id in group.rule_ids:
            placed.setdefault(rule_id, []).append(name)
    known = {rule.id for rule in rules}
    for rule_id, names in placed.items():
        if rule_id not in known:
            problems.append(f"{rule_id} (in {', '.join(names)}) is not a rule of the rule system")
        elif len(names) > 1:
            problems.append(f"{rule_id} appears {len(names)} times (in {', '.join(names)})")
    problems += [f"{rule.id} is in no group" for rule in rules if rule.id not in placed]
    return problems


# -- formulation -----------------------------------------------------------------------------


def formulate(store: Store, formulator: Formulator) -> Manual:
    """Formulate the current rules and active artifacts into the next manual version. Rules
    the analyses and human spans of imported logs give are written first
    (:func:`~workbench.manual.recorded.learn_from_records`).

    When the Markdown comes out identical to the latest version's, that version is returned
    and nothing is stored.

    Raises:
        ManualError: there is nothing to formulate, or the formulator's grouping does not place
            every rule exactly once (the message names each rule concerned).
        workbench.llm.client.ModelError: the model's call failed, or its grouping still failed
            the check after one correction.
    """
    from workbench.manual.recorded import learn_from_records

    learn_from_records(store)
    rules = store.manual_rules()
    versions = store.versions(status="active")
    if not rules and not versions:
        raise ManualError(
            "nothing to formulate: there are no rules and no active artifacts — build rules "
            "with `workbench manual build` (needs a simulator), or import logs and run "
            "`workbench analyze` (or import span labels with `workbench spans import`)"
        )
    groups = formulator.group_rules(rules) if rules else []
    problems = check_groups(rules, groups)
    if problems:
        raise ManualError(
            f"the {formulator.name} grouping does not place every rule exactly once: "
            + "; ".join(problems)
        )
    markdown = render(store, rules, groups, versions, formulator.name)
    manual = Manual(
        version=1,
        markdown=markdown,
        rules=[rule_id for group in groups for rule_id in group.rule_ids],
        artifacts=[v.id for v in versions if v.id is not None],
        reasoner=formulator.name,
    )
    with store.transaction():
        existing = store.manuals()
        if existing and existing[-1].markdown == markdown:
            return existing[-1]
        return store.add_manual(manual)


def manual_version(store: Store, version: int | None = None) -> Manual:
    """The manual of ``version`` (the latest when ``None``).

    Raises:
        ManualError: no manual was formulated yet, or there is no such version.
    """
    manuals = store.manuals()
    if not manuals:
        raise ManualError("no manual has been formulated yet")
    if version is None:
        return manuals[-1]
    found = next((m for m in manuals if m.version == version), None)
    if found is None:
        raise ManualError(f"no manual version {version} (versions 1 to {manuals[-1].version})")
    return found


def diff(store: Store, v1: int, v2: int) -> str:
    """The unified diff from manual version ``v1`` to ``v2`` (empty when they are equal).

    Raises:
        ManualError: either version does not exist.
    """
    old, new = manual_version(store, v1), manual_version(store, v2)
    return "".join(
        difflib.unified_diff(
            old.markdown.splitlines(keepends=True),
            new.markdown.splitlines(keepends=True),
            fromfile=f"manual v{v1}",
            tofile=f"manual v{v2}",
        )
    )


def export(store: Store, out: Path, version: int | None = None) -> Manual:
    """Write a manual version (the latest by default) to ``out``, replacing the file whole
    (a temporary file renamed into place: never half-written).

    Control characters are shown (``\\x1b``) even in a manual formulated before the rendering
    showed them itself.

    Raises:
        ManualError: no such manual.
        OSError: the file cannot be written (its folder is missing, say).
    """
    manual = manual_version(store, version)
    write_atomically(out, shown(manual.markdown), parents=False)
    return manual


# -- the document: headings with anchors, links resolved after -------------------------------

_LINK = re.compile("\x00([^\x00]+)\x00")
_DROPPED = re.compile(f"[{re.escape(string.punctuation.replace('-', '').replace('_', ''))}]")


def slug(text: str) -> str:
    """A heading's anchor as GitHub and Textual make it (before numbering repeats)."""
    return re.sub(r"\s", "-", _DROPPED.sub("", text.strip().lower()))


class _Document:
    """Markdown lines and headings; a link may name a heading written later (its anchor is
    only known once every heading before it is)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._headings: list[tuple[str, str | None]] = []

    def heading(self, level: int, text: str, key: str | None = None) -> None:
        """A heading of plain ``text``; ``key`` names it for :meth:`link`."""
        self._headings.append((shown(" ".join(text.split())), key))  # as it is shown
        self.lines += [f"{'#' * level} {escaped(text)}", ""]

    def add(self, *lines: str) -> None:
        self.lines += lines

    @staticmethod
    def link(text: str, key: str) -> str:
        """``[text](#anchor)`` of the heading named ``key``."""
        return f"[{escaped(text)}](#\x00{key}\x00)"

    def markdown(self) -> str:
        used: Counter[str] = Counter()
        anchors: dict[str, str] = {}
        for text, key in self._headings:
            base = slug(text)
            anchor = f"{base}-{used[base]}" if used[base] else base
            used[base] += 1
            if key is not None:
                anchors[key] = anchor
        text = "\n".join(self.lines).rstrip() + "\n"
        return _LINK.sub(lambda m: anchors[m.group(1)], text)


# -- citations ---------------------------------------------------------------------------------

_STEP_CITATION = re.compile(r"^(?P<episode>.+)@(?P<start>\d+)(?:-(?P<end>\d+))?$")
_RULE_ID = re.compile(r"^rule_\d+$")


@dataclass(frozen=True)
class _Cited:
    """Something the manual cites: a whole episode or a span of its steps."""

    episode_id: str
    start: int | None = None
    end: int | None = None

    @property
    def label(self) -> str:
        """``episode``, ``episode@start`` or ``episode@start-end``."""
        if self.start is None or self.end is None:
            return self.episode_id
        return Citation(episode_id=self.episode_id, start=self.start, end=self.end).label()


def parse_log_entry(entry: str) -> _Cited | str:
    """A validation-log entry as a citation (``episode`` or ``episode@start[-end]``), or the
    rule id it names."""
    entry = entry.strip()
    if _RULE_ID.match(entry):
        return entry
    found = _STEP_CITATION.match(entry)
    if found and int(found["start"]) <= int(found["end"] or found["start"]):
        start = int(found["start"])
        return _Cited(found["episode"], start, int(found["end"] or start))
    return _Cited(entry)


class _Evidence:
    """The citations of the manual, in the order they are first cited."""

    def __init__(self) -> None:
        self.cited: dict[str, _Cited] = {}

    def link(self, cited: _Cited) -> str:
        self.cited.setdefault(cited.label, cited)
        return _Document.link(cited.label, f"evidence:{cited.label}")


# -- rendering ---------------------------------------------------------------------------------

TITLE = "Manual"
ARTIFACTS_TITLE = "Active repository artifacts"
EVIDENCE_TITLE = "Evidence"
KIND_TITLES = {"rule": "Rules", "skill": "Skills", "subagent": "Subagents"}
CONTRACT_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "rule": (("activation", "When"), ("guard", "Guard"), ("response", "Response")),
    "skill": (
        ("applicability", "When to use"),
        ("inputs", "Inputs"),
        ("procedure", "Procedure"),
        ("recovery", "If a step fails"),
        ("expected_result", "Expected result"),
    ),
    "subagent": (
        ("invocation", "Invoke when"),
        ("input_schema", "Inputs"),
        ("owned_state", "Owns"),
        ("tools", "Tools"),
        ("success", "Succeeds when"),
        ("failure", "Fails when"),
    ),
}
"""The contract fields each kind's summary shows, with their labels."""
MAX_SPAN_STEPS = 8
"""Steps of one cited span shown in the appendix (the rest are counted)."""
OBSERVATION_CHARS = 300
INSTRUCTION_CHARS = 300


def render(
    store: Store,
    rules: Sequence[ManualRule],
    groups: Sequence[RuleGroup],
    versions: Sequence[ArtifactVersion],
    formulator: str,
) -> str:
    """The manual's Markdown: deterministic for the same records (no dates, no ids that
    change between formulations)."""
    document, evidence = _Document(), _Evidence()
    by_id = {rule.id: rule for rule in rules}
    document.heading(1, TITLE)
    document.add(_overview(rules, groups, versions, formulator), "")
    document.heading(2, "Contents")
    for number, group in enumerate(groups, start=1):
        count = f"{len(group.rule_ids)} rule{'s' if len(group.rule_ids) != 1 else ''}"
        document.add(f"- {document.link(_group_title(number, group), f'group:{number}')} ({count})")
    document.add(f"- {document.link(ARTIFACTS_TITLE, 'artifacts')} ({len(versions)})")
    document.add(f"- {document.link(EVIDENCE_TITLE, 'evidence')}", "")
    for number, group in enumerate(groups, start=1):
        document.heading(2, _group_title(number, group), f"group:{number}")
        document.add(prose(group.introduction), "")
        for rule_id in group.rule_ids:
            _rule(document, evidence, by_id[rule_id], by_id)
    _artifacts(document, evidence, store, versions)
    _appendix(document, evidence, store)
    return document.markdown()


def _overview(
    rules: Sequence[ManualRule],
    groups: Sequence[RuleGroup],
    versions: Sequence[ArtifactVersion],
    formulator: str,
) -> str:
    types = Counter(rule.type for rule in rules)
    mix = ", ".join(f"{types[kind]} {kind}" for kind in RULE_TYPES if types[kind])
    kinds = Counter(v.kind for v in versions)
    active = ", ".join(
        f"{kinds[k]} {k}{'s' if kinds[k] != 1 else ''}" for k in SCHEMA_ORDER if kinds[k]
    )
    return (
        f"Formulated by {code_span(formulator)}"
        f" from {len(rules)} rule{'s' if len(rules) != 1 else ''}"
        f" in {len(groups)} group{'s' if len(groups) != 1 else ''}"
        + (f" ({mix})" if mix else "")
        + f" and {len(versions)} active repository artifact{'s' if len(versions) != 1 else ''}"
        + (f" ({active})" if active else "")
        + ". Each rule appears once; every citation links to the evidence at the end."
    )


def _group_title(number: int, group: RuleGroup) -> str:
    return f"{number}. {' '.join(group.title.split())}"


def _rule(
    document: _Document, evidence: _Evidence, rule: ManualRule, by_id: dict[str, ManualRule]
) -> None:
    document.heading(3, f"{rule.id} ({rule.type})", f"rule:{rule.id}")
    document.add(f"**Content.** {prose(rule.content)}", "")
    if rule.example.strip():
        document.add("**Example.**", "", fenced(rule.example), "")
    if rule.form:
        document.add(f"**Executable form.** {_form(rule.form, rule.id)}", "")
    logs = [_log_entry(document, evidence, entry, by_id) for entry in rule.validation_logs]
    document.add(f"**Validation log.** {', '.join(logs) if logs else 'none yet'}", "")


def _form(form: dict[str, Any], rule_id: str) -> str:
    """A rule's executable form in one line, named by the rule (the form's own id is a
    placeholder until the build loop runs it)."""
    parts = [
        f"{escaped(str(key))} {code_span(str(value))}"
        for key, value in form.items()
        if key not in ("kind", "id") and value not in ("", None, [], {})
    ]
    head = f"{escaped(str(form.get('kind', 'rule')))} {code_span(rule_id)}"
    return head + (": " + "; ".join(parts) if parts else "")


def _log_entry(
    document: _Document, evidence: _Evidence, entry: str, by_id: dict[str, ManualRule]
) -> str:
    parsed = parse_log_entry(entry)
    if isinstance(parsed, _Cited):
        return evidence.link(parsed)
    if parsed in by_id:
        return document.link(parsed, f"rule:{parsed}")
    return f"{escaped(parsed)} (no longer in the rule system)"


# -- the active repository ---------------------------------------------------------------------


def _artifacts(
    document: _Document, evidence: _Evidence, store: Store, versions: Sequence[ArtifactVersion]
) -> None:
    document.heading(2, ARTIFACTS_TITLE, "artifacts")
    if not versions:
        document.add("No artifact of the repository is active.", "")
        return
    document.add(
        "Artifacts compiled from failure clusters and admitted by their contract and replay "
        "gates, by kind.",
        "",
    )
    for kind in SCHEMA_ORDER:
        of_kind = [v for v in versions if v.kind == kind]
        if not of_kind:
            continue
        document.heading(3, KIND_TITLES[kind])
        for version in of_kind:
            _artifact(document, evidence, store, version)


def _artifact(
    document: _Document, evidence: _Evidence, store: Store, version: ArtifactVersion
) -> None:
    contract = version.contract
    document.heading(4, f"{version.artifact} v{version.version}")
    document.add(prose(str(contract.get("description", ""))) or "(no description)", "")
    for field, label in CONTRACT_FIELDS[version.kind]:
        value = _value(contract.get(field))
        if value:
            document.add(f"- **{label}.** {value}")
    document.add(f"- **Origin.** {_origin(store, version)}")
    document.add(f"- **Contract gate.** {_gate(version.contract_gate)}")
    document.add(f"- **Replay gate.** {_gate(version.replay_gate)}")
    ledger = _ledger(store, version)
    if ledger:
        document.add(f"- **Replay cases.** {ledger}")
    document.add("")
    claims = claims_of(store.spec(version.spec_id)) if version.spec_id is not None else []
    cited = [(name, claim.citations) for name, claim in claims if claim.citations]
    if not cited:
        document.add("Evidence: none cited.", "")
        return
    document.add("Evidence:", "")
    for name, citations in cited:
        links = [evidence.link(_Cited(c.episode_id, c.start, c.end)) for c in citations]
        document.add(f"- {escaped(name)}: {', '.join(links)}")
    document.add("")


def _value(value: Any) -> str:
    if isinstance(value, dict):
        names = list((value.get("properties") or {}).keys())
        return ", ".join(code_span(n) for n in names)
    if isinstance(value, list):
        return "; ".join(escaped(str(item)) for item in value if str(item).strip())
    return escaped(str(value)) if value is not None else ""


def _origin(store: Store, version: ArtifactVersion) -> str:
    spec = store.spec(version.spec_id) if version.spec_id is not None else None
    source = (
        f"compiled from spec {spec.id}"
        + (f" ({escaped(spec.mechanism)})" if spec.mechanism else "")
        if spec is not None and version.origin != "hand"
        else "written by hand" + (f", evidence from spec {spec.id}" if spec is not None else "")
    )
    if version.parent is not None:
        parent = store.version(version.parent)
        source += f"; revises v{parent.version}" if parent else ""
    return source


def _gate(gate: Gate | None) -> str:
    if gate is None:
        return "not run"
    if gate.stats.get("not_replayed"):
        return (
            "not replayed — admitted explicitly on its contract gate over recorded (imported) "
            "trajectories; its effect on a live agent was never measured"
        )
    verdict = "passed" if gate.passed else "failed"
    stats = gate.stats
    counts = [f"{stats[k]} {k}" for k in ("fixed", "broken", "regressed") if k in stats]
    parts = ", ".join(counts)
    if "mcnemar_p" in stats:
        parts += f"{'; ' if parts else ''}exact McNemar p = {stats['mcnemar_p']:.3g}"
    if not parts:
        passed = sum(check.passed for check in gate.checks)
        parts = f"{passed} of {len(gate.checks)} checks passed" if gate.checks else ""
    return verdict + (f" ({parts})" if parts else "")


def _ledger(store: Store, version: ArtifactVersion) -> str:
    entries = store.ledger(version.id) if version.id is not None else []
    described = []
    for role in ("correction", "preservation"):
        changes = Counter(e.change for e in entries if e.role == role)
        total = sum(changes.values())
        if total:
            detail = ", ".join(f"{n} {change}" for change, n in sorted(changes.items()))
            described.append(f"{total} {role} case{'s' if total != 1 else ''} ({detail})")
    return "; ".join(described)


# -- the evidence appendix ---------------------------------------------------------------------


def _appendix(document: _Document, evidence: _Evidence, store: Store) -> None:
    document.heading(2, EVIDENCE_TITLE, "evidence")
    if not evidence.cited:
        document.add("Nothing is cited.", "")
        return
    document.add("The episodes and steps the manual cites, in the order they are first cited.", "")
    for label, cited in evidence.cited.items():
        document.heading(3, label, f"evidence:{label}")
        document.add(*_evidence_lines(store, cited), "")


def _evidence_lines(store: Store, cited: _Cited) -> list[str]:
    episode = store.episode(cited.episode_id)
    if episode is None:
        return [f"Episode {code_span(cited.episode_id)} is not in this database."]
    task = store.task(episode.task_id)
    lines = [_episode_line(episode)]
    if task is not None and task.instruction.strip():
        lines += ["", f"Task: {escaped(_clip(task.instruction, INSTRUCTION_CHARS))}"]
    if cited.start is None or cited.end is None:
        return lines
    lines.append("")
    end = cited.end
    shown = min(end, cited.start + MAX_SPAN_STEPS - 1)
    steps = {s.index: s for s in store.steps(cited.episode_id, cited.start, shown + 1)}
    for index in range(cited.start, shown + 1):
        step = steps.get(index)
        lines.append(f"- step {index}: {_step_text(step) if step else 'not in this database'}")
    if end > shown:
        lines.append(f"- … {end - shown} more step{'s' if end - shown != 1 else ''} in the span")
    return lines


def _episode_line(episode: Episode) -> str:
    outcome = episode.outcome
    verdict = {True: "succeeded", False: "failed", None: "no verdict"}[outcome.success]
    score = f", score {outcome.score:g}" if outcome.score is not None else ""
    message = f": {escaped(_clip(outcome.message, 160))}" if outcome.message.strip() else ""
    about = ", ".join(
        part for part in (episode.family, episode.split, episode.agent) if part and part != "other"
    )
    return (
        f"Episode {code_span(episode.id)}"
        + (f" ({escaped(about)})" if about else "")
        + f", {episode.n_steps} steps: {verdict}{score}{message}."
    )


def _step_text(step: Step) -> str:
    action = step.action or step.tool_name or ""
    seen = step.observation or step.content
    head = code_span(action) if action else f"({step.kind})"
    return head + (f" → {escaped(_clip(seen, OBSERVATION_CHARS))}" if seen.strip() else "")


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
