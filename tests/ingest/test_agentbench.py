"""AgentBench outputs: one episode per runs.jsonl line, agent and task from what the files say,
overall.json's grades joined and its summary stored once per file."""

from __future__ import annotations

import json
import shutil
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
from workbench.ingest.agentbench import episodes as agentbench_episodes
from workbench.ingest.agentbench.layout import folder_names
from workbench.ingest.agentbench.overall import verdict

REAL = Path(__file__).parents[1] / "data" / "real" / "agentbench" / "Jan17v1"
MEDAGENTBENCH = "medagentbench-std"


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


def test_the_overall_json_beside_the_runs_is_stored_once_with_the_file(store, runs_dir):
    import_paths(store, [runs_dir / "os-std" / "runs.jsonl"])
    episodes = store.episodes()
    assert len(episodes) == 3 and all("overall" not in e.metadata for e in episodes)
    (source,) = {e.source.hash for e in episodes}
    shared = store.source_metadata(source)
    overall = shared["overall"]
    assert overall["total"] == 3
    assert overall["custom"]["overall"]["acc"] == pytest.approx(1 / 3)
    assert overall["validation"]["task limit reached"] == pytest.approx(1 / 3)
    assert shared["overall_path"].endswith("os-std/overall.json")
    assert shared["names"]["agent"] == "gpt-4o" and shared["names"]["task"] == "os-std"


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
    episode = by_task(store)["agentbench:dbbench-std:0"]
    assert store.source_metadata(episode.source.hash)["overall"] == {
        "total": 3,
        "custom": {"acc": 0.5},
    }


# -- overall.json's per-sample grades (MedAgentBench's custom.raw_results) -------------------


def test_medagentbench_outcomes_come_from_the_grades_in_overall_json(store):
    import_paths(store, [REAL / "gpt-4o" / MEDAGENTBENCH / "runs.jsonl"])
    runs = by_task(store)
    right = runs[f"agentbench:{MEDAGENTBENCH}:97"]
    assert (right.agent, right.family) == ("gpt-4o", MEDAGENTBENCH)
    assert (right.outcome.success, right.outcome.message) == (True, "completedCorrect")
    wrong = runs[f"agentbench:{MEDAGENTBENCH}:92"]
    assert (wrong.outcome.success, wrong.outcome.message) == (False, "completedIncorrect")
    assert wrong.metadata["result"] == "[-1]"  # runs.jsonl holds the answer, not the grade
    assert wrong.metadata["graded"] == {"status": "completedIncorrect", "result": "[-1]"}


def test_a_sample_graded_nowhere_keeps_its_status_rule(store):
    import_paths(store, [REAL / "llama-3.3" / MEDAGENTBENCH / "runs.jsonl"])
    invalid = by_task(store)[f"agentbench:{MEDAGENTBENCH}:98"].outcome
    assert (invalid.success, invalid.message) == (False, "agent invalid action")


def test_the_overall_json_is_stored_once_and_no_episode_copies_it(store):
    """The 373 MB database of issue 43: every episode held the whole overall.json, histories
    and all. Now each holds its own grade (no history) and the file's row holds the rest."""
    folder = REAL / "gpt-4o" / MEDAGENTBENCH
    import_paths(store, [folder / "runs.jsonl"])
    episodes = store.episodes()
    shared = store.conn.execute("SELECT metadata FROM sources WHERE metadata IS NOT NULL")
    (row,) = shared.fetchall()
    overall = json.loads(row[0])["overall"]
    assert overall["custom"] == {"accuracy": 0.61} and overall["total"] == 100
    for episode in episodes:
        assert "overall" not in episode.metadata
        assert "history" not in episode.metadata["graded"]
    stored = sum(len(json.dumps(e.metadata)) for e in episodes)
    assert stored < (folder / "overall.json").stat().st_size / 20


def test_a_grade_s_flag_and_the_sample_s_own_flag(tmp_path, store):
    history = [{"role": "user", "content": "Task: count"}, {"role": "agent", "content": "3"}]
    folder = tmp_path / "gpt-4o" / "count-std"
    folder.mkdir(parents=True)
    rows = [
        {"index": 1, "output": {"status": "completed", "result": "3", "history": history}},
        {"index": 2, "output": {"status": "completed", "result": True, "history": history}},
        {"index": 3, "output": {"status": "completed", "result": "4", "history": history}},
    ]
    path = write_jsonl(folder / "runs.jsonl", rows)
    grades = [
        {"index": 1, "correct": True, "history": history},
        {"index": 2, "status": "completedIncorrect"},  # the line's own flag wins
        {"index": 4, "status": "completedCorrect"},  # no line: not joined
    ]
    write_json(folder / "overall.json", {"total": 3, "custom": {"per_sample": grades, "acc": 1}})
    import_paths(store, [path])
    runs = by_task(store)
    assert runs["agentbench:count-std:1"].outcome.success is True
    assert runs["agentbench:count-std:1"].metadata["graded"] == {"correct": True}
    assert runs["agentbench:count-std:2"].outcome.success is True
    assert runs["agentbench:count-std:3"].outcome.success is None  # completed, graded nowhere
    shared = store.source_metadata(runs["agentbench:count-std:1"].source.hash)
    assert shared["overall"] == {"total": 3, "custom": {"acc": 1}}


