"""JSON text the importers read and write faster than the standard library: the same text.

Every stored step's raw record, tool call and JSON-encoded field goes through these; a
difference would silently change what an import stores.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from store.rows import json_encoder
from workbench.ingest.base import json_key
from workbench.ingest.values import (
    UNREAD,
    compact_json,
    fast_json,
    indented_json,
    json_within,
    loads,
    parse_json,
    reindented_json,
)

KEYS = st.text(alphabet=st.sampled_from('ab"\\é☃\u2028\x00\n'), max_size=4)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.sampled_from('xé☃"\\/\n\t\x01\x7f\u2028\ud800'), max_size=6)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)


def _outcome(function, *args):
    """What ``function(*args)`` returns, or the type and text of what it raises."""
    try:
        return "value", repr(function(*args))
    except Exception as error:  # comparing errors is the point
        return type(error).__name__, str(error)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_written_json_is_what_json_dumps_writes(value):
    assert compact_json(value) == json.dumps(value, ensure_ascii=False)
    assert indented_json(value) == json.dumps(value, ensure_ascii=False, indent=2)
    stored = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False).encode
    assert _outcome(json_encoder(allow_nan=False), value) == _outcome(stored, value)


def test_values_json_dumps_would_refuse_are_refused_alike():
    cyclic: list = []
    cyclic.append(cyclic)
    for value in (cyclic, {"a": object()}, {(1, 2): "tuple key"}, (1, [2]), {1: "int key"}):
        for ours, theirs in (
            (compact_json, lambda v: json.dumps(v, ensure_ascii=False)),
            (indented_json, lambda v: json.dumps(v, ensure_ascii=False, indent=2)),
        ):
            assert _outcome(ours, value) == _outcome(theirs, value)


def _reindented(text):
    return json.dumps(json.loads(text), ensure_ascii=False, indent=2)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.sampled_from(["", " ", "\n", " \t\r\n", " x", "}", "\u2028"]))
@example({"a": 1, "b": [2, {"c": "é"}]}, False, "")  # msgspec's own path, every kind of line
@example({"a": [1e16, 2.5, -0.0]}, False, "")  # floats: json's path
@example({"a": "\ud800"}, True, "")  # a lone surrogate, escaped
def test_reindented_json_is_what_json_writes_of_what_it_reads(value, ascii, after):
    text = json.dumps(value, ensure_ascii=ascii) + after  # (ensure_ascii: every \u escape)
    assert _outcome(reindented_json, text) == _outcome(_reindented, text)


def test_reindented_json_reads_text_as_json_does():
    """Escapes, spellings of numbers, duplicate keys and broken text: json's value or error."""
    for text in [
        '{"a": 1, "b": 2, "a": 3}',
        '{"a": "\\u00e9\\/\\n", "b": -0, "c": 1E2, "d": 10000000000000000000000}',
        "[1.50, 2e-7, 1e400, NaN, -Infinity]",
        '  {"a": {}, "b": [], "c": [[]]}  ',
        '{"a": 1} x',
        '{"a": }',
        "[1, 2",
        '"a string"',
        "null",
    ]:
        assert _outcome(reindented_json, text) == _outcome(_reindented, text), text
    with pytest.raises(json.JSONDecodeError):  # (as parse_json: json's is a RecursionError)
        reindented_json("[" * 5000 + "]" * 5000)


@settings(max_examples=200, deadline=None)
@given(VALUES, st.sampled_from(["", " ", "\n", " \t\r\n", " x", "}", "\u2028"]))
def test_parsed_json_is_what_json_loads_reads(value, after):
    text = json.dumps(value, ensure_ascii=False) + after
    assert _outcome(parse_json, text) == _outcome(json.loads, text)  # (reprs: NaN alike)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from(["", " ", "\n", "\r\n", " x", "\x0b"]))
def test_fast_json_reads_what_json_loads_reads_or_leaves_it(value, after):
    text = json.dumps(value, ensure_ascii=False) + after
    fast = fast_json(text.encode("utf-8", "surrogatepass"))
    if fast is not UNREAD:
        assert _outcome(lambda: fast) == _outcome(json.loads, text)


