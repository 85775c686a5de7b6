"""The one place the workbench talks to an OpenAI-compatible chat-completions endpoint.

Every call is logged to the store as an :class:`~store.records.LLMCall` — cache hits and
failures too — with the messages and parameters sent but never the API key or headers.
Replies are cached by prompt hash (model + messages + parameters + response schema): asking
the same thing twice answers from the store without contacting the server.

The ``openai`` client is built with ``max_retries=0``; this module does its own retries:
transient transport failures (connection errors, timeouts, 429, 5xx) with a backoff, and
malformed structured output with a short correction message appended to the conversation.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from store import Store
from store.records import LLMCall

if TYPE_CHECKING:  # the client library loads when a client is built (it costs ~1 s of CPU)
    import openai

DEFAULT_TIMEOUT = 60.0
"""Seconds one HTTP request may take."""

ENV_BASE_URL = "OPENAI_BASE_URL"
ENV_API_KEY = "OPENAI_API_KEY"
ENV_MODEL = "WORKBENCH_MODEL"
ENV_MAX_TOKENS = "WORKBENCH_MAX_TOKENS"
"""Most tokens in a reply whose call sets no limit of its own (optional)."""
ENV_TIMEOUT = "WORKBENCH_TIMEOUT"
"""Seconds one HTTP request may take (optional; default :data:`DEFAULT_TIMEOUT`)."""

Message = Mapping[str, Any]
"""One chat message, e.g. ``{"role": "user", "content": "..."}``."""

ModelT = TypeVar("ModelT", bound=BaseModel)


class ModelError(RuntimeError):
    """A model call failed for good (after the retries it was allowed).

    Attributes:
        purpose: the purpose of the failed call.
        call: the logged record of the last attempt, if one was made.
    """

    def __init__(self, message: str, *, purpose: str, call: LLMCall | None = None) -> None:
        super().__init__(message)
        self.purpose = purpose
        self.call = call


class ConfigError(ValueError):
    """The model endpoint is not configured (one line naming what is missing and where it
    was looked for)."""


class _Failed(Exception):
    """One logged attempt failed."""

    def __init__(self, message: str, call: LLMCall) -> None:
        super().__init__(message)
        self.call = call


class _Transient(_Failed):
    """An attempt failed in a way worth retrying after a pause."""


class _Malformed(_Failed):
    """The reply came back but its content does not fit the schema."""

    @property
    def content(self) -> str:
        return str((self.call.response or {}).get("content") or "")


@dataclass
class _Attempt:
    content: str
    call: LLMCall


def client_options(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The optional client settings the environment gives: ``max_tokens`` from
    ``WORKBENCH_MAX_TOKENS``, ``timeout`` from ``WORKBENCH_TIMEOUT``.

    Raises:
        ConfigError: a value is not a positive number (naming the variable).
    """
    env = os.environ if environ is None else environ
    options: dict[str, Any] = {}
    for variable, key, kind in (
        (ENV_MAX_TOKENS, "max_tokens", int),
        (ENV_TIMEOUT, "timeout", float),
    ):
        text = env.get(variable, "").strip()
        if not text:
            continue
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise ConfigError(f"{variable} must be a positive number, not {text!r}")
        options[key] = value
    return options


