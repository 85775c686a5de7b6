"""A real chat-completions server on 127.0.0.1 for tests: the one shared scripted model.

It speaks ``POST /v1/chat/completions`` (and ``/chat/completions``) over HTTP, answers from a
queue of scripted replies and then from a responder function, and records every request it
received so tests can assert what the prompt contained::

    with ChatServer(responder=lambda request: {"thought": "t", "action": "look around"}) as server:
        client = OpenAI(base_url=server.base_url, api_key=server.api_key, max_retries=0)
        ...
        assert "Rule" in server.prompt_text()

A responder (or a queued entry) may return a :class:`Reply`, a ``str`` (the message content),
a ``dict``/``list`` or a pydantic model (sent as JSON content, for structured outputs).
Helpers build the unusual replies: :func:`malformed`, :func:`refusal`, :func:`empty_choices`,
:func:`truncated` (``finish_reason: "length"``) and :func:`http_error`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel

PATHS = ("/v1/chat/completions", "/chat/completions")
LLAMA_CPP_FORMS = ("json_object",)
"""The ``response_format`` types llama-cpp-python's server reads (its schema under
``schema``); it answers a ``json_schema`` request with HTTP 500 naming the field."""
TEST_API_KEY = "sk-test-7f3a9c1e5b2d4680"
"""The key tests give the client: distinctive, so a leak is easy to grep for."""


@dataclass
class Reply:
    """One scripted answer."""

    content: str | None = ""
    finish_reason: str = "stop"
    refusal: str | None = None
    choices: bool = True
    """False sends an empty ``choices`` list."""
    status: int = 200
    """Anything but 200 sends an error body instead of a completion."""
    error: str = "scripted server error"
    raw: str | None = None
    """Sent verbatim as the body (with ``status``) instead of a completion, e.g. not JSON."""


def malformed(text: str = '{"thought": "unfinished') -> Reply:
    """Content that is not valid JSON for any schema."""
    return Reply(content=text)


def refusal(text: str = "I can't help with that.") -> Reply:
    """A refusal (``message.refusal`` set, no content)."""
    return Reply(content=None, refusal=text)


def empty_choices() -> Reply:
    """A completion with an empty ``choices`` list."""
    return Reply(choices=False)


def truncated(text: str = '{"thought": "a very long') -> Reply:
    """A completion cut off by the token limit (``finish_reason: "length"``)."""
    return Reply(content=text, finish_reason="length")


def http_error(status: int = 500, message: str = "scripted server error") -> Reply:
    """An HTTP error status with an OpenAI-style error body."""
    return Reply(status=status, error=message)


Answer = Reply | str | dict[str, Any] | list[Any] | BaseModel
Responder = Callable[[dict[str, Any]], Answer]


def as_reply(answer: Answer) -> Reply:
    """Turn whatever a responder returned into a :class:`Reply`."""
    if isinstance(answer, Reply):
        return answer
    if isinstance(answer, str):
        return Reply(content=answer)
    if isinstance(answer, BaseModel):
        return Reply(content=answer.model_dump_json())
    return Reply(content=json.dumps(answer))


@dataclass
class Received:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    """Request headers, names in lower case."""
    raw: str
    """The body exactly as sent."""
    body: dict[str, Any] = field(default_factory=dict)
    """The body parsed as JSON (empty if it was not JSON)."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    def prompt_text(self) -> str:
        """All message contents of the request, joined."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)


class ChatServer:
    """A threaded HTTP server speaking the chat-completions protocol on 127.0.0.1.

    Args:
        responder: answers a request (its JSON body) when the scripted queue is empty.
        replies: scripted answers served first, in order.
    """

    api_key = TEST_API_KEY

    def __init__(
        self,
        responder: Responder | None = None,
        replies: Sequence[Answer] = (),
        *,
        schema_forms: Sequence[str] = ("json_schema", "json_object"),
    ) -> None:
        self.responder = responder
        self.schema_forms = tuple(schema_forms)
        """The ``response_format`` types it takes; another is answered with HTTP 500 naming
        the field, as llama-cpp-python's server answers ``json_schema``
        (``schema_forms=LLAMA_CPP_FORMS``)."""
        self._queue: list[Answer] = list(replies)
        self._lock = threading.Lock()
        self.requests: list[Received] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def queue(self, *answers: Answer) -> None:
        """Add scripted answers, served before the responder."""
        with self._lock:
            self._queue.extend(answers)

    def prompt_text(self, index: int = -1) -> str:
        """The message contents of one received request (the latest by default)."""
        with self._lock:
            return self.requests[index].prompt_text()

    def start(self) -> ChatServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ------------------------------------------------------------------------

    def _answer(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
            scripted = self._queue.pop(0) if self._queue else None
        if scripted is not None:
            return as_reply(scripted)
        if self.responder is not None:
            return as_reply(self.responder(received.body))
        return http_error(500, "the test server has no scripted reply left")


def completion_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a chat completion carrying ``reply``."""
    prompt = sum(len(str(m.get("content") or "")) for m in request.get("messages", []))
    completion = len(reply.content or reply.refusal or "")
    message = {"role": "assistant", "content": reply.content, "refusal": reply.refusal}
    choices = [{"index": 0, "message": message, "finish_reason": reply.finish_reason}]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "test-model"),
        "choices": choices if reply.choices else [],
        "usage": {
            "prompt_tokens": prompt // 4 + 1,
            "completion_tokens": completion // 4 + 1,
            "total_tokens": prompt // 4 + completion // 4 + 2,
        },
    }


def _refused_form(body: dict[str, Any], forms: Sequence[str]) -> str:
    """Why a request's ``response_format`` is refused ("" when it is taken)."""
    response_format = body.get("response_format")
    if not isinstance(response_format, dict) or response_format.get("type") in (*forms, "text"):
        return ""
    allowed = " or ".join(repr(f) for f in ("text", *forms))
    return (
        "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
        f"'type'), 'msg': \"Input should be {allowed}\", 'input': {response_format.get('type')!r}}}"
    )


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stalls

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = {}
            headers = {k.lower(): v for k, v in self.headers.items()}
            received = Received(self.path, headers, raw, body)
            if self.path not in PATHS:
                with server._lock:
                    server.requests.append(received)
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "test"}})
                return
            refused = _refused_form(body, server.schema_forms)
            if refused:  # as llama-cpp-python's server answers: a 500 naming the field
                with server._lock:
                    server.requests.append(received)
                self._send(500, {"error": {"message": refused, "type": "internal_server_error"}})
                return
            reply = server._answer(received)
            if reply.raw is not None:
                self._send_bytes(reply.status, reply.raw.encode(), "text/html")
            elif reply.status != 200:
                self._send(reply.status, {"error": {"message": reply.error, "type": "test"}})
            else:
                self._send(200, completion_body(reply, body))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            self._send_bytes(status, json.dumps(payload).encode(), "application/json")

        def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    return Handler


def serve(
    responder: Responder | None = None,
    replies: Sequence[Answer] = (),
    schema_forms: Sequence[str] = ("json_schema", "json_object"),
) -> Iterator[ChatServer]:
    """Generator for a pytest fixture: a started server, stopped at teardown."""
    with ChatServer(responder, list(replies), schema_forms=schema_forms) as server:
        yield server
