"""An episode whose id is stored already: present when its content is the same, else a conflict
the import reports and ``--on-conflict rename|replace|skip`` settles — never dropped silently
(it was counted as "already present" and dropped, exit 0)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Span, Store
from tests.bulk_files import bulk_line
from workbench.cli import main
from workbench.ingest import import_paths


def lines(path: Path, *words: str, prefix: str = "run", first: int = 0) -> Path:
    """Episodes ``<prefix>-<first + k>``, the k-th acting with ``words[k]``."""
    path.write_text("".join(bulk_line(prefix, first + k, w) + "\n" for k, w in enumerate(words)))
    return path


def actions(store: Store, episode_id: str) -> list[str]:
    return [step.action for step in store.steps(episode_id)]


def sound(db: str) -> None:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO steps_fts(steps_fts, rank) VALUES ('integrity-check', 1)")
        counted = conn.execute("SELECT sum(n), min(n) FROM episode_counts").fetchone()
        assert counted[0] == conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
        assert counted[1] is None or counted[1] > 0
    finally:
        conn.close()


def test_the_same_episode_in_another_file_is_present_not_a_conflict(store, tmp_path):
    import_paths(store, [lines(tmp_path / "a.jsonl", "look", "take")])
    report = import_paths(store, [lines(tmp_path / "b.jsonl", "look", "take", "open")])
    assert (report.episodes, report.files[0].existing, report.conflicts) == (1, 2, [])


def test_other_content_under_a_stored_id_is_renamed_by_default_and_reported(store, tmp_path):
    import_paths(store, [lines(tmp_path / "a.jsonl", "look", "take")])
    report = import_paths(store, [lines(tmp_path / "b.jsonl", "look", "drop")])
    assert [(p.status, p.episode_id) for p in report.conflicts] == [("renamed", "run-0000001~2")]
    assert report.episodes == 1 and report.files[0].existing == 1
    assert actions(store, "run-0000001") == ["take 1"]
    assert actions(store, "run-0000001~2") == ["drop 1"]
    again = import_paths(store, [lines(tmp_path / "c.jsonl", "drop", prefix="run", first=1)])
    assert again.episodes == 0 and again.conflicts == []  # the renamed copy holds it
    third = import_paths(store, [lines(tmp_path / "d.jsonl", "kick", prefix="run", first=1)])
    assert [p.episode_id for p in third.conflicts] == ["run-0000001~3"]
    sound(store.path)


def test_replace_puts_the_new_content_in_the_stored_ones_place(store, tmp_path):
    import_paths(store, [lines(tmp_path / "a.jsonl", "look", "take")])
    store.add_span(Span(episode_id="run-0000001", start=0, end=0, kind="causal", label="x"))
    report = import_paths(
        store, [lines(tmp_path / "b.jsonl", "look", "drop")], on_conflict="replace"
    )
    assert [(p.status, p.episode_id) for p in report.conflicts] == [("replaced", "run-0000001")]
    assert actions(store, "run-0000001") == ["drop 1"]
    assert store.spans("run-0000001") == []  # the replaced episode's marks went with it
    assert store.count_episodes() == 2
    assert [h.episode_id for h in store.search("drop")] == ["run-0000001"]
    assert store.search("take") == []
    sound(store.path)


def test_skip_keeps_the_stored_episode_and_says_so(store, tmp_path):
    import_paths(store, [lines(tmp_path / "a.jsonl", "look", "take")])
    report = import_paths(store, [lines(tmp_path / "b.jsonl", "look", "drop")], on_conflict="skip")
    assert [(p.status, p.episode_id) for p in report.conflicts] == [("kept", "run-0000001")]
    assert report.episodes == 0 and actions(store, "run-0000001") == ["take 1"]


@pytest.mark.parametrize(
    ("on_conflict", "stored"),
    [
        ("rename", {"run-0000000": ["look 0"], "run-0000000~2": ["kick 0"]}),
        ("replace", {"run-0000000": ["kick 0"]}),
        ("skip", {"run-0000000": ["look 0"]}),
    ],
)
def test_a_repeated_id_within_one_file_is_a_conflict_too(store, tmp_path, on_conflict, stored):
    path = tmp_path / "a.jsonl"
    path.write_text(bulk_line("run", 0, "look") + "\n" + bulk_line("run", 0, "kick") + "\n")
    report = import_paths(store, [path], on_conflict=on_conflict)
    assert len(report.conflicts) == 1
    assert {e.id: actions(store, e.id) for e in store.episodes()} == stored
    sound(store.path)


def test_the_command_reports_conflicts_and_a_dry_run_writes_nothing(db_path, tmp_path):
    runner = CliRunner()
    env = {"WORKBENCH_DB": str(db_path)}
    first = runner.invoke(
        main, ["import", str(lines(tmp_path / "a.jsonl", "look", "take"))], env=env
    )
    assert first.exit_code == 0, first.output
    changed = str(lines(tmp_path / "b.jsonl", "look", "drop"))
    dry = runner.invoke(main, ["import", changed, "--dry-run"], env=env)
    assert dry.exit_code == 0 and "1 conflicting (1 renamed)" in dry.output
    assert "would be stored renamed: run-0000001 as run-0000001~2" in dry.output
    with Store(db_path) as store:
        assert store.count_episodes() == 2
    done = runner.invoke(main, ["import", changed, "--on-conflict", "skip"], env=env)
    assert done.exit_code == 0
    assert "conflict: 1 episode(s) had the id of a stored episode with other content" in done.output
    assert "left out, the stored ones kept: run-0000001" in done.output


def test_a_task_id_stored_with_another_instruction_gets_an_id_of_its_own(tmp_path):
    """tau-bench's domains number their tasks alike and their records name no domain: the
    airline task 1 was attached to the retail task 1 (its instruction and expected actions)."""
    import json

    real = Path(__file__).parent.parent / "data" / "real" / "openai-chat"
    record = json.loads((real / "tau-bench-gpt-4o-airline.json").read_text())[0]
    other = json.loads(json.dumps(record))
    other["info"]["task"]["instruction"] = "You are someone else, with another errand."
    (tmp_path / "a.json").write_text(json.dumps([record]))
    (tmp_path / "b.json").write_text(json.dumps([other]))
    db = tmp_path / "t.db"
    with Store(db) as store:
        import_paths(store, [tmp_path / "a.json"])
        import_paths(store, [tmp_path / "b.json"])
        import_paths(store, [tmp_path / "b.json"])  # the same file again: nothing new
        tasks = {
            t.id: t.instruction
            for t in (store.task(e.task_id) for e in store.iter_episodes())
            if t is not None
        }
        assert len(list(store.iter_episodes())) == 2
    first = record["info"]["task"]["instruction"]
    [mine] = [i for i in tasks if i != "openai-chat:1"]
    assert tasks["openai-chat:1"] == first and tasks[mine] == other["info"]["task"]["instruction"]
    assert mine.startswith("openai-chat:1~") and len(mine) == len("openai-chat:1~") + 8
    sound(str(db))
