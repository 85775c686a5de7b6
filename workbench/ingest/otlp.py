"""OpenTelemetry traces of agents exported as OTLP JSON (collector file exporter, Phoenix, Langfuse).

A file holds one ``TracesData`` object, ``{"resourceSpans": [{"resource": {"attributes"},
"scopeSpans": [{"scope", "spans": [...]}]}]}``, or one such object per line (JSONL, as the
collector's file exporter writes), or a JSON array of them. A span carries ``traceId``, ``spanId``, ``parentSpanId``,
``name``, ``startTimeUnixNano``/``endTimeUnixNano`` (decimal strings), ``status.code``
(``2``/``STATUS_CODE_ERROR`` is an error) and ``attributes``: a list of ``{key, value}``, the
value tagged as ``stringValue``, ``intValue`` (a decimal string), ``doubleValue``,
``boolValue``, ``arrayValue.values`` or ``kvlistValue.values``.

Two attribute conventions are read:

- OpenTelemetry GenAI: ``gen_ai.operation.name`` (``chat``/``text_completion``/
  ``generate_content`` model calls, ``execute_tool``, ``invoke_agent``), ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``/``result``,
  ``gen_ai.usage.input_tokens``/``output_tokens``, ``gen_ai.request.model`` and the message
  lists ``gen_ai.input.messages``/``gen_ai.output.messages`` (JSON: ``role`` and ``parts`` of
  ``text``/``reasoning``/``tool_call`` …) — or, as older instrumentations write them, span
  ``events``: ``gen_ai.{system,user,assistant,tool}.message`` and ``gen_ai.choice`` with their
  ``content``/``message``, OpenLLMetry's ``gen_ai.content.prompt``/``completion`` with
  ``gen_ai.prompt``/``gen_ai.completion``; an ``exception`` event gives a failed span's error;
- OpenInference (Arize Phoenix): ``openinference.span.kind`` (``LLM``, ``TOOL``, ``AGENT``,
  ``CHAIN`` …), ``tool.name``, ``tool.parameters``, ``input.value``, ``output.value``,
  ``llm.model_name``, ``llm.token_count.prompt``/``completion`` and the flattened
  ``llm.input_messages.<i>.message.role``/``content`` (and ``llm.output_messages``).

**Steps.** A trace (``traceId``) is one episode; its spans, in start-time order, give: the
root span's input as the instruction (a user ``message``), each tool span a ``tool_call``
(tool name + indented JSON arguments) and its output as the ``tool_result`` under it (a span
with error status reads ``Error: <status message>``; arguments and result a GenAI tool span
does not record are taken from the ``tool_call``/``tool_call_response`` message parts with its
call id), and each model-call span's reply text
an assistant ``message`` (or the thought of the tool call right after it, with its
reasoning). Other spans (chains, retrievers, nested agents) add no step.

**Records.** The task is ``otlp:prompt-<hash of the instruction>``; the outcome comes from a
``success``/``reward``/``score`` attribute (any namespace, e.g. ``eval.reward``) on the root
span, else unknown; the agent is the first model named; usage is summed over model calls. A
line that is not JSON, or a span without its ids or with malformed attributes, is an error
naming the line (or record) and field; with ``--skip-bad`` that span or line is skipped.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path
from typing import Any

from store import Episode, Outcome, Task, Usage
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    json_key,
    outcome_from,
    text_of,
)
from workbench.ingest.record_files import instruction_key, namespaced
from workbench.ingest.steps import build_steps, render_pretty_call, tool_result_step
from workbench.ingest.values import (
    UNREAD,
    as_text,
    compact_json,
    fast_json,
    int_or_none,
    loads,
    parse_json,
    scalar,
    total,
)

name = "otlp"
description = "OpenTelemetry GenAI / OpenInference traces as OTLP JSON (one object or JSONL)"

ENVIRONMENT = "otlp"
MODEL_OPERATIONS = ("chat", "text_completion", "generate_content")
ERROR_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")
OUTCOME_KEYS = ("success", "resolved", "passed", "correct", "score", "reward")
_RESOURCE_SPANS = json_key("resourceSpans", "[")
_SCOPE_SPANS = json_key("scopeSpans", "[")


def sniff(path: Path, head: str) -> bool:
    """JSON holding OTLP's ``resourceSpans`` and ``scopeSpans`` lists (an object, JSON lines of
    them, or an array of them)."""
    if not head.lstrip().startswith(("{", "[")):
        return False
    return bool(_RESOURCE_SPANS.search(head) and _SCOPE_SPANS.search(head))


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield bad records and spans as errors, then one episode per trace.

    Episodes come in the order of their traces' first spans; a trace that cannot be read
    comes as an error after every bad record and span, as if the whole file was read first.
    JSON lines are streamed: a trace becomes an episode once the last line holding one of its
    spans is read (see :func:`_stream_plan`), so only the traces still open are held.
    """
    traces: dict[str, list[_Span]] = {}
    last, failed = _stream_plan(ctx), []
    found = False
    for where, data in _records(ctx, streamed=last is not None):
        if isinstance(data, IngestError):
            yield data
            continue
        for span in _spans(ctx, where, data):
            if isinstance(span, IngestError):
                yield span
            else:
                traces.setdefault(span.trace_id, []).append(span)
                found = True
        if last is not None:
            yield from _finished(ctx, traces, failed, last, int(where.removeprefix("line ")))
    if not found:
        raise ctx.error("", "", "no spans (not an OTLP trace export)")
    yield from _finished(ctx, traces, failed)
    yield from failed


