"""The chat client against a real HTTP server speaking the chat-completions protocol."""

from __future__ import annotations

import json
import threading

import pytest
from pydantic import BaseModel

from store import Store
from tests.llm_server import (
    LLAMA_CPP_FORMS,
    ChatServer,
    Reply,
    empty_choices,
    http_error,
    malformed,
    refusal,
    truncated,
)
from workbench.llm import ChatClient, ConfigError, ModelError, prompt_hash
from workbench.llm.answers import CheckFailed, checked_answer

HELLO = [{"role": "user", "content": "Say hello."}]


class Move(BaseModel):
    thought: str
    action: str


def test_complete_returns_content_and_logs_the_call(client, chat_server, store):
    chat_server.queue("Hello!")
    assert client.complete(HELLO, purpose="test.hello", episode_id="ep-1") == "Hello!"
    [call] = store.calls()
    assert call.purpose == "test.hello"
    assert call.model == "test-model"
    assert call.request == {"messages": HELLO, "params": {"temperature": 0.0}}
    assert call.response == {"content": "Hello!", "finish_reason": "stop"}
    assert call.prompt_hash == prompt_hash("test-model", call.request)
    assert call.prompt_tokens and call.completion_tokens
    assert call.latency_ms > 0
    assert (call.cached, call.error, call.episode_id) == (False, "", "ep-1")
    [received] = chat_server.requests
    assert received.path == "/v1/chat/completions"
    assert received.body["messages"] == HELLO
    assert received.body["model"] == "test-model"


def test_parameters_are_sent_and_change_the_cache_key(client, chat_server, store):
    chat_server.queue("a", "b")
    client.complete(HELLO, purpose="t", temperature=0.7, max_tokens=5, seed=3)
    client.complete(HELLO, purpose="t")
    assert chat_server.requests[0].body["temperature"] == 0.7
    assert chat_server.requests[0].body["max_tokens"] == 5
    assert chat_server.requests[0].body["seed"] == 3
    first, second = reversed(store.calls())
    assert first.prompt_hash != second.prompt_hash


def test_a_repeated_prompt_is_answered_from_the_cache(client, chat_server, store):
    chat_server.queue("Hello!")
    client.complete(HELLO, purpose="t")
    assert client.complete(HELLO, purpose="t") == "Hello!"
    assert chat_server.request_count == 1
    hit, miss = store.calls()
    assert hit.cached and hit.latency_ms == 0 and hit.prompt_hash == miss.prompt_hash
    assert hit.response == miss.response


def test_the_cache_is_shared_by_stores_on_the_same_file(client, chat_server, db_path):
    chat_server.queue(Move(thought="t", action="look around"))
    client.parse(HELLO, Move, purpose="t")
    with Store(db_path) as other:
        again = ChatClient(
            other, model="test-model", api_key="other-key", base_url=chat_server.base_url
        )
        assert again.parse(HELLO, Move, purpose="t") == Move(thought="t", action="look around")
    assert chat_server.request_count == 1


def test_the_cache_can_be_turned_off(store, chat_server):
    client = ChatClient(store, model="m", api_key="k", base_url=chat_server.base_url, cache=False)
    chat_server.queue("one", "two")
    assert client.complete(HELLO, purpose="t") == "one"
    assert client.complete(HELLO, purpose="t") == "two"