@pytest.mark.parametrize(
    ("grade", "expected"),
    [
        ({"status": "completedCorrect"}, True),
        ({"status": "completedIncorrect"}, False),
        ({"status": "COMPLETEDINCORRECT"}, False),
        ({"status": "completed"}, None),
        ({"status": "agent invalid action"}, None),
        ({"is_correct": False, "status": "completedCorrect"}, False),
        ({"result": "[1]"}, None),
        ({}, None),
    ],
)
def test_what_a_grade_says(grade, expected):
    assert verdict(grade) is expected


# -- which folder is the agent and which the task ---------------------------------------------


def _copy_real(tmp_path: Path, model: str, *folders: str) -> Path:
    """The real MedAgentBench files of ``model`` copied under ``folders``."""
    target = tmp_path.joinpath(*folders)
    target.mkdir(parents=True)
    for name in ("runs.jsonl", "overall.json"):
        shutil.copy(REAL / model / MEDAGENTBENCH / name, target / name)
    return target / "runs.jsonl"


def test_a_source_model_layout_reads_the_model_as_the_agent(tmp_path, store):
    path = _copy_real(tmp_path, "llama-3.3", "medagentbench", "llama-3.3")
    import_paths(store, [path])
    episodes = store.episodes()
    assert {(e.agent, e.family) for e in episodes} == {("llama-3.3", "medagentbench")}
    assert by_task(store)["agentbench:medagentbench:89"].outcome.success is True
    names = store.source_metadata(episodes[0].source.hash)["names"]
    assert names["read_from"] == "'llama-3.3' reads as a model; folders <task>/<agent>"


def test_both_layouts_of_the_same_runs_give_the_same_agents_and_tasks(tmp_path, store):
    paths = [
        _copy_real(tmp_path, "gpt-4o", "outputs", "gpt-4o", MEDAGENTBENCH),
        _copy_real(tmp_path, "llama-3.3", "by-task", MEDAGENTBENCH, "llama-3.3"),
    ]
    import_paths(store, paths)
    assert {(e.agent, e.family) for e in store.episodes()} == {
        ("gpt-4o", MEDAGENTBENCH),
        ("llama-3.3", MEDAGENTBENCH),
    }


def test_names_the_overall_json_gives_decide_over_folder_depth(tmp_path, store, runs_dir):
    folder = tmp_path / "batch-a" / "bot-1"  # neither name reads as a model or a task
    folder.mkdir(parents=True)
    path = folder / "runs.jsonl"
    path.write_text((runs_dir / "os-std" / "runs.jsonl").read_text())
    write_json(folder / "overall.json", {"agent": "bot-1", "total": 3})
    import_paths(store, [path])
    assert {(e.agent, e.family) for e in store.episodes()} == {("bot-1", "batch-a")}


def test_names_a_record_gives_are_its_own(tmp_path, store):
    history = [{"role": "user", "content": "Task: count"}, {"role": "agent", "content": "3"}]
    folder = tmp_path / "batch-a" / "runs-b"
    folder.mkdir(parents=True)
    rows = [
        {"index": 1, "model": "bot-1", "output": {"result": True, "history": history}},
        {"index": 2, "output": {"task": "kg-std", "result": True, "history": history}},
        {"index": 3, "output": {"result": True, "history": history}},
    ]
    import_paths(store, [write_jsonl(folder / "runs.jsonl", rows)])
    assert sorted((e.task_id, e.agent) for e in store.episodes()) == [
        ("agentbench:kg-std:2", "batch-a"),
        ("agentbench:runs-b:1", "bot-1"),
        ("agentbench:runs-b:3", "batch-a"),  # nothing named: AgentBench's own <agent>/<task>
    ]


@pytest.mark.parametrize(
    ("folders", "agent", "task"),
    [
        ("gpt-4o/os-std", "gpt-4o", "os-std"),
        ("os-std/gpt-4o", "gpt-4o", "os-std"),
        ("webshop/claude-3-5-sonnet", "claude-3-5-sonnet", "webshop"),
        ("my-agent/dbbench-dev", "my-agent", "dbbench-dev"),
        ("alfworld-std/my-agent", "my-agent", "alfworld-std"),
        ("Jan17v1/llama-3.3", "llama-3.3", "Jan17v1"),
        ("agent-x/task-y", "agent-x", "task-y"),  # nothing tells: AgentBench's own layout
        ("physics/philosophy", "physics", "philosophy"),  # no model's name at their start
    ],
)
def test_folder_names_read_as_a_model_or_a_task(folders, agent, task):
    names = folder_names(Path("/out") / folders / "runs.jsonl")
    assert (names.agent, names.task) == (agent, task)


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
    found = agentbench_episodes._TASK_LINE.search(text) is not None
    assert agentbench_episodes._states_task(text) == found


def test_an_overall_json_that_appears_after_a_first_import_fills_in_the_outcomes(store, tmp_path):
    """The overall.json beside the runs is hashed with them: one that appears (or changes)
    later makes the runs read again, their outcomes updated, nothing stored twice."""
    folder = tmp_path / "gpt-4o" / "medagentbench-std"
    folder.mkdir(parents=True)
    source = REAL / "gpt-4o" / "medagentbench-std"
    shutil.copyfile(source / "runs.jsonl", folder / "runs.jsonl")
    first = import_paths(store, [folder / "runs.jsonl"])
    assert first.episodes == 4
    assert {e.outcome.success for e in store.episodes()} == {None}
    shutil.copyfile(source / "overall.json", folder / "overall.json")
    again = import_paths(store, [folder / "runs.jsonl"])
    assert (again.episodes, again.updated) == (0, 4)
    assert None not in {e.outcome.success for e in store.episodes()}
    assert store.count_episodes() == 4
    assert import_paths(store, [folder / "runs.jsonl"]).files[0].status == "duplicate"
