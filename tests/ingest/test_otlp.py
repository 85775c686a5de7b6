"""OTLP JSON trace exports: one episode per trace, tool spans as calls, both conventions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Store
from tests.ingest.helpers import (
    FIFTY_MB,
    assert_cli_names_bad_line,
    assert_reimport_adds_nothing,
    assert_stored_whole,
    bad_reasons,
    import_error,
    only_episode,
    write_json,
    write_jsonl,
)
from workbench.ingest import ReadContext, formats, import_paths, otlp

GENAI = "genai_agent_trace.json"
OPENINFERENCE = "openinference_traces.jsonl"
TRACE = "0af7651916cd43dd8448eb211c80319c"
T0 = 1760457600000000000


@pytest.fixture
def otlp_dir(data_dir: Path) -> Path:
    return data_dir / "otlp"


def _value(value):
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def span(span_id, parent, start, end, attributes, trace="t1", status=None):
    """One OTLP JSON span of trace ``trace``, times in milliseconds after ``T0``."""
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": span_id,
        "startTimeUnixNano": str(T0 + start * 1_000_000),
        "endTimeUnixNano": str(T0 + end * 1_000_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
        "status": status or {},
    }


def traces(*spans):
    """A ``TracesData`` object holding ``spans``."""
    return {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]
    }


def test_a_genai_trace_is_one_episode_of_tool_calls_and_replies(store, otlp_dir):
    report = import_paths(store, [otlp_dir / GENAI])
    assert report.files[0].format == "otlp" and report.episodes == 1
    episode = only_episode(store)
    assert episode.agent == "gpt-4.1" and episode.outcome.success is True  # eval.success
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (4402, 237)
    assert episode.metadata["service_name"] == "date-fixer"
    assert episode.metadata["agent_name"] == "fixer" and episode.metadata["spans"] == 8
    task = store.task(episode.task_id)
    assert task.environment == "otlp" and task.id.startswith("otlp:prompt-")
    assert task.instruction.startswith("The tests in tests/test_dates.py fail.")
    steps = store.steps(episode.id)
    assert [s.kind for s in steps] == [
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "message",
    ]  # fmt: skip — spans were exported in end order; steps follow start order
    first = steps[1]
    assert first.action == 'run_shell({\n  "command": "pytest -q tests/test_dates.py"\n})'
    assert first.thought == "Run the failing tests first.\n\nLet me run the tests."
    assert (first.tool_name, first.tool_call_id) == ("run_shell", "call_01")
    assert steps[2].observation.endswith("1 failed, 1 passed")
    assert steps[2].tool_call_id == "call_01"
    assert steps[4].observation == "Error: FileNotFoundError: src/date.py"  # error status
    assert steps[7].role == "assistant" and steps[7].content.startswith("parse_date now")
    assert steps[0].timestamp < steps[1].timestamp < steps[2].timestamp


def test_openinference_jsonl_gives_one_episode_per_trace(store, otlp_dir):
    report = import_paths(store, [otlp_dir / OPENINFERENCE])
    assert report.files[0].format == "otlp" and report.episodes == 2
    by_trace = {e.metadata["trace_id"]: e for e in store.episodes()}
    answered = by_trace[TRACE]  # its spans are split over both lines
    assert answered.outcome.success is True and answered.outcome.score == 1.0  # reward
    assert (answered.usage.prompt_tokens, answered.usage.completion_tokens) == (500, 27)
    assert answered.agent == "gpt-4o-mini" and answered.metadata["session_id"] == "sess-42"
    assert store.task(answered.task_id).instruction.startswith("What is the capital")
    steps = store.steps(answered.id)
    assert [s.kind for s in steps] == ["message", "tool_call", "tool_result", "message"]
    assert steps[1].action == 'search({\n  "query": "Eiffel Tower location"\n})'
    assert steps[1].thought == "I should look up where the Eiffel Tower is."
    assert steps[2].observation.startswith("The Eiffel Tower is on the Champ de Mars")
    assert steps[3].content == "Paris"
    failed = next(e for e in store.episodes() if e.id != answered.id)
    assert failed.outcome.success is None  # no outcome attribute: unknown
    assert failed.metadata["error"] == "RateLimitError: quota exceeded"
    kinds = [(s.kind, s.content) for s in store.steps(failed.id)]
    assert kinds[-1] == ("error", "Error: RateLimitError: quota exceeded")


def test_a_score_attribute_on_the_root_gives_the_outcome(tmp_path, store):
    path = write_json(
        tmp_path / "t.json",
        traces(
            span("r", "", 0, 9, {"gen_ai.operation.name": "invoke_agent", "score": 0.25}),
            span("c", "r", 1, 2, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ls"}),
        ),
    )  # fmt: skip
    import_paths(store, [path])
    episode = only_episode(store)
    assert (episode.outcome.success, episode.outcome.score) == (False, 0.25)
    steps = store.steps(episode.id)
    assert [s.action for s in steps if s.kind == "tool_call"] == ["ls()"]
    assert steps[0].tool_call_id == "c"  # no call id: the span id


def test_a_tool_span_without_content_takes_it_from_the_model_messages(tmp_path, store):
    call = {"type": "tool_call", "id": "call_9", "name": "ls", "arguments": {"path": "src"}}
    answer = {"type": "tool_call_response", "id": "call_9", "response": ["a.py", "b.py"]}
    first = {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}]),
    }
    second = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([{"role": "tool", "parts": [answer]}]),
    }
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "ls",
        "gen_ai.tool.call.id": "call_9",
    }
    path = write_json(
        tmp_path / "t.json",
        traces(span("r", "", 0, 9, {"gen_ai.operation.name": "invoke_agent"}),
               span("m1", "r", 1, 2, first), span("c", "r", 3, 4, tool), span("m2", "r", 5, 6, second)),
    )  # fmt: skip
    import_paths(store, [path])
    call_step, result = store.steps(only_episode(store).id)[:2]
    assert call_step.action == 'ls({\n  "path": "src"\n})'
    assert result.observation == '["a.py", "b.py"]'


def test_a_50_mb_tool_result_is_stored_whole(tmp_path, store):
    huge = "x" * FIFTY_MB + "END"
    tool = {"openinference.span.kind": "TOOL", "tool.name": "cat", "output.value": huge}
    path = write_jsonl(tmp_path / "big.jsonl", [traces(span("r", "", 0, 9, tool))])
    import_paths(store, [path])
    assert_stored_whole(store.step(only_episode(store).id, 1).observation, huge)


def test_importing_twice_adds_nothing(store, otlp_dir):
    paths = [otlp_dir / GENAI, otlp_dir / OPENINFERENCE]
    assert_reimport_adds_nothing(store, paths, "otlp", episodes=3)


# -- bad input --------------------------------------------------------------------------------


def test_a_bad_span_fails_the_import_naming_line_and_field(store, otlp_dir):
    path = otlp_dir / "bad_lines.jsonl"
    error = import_error(store, path, "otlp")
    assert str(error) == (
        f"{path}: line 2: field 'resourceSpans.0.scopeSpans.0.spans.0.traceId': missing"
    )
    assert store.count_episodes() == 0 and store.batches() == []


def test_skip_bad_names_each_bad_line_and_field(store, otlp_dir):
    path = otlp_dir / "bad_lines.jsonl"
    report = import_paths(store, [path], skip_bad=True)
    reasons = bad_reasons(report, path)
    assert reasons[0] == "line 2: field 'resourceSpans.0.scopeSpans.0.spans.0.traceId': missing"
    assert reasons[1].startswith("line 3: invalid JSON")
    assert reasons[2] == (
        "line 4: field 'resourceSpans.0.scopeSpans.0.spans.0.attributes.0.key': missing"
    )
    steps = store.steps(only_episode(store).id)
    assert [s.content for s in steps] == ["Say hello.", "Hello."]


@pytest.mark.parametrize(
    ("bad", "where", "field"),
    [
        ({"resourceSpans": {}}, "record 1", "resourceSpans"),
        (
            traces({**span("a", "", 0, 1, {}), "startTimeUnixNano": "soon"}),
            "record 1",
            "resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano",
        ),
        (
            traces({**span("a", "", 0, 1, {}), "attributes": [{"key": "k", "value": {"x": 1}}]}),
            "record 1",
            "resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value",
        ),
    ],
)
def test_a_malformed_record_is_named(tmp_path, store, bad, where, field):
    path = write_json(tmp_path / "bad.json", bad)
    error = import_error(store, path, "otlp")
    assert (error.where, error.field) == (where, field)
    assert str(error).startswith(f"{path}: {where}: field '{field}'")


def test_a_cut_document_names_its_line(tmp_path, store, otlp_dir):
    text = (otlp_dir / GENAI).read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    error = import_error(store, path, "otlp")
    assert error.where.startswith("line ") and "invalid JSON" in error.message


def test_a_trace_without_agent_spans_fails_clearly(tmp_path, store):
    path = write_jsonl(tmp_path / "t.jsonl", [traces(span("a", "", 0, 1, {"http.method": "GET"}))])
    error = import_error(store, path, "otlp")
    assert str(error) == f"{path}: trace t1: no agent, model or tool spans in the trace"


def test_an_export_without_spans_fails_clearly(tmp_path, store):
    path = write_json(tmp_path / "t.json", {"resourceSpans": []})
    error = import_error(store, path, "otlp")
    assert str(error) == f"{path}: no spans (not an OTLP trace export)"


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [GENAI, OPENINFERENCE, "bad_lines.jsonl"])
def test_exports_are_detected(otlp_dir, name):
    assert formats.detect(otlp_dir / name) is otlp


@pytest.mark.parametrize(
    "head",
    [
        '{"messages": [{"role": "user", "content": "resourceSpans scopeSpans"}]}\n',
        '{"type": "response_item", "payload": {}}\n',
        '{"resourceMetrics": [{"scopeMetrics": []}]}\n',
    ],
)
def test_other_files_are_not_otlp(head):
    assert not otlp.sniff(Path("x.json"), head)


def test_the_cli_names_the_bad_line_and_skip_bad_keeps_the_rest(db_path, otlp_dir):
    path = otlp_dir / "bad_lines.jsonl"
    assert_cli_names_bad_line(db_path, path, f"{path}: line 2: field", "line 4")


def test_the_sample_is_detected(store):
    from workbench.ingest import SAMPLES

    report = import_paths(store, [SAMPLES / "otlp_genai_trace.json"])
    assert report.files[0].format == "otlp" and report.episodes == 1


def test_messages_written_as_span_events_and_an_array_of_exports(tmp_path, store):
    def event(name, **attributes):
        return {
            "name": name,
            "timeUnixNano": str(T0),
            "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
        }

    model = span("m", "r", 1, 2, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m1"})
    model["events"] = [
        event("gen_ai.system.message", content="You fix tests."),
        event("gen_ai.user.message", content="Make tests/test_x.py pass."),
        event("gen_ai.choice", message=json.dumps({"role": "assistant", "content": "On it."})),
    ]
    legacy = span("m2", "r", 5, 6, {"gen_ai.operation.name": "chat"})
    legacy["events"] = [
        event("gen_ai.content.completion", **{"gen_ai.completion": json.dumps(
            [{"role": "assistant", "content": "All tests pass now."}])}),
    ]  # fmt: skip
    tool = span("c", "r", 3, 4, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "sh"},
                status={"code": 2})  # fmt: skip
    tool["events"] = [
        event("exception", **{"exception.type": "OSError", "exception.message": "no"})
    ]
    root = span("r", "", 0, 9, {"gen_ai.operation.name": "invoke_agent", "eval.success": True})
    other = span("r", "", 0, 1, {"gen_ai.operation.name": "chat"}, trace="t2")
    other["events"] = [event("gen_ai.user.message", content="Another task.")]
    path = tmp_path / "array.json"
    path.write_text(json.dumps([traces(root, model, tool, legacy), traces(other)]))
    assert formats.detect(path) is otlp
    report = import_paths(store, [path])
    assert report.episodes == 2  # one per trace, across the array's objects
    episode = next(e for e in store.episodes() if e.outcome.success)
    assert store.task(episode.task_id).instruction == "Make tests/test_x.py pass."
    steps = store.steps(episode.id)
    replies = [s.content for s in steps if s.kind == "message" and s.role == "assistant"]
    assert replies == ["All tests pass now."]
    call = next(s for s in steps if s.kind == "tool_call")
    assert call.thought == "On it."  # the reply right before a call is its thought
    assert [s.observation for s in steps if s.kind == "tool_result"] == ["Error: OSError: no"]


def test_malformed_events_are_named(tmp_path, store):
    bad = span("r", "", 0, 9, {"gen_ai.operation.name": "invoke_agent"})
    bad["events"] = {"name": "x"}
    path = write_json(tmp_path / "bad.json", traces(bad))
    error = import_error(store, path, "otlp")
    assert "resourceSpans.0.scopeSpans.0.spans.0.events" in str(error)
    assert "expected a list" in str(error)


# -- JSON lines streamed: what reading the whole file first gave -------------------------------


def _agent(trace, at):
    return span(f"{trace}-root", "", at, at + 9, {"gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                    {"type": "text", "content": f"task of {trace}"}]}])}, trace=trace)  # fmt: skip


def _tool(trace, name, at):
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return span(f"{trace}-{name}", f"{trace}-root", at, at + 1, attributes, trace=trace)


def _stored(store):
    """Each episode's trace, steps and metadata, in the order they were stored."""
    return [
        (e.metadata["trace_id"], e.metadata["spans"], [(s.kind, s.action) for s in store.steps(e.id)])
        for e in store.episodes()
    ]  # fmt: skip


