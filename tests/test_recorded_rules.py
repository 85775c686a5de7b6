"""Compile and admit without a simulator: a tau-bench results file (imported logs) →
analyze → compile stages a Rule checked on the recorded trajectories → it stays staged and
"not replayed" until admitted explicitly with `repo admit --without-replay` → shown as such in
`repo ls`, `repo show`, RULES.md and the manual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Store
from tests.ingest.hostile import HOSTILE_NAME, HOSTILE_TEXT
from tests.written_markdown import live_html, raw_unsafe, rendered_text
from workbench.admit.evidence import not_replayed, recorded_only
from workbench.cli import main

DATA = Path(__file__).parent / "data" / "openai-chat" / "tau_results.json"


def cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.fixture
def compiled(tmp_path: Path) -> Path:
    db = tmp_path / "workbench.db"
    cli(db, "import", str(DATA))
    cli(db, "analyze")
    out = cli(db, "compile")
    assert "recorded-divergence" in out
    assert "not replayed" in out and "--without-replay" in out
    return db


def test_imported_clusters_stage_a_rule_checked_on_recorded_steps(compiled: Path) -> None:
    with Store(compiled) as store:
        (version,) = store.versions()
        assert version.kind == "rule" and version.status == "staged"
        assert recorded_only(store, version)
        contract = version.contract
        assert len(contract["positive"]) == 3 and len(contract["negative"]) == 3
        failed = {
            store.episode(c["citation"]["episode_id"]).outcome.success for c in contract["positive"]
        }
        succeeded = {
            store.episode(c["citation"]["episode_id"]).outcome.success for c in contract["negative"]
        }
        assert failed == {False} and succeeded == {True}
    assert "not replayed (imported)" in cli(compiled, "repo", "ls")


def test_replay_leaves_it_staged_and_explicit_admission_marks_it(
    compiled: Path, tmp_path: Path
) -> None:
    out = cli(compiled, "replay")
    assert "fires on all 3" in out and "silent on all 3" in out
    assert "repo admit 1 --without-replay" in out
    with Store(compiled) as store:
        assert store.version(1).status == "staged"
    out = cli(compiled, "repo", "admit", "1", "--without-replay")
    assert "active" in out and "not replayed" in out
    with Store(compiled) as store:
        version = store.version(1)
        assert version.status == "active" and not_replayed(version)
        assert version.contract_gate.passed
    assert "not replayed" in cli(compiled, "repo", "ls")
    assert "not replayed" in cli(compiled, "repo", "show", "1")
    cli(compiled, "repo", "export", str(tmp_path / "out"))
    rules = (tmp_path / "out" / "RULES.md").read_text()
    assert "Not replayed" in rules and "get-reservation-details-before-cancel-reservation" in rules
    assert "manual v1" in cli(compiled, "manual", "formulate")


def test_repo_show_prints_the_form_the_agent_runs_not_the_stored_placeholders(
    compiled: Path,
) -> None:
    """The compiler stores the form with a placeholder name and no description (the engine
    names it after the artifact when it runs it): `repo show` prints the form as it runs,
    field by field, as the Repository screen shows it."""
    with Store(compiled) as store:
        form = store.version(1).contract["form"]
    assert (form["id"], form["description"]) == ("x", "")
    out = cli(compiled, "repo", "show", "1")
    shown = out[out.index("executable form:") : out.index("contract gate:")]
    assert shown.startswith("executable form: when_action (?s:")
    assert "unless_evidence" in shown and shown.endswith("response veto ")
    assert "'x'" not in out and "'description': ''" not in out


def hostile_results(path: Path) -> Path:
    """The tau-bench results with hostile text in a tool's name (its calls, results and the
    expected actions), a call's argument and result, and the task's instruction."""
    text = DATA.read_text()
    for value, hostile in (
        ("get_reservation_details", "get_details" + HOSTILE_NAME),
        ("ZFA04Y", "ZFA04Y" + HOSTILE_TEXT),
        ("You are Mia Li.", "You are Mia Li. " + HOSTILE_TEXT),
    ):
        text = text.replace(value, json.dumps(hostile)[1:-1])
    path.write_text(text)
    return path


def test_hostile_text_of_an_imported_log_reaches_the_exported_markdown_shown_and_inert(
    tmp_path: Path,
) -> None:
    db = tmp_path / "workbench.db"
    cli(db, "import", str(hostile_results(tmp_path / "results.json")))
    cli(db, "analyze")
    cli(db, "compile")
    cli(db, "repo", "admit", "1", "--without-replay")
    cli(db, "repo", "export", str(tmp_path / "repo"))
    cli(db, "manual", "formulate")
    cli(db, "manual", "export", "--out", str(tmp_path / "manual.md"))
    written = [*sorted((tmp_path / "repo").rglob("*.md")), tmp_path / "manual.md"]
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert not raw_unsafe(text), (path, raw_unsafe(text))
        assert not live_html(text), (path, live_html(text))
    rules = rendered_text((tmp_path / "repo" / "RULES.md").read_text())
    assert (
        "get_details_\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07\\x9b31m<script>x</script>\\u202e_x" in rules
    )
    manual = rendered_text((tmp_path / "manual.md").read_text())
    shown = "\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07\\x9b31m<img src=x onerror=alert(1)>"
    assert f"You are Mia Li. {shown}<script>alert(1)</script>\\u202e" in manual  # the task
    assert f"ZFA04Y{shown}" in manual  # the argument, in rules and the evidence's steps


def test_admitting_again_is_refused(compiled: Path) -> None:
    cli(compiled, "repo", "admit", "1", "--without-replay")
    result = CliRunner().invoke(
        main, ["--db", str(compiled), "repo", "admit", "1", "--without-replay"]
    )
    assert result.exit_code != 0 and "only staged versions" in result.output


def test_a_failure_without_a_success_is_deferred_with_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "workbench.db"
    only_failures = tmp_path / "failures.json"

    records = [r for r in json.loads(DATA.read_text()) if r["reward"] == 0.0]
    for record in records:  # no expected actions either: nothing to contrast the run with
        del record["info"]["task"]["actions"]
    only_failures.write_text(json.dumps(records))
    cli(db, "import", str(only_failures))
    cli(db, "analyze")
    with Store(db) as store:
        clusters = store.clusters(store.analysis_runs()[0].id)
    assert clusters and all(c.status == "deferred" for c in clusters)
    assert all(c.reason for c in clusters)


def test_a_failure_without_a_success_is_contrasted_with_its_expected_actions(
    tmp_path: Path,
) -> None:
    """With no successful run, the task's expected actions (tau-bench's ``actions``) are what
    the failure is contrasted with — as a partial script: its state changes and their
    arguments, the lookups it lists left aside — and its cluster is supported."""
    db = tmp_path / "workbench.db"
    only_failures = tmp_path / "failures.json"
    records = [r for r in json.loads(DATA.read_text()) if r["reward"] == 0.0]
    only_failures.write_text(json.dumps(records))
    cli(db, "import", str(only_failures))
    cli(db, "analyze")
    with Store(db) as store:
        clusters = store.clusters(store.analysis_runs()[0].id)
    assert clusters and all(c.status == "supported" for c in clusters)
    assert all(c.trigger.startswith("cancel_reservation(") for c in clusters)
    assert all(c.trigger.endswith("| unexpected change") for c in clusters)
    assert all(c.correction.startswith("cancel_reservation(") for c in clusters)


def test_tau_bench_results_keep_the_goal_and_expected_actions(tmp_path: Path) -> None:
    db = tmp_path / "workbench.db"
    cli(db, "import", str(DATA))
    with Store(db) as store:
        episode = store.episodes()[0]
        task = store.task(episode.task_id)
        calls = [s.action for s in store.steps(episode.id) if s.kind == "tool_call"]
    assert task.instruction.startswith("You are Mia Li.")
    reference = task.metadata["reference_actions"]
    assert "expected_outputs" not in task.metadata  # (these tasks expect no output)
    assert reference[0] == 'get_reservation_details({"reservation_id": "ZFA04Y"})'
    assert reference[1] in calls  # the same shape as the stored tool-call actions


def test_the_detail_pane_indents_arguments_and_the_header_shows_the_reference() -> None:
    from store import Task
    from tui.screens.trajectory import reference_lines
    from tui.widgets.step_detail import pretty_action

    assert pretty_action('f({"a": 1})') == 'f({\n  "a": 1\n})'
    assert pretty_action("ls -la") == "ls -la"
    assert pretty_action("f({broken") == "f({broken"
    task = Task(
        id="t", environment="e", instruction="goal", metadata={"reference_actions": ["a()", "b()"]}
    )
    assert "expected: a() → b()" in reference_lines(task).plain


SAMPLES = Path(__file__).parent / "data"


def test_the_samples_go_from_import_to_a_manual_without_a_simulator(tmp_path: Path) -> None:
    db = tmp_path / "workbench.db"
    report = SAMPLES / "swebench-report" / "report.json"
    cli(db, "import", str(SAMPLES / "mini-swe-agent"), "--results", str(report))
    cli(db, "import", str(SAMPLES / "openai-chat" / "tools.jsonl"))
    cli(db, "analyze")
    out = cli(db, "compile")
    assert "not compiled (deferred by the analysis)" in out
    assert "import a successful run of the same task" in out
    with Store(db) as store:
        failed = next(e for e in store.episodes() if e.outcome.success is False)
    labels = tmp_path / "labels.jsonl"
    label = {"episode": failed.id, "start": 1, "end": 1, "kind": "causal", "author": "ana"}
    label |= {"label": "edits before reading", "note": "open the file first"}
    labels.write_text(json.dumps(label) + "\n")
    cli(db, "spans", "import", str(labels))
    out = cli(db, "manual", "formulate")
    assert "manual v1" in out
    cli(db, "manual", "export", "--out", str(tmp_path / "manual.md"))
    manual = (tmp_path / "manual.md").read_text()
    assert "edits before reading: open the file first" in manual
    assert "Unsolved Error" in manual
    again = cli(db, "manual", "formulate")  # nothing new: the same manual, no rule twice
    assert "unchanged" in again
    with Store(db) as store:
        contents = [r.content for r in store.manual_rules()]
    assert len(contents) == len(set(contents))


def test_swe_bench_task_instances_give_each_task_its_gold_patch(tmp_path: Path) -> None:
    db = tmp_path / "workbench.db"
    instances = SAMPLES / "swebench-report" / "instances.jsonl"
    cli(db, "import", str(SAMPLES / "mini-swe-agent"), "--results", str(instances))
    with Store(db) as store:
        task = store.task("swe-bench:sympy__sympy-20590")
        episodes = store.episodes()
    assert task.metadata["reference"]["patch"].startswith(
        "diff --git a/sympy/core/_print_helpers.py"
    )
    assert task.metadata["reference"]["FAIL_TO_PASS"] == '["test_immutable"]'
    assert all(e.outcome.success is None for e in episodes)  # instances say nothing of outcomes


def test_a_tau_bench_tasks_outputs_are_kept_as_what_its_replies_had_to_say(tmp_path: Path) -> None:
    """``info.task.outputs`` (what the agent's replies must say: a count, a price) reach the
    task, where the analysis reads them; they were left in the episode's metadata."""
    db = tmp_path / "workbench.db"
    record = json.loads(DATA.read_text())[0]
    record["info"]["task"]["outputs"] = ["10", 481.5]
    log = tmp_path / "with-outputs.json"
    log.write_text(json.dumps([record]))
    cli(db, "import", str(log))
    with Store(db) as store:
        task = store.task(store.episodes()[0].task_id)
    assert task.metadata["expected_outputs"] == ["10", "481.5"]