def prompt_hash(model: str, request: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the model and the request (the cache key)."""
    text = json.dumps(
        {"model": model, **request}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(text.encode()).hexdigest()


def response_schema(model: type[BaseModel]) -> dict[str, Any]:
    """How a structured-output schema is recorded in a request (and hashed)."""
    return {"name": model.__name__, "schema": model.model_json_schema()}


SchemaForm = Literal["json_schema", "json_object"]
"""How a request carries its response schema: OpenAI's ``{"type": "json_schema",
"json_schema": {"name", "strict", "schema"}}``, or ``{"type": "json_object", "schema": ...}``
(what llama-cpp-python's server reads)."""


STRING_CHARS = 400
"""Most characters in a string of a ``json_object``-form reply whose schema sets no bound."""
ARRAY_ITEMS = 16
"""Most items in an array of such a reply whose schema sets no bound."""


def json_object_format(model: type[BaseModel]) -> dict[str, Any]:
    """``response_format`` in the ``json_object`` form, with the same strict schema the
    ``json_schema`` form sends (every property required, no additional properties), its
    strings and arrays bounded (:func:`bounded`)."""
    from openai.lib._parsing._completions import type_to_response_format_param

    strict = type_to_response_format_param(model)  # what completions.parse() sends
    return {"type": "json_object", "schema": bounded(strict["json_schema"]["schema"])}


def bounded(schema: Any, chars: int = STRING_CHARS, items: int = ARRAY_ITEMS) -> Any:
    """``schema`` with a ``maxLength`` on every free string and a ``maxItems`` on every
    array that has none. The servers that read this form turn the schema into a grammar, and
    a small model under a grammar can loop inside a string (``"12,000,000,000,…"``) until
    the token limit cuts the reply off: bounded, every field closes and the reply parses."""
    if isinstance(schema, list):
        return [bounded(item, chars, items) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: bounded(value, chars, items) for key, value in schema.items()}
    free = not {"enum", "const", "pattern", "format", "maxLength"} & set(out)
    if out.get("type") == "string" and free:
        out["maxLength"] = chars
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = items
    return out


class ChatClient:
    """Chat completions with logging, caching and retries.

    Args:
        store: where every call is logged and the cache is read.
        model: model name sent to the endpoint.
        api_key: the endpoint's key; used only for the Authorization header, never stored.
        base_url: endpoint root, e.g. ``http://127.0.0.1:8000/v1``; ``None`` for OpenAI's.
        timeout: seconds one HTTP request may take.
        parse_retries: extra attempts after malformed structured output.
        transport_retries: extra attempts after connection errors, timeouts, 429 and 5xx.
        backoff: seconds before the first transport retry (doubling after each).
        cache: answer repeated prompts from the store.
        max_tokens: most tokens in a reply whose call sets no limit (``None``: the
            endpoint's default, which for some local servers is the whole context).
        client: an already built ``openai.OpenAI`` to use instead (its retries should be 0).
    """

    def __init__(
        self,
        store: Store,
        *,
        model: str,
        api_key: str,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        parse_retries: int = 2,
        transport_retries: int = 2,
        backoff: float = 1.0,
        cache: bool = True,
        max_tokens: int | None = None,
        client: openai.OpenAI | None = None,
    ) -> None:
        import openai

        if not model:
            raise ConfigError("no model name given")
        self.store = store
        self.model = model
        self.base_url = base_url
        self.parse_retries = parse_retries
        self.transport_retries = transport_retries
        self.backoff = backoff
        self.cache = cache
        self.max_tokens = max_tokens
        self._secret = api_key
        self.schema_form: SchemaForm = "json_schema"
        """The form structured requests take; becomes ``json_object`` when the endpoint
        refuses the other (llama-cpp-python's server does)."""
        self._client = client or openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )

    @classmethod
    def from_env(
        cls,
        store: Store,
        *,
        model: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
        **options: Any,
    ) -> ChatClient:
        """Configure from ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``WORKBENCH_MODEL``
        (and the optional ``WORKBENCH_MAX_TOKENS`` and ``WORKBENCH_TIMEOUT``).

        ``model`` and ``base_url`` override the environment; ``options`` go to the
        constructor (over the optional variables). Raises :class:`ConfigError` naming the
        first missing or unusable variable.
        """
        env = os.environ if environ is None else environ
        model = model or env.get(ENV_MODEL, "")
        base_url = base_url or env.get(ENV_BASE_URL, "")
        api_key = env.get(ENV_API_KEY, "")
        if not base_url:
            raise ConfigError(
                f"{ENV_BASE_URL} is not set: export the chat-completions endpoint, e.g. "
                f"{ENV_BASE_URL}=https://api.openai.com/v1"
            )
        if not api_key:
            raise ConfigError(
                f"{ENV_API_KEY} is not set: export the endpoint's key "
                "(any non-empty value for a local server that needs none)"
            )
        if not model:
            raise ConfigError(f"{ENV_MODEL} is not set: export the model name, e.g. gpt-4o-mini")
        options = {**client_options(env), **options}
        return cls(store, model=model, api_key=api_key, base_url=base_url, **options)

    # -- public calls ---------------------------------------------------------------------

    def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        episode_id: str | None = None,
        calls: list[LLMCall] | None = None,
    ) -> str:
        """The assistant's text reply to ``messages``.

        A reply cut off by ``max_tokens`` is returned as it is (its ``finish_reason`` is
        logged). Empty choices, a refusal or no content raise :class:`ModelError`.

        Args:
            messages: the conversation, oldest first.
            purpose: which step asks (logged), e.g. ``analyze.episode``.
            temperature: sampling temperature.
            max_tokens: most tokens in the reply; ``None`` for the endpoint's default.
            seed: sampling seed sent to the endpoint (part of the cache key).
            episode_id: the episode the call is made for, if any (logged).
            calls: if given, every logged record of this call is appended to it.
        """
        params = _params(temperature, self._limit(max_tokens), seed)
        request = {"messages": [dict(m) for m in messages], "params": params}
        attempt = self._attempt(request, purpose, None, episode_id, calls)
        return attempt.content

    def parse(
        self,
        messages: Sequence[Message],
        response_model: type[ModelT],
        *,
        purpose: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        episode_id: str | None = None,
        calls: list[LLMCall] | None = None,
        turn: int = 0,
    ) -> ModelT:
        """The reply as an instance of ``response_model`` (structured output).

        Malformed output is retried up to ``parse_retries`` times, each time appending the
        bad reply and a short correction. A refusal, empty choices or a reply cut off by the
        token limit raise :class:`ModelError` at once. ``turn`` is how many correction turns
        ``messages`` already hold (logged with each call, plus this method's own). Other
        arguments as for :meth:`complete`.
        """
        params = _params(temperature, self._limit(max_tokens), seed)
        conversation = [dict(m) for m in messages]
        said: list[str] = []
        for attempt_no in range(self.parse_retries + 1):
            request = {
                "messages": conversation,
                "params": params,
                "response_format": response_schema(response_model),
            }
            try:
                attempt = self._attempt(
                    request, purpose, response_model, episode_id, calls, turn + attempt_no
                )
            except _Malformed as bad:
                repeated = _same_reply(bad.content, said)
                if attempt_no == self.parse_retries or repeated:
                    how = " (it wrote the same again after a correction)" if repeated else ""
                    raise self.give_up(
                        ModelError(
                            f"{purpose}: the model's reply did not fit {response_model.__name__} "
                            f"after {attempt_no + 1} attempts{how}: {bad}",
                            purpose=purpose,
                            call=bad.call,
                        ),
                        calls,
                    ) from None
                said.append(bad.content)
                conversation = [*conversation, *_correction(bad)]
                continue
            return load_answer(response_model, attempt.content)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- one logged attempt (with transport retries) --------------------------------------

    def _attempt(
        self,
        request: dict[str, Any],
        purpose: str,
        schema: type[BaseModel] | None,
        episode_id: str | None,
        calls: list[LLMCall] | None,
        turn: int = 0,
    ) -> _Attempt:
        key = prompt_hash(self.model, request)
        hit = self._cached(key, schema)
        if hit is not None:
            call = self._log(
                LLMCall(
                    purpose=purpose,
                    model=self.model,
                    prompt_hash=key,
                    request=request,
                    response=hit.response,
                    cached=True,
                    episode_id=episode_id,
                    turn=turn,
                ),
                calls,
            )
            return _Attempt(str(hit.response["content"]), call)
        delay = self.backoff
        for retry in range(self.transport_retries + 1):
            try:
                return self._send(key, request, purpose, schema, episode_id, calls, turn)
            except _Transient as failure:
                if retry == self.transport_retries:
                    raise self.give_up(
                        ModelError(
                            f"{purpose}: {failure} (after {retry + 1} attempts)",
                            purpose=purpose,
                            call=failure.call,
                        ),
                        calls,
                    ) from None
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    def _cached(self, key: str, schema: type[BaseModel] | None) -> LLMCall | None:
        if not self.cache:
            return None
        hit = self.store.cached_call(key)
        if hit is None or not isinstance((hit.response or {}).get("content"), str):
            return None
        if schema is not None:
            try:
                load_answer(schema, hit.response["content"])
            except ValidationError:
                return None
        return hit

    def _send(
        self,
        key: str,
        request: dict[str, Any],
        purpose: str,
        schema: type[BaseModel] | None,
        episode_id: str | None,
        calls: list[LLMCall] | None,
        turn: int,
    ) -> _Attempt:
        record = LLMCall(
            purpose=purpose,
            model=self.model,
            prompt_hash=key,
            request=request,
            episode_id=episode_id,
            turn=turn,
        )
        started = time.perf_counter()
        body: dict[str, Any] = {}
        form = self.schema_form
        try:
            body = self._scrubbed(self._post(request, schema, form))
            content = _content(body)
            if schema is not None:
                _check_structured(body, content, schema)
        except Exception as exc:
            _received(record, started, body)
            record.error = self._redact(_describe(exc))
            call = self._log(record, calls)
            if schema is not None and _form_refused(exc):
                if form == "json_schema":
                    return self._other_form(key, request, purpose, schema, episode_id, calls, turn)
                error = ModelError(f"{purpose}: {record.error}", purpose=purpose, call=call)
                raise self.give_up(error, calls) from None  # refused in both forms: not transient
            if isinstance(exc, ValidationError | json.JSONDecodeError):
                raise _Malformed(_short(exc), call) from None
            if _transient(exc):
                raise _Transient(record.error, call) from None
            raise self.give_up(
                ModelError(f"{purpose}: {record.error}", purpose=purpose, call=call), calls
            ) from None
        _received(record, started, body)
        return _Attempt(content, self._log(record, calls))

    def _other_form(
        self,
        key: str,
        request: dict[str, Any],
        purpose: str,
        schema: type[BaseModel],
        episode_id: str | None,
        calls: list[LLMCall] | None,
        turn: int,
    ) -> _Attempt:
        """The endpoint refused a request in the ``json_schema`` form: ask again in the
        ``json_object`` + ``schema`` form, and keep that form unless the endpoint refuses it
        too."""
        self.schema_form = "json_object"
        try:
            return self._send(key, request, purpose, schema, episode_id, calls, turn)
        except ModelError as again:
            if again.call is not None and "response_format" in again.call.error:
                self.schema_form = "json_schema"
            raise

    def _post(
        self, request: dict[str, Any], schema: type[BaseModel] | None, form: SchemaForm
    ) -> dict[str, Any]:
        """Send the request (its schema in ``form``); returns the reply's JSON body."""
        completions = self._client.chat.completions.with_raw_response
        params = request["params"]
        if schema is None:
            raw = completions.create(model=self.model, messages=request["messages"], **params)
        elif form == "json_object":
            raw = completions.create(
                model=self.model,
                messages=request["messages"],
                extra_body={"response_format": json_object_format(schema)},
                **params,
            )
        else:
            raw = completions.parse(
                model=self.model, messages=request["messages"], response_format=schema, **params
            )
        try:
            body = raw.http_response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise _Refused("the endpoint's reply is not a JSON object")
        return body

    def _limit(self, max_tokens: int | None) -> int | None:
        return self.max_tokens if max_tokens is None else max_tokens

    def give_up(self, error: ModelError, calls: list[LLMCall] | None = None) -> ModelError:
        """Record on ``error``'s call that its question ended with ``error``; returns it.

        ``calls``, when given, has that call's record replaced by the updated one.
        """
        call = error.call
        if call is None or call.id is None:
            return error
        reason = self._redact(str(error))
        self.store.give_up_call(call.id, reason)
        error.call = call.model_copy(update={"gave_up": reason})
        if calls is not None:
            calls[:] = [error.call if c.id == call.id else c for c in calls]
        return error

    def _log(self, call: LLMCall, calls: list[LLMCall] | None) -> LLMCall:
        logged = self.store.log_call(call)
        if calls is not None:
            calls.append(logged)
        return logged

    def _redact(self, text: str) -> str:
        if self._secret and len(self._secret) >= 4:
            text = text.replace(self._secret, "[redacted]")
        return text

    def _scrubbed(self, value: Any) -> Any:
        """A reply with the key redacted wherever it appears: a server that reflects the key
        (an echo, a debugging proxy) must not get it stored, parsed or sent back in a
        correction."""
        if isinstance(value, str):
            return self._redact(value)
        if isinstance(value, dict):
            return {k: self._scrubbed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._scrubbed(v) for v in value]
        return value