def test_streamed_lines_give_what_the_whole_file_gave(tmp_path, store):
    """Traces split over lines, one's key written with escapes, one's id a number: the
    episodes, their steps and their order are those of the same spans as one document."""
    lines = [
        traces(_agent("a", 0), _tool("a", "ls", 1)),
        traces(_agent("b", 2)),
        traces(_tool("b", "cat", 3), _tool("a", "rm", 4)),
        traces(_agent("c", 5), _tool("c", "cd", 6), span("x", "", 0, 1, {}, trace="a")),
        traces({**_tool("d", "echo", 7), "traceId": 42}, {**_agent("d", 7), "traceId": 42}),
    ]
    texts = [json.dumps(line) for line in lines]  # a's last span: its key escaped
    texts[3] = texts[3].replace('"traceId": "a"', '"trace\\u0049d": "a"')
    text = "\n".join(texts)
    streamed = tmp_path / "lines.jsonl"
    streamed.write_text(text + "\n\n")
    whole = write_json(tmp_path / "whole.json", lines)  # an array: read whole, as before

    import_paths(store, [streamed])
    with Store(tmp_path / "whole.db") as other:
        import_paths(other, [whole])
        expected = _stored(other)
    assert [trace for trace, *_ in expected] == ["a", "b", "c", "42"]
    assert _stored(store) == expected


