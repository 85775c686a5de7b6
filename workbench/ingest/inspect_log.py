"""Inspect AI evaluation logs: ``.eval`` archives and ``.json`` logs.

The format as Inspect's own recorder writes it (``inspect_ai/log/_recorders/eval.py`` and
``inspect_ai/log/_log.py``; user docs at inspect.aisi.org.uk/eval-logs.html):

* A ``.json`` log is one ``EvalLog`` object::

    {"version": 2, "status": "started|success|cancelled|error",
     "eval": {"eval_id", "run_id", "task", "task_id", "model", "dataset": {"name", ...},
              "created", ...},
     "plan": {...}, "results": {...}, "stats": {...}, "error"?: {...},
     "samples": [EvalSample, ...]}

  Inspect writes the keys in that order, so everything but the samples comes first.
* A ``.eval`` log is a zip archive of JSON members: ``header.json`` (the EvalLog without its
  samples, written when the run ends), ``_journal/start.json`` (``{version, eval, plan}``,
  written when it starts: the only header of a log that is still running),
  ``samples/<id>_epoch_<n>.json`` (one EvalSample each), ``summaries.json``,
  ``reductions.json`` and ``_journal/summaries/<n>.json``. Recent Inspect versions may
  compress the members with Zstandard (zip method 93), which :mod:`zipfile` reads from
  Python 3.14 on, or earlier with the ``backports.zstd`` package installed.
* An ``EvalSample`` is ``{id, epoch, input (text or chat messages), target, choices?,
  messages: [ChatMessage], output, scores: {scorer: {value, answer, explanation, metadata}},
  metadata, model_usage: {model: {input_tokens, output_tokens, total_tokens, ...}},
  started_at?, completed_at?, total_time?, working_time?, uuid?, error?: {message,
  traceback}, limit?: {type, limit}, attachments: {hash: text}}``. A string
  ``attachment://<hash>`` inside the messages stands for ``attachments[hash]``.
* A ``ChatMessage`` is ``{role: system|user|assistant|tool, content: text or a list of parts
  ({type: "text", text}, {type: "reasoning", reasoning, redacted?, summary?}, images...),
  tool_calls?: [{id, function, arguments: {...}}], tool_call_id?, function?, error?: {type,
  message}}``.

Mapping: one episode per sample (and epoch). Task id ``<eval.task>:<sample id>``, family
``eval.task``, agent ``eval.model``, instruction the input's text. Messages become steps one
per message (see :func:`_message_steps`); a sample's ``error`` adds a final ``error`` step.
The outcome comes from the first scorer (or one called ``main``/``accuracy``): ``C``/``I``/
``P``/``N`` give success True/False/False/False and score 1/0/0.5/0, a number is the score
and succeeds at 1 or more; its message is the score's explanation (or answer). A sample
error fails the episode with the error's message. Usage sums ``model_usage`` over models.
"""

from __future__ import annotations

import json
import lzma
import re
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import ijson
from pydantic import ValidationError

from store import Episode, Outcome, Step, Task, Usage
from workbench.ingest import json_events
from workbench.ingest.base import (
    BOM,
    WHOLE_JSON,
    IngestError,
    ParsedEpisode,
    ReadContext,
    built,
    json_items,
    json_members,
    text_of,
    validation_error,
)
from workbench.ingest.steps import (
    ToolCall,
    build_steps,
    tool_call_steps,
    tool_result_step,
)
from workbench.ingest.values import (
    as_text,
    compact,
    float_or_none,
    int_or_zero,
    iso_time,
    loads,
)

if sys.version_info >= (3, 14):
    import zipfile
else:  # Zstandard-compressed members need the backport before Python 3.14
    try:
        from backports.zstd import zipfile
    except ImportError:
        import zipfile

name = "inspect"
description = "Inspect AI evaluation logs (.eval archives and .json logs)"
binary = True
"""An ``.eval`` log is a zip archive."""

