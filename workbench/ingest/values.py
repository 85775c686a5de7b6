"""Small readers of loosely typed JSON values, shared by the importers, and JSON text.

Agent logs put strings where numbers belong, numbers where ids belong and ``null`` nearly
anywhere; these helpers read one value the way every importer wants it, never raising.
:func:`parse_json` reads JSON text as ``json.loads`` does, :func:`compact_json` and
:func:`indented_json` write a value back as ``json.dumps`` does, and :func:`reindented_json`
does both, each faster.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import msgspec

from store.rows import json_encoder, to_json_text


def scalar(value: Any) -> str | None:
    """A non-empty string, or an integer as text; ``None`` for anything else."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def as_text(value: Any) -> str:
    """A value as text: ``""`` for ``None``, a string as it is, anything else through ``str``."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


INT_RANGE = range(-(2**63), 2**63)
"""The integers SQLite stores: a count outside them is no count (read as unknown)."""


def int_or_none(value: Any) -> int | None:
    """An integer count from an int or an integral float; ``None`` otherwise, and for one
    outside SQLite's 64 bits (a float's infinity or NaN included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in INT_RANGE else None
    if isinstance(value, float) and value.is_integer():
        number = int(value)
        return number if number in INT_RANGE else None
    return None


def int_or_zero(value: Any) -> int:
    """A number truncated to an integer; ``0`` for anything else (booleans included, and a
    number outside SQLite's 64 bits, infinity or NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    number = int(value)
    return number if number in INT_RANGE else 0


def float_or_none(value: Any) -> float | None:
    """A finite number as float; ``None`` for anything else (booleans, infinities, NaN and
    integers past float's range included)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    return None


def total(values: Iterable[int | float | None]) -> Any:
    """Sum of the known values; ``None`` when none is known."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def iso_time(value: Any) -> datetime | None:
    """An ISO 8601 timestamp (a ``Z`` read as UTC, no zone left naive); ``None`` if unreadable."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)  # (Python 3.11 reads a final "Z" as UTC)
    except ValueError:
        return None


def compact(mapping: dict[str, Any]) -> dict[str, Any]:
    """``mapping`` without its ``None`` values."""
    return {key: value for key, value in mapping.items() if value is not None}


def places(obj: dict[str, Any], sub_keys: Sequence[str], depth: int = 2) -> Iterator[dict]:
    """``obj`` then its dict-valued ``sub_keys``, recursively up to ``depth`` levels."""
    yield obj
    if depth == 0:
        return
    for key in sub_keys:
        value = obj.get(key)
        if isinstance(value, dict):
            yield from places(value, sub_keys, depth - 1)


def pick(obj: dict[str, Any], keys: Sequence[str], sub_keys: Sequence[str] = ()) -> str | None:
    """The first string (or integer) under ``keys`` in ``obj``, then in its sub-objects."""
    for place in places(obj, sub_keys, depth=1):
        for key in keys:
            value = scalar(place.get(key))
            if value is not None:
                return value
    return None


# -- JSON text: parsing it, writing values back as json.dumps does ------------------------------

_scan = json.JSONDecoder().scan_once
"""The decoder's scanner (C when available), which ``json.loads`` calls through two Python
wrappers and two whitespace matches."""
_JSON_SPACE = " \t\n\r"

_decode = msgspec.json.Decoder().decode
"""msgspec's JSON decoder: two to three times as fast as ``json``'s on log lines. Wherever it
reads a text, it reads the value ``json.loads`` reads (integers of any size included); what it
refuses — ``NaN`` and ``Infinity``, numbers beyond a float's range, lone surrogates, bytes
that are not UTF-8, deep nesting, bad JSON — is read by ``json`` instead, which either reads
it or says what is wrong (tests hold the two to that: ``tests/ingest/test_values.py``)."""
UNREAD = object()
"""What :func:`fast_json` returns for text it leaves to ``json``."""
FAST_TEXT = 1 << 20
"""Characters of a ``str`` up to which :func:`parse_json` tries :func:`fast_json` (msgspec
reads a ``str`` through its UTF-8 form, which Python keeps with a text that is not ASCII:
a copy that a big text should not get)."""


def fast_json(data: bytes | bytearray | memoryview | str) -> Any:
    """The JSON value of ``data`` (UTF-8 bytes or text), as ``json.loads`` reads it, when
    msgspec reads it; :data:`UNREAD` when it does not (then read it with ``json``)."""
    try:
        return _decode(data)
    except (ValueError, RecursionError):  # msgspec's DecodeError, a str it cannot encode
        return UNREAD


def parse_json(text: str) -> Any:
    """``json.loads(text)``: the same value, or the same error (see :func:`loads`).

    Text that opens an object or an array at its first character (a log line, a JSON-encoded
    attribute) is read by :func:`fast_json` when it is short, else handed to the scanner
    directly; anything else, and any text neither takes whole, goes through ``json.loads``,
    which says what is wrong.
    """
    if text[:1] in ("{", "["):
        if len(text) < FAST_TEXT:
            value = fast_json(text)
            if value is not UNREAD:
                return value
        try:
            value, end = _scan(text, 0)
        except (StopIteration, ValueError, RecursionError):
            pass
        else:
            if end == len(text) or not text[end:].strip(_JSON_SPACE):
                return value
        return _json_loads(text)  # (fast_json has refused it, or it is long)
    return loads(text)


MAX_DEPTH = 900
"""How deep the ingest's streaming JSON readers let values nest (what ``json.loads`` reads,
about)."""
TOO_DEEP = f"nested too deeply (more than about {MAX_DEPTH} levels)"
"""What :func:`loads` says of JSON its parser cannot descend into."""


def loads(data: str | bytes) -> Any:
    """``json.loads(data)``, with every way it fails a :class:`json.JSONDecodeError`.

    ``json.loads`` raises ``RecursionError`` for values nested about a thousand deep and a
    bare ``ValueError`` for an integer of more than 4300 digits; both become a decode error
    (at the start of the text, which is all ``json`` tells), so that a caller that names
    the line and column of bad JSON names these too. Bytes, and text shorter than
    :data:`FAST_TEXT`, are read by :func:`fast_json` first.
    """
    if type(data) is not str or len(data) < FAST_TEXT:
        value = fast_json(data)
        if value is not UNREAD:
            return value
    return _json_loads(data)


def _json_loads(data: str | bytes) -> Any:
    """:func:`loads` without :func:`fast_json` (for text it has refused already)."""
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise _decode_error(TOO_DEEP, data) from None
    except ValueError as error:  # "Exceeds the limit (4300 digits) for integer string ..."
        if isinstance(error, UnicodeDecodeError):
            raise
        raise _decode_error(f"number too long ({str(error).partition(';')[0]})", data) from None


def _decode_error(message: str, data: str | bytes) -> json.JSONDecodeError:
    return json.JSONDecodeError(message, data if isinstance(data, str) else "", 0)


def json_within(text: str, start: int, stop: int) -> tuple[bool, Any]:
    """``(True, value)`` when ``text[start:stop]`` opens with a JSON value that ends in it,
    followed by JSON whitespace only: the value ``parse_json`` reads from that slice, found
    without copying the slice out. ``(False, None)`` otherwise (the slice is then parsed).
    """
    try:
        value, end = _scan(text, start)
    except (StopIteration, ValueError, RecursionError):
        return False, None
    if end <= stop and not text[end:stop].strip(_JSON_SPACE):
        return True, value
    return False, None


_compact = json_encoder(allow_nan=True)


def compact_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, without making an encoder for each call."""
    try:
        return _compact(value)
    except (TypeError, ValueError, RecursionError):  # json.dumps says what is wrong
        return json.dumps(value, ensure_ascii=False)


def indented_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)``, the same text at a fraction of the
    cost: the standard library indents in pure Python, one generator per container.

    Parsed JSON (dicts with string keys, lists, strings, numbers, booleans, ``None``) is
    written here, each string and number by the C encoder's own functions; any other value is
    left to ``json.dumps``.
    """
    try:
        return _indented(value, "\n")
    except (_NotPlainJSON, TypeError, RecursionError):
        return json.dumps(value, ensure_ascii=False, indent=2)


def reindented_json(text: str) -> str:
    """``json.dumps(json.loads(text), ensure_ascii=False, indent=2)``: the same text, or the
    same error, in half the time for the JSON arguments of a tool call.

    Text without a number with a fraction or an exponent, which msgspec reads, is written
    back by msgspec (as a JSON column is: :func:`store.rows.to_json_text`) and indented by it
    (``msgspec.json.format``): both write strings, integers, ``null`` and the booleans as
    ``json.dumps`` does and lay out containers alike, but not a float's exponent (``1e16``,
    not ``1e+16``); so text holding a float, and whatever msgspec does not read
    (:func:`fast_json`), goes through :func:`parse_json` and :func:`indented_json` (tests
    hold the two to ``json``: ``tests/ingest/test_values.py``).
    """
    if text[:1] in ("{", "[") and len(text) < FAST_TEXT:
        try:
            value = _decode_without_floats(text)
        except (ValueError, RecursionError, _HasFloat):
            pass
        else:
            return msgspec.json.format(to_json_text(value), indent=2)
    return indented_json(parse_json(text))


class _HasFloat(Exception):
    """Raised by :data:`_decode_without_floats` at a number with a fraction or exponent."""


def _refuse_float(literal: str) -> Any:
    raise _HasFloat


_decode_without_floats = msgspec.json.Decoder(float_hook=_refuse_float).decode


class _NotPlainJSON(Exception):
    """A value :func:`indented_json` leaves to ``json.dumps`` (a tuple, a non-string key...)."""


_string = json.encoder.encode_basestring
"""The encoder of strings ``json.dumps(..., ensure_ascii=False)`` uses (C when available)."""
_CONSTANTS = {None: "null", True: "true", False: "false"}
_INFINITE = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def _indented(value: Any, newline: str) -> str:
    """``value`` as indented JSON, its nested lines starting with ``newline`` plus two spaces."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is dict or kind is list:
        if not value:
            return "{}" if kind is dict else "[]"
        inner = newline + "  "
        if kind is dict:  # (a key that is not a string fails to encode: TypeError)
            parts = [
                f"{_string(key)}: {_string(item) if type(item) is str else _indented(item, inner)}"
                for key, item in value.items()
            ]
            return "{" + inner + ("," + inner).join(parts) + newline + "}"
        parts = [_string(item) if type(item) is str else _indented(item, inner) for item in value]
        return "[" + inner + ("," + inner).join(parts) + newline + "]"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        return _INFINITE.get(value) or float.__repr__(value)
    if kind is bool or value is None:
        return _CONSTANTS[value]
    raise _NotPlainJSON
