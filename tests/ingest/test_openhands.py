"""The OpenHands ``output.jsonl`` importer, on real files in a real on-disk store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Episode, Store
from tests.ingest.helpers import (
    ACTION,
    ASSISTANT,
    FIFTY_MB,
    SYSTEM,
    USER,
    assert_reimport_adds_nothing,
    assert_rolled_back,
    assert_stored_whole,
    import_error,
    kinds_and_roles,
    write_jsonl,
    write_junk,
)
from workbench.ingest import SAMPLES, formats, import_paths, openhands

FORMAT = "openhands"


@pytest.fixture
def data(data_dir: Path) -> Path:
    return data_dir / "openhands"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def episode_of(store: Store, task_id: str) -> Episode:
    (episode,) = [e for e in store.episodes() if e.task_id == task_id]
    return episode


# -- events form ------------------------------------------------------------------------------


def test_events_history_pairs_actions_with_observations(store: Store, data: Path) -> None:
    report = import_paths(store, [data / "output.jsonl"], format=FORMAT)

    assert report.episodes == 2 and report.bad == []
    episode = episode_of(store, "swe-bench:astropy__astropy-14995")
    steps = store.steps(episode.id)
    assert kinds_and_roles(steps) == [
        SYSTEM,
        USER,
        ACTION,
        ACTION,
        ACTION,
        ("thought", "agent"),
        ("error", "environment"),
        ASSISTANT,
        ACTION,
    ]
    grep = steps[2]
    assert grep.thought == "Find where masks are combined."
    assert grep.action == "grep -n 'handle_mask' astropy/nddata/mixins/ndarithmetic.py"
    assert grep.observation.startswith("485:        if handle_mask is None:")
    assert (grep.tool_name, grep.tool_call_id) == ("execute_bash", "toolu_01AAA")
    assert grep.raw["action"]["id"] == 3 and grep.raw["observation"]["cause"] == 3
    edit = steps[3]
    assert edit.action.startswith('edit({"path": "/workspace/astropy__astropy__5.2/')
    assert '"old_str": "        elif operand is None:"' in edit.action
    assert "thought" not in edit.action and "impl_source" not in edit.action
    assert edit.observation == "The file ndarithmetic.py has been edited."
    # an observation without ``cause`` answers the latest waiting action
    assert steps[4].observation == "...........\n734 passed in 27.1s"
    assert (steps[5].thought, steps[5].observation) == (
        "Tests pass; the mask is now copied when only one operand has one.",
        "Your thought has been logged.",
    )
    assert steps[6].content.startswith('Missing required argument "command"')
    assert steps[7].content == "I changed the mask handling so a missing mask is ignored."
    assert steps[8].action.startswith('finish({"final_thought": "Mask propagation')
    assert steps[2].timestamp is not None and steps[2].timestamp.second == 5


def test_events_instance_metadata_outcome_and_usage(store: Store, data: Path) -> None:
    import_paths(store, [data / "output.jsonl"], format=FORMAT)

    episode = episode_of(store, "swe-bench:astropy__astropy-14995")
    assert episode.agent == "CodeActAgent:openai/gpt-4o-2024-08-06"
    assert (episode.family, episode.split) == ("astropy/astropy", "test")
    assert (episode.outcome.success, episode.outcome.score, episode.outcome.message) == (
        True,
        1.0,
        "resolved",
    )
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (52000, 1800)
    assert episode.usage.cost == pytest.approx(0.3125)
    assert episode.n_steps == 9
    assert episode.source.record == "line 1" and episode.source.format == "openhands"
    assert episode.metadata["history_format"] == "events"
    assert episode.metadata["llm"] == {
        "model": "openai/gpt-4o-2024-08-06",
        "temperature": 0.0,
        "max_output_tokens": 4096,
    }
    assert "api_key" not in json.dumps(episode.metadata)
    assert episode.metadata["test_result"]["git_patch"].startswith("diff --git")
    assert episode.started_at is not None and episode.ended_at is not None
    assert episode.started_at < episode.ended_at
    task = store.task("swe-bench:astropy__astropy-14995")
    assert task is not None
    assert task.environment == "swe-bench" and task.split == "test"
    assert task.instruction.startswith("<uploaded_files>")
    assert task.metadata["instance"]["base_commit"] == "b16c7d12"


def test_non_swe_bench_instance(store: Store, data: Path) -> None:
    import_paths(store, [data / "output.jsonl"], format=FORMAT)

    episode = episode_of(store, "gaia:gaia-validation-17")
    assert (episode.family, episode.split) == ("gaia", "dev")
    assert (episode.outcome.success, episode.outcome.score) == (False, 0.0)
    assert episode.outcome.message == "Agent got stuck in a loop"
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (2500, 120)
    steps = store.steps(episode.id)
    assert [s.kind for s in steps] == ["message", "action", "action", "message"]
    assert steps[1].action == 'browse({"url": "https://en.wikipedia.org/wiki/2024_Tour_de_France"})'
    assert steps[1].observation == "The 2024 Tour de France started in Florence, Italy."
    assert steps[2].action == "region = 'Tuscany'\nprint(region)"
    assert steps[3].role == "assistant" and steps[3].content == "<solution>Paris</solution>"


# -- pairs and SDK forms ----------------------------------------------------------------------


def test_pairs_history(store: Store, data: Path) -> None:
    report = import_paths(store, [data / "output_pairs.jsonl"], format=FORMAT)

    assert report.episodes == 1
    episode = episode_of(store, "openhands:humanevalfix-python-12")
    assert episode.agent == "CodeActAgent:gpt-4-turbo-2024-04-09"
    assert (episode.outcome.success, episode.outcome.message) == (True, "All done!")
    assert episode.metadata["history_format"] == "pairs"
    steps = store.steps(episode.id)
    assert [s.kind for s in steps] == ["message", "action", "action", "action"]
    assert steps[0].content.startswith("Complete the function")
    assert steps[1].action == "def add(a, b):\n    return a + b\nprint(add(2, 3))"
    assert (steps[1].thought, steps[1].observation) == ("Write it and try it.", "5")
    assert steps[2].action == 'read({"path": "/workspace/add.py"})'
    assert steps[2].observation == "File not found: /workspace/add.py"
    assert steps[3].thought == "The function works."


def test_sdk_history(store: Store, data: Path) -> None:
    report = import_paths(store, [data / "output_sdk.jsonl"], format=FORMAT)

    assert report.episodes == 1
    episode = episode_of(store, "swe-bench:django__django-11099")
    assert episode.agent == "litellm_proxy/anthropic/claude-sonnet-4-20250514"
    assert episode.outcome.success is False
    assert episode.outcome.message == "not resolved: empty_generation"
    assert episode.metadata["history_format"] == "sdk" and episode.metadata["attempt"] == 1
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (4200, 310)
    steps = store.steps(episode.id)
    assert kinds_and_roles(steps) == [SYSTEM, USER, ACTION, ACTION, ("error", "agent"), ACTION]
    terminal = steps[2]
    assert terminal.thought == (
        "The regex uses $ which matches before a newline.\n\nLet me look at the validators."
    )
    assert terminal.action == (
        'terminal({"command": "grep -n regex django/contrib/auth/validators.py"})'
    )
    assert terminal.observation.startswith("10:    regex = r'^[\\w.@+-]+$'")
    assert (terminal.tool_name, terminal.tool_call_id) == ("terminal", "call_t1")
    assert steps[3].observation == "Action rejected: old_str is not unique"
    assert steps[4].content == "Tool 'file_edit' not found"
    assert steps[5].action == 'finish({"message": "Could not make the edit unique."})'


# -- re-import and detection ------------------------------------------------------------------


def test_importing_twice_adds_nothing(store: Store, data: Path) -> None:
    paths = [data / "output.jsonl", data / "output_pairs.jsonl", data / "output_sdk.jsonl"]
    assert_reimport_adds_nothing(store, paths, FORMAT, episodes=4)


def test_repeated_instance_lines_are_kept_apart(store: Store, data: Path, tmp_path: Path) -> None:
    first = lines(data / "output.jsonl")[0]
    path = write_jsonl(tmp_path / "output.jsonl", [first, {**first, "attempt": 2}])

    report = import_paths(store, [path], format=FORMAT)

    assert report.episodes == 2
    assert len({e.id for e in store.episodes()}) == 2


def test_sniff_accepts_output_files(data: Path) -> None:
    for name in ("output.jsonl", "output_pairs.jsonl", "output_sdk.jsonl"):
        path = data / name
        assert openhands.sniff(path, formats.head_of(path)), name


def test_detection_picks_openhands(store: Store, data: Path) -> None:
    report = import_paths(store, [data / "output.jsonl"])

    assert report.files[0].format == "openhands"


@pytest.mark.parametrize(
    "text",
    [
        '{"messages": [{"role": "user", "content": "hi"}]}\n',
        '{"format": "trajectory-workbench", "version": 1, "task": {}, "batch": {}}\n',
        '{"instance_id": "a__b-1", "model_patch": "diff", "model_name_or_path": "x"}\n',
        '{"version": 2, "status": "success", "eval": {"task": "gsm8k"}, "samples": []}',
        '[{"instance_id": "a__b-1", "history": []}]\n',
        "instance_id,history\n1,[]\n",
    ],
)
def test_sniff_rejects_other_formats(tmp_path: Path, text: str) -> None:
    path = tmp_path / "file.jsonl"
    path.write_text(text)

    assert not openhands.sniff(path, formats.head_of(path))


# -- bad input --------------------------------------------------------------------------------


def test_malformed_line_names_the_line(store: Store, data: Path, tmp_path: Path) -> None:
    good = (data / "output.jsonl").read_text().splitlines()
    path = tmp_path / "output.jsonl"
    path.write_text(good[0] + "\n" + good[1][: len(good[1]) // 2] + "\n")

    error = import_error(store, path, FORMAT)
    assert error.path == str(path) and error.where == "line 2"
    assert error.message.startswith("invalid JSON")
    assert store.count_episodes() == 0

    report = import_paths(store, [path], format=FORMAT, skip_bad=True)
    assert (
        report.episodes == 1 and len(report.bad) == 1 and ": line 2: invalid JSON" in report.bad[0]
    )


def test_an_instance_without_an_id_is_named_by_its_line(store: Store, data: Path, tmp_path: Path):
    first, second = lines(data / "output.jsonl")
    del second["instance_id"]
    path = write_jsonl(tmp_path / "output.jsonl", [first, second])
    import_paths(store, [path], format=FORMAT)
    assert sorted(e.task_id.rpartition(":")[2] for e in store.episodes())[0] == "L2"


def test_an_evaluation_of_another_benchmark_is_detected_and_scored(store: Store, tmp_path: Path):
    """APIBench (gorilla): ``question_id`` names the instance, ``test_result.correct`` says
    how it went."""
    record = {
        "question_id": 17,
        "metadata": {"agent_class": "CodeActAgent", "dataset": "gorilla-hf"},
        "history": [],
        "test_result": {"text": "from transformers import pipeline", "correct": True},
    }
    path = write_jsonl(
        tmp_path / "output.jsonl",
        [record, {**record, "question_id": 18, "test_result": {"correct": False}}],
    )
    assert formats.detect(path).name == FORMAT
    import_paths(store, [path])
    outcomes = {e.task_id: e.outcome.success for e in store.episodes()}
    assert outcomes == {"gorilla-hf:17": True, "gorilla-hf:18": False}


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda obj: obj.update(history={"events": []}), "history", "expected a list of events"),
        (lambda obj: obj.update(metadata=["CodeActAgent"]), "metadata", "expected an object"),
        (lambda obj: obj["history"][3].update(args="grep"), "history.3.args", "expected an object"),
        (
            lambda obj: obj["history"][4].pop("observation"),
            "history.4",
            "expected an 'action', 'observation' or 'kind' key",
        ),
        (lambda obj: obj["history"].append("done"), "history.15", "expected an event object"),
    ],
)
def test_wrong_shapes_name_the_field(
    store: Store, data: Path, tmp_path: Path, change: Any, field: str, message: str
) -> None:
    first, second = lines(data / "output.jsonl")
    change(first)
    path = write_jsonl(tmp_path / "output.jsonl", [first, second])

    error = import_error(store, path, FORMAT)
    assert (error.where, error.field, error.message) == (
        "line 1 instance 'astropy__astropy-14995'",
        field,
        message,
    )

    report = import_paths(store, [path], format=FORMAT, skip_bad=True)
    assert report.episodes == 1 and len(report.bad) == 1


def test_bad_pair_names_the_field(store: Store, data: Path, tmp_path: Path) -> None:
    (obj,) = lines(data / "output_pairs.jsonl")
    obj["history"][1] = obj["history"][1][:1]
    path = write_jsonl(tmp_path / "output.jsonl", [obj])

    error = import_error(store, path, FORMAT)

    assert error.field == "history.1" and "pair" in error.message


def test_wrong_top_level_shape(store: Store, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "output.jsonl", [["instance_id", "history"]])

    error = import_error(store, path, FORMAT)

    assert (error.where, error.field, error.message) == ("line 1", "", "expected a JSON object")


def test_binary_junk(store: Store, tmp_path: Path) -> None:
    path = write_junk(tmp_path / "output.jsonl", header=b"\x89PNG\r\n\x1a\n", copies=8)

    error = import_error(store, path, FORMAT)

    assert error.path == str(path) and error.where.startswith("line ")
    assert store.count_episodes() == 0


def test_failed_import_rolls_everything_back(store: Store, data: Path, tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"instance_id": "x", "history": "lost"}])

    assert_rolled_back(store, [data / "output.jsonl", bad], FORMAT)


def test_instance_without_history_still_imports(store: Store, tmp_path: Path) -> None:
    failed = {
        "instance_id": "sympy__sympy-24102",
        "test_result": {},
        "history": None,
        "error": "Maximum retries (5) reached: runtime build failed",
    }
    path = write_jsonl(tmp_path / "output.jsonl", [failed])

    import_paths(store, [path], format=FORMAT)

    episode = episode_of(store, "swe-bench:sympy__sympy-24102")
    assert episode.n_steps == 0 and episode.family == "sympy/sympy"
    assert episode.outcome.success is False
    assert episode.outcome.message == "Maximum retries (5) reached: runtime build failed"


# -- size and sample --------------------------------------------------------------------------


def test_huge_observation_is_stored_whole(store: Store, data: Path, tmp_path: Path) -> None:
    huge = "y" * (FIFTY_MB - 1) + "."
    first = lines(data / "output.jsonl")[0]
    first["history"][4]["content"] = huge
    path = write_jsonl(tmp_path / "output.jsonl", [first])

    import_paths(store, [path], format=FORMAT)

    (episode,) = store.episodes()
    assert_stored_whole(store.step(episode.id, 2).observation, huge)


def test_quick_start_sample_imports(store: Store) -> None:
    report = import_paths(store, [SAMPLES / "openhands_output.jsonl"])

    assert report.files[0].format == "openhands" and report.episodes == 3
    assert sorted(e.outcome.success for e in store.episodes()) == [False, False, True]
    assert {e.task_id.split(":")[0] for e in store.episodes()} == {"swe-bench"}
