"""The Formulating stage: rules grouped by scenario (each exactly once, checked), the active
repository, an evidence appendix every citation links into, versions and diffs."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from textual._slug import TrackedSlugs

from store import (
    Activation,
    AnalysisRun,
    ArtifactVersion,
    Batch,
    Citation,
    Claim,
    Episode,
    Execution,
    Gate,
    GateCheck,
    InterventionSpec,
    LedgerEntry,
    ManualRule,
    Outcome,
    Scope,
    Step,
    Store,
    Task,
)
from tests.admit.test_gates import rule_contract
from workbench.manual.formulate import (
    ManualError,
    RuleGroup,
    check_groups,
    diff,
    export,
    formulate,
    manual_version,
    parse_log_entry,
    slug,
)
from workbench.manual.heuristic import HeuristicFormulator, group_rules, scope_of
from workbench.manual.operations import OPERATIONS, apply

DOOR = "sw:boil:9"
STOVE = "sw:boil:4"
STEPS = {
    DOOR: [
        ("", "This room is called the hallway. A door to the kitchen (that is closed)."),
        ("go to kitchen", "The door is not open."),
        ("open door to kitchen", "The door is now open."),
        ("go to kitchen", "You move to the kitchen."),
    ],
    STOVE: [
        ("", "This room is called the kitchen."),
        ("activate stove", "The stove is now activated."),
        ("focus on water", "You focus on the water."),
    ],
}
RULES = [
    {
        "op": "write_rule",
        "type": "Corrected Error",
        "content": "When 'go to <X>' is rejected with 'The door is not open': open the door to <X> first, then go.",
        "example": "go to kitchen -> The door is not open.\nopen door to kitchen -> The door is now open.",
        "validation_logs": [f"{DOOR}@1-2", "rule_2"],
        "form": {
            "kind": "rule",
            "id": "x",  # the Builder's placeholder: the manual names the form by its rule
            "when_action": "go to (.+)",
            "response": "replace",
            "replacement": "open door to {1}",
        },
    },
    {
        "op": "write_rule",
        "type": "Special Mechanism",
        "content": "In boil tasks: the stove heats only once it is activated.",
        "example": "activate stove -> The stove is now activated.",
        "validation_logs": [STOVE],
    },
    {
        "op": "write_rule",
        "type": "Success Process",
        "content": "boil tasks: activate the stove, then focus on the water.\n1. activate stove\n# 2. focus on water",
        "example": "```\nactivate stove\n```",
        "validation_logs": [f"{STOVE}@1-2"],
    },
    {
        "op": "write_rule",
        "type": "Unsolved Error",
        "content": "The agent sometimes repeats 'look around' without progress.",
        "validation_logs": ["never-imported"],
    },
    {"op": "write_rule", "type": "Useful Helper Method", "content": "Soon deleted: nothing."},
]


def add_episode(store: Store, episode_id: str, success: bool) -> None:
    store.put_batch(Batch(id="b", name="b", kind="run"))
    store.put_task(
        Task(
            id="sw:boil",
            environment="scienceworld",
            family="boil",
            instruction="Your task is to boil water.",
            split="train",
        )
    )
    store.add_episode(
        Episode(
            id=episode_id,
            task_id="sw:boil",
            batch_id="b",
            agent="scripted",
            outcome=Outcome(success=success, score=100.0 if success else 0.0),
        ),
        [
            Step(
                episode_id=episode_id,
                index=index,
                kind="action" if action else "observation",
                action=action,
                observation=observation,
            )
            for index, (action, observation) in enumerate(STEPS[episode_id])
        ],
    )


def add_active_rule(store: Store) -> ArtifactVersion:
    """The closed-door rule, compiled from a spec citing the door episode, gates passed."""
    run = store.add_analysis_run(AnalysisRun(reasoner="heuristic"))

    def claim(text: str, *spans: tuple[int, int]) -> Claim:
        return Claim(
            text=text, citations=[Citation(episode_id=DOOR, start=a, end=b) for a, b in spans]
        )

    spec, _ = store.add_spec(
        InterventionSpec(
            run_id=run.id,
            reasoner="heuristic",
            mechanism="blocked-precondition",
            families=["boil"],
            activation=Activation(trigger=claim("the agent proposes 'go to <X>'", (1, 1))),
            scope=Scope(objective=claim("open the door first", (2, 2))),
            execution=Execution(
                state=claim("nothing persists"), completion=claim("open", (1, 1), (2, 3))
            ),
        )
    )
    version = store.stage_version(
        ArtifactVersion(
            artifact="open-door-first",
            version=1,
            kind="rule",
            contract=rule_contract(),
            spec_id=spec.id,
        )
    )
    store.record_gate(
        version.id, "contract", Gate(passed=True, checks=[GateCheck(name="fires", passed=True)])
    )
    stats = {"fixed": 3, "broken": 0, "regressed": 0, "mcnemar_p": 0.25}
    store.record_gate(version.id, "replay", Gate(passed=True, stats=stats), "active")
    store.put_ledger(
        LedgerEntry(
            version_id=version.id,
            case=DOOR,
            role="correction",
            baseline_success=False,
            candidate_success=True,
        )
    )
    return version


def fill(store: Store) -> None:
    """Two episodes, five rules (one then deleted), one active repository rule."""
    add_episode(store, DOOR, success=False)
    add_episode(store, STOVE, success=True)
    apply(store, OPERATIONS.validate_python(RULES), "builder:heuristic")
    apply(store, OPERATIONS.validate_python([{"op": "delete_rule", "rule_id": "rule_5"}]), "human")
    add_active_rule(store)


@pytest.fixture
def filled(store: Store) -> Store:
    fill(store)
    return store


def headings(markdown: str) -> list[tuple[int, str]]:
    """``(level, plain text)`` of every heading outside fenced blocks."""
    found, fence = [], None
    for line in markdown.splitlines():
        opening = re.match(r"^(`{3,})", line)
        if opening and (fence is None or opening.group(1) == fence):
            fence = None if fence else opening.group(1)
            continue
        heading = re.match(r"^(#{1,6}) (.+)$", line)
        if fence is None and heading:
            found.append((len(heading.group(1)), re.sub(r"\\(.)", r"\1", heading.group(2))))
    return found


def anchors(markdown: str) -> set[str]:
    """Every heading's anchor as Textual's Markdown widget computes it."""
    slugs = TrackedSlugs()
    return {slugs.slug(text) for _, text in headings(markdown)}


def links(markdown: str) -> list[str]:
    return re.findall(r"\]\(#([^)]+)\)", markdown)


def section(markdown: str, title: str) -> str:
    """The text under the heading ``title`` up to the next heading of its level or above."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if re.sub(r"\\(.)", r"\1", line) == title)
    level = len(title.split(" ")[0])
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(rf"^#{{1,{level}}} ", lines[i])),
        len(lines),
    )
    return "\n".join(lines[start + 1 : end])


