"""Every import says what it did: per file the format, new and present episodes, outcomes and
steps; files that gave nothing, with why; a dry run that writes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Store
from tests.ingest.helpers import write_jsonl
from workbench.cli import main
from workbench.ingest import import_paths, jsonl
from workbench.ingest.imports import MAP_HINT, NothingImported


def chat_run(task: str, reward: float | None, calls: int = 1) -> dict:
    """One OpenAI-chat record: a user turn, ``calls`` tool calls in one message, their results."""
    messages = [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": f"Solve {task}."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{k}",
                    "type": "function",
                    "function": {"name": "calc", "arguments": f'{{"x": {k}}}'},
                }
                for k in range(calls)
            ],
        },
        *({"role": "tool", "tool_call_id": f"c{k}", "content": str(k)} for k in range(calls)),
        {"role": "assistant", "content": "Done."},
    ]
    record = {"task_id": task, "messages": messages}
    if reward is not None:
        record["reward"] = reward
    return record


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Four chat runs: two passed, one failed, one with no verdict (5 + 7 + 9 + 7 steps)."""
    return write_jsonl(
        tmp_path / "runs.jsonl",
        [
            chat_run("t1", 1.0),
            chat_run("t2", 1.0, calls=2),
            chat_run("t3", 0.0, calls=3),
            chat_run("t4", None, calls=2),
        ],
    )


def dump(path: Path) -> list[str]:
    """Every row of the database file, as SQL (read through a connection of its own)."""
    with sqlite3.connect(path) as conn:
        return list(conn.iterdump())


def invoke(db_path: Path, *args: str):
    return CliRunner().invoke(main, list(args), env={"WORKBENCH_DB": str(db_path)})


def test_the_report_counts_outcomes_and_steps_per_file(store, runs):
    report = import_paths(store, [runs])
    [file] = report.files
    assert (file.format, file.status, file.episodes, file.existing) == (
        "openai-chat",
        "imported",
        4,
        0,
    )
    assert (file.succeeded, file.failed, file.unknown) == (2, 1, 1)
    assert file.steps == sum(e.n_steps for e in store.episodes()) == 5 + 7 + 9 + 7
    assert report.failures() == [] and report.preview == []  # (kept for dry runs only)


def test_episodes_already_stored_are_counted_as_present(store, runs, tmp_path):
    import_paths(store, [runs])
    exported = tmp_path / "export.jsonl"
    with open(exported, "w", encoding="utf-8") as handle:
        jsonl.write(store, store.iter_episodes(), handle)
    [file] = import_paths(store, [exported]).files
    assert (file.format, file.episodes, file.existing, file.steps) == ("workbench", 0, 4, 0)
    assert not file.empty


