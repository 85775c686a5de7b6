"""What every importer shares: the parsed episode it yields, its context, its errors.

An importer is a module-level object with a ``name``, a ``sniff`` that says whether a file
looks like its format, and a ``read`` that yields :class:`ParsedEpisode` (or, for a record it
cannot read, an :class:`IngestError`) one at a time, so files of any size stream.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import ijson
from pydantic import ValidationError

from store import Batch, Episode, Outcome, Source, Span, Step, Task
from workbench.ingest import json_events
from workbench.ingest.values import (
    MAX_DEPTH,
    TOO_DEEP,
    UNREAD,
    compact_json,
    fast_json,
    float_or_none,
    json_within,
    loads,
    parse_json,
)


def path_text(path: str | os.PathLike[str]) -> str:
    """``path`` as text that can be stored and printed: bytes of its name that are not UTF-8
    (which Python keeps as lone surrogates, and SQLite and terminals refuse) shown as
    ``\\xNN``; any other name as it is."""
    text = os.fspath(path)
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


ERROR_CHARS = 300
"""The most characters of one part of an error message (a bad value quoted in it is cut)."""


def shortened(text: str, limit: int = ERROR_CHARS) -> str:
    """``text``, cut to about ``limit`` characters with how long it was: an error that quotes
    a 2 MB value stays one readable line."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 40]}… ({len(text):,} characters)"


class IngestError(Exception):
    """A file, or one record in it, that cannot be imported.

    Args:
        path: the file.
        where: where in it, e.g. ``line 12`` or ``record 3``; empty for the whole file.
        field: the field at fault, as a dotted path; empty when no single field is.
        message: what is wrong, in words.
    """

    def __init__(self, path: str | Path, where: str, field: str, message: str) -> None:
        self.path = path_text(path)
        self.where, self.field, self.message = (
            shortened(where),
            shortened(field),
            shortened(message),
        )
        self.format = ""
        """The format the file was read as, when an import read it (set by the import)."""
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.path]
        if self.where:
            parts.append(self.where)
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join([*parts, self.message])


def validation_error(
    path: str | Path, where: str, error: ValidationError, prefix: str = ""
) -> IngestError:
    """Turn a pydantic error into an :class:`IngestError` naming the first bad field."""
    first = error.errors()[0]
    loc = ".".join(str(part) for part in first["loc"])
    field_path = ".".join(p for p in (prefix, loc) if p)
    return IngestError(path, where, field_path, first["msg"].lower())


@dataclass
class ParsedEpisode:
    """One episode read from a file, ready to store."""

    task: Task
    episode: Episode
    steps: Sequence[Step]
    """The steps, in order (as records, or as ``steps.StepFields``: checked fields made records
    only when read)."""
    spans: list[Span] = field(default_factory=list)
    batch: Batch | None = None
    """The episode's own batch when the file records one (the workbench's JSONL does);
    ``None`` puts the episode in the import's batch."""


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark some editors and Windows tools write at the start of text."""


class CountingReader(io.RawIOBase):
    """A binary file wrapper that counts the bytes read, for progress by bytes."""

    def __init__(self, raw: io.BufferedReader) -> None:
        self.raw, self.count = raw, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer)
        self.count += n or 0
        return n

    def seekable(self) -> bool:
        return self.raw.seekable()

    def tell(self) -> int:
        return self.raw.tell()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Go to ``offset`` (a reader read again, :mod:`~workbench.ingest.json_events`); the
        bytes before it count as read."""
        self.count = self.raw.seek(offset, whence)
        return self.count

    def close(self) -> None:
        self.raw.close()
        super().close()