def _finished(
    ctx: ReadContext,
    traces: dict[str, list[_Span]],
    failed: list[IngestError],
    last: dict[str, int] | None = None,
    line: int = 0,
) -> Iterator[ParsedEpisode]:
    """Episodes of the oldest open traces whose last line is at most ``line`` (every trace
    when ``last`` is not given), in order; the errors of traces that cannot be read are
    appended to ``failed``."""
    while traces:
        trace_id = next(iter(traces))
        if last is not None and last.get(trace_id, line + 1) > line:
            return
        spans = traces.pop(trace_id)
        try:
            yield _episode(ctx, trace_id, spans)
        except IngestError as error:
            failed.append(error)


# -- reading the file -------------------------------------------------------------------------


def _records(ctx: ReadContext, streamed: bool = False) -> Iterator[tuple[str, Any]]:
    """``(where, parsed object)`` of the file as one document, or of each of its JSON lines
    (streamed, when :func:`_stream_plan` found the file to be JSON lines)."""
    if streamed:
        yield from _lines(ctx, _numbered_lines(ctx.open()))
        return
    data = ctx.read_all()
    document = fast_json(data)  # (read from the bytes: no decoded copy of a big file)
    if document is UNREAD:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ctx.error(f"byte {error.start}", "", "not UTF-8 text") from None
        try:
            document = loads(text)
        except json.JSONDecodeError as error:
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            if not (first.startswith("{") and first.endswith("}")):
                where = f"line {error.lineno} column {error.colno}"
                raise ctx.error(where, "", f"invalid JSON: {error.msg}") from None
            yield from _lines(ctx, enumerate(text.splitlines(), start=1))
            return
    if isinstance(document, list):  # an array of TracesData objects
        yield from ((f"record {i}", item) for i, item in enumerate(document, start=1))
    else:
        yield "record 1", document


def _lines(ctx: ReadContext, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[str, Any]]:
    for number, line in lines:
        if not line or line.isspace():
            continue
        try:
            yield f"line {number}", parse_json(line)
        except json.JSONDecodeError as error:
            message = f"invalid JSON: {error.msg} (column {error.colno})"
            yield f"line {number}", ctx.error(f"line {number}", "", message)


def _numbered_lines(handle: io.BufferedReader) -> Iterator[tuple[int, str]]:
    """``(number, line)`` of a UTF-8 file, numbered as ``str.splitlines`` of its whole text
    numbers them (which also ends lines at ``\\r``, ``\\x1c``, ``\\u2028`` and the like)."""
    number = 0
    with handle:
        for raw in handle:
            for line in raw.decode("utf-8").splitlines():
                number += 1
                yield number, line


_JSON_SPACE = " \t\n\r"
_TRACE_ID = re.compile(r'"traceId"\s*:\s*(?:"([^"\\]*)(")|)')
"""A ``traceId`` key in JSON text, with its value when that is a plain string (``(value,
'"')``; ``('', '')`` for any other value)."""


