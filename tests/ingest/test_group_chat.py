"""Multi-agent group chats: a format of its own, each step naming the agent that spoke."""

from __future__ import annotations

from pathlib import Path

from store import Store
from workbench.ingest import formats, import_paths


def test_a_group_chat_file_is_detected_and_each_message_names_its_speaker(store, data_dir):
    path = data_dir / "group-chat" / "primes.json"
    assert formats.detect(path).name == "group-chat"
    report = import_paths(store, [path])
    assert report.episodes == 2
    by_question = {store.task(e.task_id).instruction: e for e in store.episodes()}
    primes = by_question["How many prime numbers are there below 20?"]
    assert primes.outcome.success is False and primes.task_id.startswith("group-chat:")
    steps = store.steps(primes.id)
    assert [s.agent for s in steps] == ["Admin", "Planner", "Coder", "Critic"]
    assert steps[2].content.startswith("2, 3, 5, 7, 9")
    times = by_question["What is 12 times 12?"]
    assert times.outcome.success is True
    assert [(s.role, s.agent) for s in store.steps(times.id)] == [
        ("user", "Admin"),
        ("assistant", "Orchestrator (thought)"),
        ("assistant", "Coder"),
    ]


def test_a_chat_log_with_tool_calls_is_still_openai_chat(data_dir):
    assert formats.detect(data_dir / "openai-chat" / "tools.jsonl").name == "openai-chat"


def test_a_group_chat_without_a_question_takes_its_first_message(store: Store, tmp_path: Path):
    path = tmp_path / "chat.jsonl"
    path.write_text(
        '{"messages": [{"role": "user", "name": "Admin", "content": "Plan a trip."},'
        ' {"role": "user", "name": "Planner", "content": "Day 1: Rome."}], "success": true}\n'
    )
    assert formats.detect(path).name == "group-chat"
    import_paths(store, [path])
    (episode,) = store.episodes()
    assert store.task(episode.task_id).instruction == "Plan a trip."
    assert episode.outcome.success is True