ZIP_MAGIC = b"PK\x03\x04"
HEADER_MEMBER = "header.json"
START_MEMBER = "_journal/start.json"
SAMPLE_MEMBER = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")
READABLE_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
if hasattr(zipfile, "ZIP_ZSTANDARD"):
    READABLE_METHODS.add(zipfile.ZIP_ZSTANDARD)
ZSTANDARD_METHOD = 93
JSON_BUFFER = 1 << 22
"""Bytes ijson reads at a time: long strings are rebuilt per chunk, so small chunks make a
50 MB message quadratic (6 s at 64 KiB, 0.2 s at 4 MiB)."""
HEADER_BUFFER = 1 << 16
"""Bytes ijson reads at a time for the header (the values before ``samples``): ijson makes
every event of a chunk it reads, so a large chunk would make those of the first samples too,
only to throw them away. What it reads is the same either way: an error after the header is
not reached."""
ATTACHMENT_PREFIXES = ("attachment://", "tc://")
PREFERRED_SCORERS = ("main", "accuracy")
LETTER_SCORES = {"C": (True, 1.0), "I": (False, 0.0), "P": (False, 0.5), "N": (False, 0.0)}
WORD_SCORES = {
    "correct": (True, 1.0),
    "yes": (True, 1.0),
    "true": (True, 1.0),
    "incorrect": (False, 0.0),
    "no": (False, 0.0),
    "false": (False, 0.0),
    "partial": (False, 0.5),
}

_STATUS = re.compile(r'"status"\s*:\s*"(started|success|cancelled|error)"')
_EVAL = re.compile(r'"eval"\s*:\s*\{')
_VERSION = re.compile(r'"version"\s*:\s*\d')


def sniff(path: Path, head: str) -> bool:
    """A ``.eval`` zip archive, or a ``.json`` object opening with an EvalLog's header keys."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return head.startswith("PK")
    if suffix != ".json":
        return False
    top = head.lstrip()[:4096]
    return (
        top.startswith("{")
        and bool(_STATUS.search(top))
        and bool(_EVAL.search(top))
        and (bool(_VERSION.search(top)) or '"samples"' in head)
    )


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per sample of the log, streaming samples one at a time."""
    with ctx.open(ctx.path) as handle:
        magic = handle.read(len(ZIP_MAGIC))
    if ctx.path.suffix.lower() == ".eval" or magic == ZIP_MAGIC:
        yield from _read_eval(ctx)
    else:
        yield from _read_json(ctx)


# -- .eval archives ---------------------------------------------------------------------------