def _stream_plan(ctx: ReadContext) -> dict[str, int] | None:
    """For a file of JSON lines, the last line each trace id is on; ``None`` for any other
    file (one document, an array, text that is not UTF-8, a first line that is not a whole
    JSON object), which :func:`_records` reads whole.

    ``_records`` reads a file as JSON lines when its whole text is not one JSON value and its
    first line is ``{...}``: so exactly when the first line is one whole JSON object and
    anything but JSON whitespace follows it (a first line ``{...}`` that is not whole JSON is
    left to the whole read, which tells the two apart). The plan costs one pass over the
    bytes and a match per trace id.
    """
    try:
        with ctx.open(ctx.path) as handle:  # not counted: progress counts the second read
            lines = _numbered_lines(handle)
            first = next(((n, line) for n, line in lines if line.strip()), None)
            if first is None or not _whole_object(first[1].strip()):
                return None
            last: dict[str, int] = {}
            _note_traces(*first, last)
            more = False
            for number, line in lines:
                more = more or bool(line.strip(_JSON_SPACE))
                _note_traces(number, line, last)
    except UnicodeDecodeError:
        return None
    if not more and _one_document(ctx, first[1]):
        return None
    return last


def _whole_object(text: str) -> bool:
    """Whether ``text`` is ``{...}`` and one whole JSON value."""
    if not (text.startswith("{") and text.endswith("}")):
        return False
    try:
        loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _one_document(ctx: ReadContext, first: str) -> bool:
    """Whether the file is its first line and JSON whitespace only (every other line blank
    by ``str.strip`` is, unless it holds other Unicode spaces or line breaks)."""
    with ctx.open(ctx.path) as handle:
        text = handle.read().decode("utf-8")
    start = text.index(first)
    return not (text[:start] + text[start + len(first) :]).strip(_JSON_SPACE)


def _note_traces(number: int, line: str, last: dict[str, int]) -> None:
    """Make ``number`` the last line of each trace id on ``line``, as :func:`_span` reads
    them: matched where every ``traceId`` key is spelled out (no ``\\u`` escape could spell
    one) and has a plain string value, else parsed."""
    escaped = "\\u" in line
    matches = [] if escaped else _TRACE_ID.findall(line)
    if escaped or not all(quote for _, quote in matches):
        found = list(_parsed_trace_ids(line))
    else:
        found = [trace_id for trace_id, _ in matches]
    for trace_id in found:
        if trace_id:
            last[trace_id] = number


def _parsed_trace_ids(line: str) -> Iterator[str]:
    """The trace ids of a line's spans, parsed (none when it is not JSON)."""
    try:
        data = loads(line)
    except json.JSONDecodeError:
        return
    groups = data.get("resourceSpans") if isinstance(data, dict) else None
    for group in groups if isinstance(groups, list) else []:
        scopes = group.get("scopeSpans") if isinstance(group, dict) else None
        for scope in scopes if isinstance(scopes, list) else []:
            spans = scope.get("spans") if isinstance(scope, dict) else None
            for span in spans if isinstance(spans, list) else []:
                trace_id = scalar(span.get("traceId")) if isinstance(span, dict) else None
                if trace_id is not None:
                    yield trace_id