# -- the manual ---------------------------------------------------------------------------------


def test_every_rule_appears_exactly_once_in_a_group_with_an_introduction(filled: Store):
    manual = formulate(filled, HeuristicFormulator())
    assert manual.version == 1 and manual.reasoner == "heuristic"
    rule_headings = Counter(
        re.match(r"rule_\d+", text).group(0)
        for level, text in headings(manual.markdown)
        if level == 3 and re.match(r"rule_\d+ \(", text)
    )
    assert rule_headings == Counter({"rule_1": 1, "rule_2": 1, "rule_3": 1, "rule_4": 1})
    assert sorted(manual.rules) == ["rule_1", "rule_2", "rule_3", "rule_4"]  # not the deleted
    assert "Soon deleted" not in manual.markdown
    groups = [text for level, text in headings(manual.markdown) if level == 2][1:-2]
    # 'In boil tasks' and 'boil tasks' are one scenario; the rule without scope goes by type
    assert groups == [
        "1. When 'go to <X>' is rejected with 'The door is not open'",
        "2. In boil tasks",
        "3. Unsolved Error rules",
    ]
    boil = section(manual.markdown, "## 2. In boil tasks")
    introduction = boil.strip().split("\n\n")[0]
    assert "1 Special Mechanism" in introduction and "1 Success Process" in introduction
    assert "The stove heats only once it is activated (rule_2)" in introduction
    assert boil.index("### rule_2") < boil.index("### rule_3")
    rule_3 = section(manual.markdown, "### rule_3 (Success Process)")
    assert "**Content.** boil tasks: activate the stove" in rule_3
    assert "\\# 2. focus on water" in rule_3 and "1\\. activate stove" in rule_3  # no new blocks
    assert "````text\n```\nactivate stove\n```\n````" in rule_3  # the example, fenced verbatim
    rule_1 = section(manual.markdown, "### rule_1 (Corrected Error)")
    assert "`go to (.+)`" in rule_1 and "\\<X\\>" in rule_1
    assert "**Executable form.** rule `rule_1`:" in rule_1
    contents = section(manual.markdown, "## Contents")
    assert contents.count("](#") == 5