def test_parse_sends_the_schema_and_returns_the_model(client, chat_server, store):
    chat_server.queue({"thought": "look first", "action": "look around"})
    move = client.parse(HELLO, Move, purpose="agent.act")
    assert move == Move(thought="look first", action="look around")
    sent = chat_server.requests[0].body["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "Move"
    [call] = store.calls()
    assert call.request["response_format"]["schema"] == Move.model_json_schema()


def test_malformed_output_is_retried_with_a_correction(client, chat_server, store):
    chat_server.queue(malformed(), {"thought": "t", "action": "wait"})
    assert client.parse(HELLO, Move, purpose="t").action == "wait"
    retry = chat_server.requests[1].messages
    assert retry[:1] == HELLO
    assert retry[1] == {"role": "assistant", "content": malformed().content}
    assert "could not be read" in retry[2]["content"]
    success, failure = store.calls()
    assert failure.error.startswith("malformed structured output")
    assert failure.response["content"] == malformed().content
    assert success.error == ""


def test_malformed_output_fails_after_the_retries(client, chat_server, store):
    chat_server.queue(malformed(), {"thought": "no action"}, malformed())
    with pytest.raises(ModelError, match="did not fit Move after 3 attempts") as raised:
        client.parse(HELLO, Move, purpose="t")
    assert chat_server.request_count == 3
    assert raised.value.call is not None and raised.value.call.error
    assert all(call.error for call in store.calls())
    assert "action: Field required" in store.calls()[1].error


def test_a_failed_call_is_not_cached(client, chat_server):
    chat_server.queue(malformed(), malformed(), malformed(), {"thought": "t", "action": "a"})
    with pytest.raises(ModelError):
        client.parse(HELLO, Move, purpose="t")
    assert client.parse(HELLO, Move, purpose="t").action == "a"
    assert chat_server.request_count == 4


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (refusal("No."), "refused: No."),
        (empty_choices(), "no choices"),
        (truncated(), "token limit"),
    ],
)
def test_unusable_replies_raise_and_are_logged(client, chat_server, store, reply, message):
    chat_server.queue(reply)
    with pytest.raises(ModelError, match=message):
        client.parse(HELLO, Move, purpose="t")
    assert chat_server.request_count == 1  # not retried
    [call] = store.calls()
    assert message in call.error
    assert call.prompt_tokens is not None


def test_complete_treats_refusals_and_empty_choices_as_errors(client, chat_server):
    chat_server.queue(refusal(), empty_choices())
    with pytest.raises(ModelError, match="refused"):
        client.complete(HELLO, purpose="t")
    with pytest.raises(ModelError, match="no choices"):
        client.complete([{"role": "user", "content": "again"}], purpose="t")


def test_a_reply_that_is_not_json_is_an_error(client, chat_server, store):
    chat_server.queue(Reply(raw="<html>proxy error page</html>"))
    with pytest.raises(ModelError, match="not a JSON object"):
        client.parse(HELLO, Move, purpose="t")
    assert chat_server.request_count == 1
    assert store.calls()[0].response is None


def test_complete_returns_a_truncated_reply_and_logs_why(client, chat_server, store):
    chat_server.queue(truncated("Hello, wor"))
    assert client.complete(HELLO, purpose="t", max_tokens=3) == "Hello, wor"
    assert store.calls()[0].response["finish_reason"] == "length"


def test_server_errors_are_retried(client, chat_server, store):
    chat_server.queue(http_error(500), http_error(429), "fine")
    assert client.complete(HELLO, purpose="t") == "fine"
    errors = [call.error for call in reversed(store.calls())]
    assert errors == ["HTTP 500: scripted server error", "HTTP 429: scripted server error", ""]


def test_server_errors_fail_after_the_retries(client, chat_server, store):
    chat_server.queue(http_error(500), http_error(502), http_error(503))
    with pytest.raises(ModelError, match=r"HTTP 503.*after 3 attempts"):
        client.complete(HELLO, purpose="t")
    assert len(store.calls()) == 3


def test_client_errors_are_not_retried(client, chat_server):
    chat_server.queue(http_error(400, "bad request"), "never sent")
    with pytest.raises(ModelError, match="HTTP 400: bad request"):
        client.complete(HELLO, purpose="t")
    assert chat_server.request_count == 1


def test_a_timeout_is_an_error(store):
    release = threading.Event()

    def slow(request):
        release.wait(10)
        return "late"

    with ChatServer(slow) as server:
        client = ChatClient(
            store,
            model="m",
            api_key="k",
            base_url=server.base_url,
            timeout=0.2,
            transport_retries=0,
        )
        try:
            with pytest.raises(ModelError, match="timed out"):
                client.complete(HELLO, purpose="t")
        finally:
            release.set()
    assert store.calls()[0].error == "the request timed out"