@dataclass(slots=True)
class _Span:
    """One span with its attributes decoded."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    error: str | None
    """The status message of a span with error status (``""`` if it has none); else ``None``."""
    resource: dict[str, Any] = field(default_factory=dict)
    raw: Any = None
    kind: str = "other"
    """``tool``, ``model``, ``agent`` or ``other`` (see :func:`_kind`)."""
    parsed: dict[str, list[Any]] = field(default_factory=dict)
    """Message lists already parsed from the attributes, by key."""

    def messages(self, key: str) -> list[Any]:
        """The message list under attribute ``key`` (a JSON string parsed once)."""
        found = self.parsed.get(key)
        if found is None:
            found = self.parsed[key] = _messages(self.attributes.get(key))
        return found


def _spans(ctx: ReadContext, where: str, data: Any) -> Iterator[_Span | IngestError]:
    """The spans of one ``TracesData`` object; a bad span is yielded as an error."""
    if not isinstance(data, dict):
        yield ctx.error(where, "", "expected a JSON object")
        return
    groups = data.get("resourceSpans")
    if not isinstance(groups, list):
        yield ctx.error(where, "resourceSpans", "expected a list")
        return
    for r, group in enumerate(groups):
        at = f"resourceSpans.{r}"
        try:
            resource, scopes = _resource(ctx, where, at, group)
        except IngestError as error:
            yield error
            continue
        for s, scope in enumerate(scopes):
            yield from _scope_spans(ctx, where, f"{at}.scopeSpans.{s}", scope, resource)


def _resource(
    ctx: ReadContext, where: str, at: str, group: Any
) -> tuple[dict[str, Any], list[Any]]:
    if not isinstance(group, dict):
        raise ctx.error(where, at, "expected an object")
    resource = group.get("resource") or {}
    if not isinstance(resource, dict):
        raise ctx.error(where, f"{at}.resource", "expected an object")
    attributes = _attributes(ctx, where, f"{at}.resource.attributes", resource.get("attributes"))
    scopes = group.get("scopeSpans")
    if not isinstance(scopes, list):
        raise ctx.error(where, f"{at}.scopeSpans", "expected a list")
    return attributes, scopes


def _scope_spans(
    ctx: ReadContext, where: str, at: str, scope: Any, resource: dict[str, Any]
) -> Iterator[_Span | IngestError]:
    spans = scope.get("spans") if isinstance(scope, dict) else None
    if not isinstance(spans, list):
        yield ctx.error(where, f"{at}.spans", "expected a list")
        return
    for k, span in enumerate(spans):
        try:
            yield _span(ctx, where, f"{at}.spans.{k}", span, resource)
        except IngestError as error:
            yield error


def _span(ctx: ReadContext, where: str, at: str, span: Any, resource: dict[str, Any]) -> _Span:
    if not isinstance(span, dict):
        raise ctx.error(where, at, "expected an object")
    trace_id, span_id = scalar(span.get("traceId")), scalar(span.get("spanId"))
    for key, value in (("traceId", trace_id), ("spanId", span_id)):
        if value is None:
            raise ctx.error(where, f"{at}.{key}", "missing")
    status = span.get("status")
    if not isinstance(status, dict):
        status = {}
    failed = status.get("code") in ERROR_CODES
    attributes = _attributes(ctx, where, f"{at}.attributes", span.get("attributes"))
    exception = _fold_events(ctx, where, f"{at}.events", span.get("events"), attributes)
    parsed = _Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=scalar(span.get("parentSpanId")) or "",
        name=as_text(span.get("name")),
        start=_nanos(ctx, where, at, "startTimeUnixNano", span.get("startTimeUnixNano")),
        end=_nanos(ctx, where, at, "endTimeUnixNano", span.get("endTimeUnixNano")),
        attributes=attributes,
        error=(as_text(status.get("message")) or exception) if failed else None,
        resource=resource,
        raw=span,
    )
    parsed.kind = _kind(parsed)
    return parsed


GENAI_MESSAGE_EVENTS = {
    f"gen_ai.{role}.message": role for role in ("system", "user", "assistant", "tool")
}
"""GenAI's per-message span events (semantic conventions before 1.37) and their role."""