class _Refused(Exception):
    """The reply carries no usable content (empty choices, refusal, no content, cut off)."""


REFUSED_STATUS = (400, 422, 500)
"""Statuses an endpoint answers a request it cannot read with (llama-cpp-python's server
answers a ``json_schema`` response format with a 500 naming the field)."""
CUT_OFF = "the reply was cut off by the token limit (finish_reason 'length')"
FILTERED = "the reply was withheld by the content filter"


def _params(temperature: float, max_tokens: int | None, seed: int | None) -> dict[str, Any]:
    params: dict[str, Any] = {"temperature": temperature}
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    if seed is not None:
        params["seed"] = seed
    return params


def _first_choice(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return choices[0]
    return None


def _content(body: Mapping[str, Any]) -> str:
    choice = _first_choice(body)
    if choice is None:
        raise _Refused("the endpoint returned no choices")
    message = choice.get("message") or {}
    if message.get("refusal"):
        raise _Refused(f"the model refused: {message['refusal']}")
    content = message.get("content")
    if not isinstance(content, str):
        raise _Refused(f"the reply has no content (finish_reason {choice.get('finish_reason')!r})")
    return content


def _response(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """What is logged of a reply: content and finish reason (and a refusal, if any)."""
    choice = _first_choice(body)
    if choice is None:
        return None
    message = choice.get("message") or {}
    response = {"content": message.get("content"), "finish_reason": choice.get("finish_reason")}
    if message.get("refusal"):
        response["refusal"] = message["refusal"]
    return response


def _received(record: LLMCall, started: float, body: Mapping[str, Any]) -> None:
    """Fill in what an attempt got back: latency, the logged reply and token usage."""
    record.latency_ms = (time.perf_counter() - started) * 1000
    record.response = _response(body)
    usage = body.get("usage")
    if isinstance(usage, Mapping):
        record.prompt_tokens = _int(usage.get("prompt_tokens"))
        record.completion_tokens = _int(usage.get("completion_tokens"))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _check_structured(body: Mapping[str, Any], content: str, schema: type[BaseModel]) -> None:
    """What ``completions.parse()`` checks of a structured reply: not cut off, not filtered,
    content that fits ``schema`` (read by :func:`load_answer`)."""
    choice = _first_choice(body) or {}
    if choice.get("finish_reason") == "length":
        raise _Refused(CUT_OFF)
    if choice.get("finish_reason") == "content_filter":
        raise _Refused(FILTERED)
    load_answer(schema, content)


def load_answer(schema: type[ModelT], content: str) -> ModelT:
    """``content`` as an instance of ``schema``. Raw control characters inside its strings
    (a literal newline, which strict JSON forbids and grammar-constrained small models write)
    are read as the characters they are; anything else malformed raises.

    Raises:
        ValidationError: the content is not JSON, or does not fit ``schema``.
    """
    try:
        return schema.model_validate_json(content)
    except ValidationError as error:
        if not any(e["type"] == "json_invalid" for e in error.errors()):
            raise
        try:
            lenient = json.loads(content, strict=False)
        except ValueError:
            raise error from None
    return schema.model_validate_json(json.dumps(lenient))


def _form_refused(exc: Exception) -> bool:
    """Whether the endpoint rejected the request (HTTP 400, 422 or 500) naming its
    ``response_format``: the ``json_schema`` form it does not read."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in REFUSED_STATUS:
        return False
    said = f"{exc.message} {exc.body}".lower()
    return "response_format" in said or "json_schema" in said


def _transient(exc: Exception) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def _describe(exc: Exception) -> str:
    import openai

    if isinstance(exc, _Refused):
        return str(exc)
    if isinstance(exc, openai.LengthFinishReasonError):
        return CUT_OFF
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return FILTERED
    if isinstance(exc, ValidationError | json.JSONDecodeError):
        return f"malformed structured output: {_short(exc)}"
    if isinstance(exc, openai.APIStatusError):
        detail = exc.body.get("message") if isinstance(exc.body, Mapping) else None
        return f"HTTP {exc.status_code}: {detail or exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return f"could not reach the endpoint: {exc.__cause__ or exc}"
    return f"{type(exc).__name__}: {exc}"


def _short(exc: Exception, limit: int = 300) -> str:
    """A one-paragraph summary of a parse error, for logs and correction messages."""
    if isinstance(exc, ValidationError):
        text = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()
        )
    else:
        text = str(exc)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _same_reply(content: str, said: Sequence[str]) -> bool:
    """Whether ``content`` repeats the reply before it but for whitespace: a model that does
    not act on a correction (greedy decoding writes it again) is not asked a third time."""
    return bool(said) and "".join(content.split()) == "".join(said[-1].split())


def _correction(bad: _Malformed) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": bad.content},
        {
            "role": "user",
            "content": f"Your reply could not be read ({bad}). "
            "Answer again with only a JSON object that matches the schema.",
        },
    ]