@dataclass
class ReadContext:
    """What an importer gets besides the file: where the records go and what joins them."""

    path: Path
    """The file being read."""

    content_hash: str
    """SHA-256 of the file's content, with any joined results file."""

    batch_id: str
    """The batch imported episodes belong to."""

    format: str
    """The importer's name, recorded as the episodes' source format."""

    results: Path | None = None
    """A separate results or evaluation report to join outcomes from, if given."""

    file_hash: str = ""
    """SHA-256 of the file's content alone (empty: :attr:`content_hash`): what episode ids and
    unnamed tasks' keys derive from (:attr:`key`), so that the same file read again with a
    results file gives the same ids and its outcomes update the stored ones."""

    readers: list[CountingReader] = field(default_factory=list)
    """Every reader opened through :meth:`open`, to report progress in bytes."""

    content: bytes | None = None
    """The file's bytes when the import read them already (to hash a small file), so that
    it is read once; ``None``: :meth:`open` reads the file."""

    shared: dict[str, Any] = field(default_factory=dict)
    """What the file shares with all its episodes (AgentBench's ``overall.json`` summary),
    filled by the importer as it reads: the import stores it once, with the file's source
    record (:meth:`store.Store.source_metadata`), instead of in every episode's metadata."""

    _given: bool = field(default=False, repr=False)
    """Whether :meth:`in_memory` has given :attr:`content` (then it counts as read)."""

    def open(self, path: Path | None = None) -> io.BufferedReader:
        """Open ``path`` (default: the file being read) for binary reading, counting bytes.

        A UTF-8 byte order mark at the start is skipped: every importer reads the text after it.
        """
        if path is None and self.content is not None:
            source: Any = io.BytesIO(self.content)
        else:
            source = open(path or self.path, "rb")  # noqa: SIM115 (closed by caller)
        reader = CountingReader(source)
        if path is None:
            self.readers.append(reader)
        handle = io.BufferedReader(reader, buffer_size=1 << 16)
        if handle.peek(len(BOM))[: len(BOM)] == BOM:
            handle.read(len(BOM))
        return handle

    def in_memory(self) -> bytes | None:
        """The file's bytes when the import read them already (after a byte order mark, as
        :meth:`open` skips it), counted as read; ``None`` when the file is to be opened."""
        if self.content is None:
            return None
        self._given = True
        return self.content[len(BOM) :] if self.content.startswith(BOM) else self.content

    def read_all(self) -> bytes:
        """The whole file's bytes (after a byte order mark): those the import read already,
        else read now."""
        data = self.in_memory()
        if data is None:
            with self.open() as handle:
                data = handle.read()
        return data

    def bytes_read(self) -> int:
        """Bytes of the main file consumed so far."""
        given = len(self.content) if self._given and self.content is not None else 0
        return given + sum(reader.count for reader in self.readers)

    @property
    def key(self) -> str:
        """The file's short key in ids: the start of :attr:`file_hash`."""
        return (self.file_hash or self.content_hash)[:12]

    def episode_id(self, record: str) -> str:
        """Deterministic episode id for a record, so importing twice gives the same ids."""
        return f"{self.key}-{record}"

    def source(self, record: str) -> Source:
        """The source of an episode read from ``record`` of this file."""
        return Source(
            path=path_text(self.path), format=self.format, hash=self.content_hash, record=record
        )

    def error(self, where: str, field_path: str, message: str) -> IngestError:
        """An error about this file."""
        return IngestError(self.path, where, field_path, message)