def test_every_citation_is_a_working_link_into_the_evidence_appendix(filled: Store):
    markdown = formulate(filled, HeuristicFormulator()).markdown
    targets = links(markdown)
    assert targets and set(targets) <= anchors(markdown)
    rule_1 = section(markdown, "### rule_1 (Corrected Error)")
    assert f"[{DOOR}@1-2](#{slug(DOOR + '@1-2')})" in rule_1
    assert "[rule_2](#rule_2-special-mechanism)" in rule_1
    step_span = section(markdown, f"### {DOOR}@1-2")
    assert "`go to kitchen` → The door is not open." in step_span
    assert "`open door to kitchen` → The door is now open." in step_span
    assert "hallway" not in step_span  # step 0 is not cited
    assert "Task: Your task is to boil water." in step_span
    whole = section(markdown, f"### {STOVE}")
    assert f"Episode `{STOVE}` (boil, train, scripted), 3 steps: succeeded, score 100." in whole
    assert "is not in this database" in section(markdown, "### never-imported")
    # the artifact's spec citations resolve too; each citation has one entry, in citing order
    appendix = [text for level, text in headings(section(markdown, "## Evidence")) if level == 3]
    assert appendix == [
        f"{DOOR}@1-2",
        STOVE,
        f"{STOVE}@1-2",
        "never-imported",
        f"{DOOR}@1",
        f"{DOOR}@2",
        f"{DOOR}@2-3",
    ]


def test_active_artifacts_show_contract_gates_and_evidence(filled: Store):
    markdown = formulate(filled, HeuristicFormulator()).markdown
    artifacts = section(markdown, "## Active repository artifacts")
    assert "### Rules" in artifacts and "### Skills" not in artifacts
    rule = section(markdown, "#### open-door-first v1")
    assert "Open a closed door before walking through it." in rule
    assert "- **Guard.** the door to \\<X\\> is closed" in rule
    assert "compiled from spec 1 (blocked-precondition)" in rule
    assert "- **Contract gate.** passed (1 of 1 checks passed)" in rule
    assert "passed (3 fixed, 0 broken, 0 regressed; exact McNemar p = 0.25)" in rule
    assert "1 correction case (1 fixed)" in rule
    assert f"- activation.trigger: [{DOOR}@1](#" in rule
    assert f"- execution.completion: [{DOOR}@1](#{slug(DOOR + '@1')}), [{DOOR}@2-3](#" in rule


def test_evidence_entries_parse_steps_spans_episodes_and_rules():
    assert parse_log_entry("rule_12") == "rule_12"
    cited = parse_log_entry("demo:boil:9@3-5")
    assert (cited.episode_id, cited.start, cited.end, cited.label) == (
        "demo:boil:9",
        3,
        5,
        "demo:boil:9@3-5",
    )
    assert parse_log_entry("demo:boil:9@4").label == "demo:boil:9@4"
    assert parse_log_entry("demo:boil:9").start is None
    assert parse_log_entry("ep@5-3").episode_id == "ep@5-3"  # not a span: cited as written


# -- the mechanical check ------------------------------------------------------------------------


class Scripted:
    """A Formulator answering with fixed groups (a Formulator for the formulating stage)."""

    name = "scripted"

    def __init__(self, groups: list[RuleGroup]) -> None:
        self.groups = groups

    def group_rules(self, rules: list[ManualRule]) -> list[RuleGroup]:
        return self.groups


def group(title: str, *ids: str, introduction: str = "Why these go together.") -> RuleGroup:
    return RuleGroup(title=title, introduction=introduction, rule_ids=list(ids))


def test_a_grouping_that_drops_or_repeats_a_rule_is_refused(filled: Store):
    dropped = [group("Doors", "rule_1"), group("Boiling", "rule_2", "rule_3")]
    with pytest.raises(ManualError, match=r"scripted grouping .*rule_4 is in no group"):
        formulate(filled, Scripted(dropped))
    repeated = [group("Doors", "rule_1", "rule_2"), group("Boiling", "rule_2", "rule_3", "rule_4")]
    with pytest.raises(ManualError, match=r"rule_2 appears 2 times \(in 'Doors', 'Boiling'\)"):
        formulate(filled, Scripted(repeated))
    assert filled.manuals() == []
    rules = filled.manual_rules()
    invented = [group("All", "rule_1", "rule_2", "rule_3", "rule_4", "rule_5")]
    assert check_groups(rules, invented) == ["rule_5 (in 'All') is not a rule of the rule system"]
    empty = [group("", "rule_1", "rule_2", introduction=" "), group("Rest", "rule_3", "rule_4")]
    assert check_groups(rules, [*empty, group("None")]) == [
        "group 1 has no title",
        "group group 1 has no introduction",
        "group 'None' has no rules",
    ]
    good = [group("Boiling", "rule_3", "rule_2"), group("Everything else", "rule_4", "rule_1")]
    manual = formulate(filled, Scripted(good))
    assert manual.rules == ["rule_3", "rule_2", "rule_4", "rule_1"]
    assert manual.markdown.index("### rule_3") < manual.markdown.index("### rule_2")