def test_a_folder_lists_what_it_ignored_and_why(store, runs, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    runs.rename(folder / runs.name)
    (folder / "notes.txt").write_text("shopping list\n")
    report = import_paths(store, [folder])
    [ignored] = report.ignored
    assert ignored.path == str(folder / "notes.txt")
    assert "cannot tell the format" in ignored.reason
    assert report.episodes == 4 and report.failures() == []


def test_a_folder_of_unrecognised_files_fails_and_writes_nothing(store, db_path, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.txt").write_text("hello\n")
    (folder / "b.csv").write_text("x,y\n1,2\n")
    with pytest.raises(NothingImported) as caught:
        import_paths(store, [folder])
    assert caught.value.lines == [f"{folder}: no episodes (2 file(s) ignored); {MAP_HINT}"]
    assert store.count_episodes() == 0 and store.batches() == []
    result = invoke(db_path, "import", str(folder))
    assert result.exit_code == 1
    assert f"ignored {folder / 'a.txt'}: cannot tell the format" in result.output
    assert result.output.count("--map") == 1  # one hint, not one per file
    assert "nothing was imported" in result.output


def test_a_named_file_with_no_episodes_fails_naming_it(store, runs, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("[]\n")
    with pytest.raises(NothingImported) as caught:
        import_paths(store, [runs, empty], format="openai-chat")
    assert caught.value.lines == [f"{empty}: no episodes in it (read as openai-chat)"]
    assert store.count_episodes() == 0


def test_every_named_file_that_gave_nothing_is_listed(store, db_path, runs, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("not a log\n")
    blank = tmp_path / "blank.md"
    blank.write_text("# notes\n")
    with pytest.raises(NothingImported) as caught:
        import_paths(store, [junk, runs, blank])
    assert [line.split(": ")[0] for line in caught.value.lines] == [str(junk), str(blank)]
    assert store.count_episodes() == 0
    result = invoke(db_path, "import", str(junk), str(runs), str(blank))
    assert result.exit_code == 1
    assert f"  {junk}: cannot tell the format" in result.output
    assert f"  {blank}: cannot tell the format" in result.output


def test_skip_bad_imports_the_rest_but_still_exits_non_zero(db_path, runs, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("not a log\n")
    result = invoke(db_path, "import", "--skip-bad", str(junk), str(runs))
    assert result.exit_code == 1
    assert f"{runs}: openai-chat: 4 new episode(s); 2 succeeded, 1 failed, 1 unknown" in (
        result.output
    )
    assert f"{junk}: ?: skipped: cannot tell the format" in result.output
    assert "gave no episode" in result.output
    with Store(db_path) as store:
        assert store.count_episodes() == 4


def test_one_bad_named_file_keeps_its_own_error(store, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("not a log\n")
    with pytest.raises(NothingImported) as caught:
        import_paths(store, [junk])
    assert (caught.value.path, caught.value.where) == (str(junk), "")
    assert str(caught.value).startswith(f"{junk}: cannot tell the format")


def test_the_summary_names_format_counts_and_totals(db_path, runs):
    result = invoke(db_path, "import", str(runs))
    assert result.exit_code == 0, result.output
    assert (
        f"{runs}: openai-chat: 4 new episode(s); 2 succeeded, 1 failed, 1 unknown; 28 step(s)"
        in (result.output)
    )
    assert (
        "imported 4 episode(s) (2 succeeded, 1 failed, 1 unknown; 28 step(s)) from 1 file(s)"
        in (result.output)
    )
    again = invoke(db_path, "import", str(runs))
    assert again.exit_code == 0 and f"{runs}: openai-chat: already imported" in again.output


def test_dry_run_shows_three_episodes_and_writes_nothing(db_path, runs):
    Store(db_path).close()
    before = dump(db_path)
    result = invoke(db_path, "import", "--dry-run", str(runs))
    assert result.exit_code == 0, result.output
    assert "would import 4 episode(s)" in result.output
    assert "dry run: nothing was written" in result.output
    assert sum(f"task openai-chat:t{k} " in result.output for k in range(1, 5)) == 3
    assert 'calc({"x": 0})' in result.output
    assert dump(db_path) == before
    real = invoke(db_path, "import", str(runs))
    assert "imported 4 episode(s)" in real.output  # the dry run left no source behind


def test_dry_run_reports_present_episodes_as_present(store, runs):
    import_paths(store, [runs])
    before = store.count_episodes()
    report = import_paths(store, [runs], dry_run=True)
    assert report.dry_run and report.files[0].status == "duplicate"
    assert store.count_episodes() == before


def test_control_sequences_in_file_names_are_not_printed(db_path, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "evil\x1b[31m.txt").write_text("hello\n")
    result = invoke(db_path, "import", str(folder))
    assert result.exit_code == 1
    assert "\x1b" not in result.output
    assert "evil\\x1b[31m.txt" in result.output


def test_a_named_batch_is_stored_and_shown_under_its_name(db_path, runs):
    result = invoke(db_path, "import", str(runs), "--batch", "my-runs")
    assert result.exit_code == 0, result.output
    assert "into batch my-runs" in result.output
    with Store(db_path) as store:
        assert [(b.id, b.name) for b in store.batches()] == [("my-runs", "my-runs")]
        (episode, *_) = store.episodes()
        assert episode.batch_id == "my-runs"
    shown = invoke(db_path, "show", episode.id)
    assert "batch=my-runs" in shown.output


def test_a_detected_file_found_bad_suggests_another_format_or_a_mapping(db_path, tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "x"}]}\n{"messages": oops\n')
    detected = invoke(db_path, "import", str(path))
    assert detected.exit_code == 1
    assert "read as openai-chat, the format detected; another format: --format NAME" in (
        detected.output
    )
    assert "any other log: --map MAPPING.toml" in detected.output
    forced = invoke(db_path, "import", str(path), "--format", "openai-chat")
    assert forced.exit_code == 1 and "--map" not in forced.output  # (the user chose it)