class Importer(Protocol):
    """The shape of an importer module object."""

    name: str
    """Format name used by ``--format`` and recorded on episodes."""

    description: str
    """One line shown in ``workbench import --help``."""

    companions: Callable[[Path], list[Path]]
    """Optional: the files it reads beside a file when no ``--results`` is given (an
    ``overall.json``). They are hashed with it, so a companion that appears or changes later
    makes the file read again (its episodes' outcomes updated, their ids the same)."""

    binary: bool
    """Whether its files may hold NUL bytes (an archive; a plain-text log that may quote a
    binary file). Optional, ``False`` when missing: a file holding one is then refused
    before it is read (no JSON text holds one)."""

    def sniff(self, path: Path, head: str) -> bool:
        """Whether the file looks like this format, from its name and first 64 KiB of text."""
        ...

    def read(self, ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
        """Yield the file's episodes; a record-level problem is yielded, a file-level one raised."""
        ...


# -- helpers shared by importers ------------------------------------------------------------


def load_json(ctx: ReadContext, path: Path | None = None) -> Any:
    """Parse a whole JSON file, turning syntax errors into an error with line and column."""
    target = path or ctx.path
    if path is None:
        data = ctx.read_all()
    else:
        with ctx.open(path) as handle:
            data = handle.read()
    try:
        return loads(data)
    except UnicodeDecodeError as error:
        raise IngestError(target, f"byte {error.start}", "", "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise IngestError(
            target, f"line {error.lineno} column {error.colno}", "", f"invalid JSON: {error.msg}"
        ) from None


_OPENS = ("start_map", "start_array")
_CLOSES = ("end_map", "end_array")


def json_items(handle: IO[bytes], prefix: str, buf_size: int) -> Iterator[Any]:
    """``ijson.items(handle, prefix, use_float=True)``: the values at ``prefix``, streamed,
    refusing (with ``ijson.JSONError``) values nested more than :data:`MAX_DEPTH` deep.

    ``ijson.items`` keeps the path of every open level, so that a value nested 100,000 deep
    takes tens of gigabytes; this builds the values from ijson's events without paths.
    """
    want = prefix.split(".") if prefix else []
    keys: list[str] = []
    """Per open container outside the items: ``item`` for an array, else its current key."""
    events = json_events.events(handle, buf_size)
    try:
        for event, value in events:
            if event == "map_key":
                keys[-1] = value
                continue
            if event in _CLOSES:
                keys.pop()
                continue
            if keys == want:
                yield built(events, event, value) if event in _OPENS else value
            elif event in _OPENS:
                if len(keys) >= MAX_DEPTH:
                    raise ijson.JSONError(TOO_DEEP)
                keys.append("item" if event == "start_array" else "")
    except ValueError as error:  # an integer of more than 4300 digits
        raise ijson.JSONError(f"number too long ({str(error).partition(';')[0]})") from None


def built(events: Iterator[tuple[str, Any]], event: str, value: Any) -> Any:
    """The container opened by ``event`` (ijson's ``basic_parse`` events), built from the
    events up to its end, refusing values nested more than :data:`MAX_DEPTH` deep.

    What ``ijson.ObjectBuilder`` builds (a repeated key keeps its last value), without its
    three Python calls per event: the containers still open are kept on a stack, and each
    value goes into the innermost under the key just read.
    """
    root: Any = {} if event == "start_map" else []
    stack = [root]
    top, key = root, None
    for event, value in events:
        if event == "map_key":
            key = value
        elif event == "start_map" or event == "start_array":
            if len(stack) >= MAX_DEPTH:
                raise ijson.JSONError(TOO_DEEP)
            opened: Any = {} if event == "start_map" else []
            if type(top) is list:
                top.append(opened)
            else:
                top[key] = opened
            stack.append(opened)
            top = opened
        elif event == "end_map" or event == "end_array":
            stack.pop()
            if not stack:
                return root
            top = stack[-1]
        elif type(top) is list:
            top.append(value)
        else:
            top[key] = value
    raise ijson.IncompleteJSONError("premature end of the JSON document")


WHOLE_JSON = 8 << 20
"""A JSON document up to this many bytes may be parsed whole by ``json``'s C parser
(:func:`json_members`) instead of streamed event by event: about ten times faster, for memory
of a few times its size."""


def json_members(data: bytes) -> list[tuple[str, Any]] | None:
    """The members of a JSON object document, in order (a repeated key kept each time), as
    the streaming readers (:func:`json_items`, over ``ijson``'s C parser) read them, parsed
    whole by ``json``'s C parser.

    ``None`` when the streaming readers must read it, the only ones to say what is wrong or to
    read it their own way: not an object of UTF-8 JSON, nesting near :data:`MAX_DEPTH`
    (:func:`_plain_structure`), a number ``ijson`` refuses (an integer past 64 bits, a float
    past its range, ``NaN``) or an escaped surrogate (``ijson`` reads a lone one as ``?``).
    """
    if not _plain_structure(data):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _SURROGATE_ESCAPE.search(text) is not None:
        return None
    try:
        return _members(text)
    except (StopIteration, ValueError, RecursionError):
        return None


_scan = json.JSONDecoder().scan_once
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRUCTURE = b'"[]{},:0123456789.eE+-NI'
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(_STRUCTURE)))
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_NUMBERS = bytes.maketrans(b"123456789E", b"000000000e")
_UNSURE_NUMBERS = (b"0" * 19, b"e000", b"e+000", b"e-000", b"N", b"I")
"""Outside strings, once every digit is a 0: an integer part or fraction of 19 digits or
more (an integer past 64 bits has as many), an exponent of three digits, ``NaN`` or
``Infinity``."""


