"""AgentBench outputs: one episode per runs.jsonl line, task from the folder, overall joined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ingest.helpers import (
    assert_cli_names_bad_line,
    assert_reimport_adds_nothing,
    bad_reasons,
    import_error,
    write_json,
    write_jsonl,
)
from workbench.ingest import SAMPLES, agentbench, formats, import_paths


@pytest.fixture
def runs_dir(data_dir: Path) -> Path:
    return data_dir / "agentbench" / "gpt-4o"


def by_task(store):
    return {e.task_id: e for e in store.episodes()}


def test_runs_become_episodes_with_outcomes_from_result_and_status(store, runs_dir):
    report = import_paths(store, [runs_dir / "os-std" / "runs.jsonl"])
    assert report.files[0].format == "agentbench" and report.episodes == 3
    runs = by_task(store)
    passed = runs["agentbench:os-std:std-00000"]
    assert passed.agent == "gpt-4o" and passed.family == "os-std"
    assert (passed.outcome.success, passed.outcome.message) == (True, "completed")
    wrong = runs["agentbench:os-std:std-00001"]
    assert (wrong.outcome.success, wrong.outcome.message) == (False, "completed")
    limit = runs["agentbench:os-std:std-00002"]
    assert (limit.outcome.success, limit.outcome.message) == (False, "task limit reached")
    assert passed.metadata["result"]["index_in_file"] == 0
    assert passed.metadata["time"]["timestamp"] == 1709373600000


def test_the_overall_json_beside_the_runs_is_joined(store, runs_dir):
    import_paths(store, [runs_dir / "os-std" / "runs.jsonl"])
    overall = by_task(store)["agentbench:os-std:std-00000"].metadata["overall"]
    assert overall["custom"]["overall"]["acc"] == pytest.approx(1 / 3)
    assert overall["validation"]["task limit reached"] == pytest.approx(1 / 3)


def test_the_one_shot_example_is_not_read_as_the_agents_actions(store, runs_dir):
    import_paths(store, [runs_dir / "os-std" / "runs.jsonl"])
    episode = by_task(store)["agentbench:os-std:std-00001"]
    task = store.task(episode.task_id)
    assert task.instruction.endswith(
        "Find the total size in bytes of the .log files under /var/app."
    )
    steps = store.steps(episode.id)
    assert [s.kind for s in steps] == ["message"] * 5 + ["action", "action"]
    assert steps[1].role == "assistant" and steps[1].content.startswith("Think: To count")
    act = steps[5]
    assert act.thought == "I can sum the sizes with du."
    assert act.action == "Act: bash\n\n```bash\ndu -cb /var/app/*.log | tail -1\n```"
    assert act.observation.startswith("The output of the OS:\ndu: cannot access")
    assert steps[6].action == "Act: answer(0)" and steps[6].observation == ""


def test_a_prompt_acknowledged_before_the_question_and_is_correct(store, runs_dir):
    import_paths(store, [runs_dir / "dbbench-std" / "runs.jsonl"])
    runs = by_task(store)
    right, invalid = runs["agentbench:dbbench-std:0"], runs["agentbench:dbbench-std:1"]
    assert right.outcome.success is True and "overall" not in right.metadata
    assert (invalid.outcome.success, invalid.outcome.message) == (False, "agent invalid action")
    assert store.task(right.task_id).instruction.startswith("How many albums")
    steps = store.steps(right.id)
    assert [(s.kind, s.role) for s in steps[:3]] == [
        ("message", "user"), ("message", "assistant"), ("message", "user"),
    ]  # fmt: skip
    assert steps[3].action.startswith("Action: Operation") and steps[3].observation == "[(4,)]"


def test_harness_errors_have_an_unknown_outcome(store, runs_dir):
    report = import_paths(store, [runs_dir / "os-std" / "error.jsonl"])
    assert report.files[0].format == "agentbench"
    (episode,) = store.episodes()
    assert episode.outcome.success is None
    assert episode.outcome.message == "AGENT_FAILED: Error code: 429 - rate limit exceeded"


def test_a_folder_of_outputs_imports_every_task(store, runs_dir):
    report = import_paths(store, [runs_dir])
    assert report.episodes == 6
    assert {f.path.rsplit("/", 1)[1]: f.format for f in report.files} == {
        "runs.jsonl": "agentbench",
        "error.jsonl": "agentbench",
        "overall.json": "",
    }
    (summary,) = report.ignored
    assert summary.reason.startswith("read with runs.jsonl and error.jsonl (agentbench)")


def test_results_names_another_overall_json(tmp_path, store, runs_dir):
    overall = write_json(tmp_path / "summary.json", {"total": 3, "custom": {"acc": 0.5}})
    import_paths(store, [runs_dir / "dbbench-std" / "runs.jsonl"], results=overall)
    assert by_task(store)["agentbench:dbbench-std:0"].metadata["overall"] == {
        "custom": {"acc": 0.5}
    }


def test_importing_twice_adds_nothing(store, runs_dir):
    paths = [runs_dir / "os-std" / "runs.jsonl", runs_dir / "dbbench-std" / "runs.jsonl"]
    assert_reimport_adds_nothing(store, paths, "agentbench", episodes=5)


def test_scores_and_bare_results(tmp_path, store):
    history = [
        {"role": "user", "content": "Task: buy a red mug"},
        {"role": "agent", "content": "search[red mug]"},
    ]
    rows = [
        {
            "index": 1,
            "output": {"status": "completed", "result": {"reward": 0.5}, "history": history},
        },
        {"index": 2, "output": {"status": "completed", "result": True, "history": history}},
    ]
    (tmp_path / "webshop-std").mkdir()
    path = write_jsonl(tmp_path / "webshop-std" / "runs.jsonl", rows)
    import_paths(store, [path])
    runs = by_task(store)
    half = runs["agentbench:webshop-std:1"].outcome
    assert (half.success, half.score) == (False, 0.5)
    assert runs["agentbench:webshop-std:2"].outcome.success is True


# -- bad input --------------------------------------------------------------------------------


def test_a_bad_line_fails_the_import_naming_it(store, data_dir):
    path = data_dir / "agentbench" / "bad_lines.jsonl"
    error = import_error(store, path, "agentbench")
    assert str(error).startswith(f"{path}: line 2: invalid JSON")
    assert store.count_episodes() == 0 and store.batches() == []


def test_skip_bad_names_each_bad_line_and_field(store, data_dir):
    path = data_dir / "agentbench" / "bad_lines.jsonl"
    report = import_paths(store, [path], skip_bad=True)
    reasons = bad_reasons(report, path)
    assert reasons[0].startswith("line 2: invalid JSON")
    assert reasons[1:] == [
        "line 3: field 'output': expected the sample's output object",
        "line 4: field 'output.history.0.role': unknown role 'system' (expected user or agent)",
        "line 5: field 'index': missing sample index",
    ]
    assert [e.task_id for e in store.episodes()] == ["agentbench:std-00009"]  # folder "agentbench"


def test_a_broken_overall_json_is_named(tmp_path, store, runs_dir):
    folder = tmp_path / "os-std"
    folder.mkdir()
    runs = folder / "runs.jsonl"
    runs.write_text((runs_dir / "os-std" / "runs.jsonl").read_text())
    (folder / "overall.json").write_text('{"total": 3,')
    error = import_error(store, runs, "agentbench")
    assert str(error).startswith(f"{folder / 'overall.json'}: line 1 column 13: invalid JSON")


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["os-std/runs.jsonl", "os-std/error.jsonl", "dbbench-std/runs.jsonl"]
)
def test_outputs_are_detected(runs_dir, name):
    assert formats.detect(runs_dir / name) is agentbench


@pytest.mark.parametrize(
    "head",
    [
        '{"messages": [{"role": "user", "content": "hi"}], "index": 1}\n',
        '{"index": 1, "error": "x", "info": null, "output": null}\n',  # not named error.jsonl
        '{"instance_id": "a", "history": [], "test_result": {}}\n',
    ],
)
def test_other_files_are_not_outputs(head):
    assert not agentbench.sniff(Path("runs.jsonl"), head)


def test_the_sample_is_detected(store):
    report = import_paths(store, [SAMPLES / "agentbench"])
    assert [f.format for f in report.files] == ["", "agentbench"] and report.episodes == 3
    assert json.dumps(store.episodes()[0].metadata)


def test_a_50_mb_observation_is_stored_whole(tmp_path, store):
    from tests.ingest.helpers import FIFTY_MB, assert_stored_whole

    huge = "x" * FIFTY_MB + "END"
    history = [
        {"role": "user", "content": "Task: print the log"},
        {"role": "agent", "content": "Act: bash\n```bash\ncat big.log\n```"},
        {"role": "user", "content": huge},
    ]
    row = {"index": 0, "output": {"status": "completed", "result": True, "history": history}}
    path = write_jsonl(tmp_path / "runs.jsonl", [row])
    import_paths(store, [path])
    (episode,) = store.episodes()
    assert_stored_whole(store.step(episode.id, 1).observation, huge)


def test_the_cli_names_the_bad_line_in_one_message_and_skip_bad_keeps_the_rest(db_path, data_dir):
    path = data_dir / "agentbench" / "bad_lines.jsonl"
    assert_cli_names_bad_line(db_path, path, f"{path}: line 2: invalid JSON", "line 2")


@pytest.mark.parametrize(
    "text",
    [
        "Now, my problem is this:",
        "MY PROBLEM IS",
        "my  problem is",
        "Your task is to count.",
        "your ta\u017fk \u0131s",  # letters that match i, s and k ignoring case
        "\u0130nstruction: x",
        "Task: list files",
        "  question :why",
        "output\n  Goal: x",
        "output\r\nGOAL:",
        "a task: in the middle",
        "The output of the OS:\n[]",
        "",
        "no task here",
    ],
)
def test_the_quick_task_line_test_answers_as_the_pattern(text):
    assert agentbench._states_task(text) == (agentbench._TASK_LINE.search(text) is not None)