def _fold_events(
    ctx: ReadContext, where: str, at: str, events: Any, attributes: dict[str, Any]
) -> str:
    """Read what a span's events carry into its attributes: the model's input and output
    messages written as events (GenAI's ``gen_ai.*.message`` and ``gen_ai.choice``, OpenLLMetry's
    ``gen_ai.content.prompt``/``completion``), unless the attributes already hold them.
    Returns the text of an ``exception`` event (``Type: message``), or ``""``."""
    if events is None:
        return ""
    if not isinstance(events, list):
        raise ctx.error(where, at, "expected a list")
    inputs: list[Any] = []
    outputs: list[Any] = []
    exception = ""
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            raise ctx.error(where, f"{at}.{i}", "expected an object")
        name = as_text(event.get("name"))
        attrs = _attributes(ctx, where, f"{at}.{i}.attributes", event.get("attributes"))
        if name == "gen_ai.content.prompt":
            inputs += _messages(attrs.get("gen_ai.prompt"))
        elif name == "gen_ai.content.completion":
            outputs += _messages(attrs.get("gen_ai.completion"))
        elif name in GENAI_MESSAGE_EVENTS:
            content = _json(attrs.get("content", attrs.get("gen_ai.event.content", "")))
            inputs.append({"role": GENAI_MESSAGE_EVENTS[name], "content": content})
        elif name == "gen_ai.choice":
            message = _json(attrs.get("message", attrs.get("content", "")))
            outputs.append(
                message if isinstance(message, dict) else {"role": "assistant", "content": message}
            )
        elif name == "exception" and not exception:
            kind, text = (
                as_text(attrs.get("exception.type")),
                as_text(attrs.get("exception.message")),
            )
            exception = f"{kind}: {text}" if kind and text else kind or text
    if inputs:
        attributes.setdefault("gen_ai.input.messages", inputs)
    if outputs:
        attributes.setdefault("gen_ai.output.messages", outputs)
    return exception


def _nanos(ctx: ReadContext, where: str, at: str, key: str, value: Any) -> int:
    """A time in nanoseconds since the epoch (a decimal string or a number); 0 if absent."""
    if value is None:
        return 0
    number = int_or_none(int(value) if isinstance(value, str) and value.isdigit() else value)
    if number is None:
        raise ctx.error(
            where, f"{at}.{key}", f"expected nanoseconds since the epoch, got {value!r}"
        )
    return number