def test_an_unreachable_endpoint_is_an_error(store):
    server = ChatServer()
    url = server.base_url
    server.stop()  # the port is free again: nothing listens
    client = ChatClient(store, model="m", api_key="k", base_url=url, transport_retries=0)
    with pytest.raises(ModelError, match="could not reach the endpoint"):
        client.complete(HELLO, purpose="t")


def test_the_api_key_is_never_stored(client, chat_server, store, db_path):
    key = chat_server.api_key

    def echo_headers(request):
        return http_error(401, f"bad key {key}")  # a server that echoes the key back

    chat_server.queue("hi", malformed(), {"thought": "t", "action": "a"}, refusal())
    client.complete(HELLO, purpose="t")
    client.parse(HELLO, Move, purpose="t")
    with pytest.raises(ModelError):
        client.parse([{"role": "user", "content": "refuse"}], Move, purpose="t")
    chat_server.responder = echo_headers
    with pytest.raises(ModelError) as raised:
        client.complete([{"role": "user", "content": "echo"}], purpose="t")
    assert key not in str(raised.value)
    # the key went only into the Authorization header
    for received in chat_server.requests:
        assert received.headers["authorization"] == f"Bearer {key}"
        assert key not in received.raw
    rows = store.conn.execute("SELECT * FROM llm_calls").fetchall()
    assert len(rows) == 5
    assert all(key not in json.dumps([str(v) for v in tuple(row)]) for row in rows)
    assert "[redacted]" in store.calls()[0].error
    assert key.encode() not in db_path.read_bytes()


def test_from_env_reads_the_three_variables(store, chat_server):
    env = {
        "OPENAI_BASE_URL": chat_server.base_url,
        "OPENAI_API_KEY": "k",
        "WORKBENCH_MODEL": "env-model",
    }
    client = ChatClient.from_env(store, environ=env, backoff=0)
    assert (client.model, client.base_url, client.backoff) == (
        "env-model",
        env["OPENAI_BASE_URL"],
        0,
    )
    assert ChatClient.from_env(store, environ=env, model="other").model == "other"


@pytest.mark.parametrize("missing", ["OPENAI_BASE_URL", "OPENAI_API_KEY", "WORKBENCH_MODEL"])
def test_from_env_names_the_missing_variable(store, missing):
    env = {
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "k",
        "WORKBENCH_MODEL": "m",
    }
    del env[missing]
    with pytest.raises(ConfigError, match=missing):
        ChatClient.from_env(store, environ=env)