def test_nothing_to_formulate_is_a_clear_error(store: Store):
    with pytest.raises(ManualError, match="nothing to formulate"):
        formulate(store, HeuristicFormulator())


def test_a_repository_without_rules_still_makes_a_manual(store: Store):
    add_episode(store, DOOR, success=False)
    add_active_rule(store)
    manual = formulate(store, HeuristicFormulator())
    assert manual.rules == [] and len(manual.artifacts) == 1
    assert set(links(manual.markdown)) <= anchors(manual.markdown)


# -- versions ---------------------------------------------------------------------------------


def test_versions_increment_only_on_change_and_diff_shows_the_change(filled: Store, tmp_path):
    reasoner = HeuristicFormulator()
    first = formulate(filled, reasoner)
    assert formulate(filled, reasoner).version == 1 and len(filled.manuals()) == 1
    update = {
        "op": "update_rule",
        "rule_id": "rule_2",
        "content": "In boil tasks: the stove heats only after 'activate stove'.",
    }
    apply(filled, OPERATIONS.validate_python([update]), "consolidator:heuristic")
    second = formulate(filled, reasoner)
    assert (first.version, second.version) == (1, 2)
    text = diff(filled, 1, 2)
    assert text.startswith("--- manual v1\n+++ manual v2\n")
    assert "-**Content.** In boil tasks: the stove heats only once it is activated." in text
    assert "+**Content.** In boil tasks: the stove heats only after 'activate stove'." in text
    assert diff(filled, 2, 2) == ""
    with pytest.raises(ManualError, match=r"no manual version 7 \(versions 1 to 2\)"):
        diff(filled, 1, 7)
    out = tmp_path / "out" / "manual.md"
    out.parent.mkdir()
    assert export(filled, out).version == 2
    assert out.read_text(encoding="utf-8") == second.markdown
    export(filled, out, version=1)
    assert out.read_text(encoding="utf-8") == first.markdown
    assert [p.name for p in out.parent.iterdir()] == ["manual.md"]  # no temporary left behind


def test_no_manual_yet_is_a_clear_error(store: Store, tmp_path):
    with pytest.raises(ManualError, match="no manual has been formulated yet"):
        manual_version(store)
    with pytest.raises(ManualError, match="no manual has been formulated yet"):
        export(store, tmp_path / "m.md")
    assert not (tmp_path / "m.md").exists()


# -- the heuristic Formulator -----------------------------------------------------------------


def rule(number: int, content: str, type_: str = "Special Phenomenon") -> ManualRule:
    return ManualRule(id=f"rule_{number}", type=type_, content=content)


def test_scopes_ignore_colons_inside_quotes_and_long_sentences():
    assert scope_of("When 'x' fails with 'Error: no': retry.") == "When 'x' fails with 'Error: no'"
    assert scope_of("In the agent's kitchen: look.") == "In the agent's kitchen"
    assert scope_of("No scope here.") == ""
    assert scope_of("word " * 40 + ": then") == ""


def test_heuristic_groups_are_deterministic_and_place_every_rule_once():
    rules = [
        rule(1, "In boil tasks: the stove must be on."),
        rule(2, "Anything goes.", "Unsolved Error"),
        rule(3, "boil tasks : water boils at 100 C."),
        rule(4, "When the door is closed: open it.", "Corrected Error"),
        rule(5, "Also without scope.", "Unsolved Error"),
    ]
    groups = group_rules(rules)
    assert [(g.title, g.rule_ids) for g in groups] == [
        ("In boil tasks", ["rule_1", "rule_3"]),
        ("Unsolved Error rules", ["rule_2", "rule_5"]),
        ("When the door is closed", ["rule_4"]),
    ]
    assert check_groups(rules, groups) == []
    assert group_rules(rules) == groups
    assert "No successful procedure is recorded here yet." in groups[1].introduction
    assert "Open it (rule_4)." in groups[2].introduction