def _attributes(ctx: ReadContext, where: str, at: str, items: Any) -> dict[str, Any]:
    """OTLP's ``[{key, value}]`` list as a plain dict of decoded values."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ctx.error(where, at, "expected a list of {key, value}")
    decoded = {}
    for i, item in enumerate(items):
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str):
            raise ctx.error(where, f"{at}.{i}.key", "missing")
        value = item.get("value")
        if type(value) is dict:  # the usual values first, as _value reads them
            if type(text := value.get("stringValue")) is str:
                decoded[key] = text
                continue
            number = value.get("intValue")
            if type(number) is str and "stringValue" not in value and number.isdigit():
                decoded[key] = int(number)
                continue
        decoded[key] = _value(ctx, where, f"{at}.{i}.value", value)
    return decoded


def _value(ctx: ReadContext, where: str, at: str, value: Any) -> Any:
    """One ``AnyValue``: its single tagged field, decoded."""
    if value is None or value == {}:
        return None
    if not isinstance(value, dict):
        raise ctx.error(where, at, "expected an AnyValue object")
    if "stringValue" in value:
        return as_text(value["stringValue"])
    if "intValue" in value:
        number = value["intValue"]
        return int(number) if isinstance(number, str) and number.lstrip("-").isdigit() else number
    if "doubleValue" in value or "boolValue" in value:
        return value.get("doubleValue", value.get("boolValue"))
    if "arrayValue" in value:
        values = (value["arrayValue"] or {}).get("values") or []
        return [_value(ctx, where, f"{at}.arrayValue.values.{i}", v) for i, v in enumerate(values)]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values")
        return _attributes(ctx, where, f"{at}.kvlistValue.values", pairs)
    if "bytesValue" in value:
        return as_text(value["bytesValue"])
    raise ctx.error(where, at, f"unknown value type {', '.join(map(str, value))}")


# -- a trace as an episode --------------------------------------------------------------------


def _kind(span: _Span) -> str:
    """``tool``, ``model``, ``agent`` or ``other``, by either convention."""
    operation = span.attributes.get("gen_ai.operation.name")
    kind = as_text(span.attributes.get("openinference.span.kind")).upper()
    if operation == "execute_tool" or kind == "TOOL":
        return "tool"
    if operation in MODEL_OPERATIONS or kind == "LLM":
        return "model"
    if operation in ("invoke_agent", "create_agent") or kind in ("AGENT", "CHAIN"):
        return "agent"
    return "other"


_START, _END = attrgetter("start"), attrgetter("end")


def _episode(ctx: ReadContext, trace_id: str, spans: list[_Span]) -> ParsedEpisode:
    spans.sort(key=_START)  # stable: spans that start together keep the file's order
    ids = {s.span_id for s in spans}
    root = next((s for s in spans if s.parent_id not in ids), spans[0])
    where = f"trace {trace_id}"
    instruction = _instruction(root, spans)
    fields = _Steps().read(root, spans, instruction)
    if not fields:
        raise ctx.error(where, "", "no agent, model or tool spans in the trace")
    episode_id = ctx.episode_id(f"trace-{trace_id}")
    steps = build_steps(ctx, where, episode_id, fields)
    key = instruction_key(instruction) if instruction else f"{ctx.key}-{trace_id}"
    task = Task(id=namespaced(ENVIRONMENT, key), environment=ENVIRONMENT, instruction=instruction)
    models = [s for s in spans if s.kind == "model"] or spans
    episode = Episode(
        id=episode_id,
        task_id=task.id,
        agent=next((m for m in map(_model, spans) if m), ""),
        batch_id=ctx.batch_id,
        outcome=_outcome(root),
        usage=Usage(
            prompt_tokens=total(_count(s, "input") for s in models),
            completion_tokens=total(_count(s, "output") for s in models),
        ),
        source=ctx.source(where),
        started_at=_time(spans[0].start),  # sorted by start
        ended_at=_time(max(map(_END, spans))),
        metadata=_metadata(trace_id, root, spans),
    )
    return ParsedEpisode(task=task, episode=episode, steps=steps)


class _Steps:
    """Step fields of a trace's spans, model text held back as the next call's thought."""

    def __init__(self) -> None:
        self.fields: list[dict[str, Any]] = []
        self.held: dict[str, Any] | None = None
        self.spans: list[_Span] = []
        self.agents: dict[str, str] = {}
        """The agent each span ran under, by span id (:func:`_agents`)."""
        self.parts: dict[tuple[str, str], Any] | None = None
        """``(part type, call id)`` → arguments of a ``tool_call`` part of a model's output,
        or response of a ``tool_call_response`` part of its input: a tool span's arguments
        and result when it does not record them itself (they are opt-in in GenAI). Collected
        from every span the first time one is needed."""

    def read(self, root: _Span, spans: list[_Span], instruction: str) -> list[dict[str, Any]]:
        """The steps of ``spans`` (sorted), the instruction first."""
        self.spans = spans
        self.agents = _agents(spans)
        if instruction:
            self._add(root, root.start, {"kind": "message", "role": "user", "content": instruction})
        for span in spans:
            kind = span.kind
            if kind == "tool":
                self._tool(span)
            elif kind == "model":
                self._model(span)
        self._flush()
        return self.fields

    def _part(self, part_type: str, call_id: str) -> Any:
        """What the message part of ``part_type`` with ``call_id`` carries (see ``parts``)."""
        if self.parts is None:
            self.parts = {}
            for span in self.spans:
                self._collect_parts(span, self.parts)
        return self.parts.get((part_type, call_id))

    @staticmethod
    def _collect_parts(span: _Span, found: dict[tuple[str, str], Any]) -> None:
        for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
            for message in span.messages(key):
                parts = message.get("parts") if isinstance(message, dict) else None
                for part in parts if isinstance(parts, list) else []:
                    if isinstance(part, dict) and scalar(part.get("id")):
                        value = part.get("arguments", part.get("response"))
                        found.setdefault((as_text(part.get("type")), part["id"]), value)

    def _add(self, span: _Span, nanos: int, step: dict[str, Any]) -> None:
        """Add a step, its time ``nanos`` and its raw record the span (and the agent it ran
        under, in a trace of several agents)."""
        step["timestamp"], step["raw"] = _time(nanos), span.raw
        if (agent := self.agents.get(span.span_id)) and step["role"] != "user":
            step["agent"] = agent
        self.fields.append(step)

    def _model(self, span: _Span) -> None:
        text, thought = _reply(span)
        if span.error is not None:
            self._flush()
            error = {"kind": "error", "role": "assistant", "content": _failed(span, text)}
            self._add(span, span.end, error)
        elif text or thought:
            self._flush()
            self.held = {"span": span, "text": text, "thought": thought}

    def _tool(self, span: _Span) -> None:
        attrs = span.attributes
        tool = as_text(attrs.get("gen_ai.tool.name") or attrs.get("tool.name"))
        tool = tool or span.name.removeprefix("execute_tool ").strip() or "tool"
        arguments = _first(attrs, "gen_ai.tool.call.arguments", "tool.parameters", "input.value")
        call_id = as_text(attrs.get("gen_ai.tool.call.id")) or span.span_id
        if arguments is None:
            arguments = self._part("tool_call", call_id)
        held, self.held = self.held or {}, None
        thought = "\n\n".join(p for p in (held.get("thought"), held.get("text")) if p)
        call = {
            "kind": "tool_call",
            "role": "assistant",
            "thought": thought,
            "action": render_pretty_call(tool, arguments),
            "tool_name": tool,
            "tool_call_id": call_id,
        }
        self._add(span, span.start, call)
        if span.error:  # its status message is the observation, whatever the result
            observation = _failed(span, "")
        else:
            result = _first(attrs, "gen_ai.tool.call.result", "output.value")
            if result is None:
                result = self._part("tool_call_response", call_id)
            result = _result_text(result)
            observation = result if span.error is None else _failed(span, result)
        self._add(span, span.end, tool_result_step(observation, call_id, tool))

    def _flush(self) -> None:
        if self.held is None:
            return
        held, self.held = self.held, None
        span = held["span"]
        if held["text"]:
            text, thought = held["text"], held["thought"]
            step = {"kind": "message", "role": "assistant", "content": text, "thought": thought}
            self._add(span, span.end, step)
        else:
            step = {"kind": "thought", "role": "assistant", "thought": held["thought"]}
            self._add(span, span.end, step)


def _agents(spans: list[_Span]) -> dict[str, str]:
    """The agent each span ran under — the nearest agent span at or above it, by its
    ``gen_ai.agent.name`` (OpenInference: ``agent.name``), else its name — by span id; none
    when the trace holds fewer than two agents (a single agent's steps name no agent)."""
    by_id = {s.span_id: s for s in spans}
    found: dict[str, str] = {}
    for span in spans:
        path, node = [], span
        while node is not None and node.span_id not in found and node.kind != "agent":
            path.append(node.span_id)
            node = by_id.get(node.parent_id) if len(path) < len(by_id) else None  # (a loop)
        agent = "" if node is None else found.get(node.span_id) or _agent_name(node)
        for span_id in path:
            found[span_id] = agent
        if node is not None:
            found.setdefault(node.span_id, agent)
    named = {k: v for k, v in found.items() if v}
    return named if len(set(named.values())) > 1 else {}


def _agent_name(span: _Span) -> str:
    """An agent span's agent: its ``gen_ai.agent.name``, else OpenInference's ``agent.name``,
    else the span's name (``invoke_agent <name>``)."""
    if span.kind != "agent":
        return ""
    attrs = span.attributes
    named = as_text(attrs.get("gen_ai.agent.name")) or as_text(attrs.get("agent.name"))
    return named or span.name.removeprefix("invoke_agent ").strip()


def _result_text(value: Any) -> str:
    """A tool's result as text: a string as it is, anything else as JSON."""
    if value is None or isinstance(value, str):
        return as_text(value)
    return compact_json(value)


def _failed(span: _Span, text: str) -> str:
    """``Error: …`` of a span with error status: its status message, else its output."""
    message = span.error or text or "span failed"
    return message if message.lower().startswith("error") else f"Error: {message}"


def _first(attrs: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def _instruction(root: _Span, spans: list[_Span]) -> str:
    """The root span's input, else the first user message a model call was given."""
    for span in itertools.chain((root,), (s for s in spans if s.kind == "model")):
        attrs = span.attributes
        text = _user_text(span.messages("gen_ai.input.messages")) or _flat_user(attrs)
        if span is root:
            text = text or _input_value(attrs.get("input.value"))
        if text:
            return text
    return ""


def _input_value(value: Any) -> str:
    """OpenInference's ``input.value``: text, or a JSON object's usual input field."""
    parsed = _json(value)
    if isinstance(parsed, dict):
        for key in ("input", "query", "question", "task", "prompt", "messages"):
            if parsed.get(key):
                found = parsed[key]
                return _user_text(found) if isinstance(found, list) else as_text(found)
    return as_text(value)


def _messages(value: Any) -> list[Any]:
    parsed = _json(value)
    return parsed if isinstance(parsed, list) else []


def _json(value: Any) -> Any:
    if not isinstance(value, str) or not value.lstrip().startswith(("{", "[")):
        return value
    try:
        return parse_json(value)
    except json.JSONDecodeError:
        return value


def _user_text(messages: list[Any]) -> str:
    """Text of the first user message of a GenAI (``parts``) or chat (``content``) list."""
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            return _parts_text(message, "text")
    return ""


def _parts_text(message: dict[str, Any], part_type: str) -> str:
    parts = message.get("parts")
    if not isinstance(parts, list):
        return text_of(message.get("content")) if part_type == "text" else ""
    return "\n".join(
        as_text(p.get("content"))
        for p in parts
        if isinstance(p, dict) and p.get("type") == part_type
    )


def _texts(message: dict[str, Any]) -> tuple[str, str]:
    """``(_parts_text(message, "text"), _parts_text(message, "reasoning"))``, in one pass."""
    parts = message.get("parts")
    if not isinstance(parts, list):
        return text_of(message.get("content")), ""
    texts, reasoning = [], []
    for part in parts:
        if isinstance(part, dict):
            kind = part.get("type")
            if kind == "text":
                texts.append(as_text(part.get("content")))
            elif kind == "reasoning":
                reasoning.append(as_text(part.get("content")))
    return "\n".join(texts), "\n".join(reasoning)


def _flat_user(attrs: dict[str, Any]) -> str:
    """The first user message of OpenInference's flattened ``llm.input_messages``."""
    for i in range(len(attrs)):
        role = attrs.get(f"llm.input_messages.{i}.message.role")
        if role is None:
            return ""
        if role == "user":
            return as_text(attrs.get(f"llm.input_messages.{i}.message.content"))
    return ""


def _reply(span: _Span) -> tuple[str, str]:
    """``(text, reasoning)`` a model call answered with, by either convention."""
    attrs = span.attributes
    outputs = [_texts(m) for m in span.messages("gen_ai.output.messages") if isinstance(m, dict)]
    if outputs:
        text = "\n\n".join([t for t, _ in outputs if t])
        thought = "\n\n".join([r for _, r in outputs if r])
        return text, thought
    text = as_text(attrs.get("llm.output_messages.0.message.content"))
    if not text and attrs.get("output.mime_type") != "application/json":
        text = as_text(attrs.get("output.value"))
    return text, ""


def _model(span: _Span) -> str:
    attrs = span.attributes
    return as_text(
        attrs.get("gen_ai.request.model")
        or attrs.get("gen_ai.response.model")
        or attrs.get("llm.model_name")
    )


_TOKEN_KEYS = {
    "input": ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
    "output": ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
}
"""The token count attributes of each side of a model call: GenAI's, then OpenInference's."""


def _count(span: _Span, side: str) -> int | None:
    attrs = span.attributes
    genai, legacy = _TOKEN_KEYS[side]
    return int_or_none(attrs.get(genai, attrs.get(legacy)))


def _outcome(root: _Span) -> Outcome:
    """From a ``success``/``score``/``reward`` attribute of the root span, any namespace."""
    found = {}
    for key, value in root.attributes.items():
        last = key.rsplit(".", 1)[-1]
        if last in OUTCOME_KEYS and last not in found:
            found[last] = value
    if not found:
        return Outcome()
    return outcome_from(found, message=as_text(root.attributes.get("eval.message")))


def _time(nanos: int) -> datetime | None:
    return datetime.fromtimestamp(nanos / 1e9, UTC) if nanos else None


def _metadata(trace_id: str, root: _Span, spans: list[_Span]) -> dict[str, Any]:
    found = {
        "trace_id": trace_id,
        "root_span": root.name or None,
        "service_name": scalar(root.resource.get("service.name")),
        "agent_name": scalar(root.attributes.get("gen_ai.agent.name")),
        "session_id": scalar(
            root.attributes.get("session.id") or root.attributes.get("gen_ai.conversation.id")
        ),
        "spans": len(spans),
        "error": root.error or None,
    }
    return {k: v for k, v in found.items() if v is not None}