def _read_eval(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    with _archive(ctx) as archive:
        header = _eval_header(ctx, archive)
        for info in archive.infolist():
            match = SAMPLE_MEMBER.match(info.filename)
            if match is None:
                continue
            try:
                sample = _member_json(ctx, archive, info)
                yield _episode(
                    ctx, header, sample, f"member {info.filename}", info.filename, match["epoch"]
                )
            except IngestError as error:
                yield error


@contextmanager
def _archive(ctx: ReadContext) -> Iterator[zipfile.ZipFile]:
    """The archive, read through the counted reader when it can seek (else from the path)."""
    handle: IO[bytes] | None = ctx.open()
    if not handle.seekable():
        handle.close()
        handle = None
    try:
        try:
            archive = zipfile.ZipFile(handle or ctx.path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as error:
            raise ctx.error("", "", f"not a readable .eval (zip) archive: {error}") from None
        with archive:
            _check_compression(ctx, archive)
            yield archive
    finally:
        if handle is not None:
            handle.close()


def _check_compression(ctx: ReadContext, archive: zipfile.ZipFile) -> None:
    for info in archive.infolist():
        if info.compress_type in READABLE_METHODS:
            continue
        if info.compress_type == ZSTANDARD_METHOD:
            message = (
                "members are Zstandard-compressed (zip method 93), which this Python cannot "
                "read: install 'backports.zstd' (or use Python 3.14+), or convert the log "
                "with `inspect log convert --to json`"
            )
        else:
            message = f"unsupported zip compression method {info.compress_type}"
        raise ctx.error(f"member {info.filename}", "", message)


def _eval_header(ctx: ReadContext, archive: zipfile.ZipFile) -> dict[str, Any]:
    names = set(archive.namelist())
    member = next((m for m in (HEADER_MEMBER, START_MEMBER) if m in names), None)
    if member is None:
        raise ctx.error(
            f"member {HEADER_MEMBER}",
            "",
            "missing (and no _journal/start.json): not an Inspect log",
        )
    header = _member_json(ctx, archive, archive.getinfo(member))
    where = f"member {member}"
    if not isinstance(header, dict):
        raise ctx.error(where, "", "expected a JSON object")
    if not isinstance(header.get("eval"), dict):
        raise ctx.error(where, "eval", "field required (an object)")
    return header


MEMBER_ERRORS = (
    zipfile.BadZipFile,
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    zlib.error,
    lzma.LZMAError,
)
"""What reading a damaged archive member raises (a flipped byte in its header or data)."""


def _member_json(ctx: ReadContext, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    where = f"member {info.filename}"
    try:
        with archive.open(info) as member:
            data = member.read()
    except MEMBER_ERRORS as error:
        raise ctx.error(where, "", f"cannot read archive member: {error}") from None
    try:
        return loads(data)
    except UnicodeDecodeError as error:
        raise ctx.error(f"{where} byte {error.start}", "", "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise ctx.error(
            where, "", f"invalid JSON: {error.msg} (line {error.lineno} column {error.colno})"
        ) from None


# -- .json logs -------------------------------------------------------------------------------


def _read_json(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    members = _whole_json(ctx)
    if members is not None:
        yield from _json_samples(ctx, members)
        return
    header = _json_header(ctx)
    count = 0
    with ctx.open() as handle:
        try:
            for sample in json_items(handle, "samples.item", buf_size=JSON_BUFFER):
                try:
                    yield _episode(ctx, header, sample, f"record {count}", f"samples.{count}")
                except IngestError as error:
                    yield error
                count += 1
        except ijson.JSONError as error:
            raise ctx.error(
                f"record {count}", f"samples.{count}", f"invalid JSON: {_first_line(error)}"
            ) from None


def _whole_json(ctx: ReadContext) -> list[tuple[str, Any]] | None:
    """The log's top-level members, parsed whole (:func:`~workbench.ingest.base.json_members`)
    when it is small enough and plain; ``None``: it is streamed."""
    data = ctx.content
    if data is None:
        if ctx.path.stat().st_size > WHOLE_JSON:
            return None
        data = ctx.path.read_bytes()
    members = json_members(data.removeprefix(BOM))
    if members is None or any(k == "samples" and type(v) is not list for k, v in members):
        return None  # (the streaming reader takes an object's "item" for a sample)
    return members


def _json_samples(
    ctx: ReadContext, members: list[tuple[str, Any]]
) -> Iterator[ParsedEpisode | IngestError]:
    """What :func:`_read_json` reads from the members of a log parsed whole: the same
    header (the members before ``samples``), the same samples (those of every ``samples``
    list, in order), the same errors."""
    header: dict[str, Any] = {}
    for key, value in members:
        if key == "samples":
            break
        header[key] = value
    _check_header(ctx, header)
    count = 0
    for key, samples in members:
        if key != "samples":
            continue
        for k in range(len(samples)):
            sample, samples[k] = samples[k], None  # (each freed once read)
            try:
                yield _episode(ctx, header, sample, f"record {count}", f"samples.{count}")
            except IngestError as error:
                yield error
            count += 1


def _json_header(ctx: ReadContext) -> dict[str, Any]:
    """Every top-level value before ``samples``, read in a first, uncounted pass."""
    with ctx.open(ctx.path) as handle:
        try:
            header = _top_level_before(json_events.events(handle, HEADER_BUFFER), "samples")
        except (ijson.JSONError, ValueError) as error:  # (ValueError: a 4300-digit integer)
            raise ctx.error("", "", f"invalid JSON: {_first_line(error)}") from None
    if header is None:
        raise ctx.error("", "", "expected a JSON object (an Inspect EvalLog)")
    return _check_header(ctx, header)


def _check_header(ctx: ReadContext, header: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(header.get("eval"), dict):
        raise ctx.error("", "eval", "field required before 'samples': not an Inspect log")
    return header


def _top_level_before(events: Iterator[tuple[str, Any]], stop: str) -> dict[str, Any] | None:
    """The top-level object's members before ``stop``, from ijson's ``basic_parse`` events
    (``parse`` keeps the path of every open level: a value nested 100,000 deep would take
    gigabytes); ``None`` when the document is not an object."""
    event, _ = next(events, ("", None))
    if event != "start_map":
        return None
    header: dict[str, Any] = {}
    for event, value in events:
        if event != "map_key" or value == stop:
            break  # the end of the top-level object, or its samples
        header[value] = _build(events)
    return header


def _build(events: Iterator[tuple[str, Any]]) -> Any:
    """Build the next complete JSON value from a stream of ``basic_parse`` events."""
    event, value = next(events, ("", None))
    if not event:
        raise ijson.IncompleteJSONError("premature end of the JSON document")
    return built(events, event, value) if event in ("start_map", "start_array") else value


def _first_line(error: Exception) -> str:
    message = error.args[0] if error.args else str(error)
    if isinstance(message, bytes):
        message = message.decode("utf-8", errors="replace")
    lines = str(message).strip().splitlines()
    return lines[0] if lines else type(error).__name__


# -- one sample -------------------------------------------------------------------------------


def _episode(
    ctx: ReadContext,
    header: dict[str, Any],
    sample: Any,
    record: str,
    location: str,
    member_epoch: str = "1",
) -> ParsedEpisode:
    """The episode of one sample.

    Args:
        ctx: the import's context.
        header: the log's header (everything but the samples).
        sample: the parsed EvalSample.
        record: where the sample is, for errors before its id is known.
        location: its archive member or ``samples.<i>``, recorded as the episode's source.
        member_epoch: the epoch the archive member's name gives, used when the sample has none.
    """
    if not isinstance(sample, dict):
        raise ctx.error(record, "", "expected a sample object")
    sample_id = sample.get("id")
    if isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
        raise ctx.error(record, "id", "field required (a string or integer)")
    epoch = sample.get("epoch", int(member_epoch))
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        raise ctx.error(f"sample {sample_id!r}", "epoch", "expected an integer")
    where = f"sample {sample_id!r} epoch {epoch}"
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise ctx.error(where, "messages", "field required (a list of chat messages)")

    attachments = sample.get("attachments")
    attachments = attachments if isinstance(attachments, dict) else {}
    eval_spec = header["eval"]
    environment = as_text(eval_spec.get("task")) or "inspect"
    task = _task(environment, sample, sample_id, eval_spec, attachments)
    episode_id = ctx.episode_id(f"{sample_id}-e{epoch}")
    steps = _steps(ctx, where, episode_id, _resolve(messages, attachments), sample.get("error"))
    outcome, score_meta = _outcome(sample)
    try:
        episode = Episode(
            id=episode_id,
            task_id=task.id,
            agent=as_text(eval_spec.get("model")),
            batch_id=ctx.batch_id,
            outcome=outcome,
            n_steps=len(steps),
            usage=_usage(sample.get("model_usage")),
            source=ctx.source(location),
            family=task.family,
            started_at=iso_time(sample.get("started_at")),
            ended_at=iso_time(sample.get("completed_at")),
            metadata=_episode_metadata(header, sample, epoch, score_meta),
        )
    except ValidationError as error:
        raise validation_error(ctx.path, where, error) from None
    return ParsedEpisode(task=task, episode=episode, steps=steps)


def _task(
    environment: str,
    sample: dict[str, Any],
    sample_id: str | int,
    eval_spec: dict[str, Any],
    attachments: dict[str, Any],
) -> Task:
    dataset = eval_spec.get("dataset")
    metadata = {
        "target": sample.get("target"),
        "choices": sample.get("choices"),
        "dataset": dataset.get("name") if isinstance(dataset, dict) else None,
        "sample_metadata": sample.get("metadata") or None,
    }
    return Task(
        id=f"{environment}:{sample_id}",
        environment=environment,
        family=environment,
        instruction=_input_text(_resolve(sample.get("input"), attachments)),
        metadata=compact(metadata),
    )


def _input_text(value: Any) -> str:
    """The text of a sample's input: a string, or its user messages' text."""
    if not isinstance(value, list):
        return text_of(value)
    messages = [m for m in value if isinstance(m, dict)]
    users = [m for m in messages if m.get("role") == "user"] or messages
    return "\n\n".join(text for m in users if (text := text_of(m.get("content"))))


def _resolve(value: Any, attachments: dict[str, Any]) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by its attachment."""
    if not attachments:
        return value
    if isinstance(value, str):
        for prefix in ATTACHMENT_PREFIXES:
            if value.startswith(prefix):
                resolved = attachments.get(value[len(prefix) :])
                return resolved if isinstance(resolved, str) else value
        return value
    if isinstance(value, list):
        return [_resolve(item, attachments) for item in value]
    if isinstance(value, dict):
        return {key: _resolve(item, attachments) for key, item in value.items()}
    return value


# -- steps ------------------------------------------------------------------------------------


def _steps(
    ctx: ReadContext, where: str, episode_id: str, messages: list[Any], error: Any
) -> list[Step]:
    tool_names: dict[str, str] = {}
    fields: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        steps = _message_steps(ctx, where, i, message, tool_names)
        fields += [{**step, "raw": message} for step in steps]
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        fields.append(
            {"kind": "error", "role": "environment", "content": text_of(message), "raw": error}
        )
    return build_steps(ctx, where, episode_id, fields)


def _message_steps(
    ctx: ReadContext, where: str, i: int, message: Any, tool_names: dict[str, str]
) -> list[dict[str, Any]]:
    """Step fields of one chat message (the caller adds the message as their raw record).

    System → ``system``; user → ``message``; assistant → ``message``, or one ``tool_call``
    step per tool call (the text and reasoning go on the first); tool → ``tool_result``.
    Reasoning parts become the step's thought; a tool error is appended to its observation.
    """
    if not isinstance(message, dict):
        raise ctx.error(where, f"messages.{i}", "expected a chat message object")
    role = message.get("role")
    content = message.get("content")
    text = text_of(content)
    if role == "system":
        return [{"kind": "system", "role": "system", "content": text}]
    if role == "user":
        return [{"kind": "message", "role": "user", "content": text}]
    if role == "assistant":
        return _assistant_steps(ctx, where, i, message, text, _reasoning(content), tool_names)
    if role == "tool":
        call_id = as_text(message.get("tool_call_id"))
        observation = _with_tool_error(text, message.get("error"))
        tool = as_text(message.get("function")) or tool_names.get(call_id, "")
        return [tool_result_step(observation, call_id, tool)]
    raise ctx.error(where, f"messages.{i}.role", f"unknown role {role!r}")


def _assistant_steps(
    ctx: ReadContext,
    where: str,
    i: int,
    message: dict[str, Any],
    text: str,
    reasoning: str,
    tool_names: dict[str, str],
) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ctx.error(where, f"messages.{i}.tool_calls", "expected a list")
    if not calls:
        return [{"kind": "message", "role": "assistant", "content": text, "thought": reasoning}]
    parts = [
        _call_parts(ctx, where, f"messages.{i}.tool_calls.{j}", call)
        for j, call in enumerate(calls)
    ]
    return tool_call_steps(parts, text, reasoning, tool_names)


def _call_parts(ctx: ReadContext, where: str, field_path: str, call: Any) -> ToolCall:
    """``(function name, arguments, call id)`` of one Inspect tool call."""
    if not isinstance(call, dict):
        raise ctx.error(where, field_path, "expected a tool call object")
    function = call.get("function")
    if not isinstance(function, str) or not function:
        raise ctx.error(where, f"{field_path}.function", "field required (the tool's name)")
    return function, call.get("arguments"), as_text(call.get("id"))


def _reasoning(content: Any) -> str:
    """The visible reasoning parts of a message's content (redacted ones give their summary)."""
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "reasoning":
            continue
        text = part.get("summary") if part.get("redacted") else part.get("reasoning")
        if isinstance(text, str) and text:
            parts.append(text)
    return "\n\n".join(parts)


def _with_tool_error(text: str, error: Any) -> str:
    if not isinstance(error, dict):
        return text
    message = as_text(error.get("message"))
    if not message or message in text:
        return text
    kind = as_text(error.get("type")) or "error"
    return "\n".join(part for part in (text, f"[{kind}] {message}") if part)


# -- outcome, usage, metadata -----------------------------------------------------------------


def _outcome(sample: dict[str, Any]) -> tuple[Outcome, dict[str, Any]]:
    """The outcome from the main scorer and the sample's error or limit."""
    success: bool | None = None
    score: float | None = None
    message = ""
    meta: dict[str, Any] = {}
    scores = sample.get("scores")
    if isinstance(scores, dict) and scores:
        scorer = next((s for s in PREFERRED_SCORERS if s in scores), next(iter(scores)))
        meta = {"scorer": scorer, "scores": scores}
        chosen = scores[scorer]
        if isinstance(chosen, dict):
            success, score = _score_value(chosen.get("value"))
            message = as_text(chosen.get("explanation")) or as_text(chosen.get("answer"))
    error = sample.get("error")
    if error:
        success = False
        message = text_of(error.get("message") if isinstance(error, dict) else error)
    limit = sample.get("limit")
    if not message and isinstance(limit, dict) and limit.get("type"):
        message = f"{limit['type']} limit reached ({limit.get('limit')})"
    return Outcome(success=success, score=score, message=message), meta


def _score_value(value: Any) -> tuple[bool | None, float | None]:
    """Success and score of one score value (letters, words, booleans or numbers)."""
    if isinstance(value, bool):
        return value, float(value)
    if isinstance(value, (int, float)):
        return value >= 1, float(value)
    if isinstance(value, str):
        word = value.strip()
        if word.upper() in LETTER_SCORES and len(word) == 1:
            return LETTER_SCORES[word.upper()]
        if word.lower() in WORD_SCORES:
            return WORD_SCORES[word.lower()]
        try:
            number = float(word)
        except ValueError:
            return None, None
        return number >= 1, number
    return None, None


def _usage(model_usage: Any) -> Usage:
    """Tokens summed over the models a sample used; cost when Inspect recorded one."""
    if not isinstance(model_usage, dict) or not model_usage:
        return Usage()
    prompt = completion = 0
    cost: float | None = None
    for usage in model_usage.values():
        if not isinstance(usage, dict):
            continue
        prompt += int_or_zero(usage.get("input_tokens"))
        completion += int_or_zero(usage.get("output_tokens"))
        total_cost = float_or_none(usage.get("total_cost"))
        if total_cost is not None:
            cost = (cost or 0.0) + total_cost
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cost=cost)


def _episode_metadata(
    header: dict[str, Any], sample: dict[str, Any], epoch: int, score_meta: dict[str, Any]
) -> dict[str, Any]:
    eval_spec = header["eval"]
    error = sample.get("error")
    metadata = {
        "epoch": epoch,
        "model": eval_spec.get("model"),
        "eval_id": eval_spec.get("eval_id"),
        "run_id": eval_spec.get("run_id"),
        "task_id": eval_spec.get("task_id"),
        "log_status": header.get("status"),
        **score_meta,
        "error": error if isinstance(error, dict) else None,
        "limit": sample.get("limit"),
        "model_usage": sample.get("model_usage") or None,
        "total_time": sample.get("total_time"),
        "working_time": sample.get("working_time"),
        "uuid": sample.get("uuid"),
    }
    return compact(metadata)