def test_from_env_reads_the_process_environment(store, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("WORKBENCH_MODEL", raising=False)
    with pytest.raises(ConfigError, match="WORKBENCH_MODEL"):
        ChatClient.from_env(store)
    monkeypatch.setenv("WORKBENCH_MODEL", "m")
    assert ChatClient.from_env(store).model == "m"


def test_the_server_also_answers_without_the_v1_prefix(store, chat_server):
    client = ChatClient(
        store, model="m", api_key="k", base_url=chat_server.base_url.removesuffix("/v1")
    )
    chat_server.queue("ok")
    assert client.complete(HELLO, purpose="t") == "ok"
    assert chat_server.requests[0].path == "/chat/completions"


# -- what a small real model and its server do (seen with SmolLM2-135M on llama-cpp-python) --


def test_a_server_that_refuses_the_json_schema_form_gets_the_json_object_form(store):
    with ChatServer(schema_forms=LLAMA_CPP_FORMS) as server:
        server.queue(Move(thought="t", action="look"), Move(thought="u", action="wait"))
        client = ChatClient(store, model="m", api_key="k", base_url=server.base_url, backoff=0)
        assert client.parse(HELLO, Move, purpose="t").action == "look"
        assert client.parse([{"role": "user", "content": "Again."}], Move, purpose="t").action == (
            "wait"
        )
        refused, taken, direct = (r.body["response_format"] for r in server.requests)
    assert refused["type"] == "json_schema"
    assert taken["type"] == direct["type"] == "json_object"
    schema = taken["schema"]  # the strict schema the json_schema form carries
    assert schema["required"] == ["thought", "action"] and schema["additionalProperties"] is False
    errors = [call.error for call in reversed(store.calls())]
    assert errors[0].startswith("HTTP 500") and "response_format" in errors[0]
    assert errors[1:] == ["", ""]
    assert client.schema_form == "json_object"


def test_a_request_refused_in_both_forms_is_one_model_error(store):
    with ChatServer(schema_forms=()) as server:
        client = ChatClient(store, model="m", api_key="k", base_url=server.base_url, backoff=0)
        with pytest.raises(ModelError, match="HTTP 500"):
            client.parse(HELLO, Move, purpose="t")
        assert server.request_count == 2  # one in each form: a refusal is not retried
    assert client.schema_form == "json_schema"
    assert [bool(call.gave_up) for call in store.calls()] == [True, False]


@pytest.mark.parametrize("form", ["json_schema", "json_object"])
def test_cut_off_and_malformed_replies_are_told_apart_in_either_form(store, form):
    forms = ("json_schema", "json_object") if form == "json_schema" else LLAMA_CPP_FORMS
    with ChatServer(schema_forms=forms) as server:
        client = ChatClient(store, model="m", api_key="k", base_url=server.base_url, backoff=0)
        client.schema_form = form
        server.queue(malformed('{"thought": "x", "action": 3}'), Move(thought="t", action="a"))
        assert client.parse(HELLO, Move, purpose="t").action == "a"
        server.queue(truncated('{"thought": "look look look look'))
        with pytest.raises(ModelError, match="token limit"):
            client.parse([{"role": "user", "content": "Long."}], Move, purpose="t")
    errors = [call.error for call in reversed(store.calls())]
    assert errors[0].startswith("malformed structured output") and errors[1] == ""
    assert "token limit" in errors[2]


def test_turns_and_the_call_a_question_ended_on_are_logged(client, chat_server, store):
    chat_server.queue(malformed(), {"thought": "no action"}, malformed())
    with pytest.raises(ModelError) as raised:
        client.parse(HELLO, Move, purpose="t")
    calls = list(reversed(store.calls()))
    assert [c.turn for c in calls] == [0, 1, 2]
    assert [c.gave_up for c in calls[:2]] == ["", ""]
    assert calls[2].gave_up == str(raised.value) == raised.value.call.gave_up


def test_a_checked_answer_logs_its_correction_turn_and_why_it_gave_up(client, chat_server, store):
    chat_server.queue(Move(thought="t", action=""), Move(thought="t", action=" "))

    def check(move: Move) -> list[str]:
        return [] if move.action.strip() else ["action is empty"]

    with pytest.raises(CheckFailed, match="action is empty"):
        checked_answer(
            client, HELLO, Move, purpose="t", check=check, correction=lambda p: "; ".join(p)
        )
    first, second = reversed(store.calls())
    assert (first.turn, first.gave_up, second.turn) == (0, "", 1)
    assert "action is empty" in second.gave_up and second.error == ""


def test_a_raw_newline_inside_a_string_is_read_as_a_newline(client, chat_server, store):
    # SmolLM2-135M under a grammar writes literal newlines inside strings (strict JSON has none)
    chat_server.queue('{ "thought": "first line\nsecond line", "action": "look around" }')
    move = client.parse(HELLO, Move, purpose="t")
    assert move == Move(thought="first line\nsecond line", action="look around")
    assert client.parse(HELLO, Move, purpose="t") == move  # and from the cache
    assert chat_server.request_count == 1


def test_a_key_the_server_reflects_in_its_reply_is_neither_stored_nor_sent_back(
    client, chat_server, store, db_path
):
    key = chat_server.api_key
    chat_server.queue(
        Reply(content=f'{{"thought": "your key is {key}", "action": '),  # malformed: corrected
        {"thought": f"still {key}", "action": "look"},
    )
    move = client.parse(HELLO, Move, purpose="t")
    assert move.thought == "still [redacted]"
    correction = chat_server.requests[1]
    assert key not in correction.raw and "[redacted]" in correction.raw
    rows = store.conn.execute("SELECT response FROM llm_calls").fetchall()
    assert len(rows) == 2 and all(key not in str(row[0]) for row in rows)
    assert key.encode() not in db_path.read_bytes()