def test_a_trace_stays_open_until_its_last_line(tmp_path):
    lines = [traces(_agent("a", 0)), traces(_agent("b", 1)), traces(_tool("a", "ls", 2))]
    path = write_jsonl(tmp_path / "lines.jsonl", lines)
    ctx = ReadContext(path=path, content_hash="0" * 64, batch_id="b", format="otlp")
    assert otlp._stream_plan(ctx) == {"a": 3, "b": 2}
    read = [(item.episode.metadata["trace_id"], len(item.steps)) for item in otlp.read(ctx)]
    assert read == [("a", 3), ("b", 1)]  # the first trace first, though it ends last


def test_the_steps_of_a_trace_of_several_agents_name_the_agent_they_ran_under(tmp_path, store):
    agent = "gen_ai.operation.name"
    path = write_json(
        tmp_path / "trace.json",
        traces(
            span("root", "", 0, 100, {agent: "invoke_agent", "gen_ai.agent.name": "Orchestrator"}),
            span("plan", "root", 1, 2, {agent: "execute_tool", "gen_ai.tool.name": "plan"}),
            span("sub", "root", 3, 90, {agent: "invoke_agent", "gen_ai.agent.name": "Researcher"}),
            span("look", "sub", 4, 5, {agent: "execute_tool", "gen_ai.tool.name": "search"}),
        ),
    )
    import_paths(store, [path], format="otlp")
    steps = store.steps(only_episode(store).id)
    assert [(s.tool_name, s.agent) for s in steps if s.kind == "tool_call"] == [
        ("plan", "Orchestrator"),
        ("search", "Researcher"),
    ]


def test_a_trace_of_one_agent_names_no_agent_on_its_steps(store, otlp_dir):
    import_paths(store, [otlp_dir / GENAI])
    assert {s.agent for s in store.steps(only_episode(store).id)} == {""}
