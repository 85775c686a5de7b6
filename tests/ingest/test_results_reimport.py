"""Importing the same runs again with a results file (or a newer report) updates their outcomes
in place and says how many changed; no episode is stored twice (issue 43, point 4). Episode
ids derive from the trajectory file alone, so the results file does not change them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from store import Store
from workbench.cli import main
from workbench.ingest import import_paths


def outcomes(store: Store) -> dict[str, bool | None]:
    return {e.task_id: e.outcome.success for e in store.episodes()}


def test_a_report_imported_after_the_trajectories_fills_in_their_outcomes(store, data_dir):
    runs = data_dir / "mini-swe-agent"
    report_file = data_dir / "swebench-report" / "report.json"
    first = import_paths(store, [runs])
    assert first.episodes == 2 and set(outcomes(store).values()) == {None}
    second = import_paths(store, [runs], results=report_file)
    assert (second.episodes, second.updated, second.conflicts) == (0, 2, [])
    assert second.batch_id is None  # (no episode went into a new batch)
    assert sorted(outcomes(store).values()) == [False, True]
    assert store.count_episodes() == 2
    third = import_paths(store, [runs], results=report_file)
    assert [f.status for f in third.files] == ["duplicate", "duplicate"]
    without = import_paths(store, [runs], results=None)  # an unknown outcome erases nothing
    assert without.updated == 0 and sorted(outcomes(store).values()) == [False, True]


def test_a_newer_report_changes_the_outcomes_it_changes_and_the_command_says_so(
    db_path, data_dir, tmp_path
):
    runs = data_dir / "mini-swe-agent"
    report = json.loads((data_dir / "swebench-report" / "report.json").read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps(report))
    for verdict in report.values():  # the newer report turns each verdict round
        verdict["resolved"] = not verdict["resolved"]
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(report))
    env = {"WORKBENCH_DB": str(db_path)}
    runner = CliRunner()
    first = runner.invoke(main, ["import", str(runs), "--results", str(old)], env=env)
    assert first.exit_code == 0, first.output
    with Store(db_path) as store:
        before = outcomes(store)
    again = runner.invoke(main, ["import", str(runs), "--results", str(newer)], env=env)
    assert again.exit_code == 0, again.output
    assert "1 with their outcome updated" in again.output
    assert "updated the outcome of 2 stored episode(s)" in again.output
    with Store(db_path) as store:
        after = outcomes(store)
        assert store.count_episodes() == 2
    assert after == {task: not success for task, success in before.items()}


def test_a_trajectory_file_gives_the_same_ids_with_and_without_results(data_dir, tmp_path):
    runs = data_dir / "mini-swe-agent"
    report_file = data_dir / "swebench-report" / "report.json"
    ids = []
    for results in (None, report_file):
        with Store(tmp_path / f"{results is None}.db") as store:
            import_paths(store, [runs], results=results)
            ids.append(sorted(e.id for e in store.episodes()))
    assert ids[0] == ids[1] and len(ids[0]) == 2


def test_the_outcome_alone_is_updated_other_content_is_still_a_conflict(store, tmp_path: Path):
    from tests.bulk_files import bulk_line

    def write(name: str, success: bool, word: str) -> Path:
        record = json.loads(bulk_line("run", 0, word))
        record["episode"]["outcome"]["success"] = success
        path = tmp_path / name
        path.write_text(json.dumps(record) + "\n")
        return path

    import_paths(store, [write("a.jsonl", False, "look")])
    updated = import_paths(store, [write("b.jsonl", True, "look")])
    assert updated.updated == 1 and store.episode("run-0000000").outcome.success is True
    other = import_paths(store, [write("c.jsonl", False, "kick")])
    assert [p.status for p in other.conflicts] == ["renamed"]