def test_fast_json_leaves_what_msgspec_reads_otherwise_to_json():
    """What ``json.loads`` reads and msgspec would not (or would read as another value) is
    left to ``json``: non-finite numbers, a number beyond a float's range, lone surrogates,
    bytes that are not UTF-8, deep nesting, a byte-order mark."""
    for data in [
        b'{"a": NaN}',
        b"[Infinity, -Infinity]",
        b'{"a": 1e400}',
        b'{"a": "\\ud800"}',
        '{"a": "\ud800"}',
        b'{"a": "\xff"}',
        b'{"a": "\xed\xa0\x80"}',
        b"[" * 5000 + b"]" * 5000,
        b'\xef\xbb\xbf{"a": 1}',
        '{"a": 1}'.encode("utf-16"),
    ]:
        assert fast_json(data) is UNREAD
    for data in [
        b"123456789012345678901234567890",
        b"-9223372036854775809",
        b"18446744073709551616",
    ]:
        assert fast_json(data) == json.loads(data) and type(fast_json(data)) is int
    assert fast_json(memoryview(b'x{"a": [1, 2.5]}\n')[1:]) == {"a": [1, 2.5]}


def test_bytes_are_read_as_json_loads_reads_them():
    for data in [
        '{"é": "☃"}'.encode(),
        b'\xef\xbb\xbf{"a": 1}',
        '{"a": 1}'.encode("utf-16"),
        '{"a": 1}'.encode("utf-32-le"),
        b'{"a": "\xff"}',
        b'{"a": NaN, "b": 1e999}',
        b"[1, 2",
    ]:
        assert _outcome(loads, data) == _outcome(json.loads, data)


def test_broken_json_fails_as_json_loads_fails():
    for text in [
        '{"a": }',
        "{",
        "[1, 2",
        '{"a": 1} x',
        '{"a": 1}{"b": 2}',
        "",
        "\ufeff{}",
    ]:
        assert _outcome(parse_json, text) == _outcome(json.loads, text)


def test_json_too_deep_or_too_long_is_a_decode_error():
    """What ``json.loads`` raises as ``RecursionError`` or a bare ``ValueError`` is a decode
    error, which every importer turns into a message naming the line."""
    for text, message in [
        ("[" * 10**5, "nested too deeply"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ('{"a": ' + "1" * 5000 + "}", "number too long"),
    ]:
        for parse in (parse_json, loads):
            with pytest.raises(json.JSONDecodeError, match=message):
                parse(text)


def test_a_value_found_in_place_is_the_one_its_slice_holds():
    text = '{"a": 1}\n{"b": \n2}\n{"c": 3} x\n{"d": [4]}  \n'
    lines = text.splitlines(keepends=True)
    start = 0
    for line in lines:
        found, value = json_within(text, start, start + len(line))
        assert found == (_outcome(parse_json, line)[0] == "value")
        if found:
            assert value == parse_json(line)
        start += len(line)


SNIFFED = st.lists(st.sampled_from(['"', "\\", ":", " ", "\n", "[", "{", "k", "v", '"k"'])).map(
    "".join
)
"""Text made of a key's pieces (and the key whole, often after a backslash)."""


@settings(max_examples=300)
@given(SNIFFED, st.sampled_from(["", "[", "{", '"v']))
@example('{"x": "\\"k\\": [", "k": [', "[")  # a key quoted in a string value, then the key
@example('\\"k":', "")
def test_a_json_key_is_found_where_the_look_behind_pattern_finds_it(text, opener):
    """Format detection's keys match where ``(?<!\\)"k"\\s*:\\s*opener`` matches (a key
    not after a backslash), found without ``re`` trying the look-behind at every position."""
    slow = re.compile(rf'(?<!\\)"k"\s*:\s*{re.escape(opener)}').search(text)
    fast = json_key("k", opener).search(text)
    assert (fast and fast.span()) == (slow and slow.span())