def _plain_structure(data: bytes) -> bool:
    """Whether ``data``, read as JSON, nests well within :data:`MAX_DEPTH` and holds no
    number that ``ijson`` may refuse, found at C speed.

    Escapes are dropped (an escaped backslash, then an escaped quote), then everything but
    quotes, brackets, separators and number characters, then the strings (every other piece
    between quotes): what is left is the document's brackets and numbers. Pairs of brackets
    that hold nothing are then removed until none is left, each pass removing at least the
    innermost level of every nest and at most two: emptied in fewer than :data:`MAX_DEPTH` / 2
    passes, nothing nests deeper than :data:`MAX_DEPTH` (with room to spare for the levels
    outside a streamed value).
    """
    bare = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    pieces = bare.split(b'"')
    if len(pieces) % 2 == 0:
        return False  # a quote left open: not JSON
    bare = b"".join(pieces[::2]).translate(_NUMBERS)
    if any(unsure in bare for unsure in _UNSURE_NUMBERS):
        return False
    brackets = bare.translate(None, _NOT_BRACKET)
    for _ in range(MAX_DEPTH // 2 - 8):
        if not brackets:
            return True
        fewer = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if len(fewer) == len(brackets):
            return False  # not JSON: the streaming reader says what is wrong
        brackets = fewer
    return False


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _members(text: str) -> list[tuple[str, Any]] | None:
    """The members of the JSON object ``text``; ``None`` when it is not one (each value read by
    the C scanner, which raises for bad JSON)."""
    space = _WHITESPACE.match
    pos = space(text).end()
    if text[pos : pos + 1] != "{":
        return None
    pos = space(text, pos + 1).end()
    members: list[tuple[str, Any]] = []
    if text[pos : pos + 1] == "}":
        pos += 1
    else:
        while True:
            if text[pos : pos + 1] != '"':
                return None
            key, pos = _scan(text, pos)
            pos = space(text, pos).end()
            if text[pos : pos + 1] != ":":
                return None
            value, pos = _scan(text, space(text, pos + 1).end())
            members.append((key, value))
            pos = space(text, pos).end()
            mark, pos = text[pos : pos + 1], pos + 1
            if mark == "}":
                break
            if mark != ",":
                return None
            pos = space(text, pos).end()
    return members if space(text, pos).end() == len(text) else None


def json_line(raw: bytes) -> Any:
    """``json.loads(raw)`` of one line's bytes.

    ``json.loads`` first guesses the encoding of bytes from their first four (a Python
    function, a good part of the cost of a short line); a line that opens an object is UTF-8
    by that guess, and is decoded as ``json.loads`` would decode it.
    """
    if raw[:1] == b"{" and raw[1:2] != b"\x00":
        return parse_json(raw.decode("utf-8", "surrogatepass"))
    return loads(raw)


def iter_jsonl(ctx: ReadContext) -> Iterator[tuple[int, Any] | IngestError]:
    """Yield ``(line number, parsed object)`` per non-blank line; bad lines become errors.

    The file is read in blocks of whole lines, each decoded once and its objects scanned in
    place (see :func:`_block_records`): what reading it line by line gives, for less. A block
    is handed over in a list that :func:`_block_records` empties, so that its bytes are freed
    once decoded: memory holds about two copies of the longest line, not four. A file the
    import read already, shorter than :data:`BIG_LINE`, is read where it is, as one block.
    """
    content = ctx.in_memory() if ctx.content is not None and len(ctx.content) < BIG_LINE else None
    if content is not None:
        yield from _short_lines(ctx, content, 0)
        return
    number = 0
    with ctx.open() as handle:
        for held in _line_blocks(handle):
            lines = held[0].count(b"\n") + (not held[0].endswith(b"\n"))
            yield from _block_records(ctx, held, number)
            number += lines


LINE_BLOCK = 1 << 16
"""Bytes read at a time by :func:`iter_jsonl` (the whole lines among them make a block)."""
BIG_LINE = 1 << 20
"""A line this long has the decoded block dropped before its record is yielded."""


def _line_blocks(handle: io.BufferedReader) -> Iterator[list[bytes | bytearray]]:
    """The file's bytes in blocks of whole lines (the last may lack its line break), each
    alone in a list that the reader empties.

    A line longer than a read grows in one ``bytearray`` (no list of pieces joined into a
    second copy).
    """
    rest = b""
    long: bytearray | None = None
    while chunk := handle.read(LINE_BLOCK):
        cut = chunk.rfind(b"\n") + 1
        if not cut:  # no line ends in it
            if long is None:
                long = bytearray(rest)
            long += chunk
            continue
        if long is None:
            held: list[bytes | bytearray] = [rest + chunk[:cut]]
        else:
            long += chunk[:cut]
            held, long = [long], None
        rest = chunk[cut:]
        yield held
        del held
    if long is not None:
        yield [long]
    elif rest:
        yield [rest]


_ASCII_SPACE = " \t\n\r\x0b\x0c"
"""What ``bytes.isspace`` counts as space."""


def _block_records(ctx: ReadContext, held: list[bytes | bytearray], number: int) -> Iterator[Any]:
    """The records of a block of lines (taken out of ``held``), the first of them line
    ``number + 1``.

    A line that opens an object is scanned where it is in the decoded block; a line whose
    object does not end on it, or that is anything else, is read on its own as before
    (:func:`_line_record`), which also names what is wrong with it. Before the record of a
    line of :data:`BIG_LINE` or more is yielded, the block's text is cut to what follows it.
    """
    block = held.pop()
    if len(block) < BIG_LINE:  # every line short: read from the bytes
        yield from _short_lines(ctx, block, number)
        return
    try:
        text = block.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # line by line, to name the line at fault
        for raw in _raw_lines(block):
            number += 1
            yield from _line_record(ctx, number, raw)
        return
    del block
    pos, size = 0, len(text)
    while pos < size:
        number += 1
        newline = text.find("\n", pos)
        stop = size if newline < 0 else newline + 1
        if text[pos] == "{" and text[pos + 1 : pos + 2] != "\x00":  # as json_line reads it
            found, value = json_within(text, pos, stop)
            if found:
                if stop - pos < BIG_LINE:  # (held while suspended: small, and let go after)
                    pos = stop
                    yield number, value
                    continue
                text, pos, size = text[stop:], 0, size - stop
                box = [(number, value)]
                del value
                yield from yielded(box)
                continue
        raw = text[pos:stop]
        if raw.strip(_ASCII_SPACE):
            yield from _line_record(ctx, number, raw.encode("utf-8", "surrogatepass"))
        pos = stop


def _short_lines(ctx: ReadContext, block: bytes | bytearray, number: int) -> Iterator[Any]:
    """The records of a block shorter than :data:`BIG_LINE`, the first line ``number + 1``.

    A line that opens an object is read from the block's bytes by :func:`fast_json`; one it
    leaves, or that is anything else, is read on its own (:func:`_line_record`), which also
    names what is wrong with it.
    """
    view = memoryview(block)
    pos, size = 0, len(block)
    while pos < size:
        number += 1
        newline = block.find(b"\n", pos)
        stop = size if newline < 0 else newline + 1
        if block[pos] == _OPEN and block[pos + 1 : pos + 2] != b"\x00":  # as json_line reads it
            value = fast_json(view[pos:stop])
            if value is not UNREAD:
                pos = stop
                yield number, value
                continue
        yield from _line_record(ctx, number, bytes(view[pos:stop]))
        pos = stop


_OPEN = ord("{")


def _raw_lines(block: bytes) -> list[bytes]:
    """The lines of ``block`` as a binary file's iteration gives them (ended by ``\\n``)."""
    parts = block.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _line_record(ctx: ReadContext, number: int, raw: bytes) -> Iterator[Any]:
    """The record on one line (read as ``json.loads`` reads bytes), or the error it is."""
    if not raw or raw.isspace():
        return
    try:
        yield number, json_line(raw)
    except UnicodeDecodeError:
        yield ctx.error(f"line {number}", "", "not UTF-8 text")
    except json.JSONDecodeError as error:
        yield ctx.error(f"line {number}", "", f"invalid JSON: {error.msg} (column {error.colno})")


def episodes_per_line(
    ctx: ReadContext, episode: Callable[[int, Any], ParsedEpisode]
) -> Iterator[ParsedEpisode | IngestError]:
    """Yield ``episode(line number, parsed object)`` per JSON line; bad lines and records as errors."""
    for item in iter_jsonl(ctx):
        if isinstance(item, IngestError):
            yield item
            continue
        try:
            box = [episode(*item)]
        except IngestError as error:
            yield error
            continue
        item = None  # not held while the episode is stored (see yielded)
        yield from yielded(box)


def yielded(box: list[Any]) -> Iterator[Any]:
    """Yield the one value in ``box``, taken out of it: a generator that yields a parsed
    record from a local holds it until it is resumed, and the import stores the record
    before then, so a big record's text would stay in memory while SQLite indexes it."""
    yield box.pop()


def json_key(key: str, opener: str = "") -> JsonKey:
    """A JSON key (not one quoted inside a string value), optionally followed by ``opener``.

    For sniffing a file's head, which may end anywhere, without parsing it.
    """
    return JsonKey(f'"{key}"', re.compile(rf'"{key}"\s*:\s*{re.escape(opener)}'))


@dataclass(frozen=True)
class JsonKey:
    r""":func:`json_key`'s pattern: :meth:`search` finds what ``re`` finds of
    ``(?<!\\)"key"\s*:\s*opener`` (a key not after a backslash), 20 times as fast.

    ``re`` tries a pattern that opens with a look-behind at every position of the text (a
    fifth of a millisecond for a 64 KiB head, each of the dozen keys format detection looks
    for, each file), but finds one that opens with text by scanning for that text.
    """

    quoted: str
    """The key in quotes: a head without it is told at the speed of ``in`` (2-3 times the
    speed of ``re``'s scan), the usual answer when a dozen formats' keys are looked for."""
    pattern: re.Pattern[str]
    """The key and what follows it, without the look-behind."""

    def search(self, text: str) -> re.Match[str] | None:
        if self.quoted not in text:
            return None
        start = 0
        while (found := self.pattern.search(text, start)) is not None:
            if not found.start() or text[found.start() - 1] != "\\":
                return found
            start = found.start() + 1
        return None


def text_of(value: Any) -> str:
    """Text of a message content: a string, or the text parts of a list of content parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif part.get("type") in ("image_url", "image", "input_image"):
                    parts.append("[image]")
        return "\n".join(parts)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return compact_json(value)


SUCCESS_KEYS = ("success", "resolved", "solved", "passed", "correct", "is_correct")
SCORE_KEYS = ("score", "reward", "final_reward", "return")


def outcome_from(record: dict[str, Any], message: str = "") -> Outcome:
    """An outcome from the usual inline keys: a success flag and/or a score.

    When only a score is given, a score up to 1 succeeds only at 1 (rewards in [0, 1]; a
    negative score fails) and a larger one only at 100 or more (percentages).
    """
    success = next((record[k] for k in SUCCESS_KEYS if isinstance(record.get(k), bool)), None)
    score = next(
        (score for k in SCORE_KEYS if (score := float_or_none(record.get(k))) is not None), None
    )
    if success is None and score is not None:
        success = score >= 1.0 if score <= 1.0 else score >= 100.0
    return Outcome(success=success, score=score, message=message)
