"""Multi-agent group chats: a format of its own, each step naming the agent that spoke."""

from __future__ import annotations

import json
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


# -- Magentic-One's event log (log.jsonl) -------------------------------------------------------


def _event(source: str, message: str, second: int, **extra) -> dict:
    stamp = f"2024-11-20T15:41:{second:02d}"
    return {"timestamp": stamp, "source": source, "message": message, **extra}


def _log(tmp_path: Path, *events: dict) -> Path:
    path = tmp_path / "log.jsonl"
    lines = [json.dumps(e if "type" in e else {**e, "type": "OrchestrationEvent"}) for e in events]
    path.write_text("\n".join(lines) + "\n")
    return path


def _usage(prompt: int, completion: int, second: int) -> dict:
    return {
        "timestamp": f"2024-11-20T15:41:{second:02d}",
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "type": "LLMCallEvent",
    }


END = "Orchestrator (termination condition)"


def test_a_magentic_one_log_is_one_episode_per_run_each_event_naming_its_speaker(
    store: Store, tmp_path: Path
):
    path = _log(
        tmp_path,
        _event("UserProxy", "Compute 34*87.", 1),
        _usage(300, 90, 2),
        _event("Orchestrator (-> Coder)", "Please write the code.", 3),
        _usage(800, 40, 4),
        _event("Coder", "print(34 * 87)", 5),
        _event("Executor", "2958", 6),
        _event("Orchestrator (final answer)", "It is 2958.", 7),
        _event(END, "No agent selected.", 8),
        _event("UserProxy", "Now 2 + 2.", 10),
        _event("Coder", "4", 11),
        _event(END, "No agent selected.", 12),
    )
    assert formats.detect(path).name == "group-chat"
    report = import_paths(store, [path])
    assert report.episodes == 2
    first, second = sorted(store.episodes(), key=lambda e: int(e.source.record.split()[1]))
    assert first.source.record == "line 1" and second.source.record == "line 9"
    assert store.task(first.task_id).instruction == "Compute 34*87."
    assert first.outcome.success is None  # the log grades nothing
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (1100, 130)
    assert first.started_at.second == 1 and first.ended_at.second == 8
    steps = store.steps(first.id)
    assert [(s.role, s.agent) for s in steps] == [
        ("user", "UserProxy"),
        ("assistant", "Orchestrator (-> Coder)"),
        ("assistant", "Coder"),
        ("assistant", "Executor"),
        ("assistant", "Orchestrator (final answer)"),
        ("assistant", END),
    ]
    assert steps[3].content == "2958" and steps[3].timestamp.second == 6
    assert [s.agent for s in store.steps(second.id)] == ["UserProxy", "Coder", END]


def test_a_web_surfer_action_is_its_tool_call_and_a_log_cut_short_keeps_its_last_run(
    store: Store, tmp_path: Path
):
    click = {
        "timestamp": "2024-11-18T19:05:02",
        "type": "WebSurferEvent",
        "source": "WebSurfer",
        "message": 'click( {"target_id": 97} )',
        "url": "https://www.bing.com/",
        "action": "click",
        "arguments": {"target_id": 97},
    }
    new_tab = {**click, "message": "New tab or window.", "action": None, "arguments": None}
    path = _log(
        tmp_path,
        _event("UserProxy", "Find the tutorial.", 1),
        click,
        new_tab,
        _event("WebSurfer", "I clicked 'Tutorial'.", 5),
    )
    import_paths(store, [path])
    (episode,) = store.episodes()
    steps = store.steps(episode.id)
    assert [(s.kind, s.agent) for s in steps] == [
        ("message", "UserProxy"),
        ("tool_call", "WebSurfer"),
        ("message", "WebSurfer"),
        ("message", "WebSurfer"),
    ]
    assert steps[1].tool_name == "click" and steps[1].action == 'click({"target_id": 97})'
    assert steps[2].content == "New tab or window."
    assert episode.metadata == {"cut_short": True}


def test_an_unreadable_line_of_a_magentic_one_log_names_it_and_spares_the_other_runs(
    store: Store, tmp_path: Path
):
    path = _log(
        tmp_path,
        _event("UserProxy", "First task.", 1),
        _event(END, "No agent selected.", 2),
        _event("UserProxy", "Second task.", 3),
        {
            "timestamp": "2024-11-20T15:41:04",
            "message": "who said this?",
            "type": "OrchestrationEvent",
        },
        _event(END, "No agent selected.", 5),
    )
    report = import_paths(store, [path], skip_bad=True)
    assert report.episodes == 1
    (bad,) = report.files[0].bad
    assert "line 4" in bad and "source" in bad


def test_a_task_stated_again_unasked_starts_a_run_and_a_reply_to_the_orchestrator_does_not(
    store: Store, tmp_path: Path
):
    path = _log(
        tmp_path,
        _event("UserProxy", "Say hello.", 1),
        _usage(300, 70, 2),  # (the app was restarted here: no orchestrator event follows)
        _event("UserProxy", "Say hello.", 30),
        _event("Orchestrator (-> UserProxy)", "In which language?", 31),
        _event("UserProxy", "French.", 40),
        _event("Coder", "print('Bonjour')", 41),
        _event(END, "No agent selected.", 42),
    )
    import_paths(store, [path])
    cut, whole = sorted(store.episodes(), key=lambda e: int(e.source.record.split()[1]))
    assert [s.content for s in store.steps(cut.id)] == ["Say hello."]
    assert cut.metadata == {"cut_short": True} and cut.usage.prompt_tokens == 300
    assert whole.source.record == "line 3" and whole.metadata == {}
    assert [s.agent for s in store.steps(whole.id)] == [
        "UserProxy",
        "Orchestrator (-> UserProxy)",
        "UserProxy",
        "Coder",
        END,
    ]


def test_an_agentchat_task_result_names_its_speakers_under_source(store: Store, tmp_path: Path):
    """AutoGen AgentChat's task results keep each message's speaker as ``source`` and no
    ``role``: it was "cannot tell the format"."""
    result = {
        "messages": [
            {
                "source": "user",
                "models_usage": None,
                "content": "What is 6 times 7?",
                "type": "TextMessage",
            },
            {
                "source": "planner",
                "models_usage": {"prompt_tokens": 9, "completion_tokens": 4},
                "content": "Ask the coder.",
                "type": "TextMessage",
            },
            {
                "source": "coder",
                "models_usage": None,
                "content": "It is 42. TERMINATE",
                "type": "TextMessage",
            },
        ],
        "stop_reason": "Text 'TERMINATE' mentioned",
    }
    log = tmp_path / "task_result.json"
    log.write_text(json.dumps(result))
    assert formats.detect(log).name == "group-chat"
    import_paths(store, [log])
    (episode,) = store.episodes()
    steps = store.steps(episode.id)
    assert [(s.role, s.agent) for s in steps] == [
        ("user", ""),
        ("assistant", "planner"),
        ("assistant", "coder"),
    ]
    assert store.task(episode.task_id).instruction == "What is 6 times 7?"
