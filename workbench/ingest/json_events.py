"""ijson's parse events, safe on every input.

ijson's C parser (``yajl2_c``) crashes the process — a segmentation fault, no exception — on
an integer of more than 4,300 digits (Python's limit on converting a decimal string to an
``int``): ``parse`` and ``items`` fault, ``basic_parse`` raises a ``SystemError``. Its Python
parser reads the same documents properly (a string of digits as a string, a number that long
as a clean ``JSONError``), about ten times slower.

So every ijson read of imported bytes goes through here. :func:`long_digits` tells, at about
memory speed, whether bytes hold such a run (in a string or not); :func:`events` streams
``basic_parse`` events from the C parser through :class:`Guarded`, which stops before handing
it a chunk with such a run, and then reads the document again with the Python parser,
skipping the events already given: callers see one stream of events either way.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import IO, Any

import ijson
from ijson.backends import python as python_parser

LONG_DIGITS = 4300
"""Digits in a row that ijson's C parser may crash on (Python's ``int`` conversion limit)."""
_STRIDE = LONG_DIGITS // 2
"""Every run of :data:`LONG_DIGITS` digits covers two consecutive bytes this far apart at
positions that are multiples of it: looking at those bytes alone finds every candidate."""
_DIGITS = b"0123456789"
_DIGITS_SET = frozenset(bytes([b]) for b in _DIGITS)
_AS_FLAGS = bytes(0x31 if b in _DIGITS else 0x30 for b in range(256))
"""Each byte as ``1`` (an ASCII digit) or ``0``."""
_RUN = re.compile(rb"[0-9]{%d}" % LONG_DIGITS)


def long_digits(data: bytes, carried: int = 0) -> bool:
    """Whether ``data`` holds a run of :data:`LONG_DIGITS` ASCII digits (``carried``: digits
    that end the bytes before it, which a run may continue).

    Only bytes at multiples of half the run's length are looked at (a strided copy and one
    translation), and only where two neighbours of them are digits is the text searched.
    """
    if carried and carried + _leading(data) >= LONG_DIGITS:
        return True
    flags = data[::_STRIDE].translate(_AS_FLAGS)
    if b"11" not in flags:
        return False
    return _RUN.search(data) is not None


def trailing_digits(data: bytes, carried: int = 0) -> int:
    """How many digits end ``data`` (with ``carried`` before it, when all of it is digits)."""
    if not data or data[-1:] not in _DIGITS_SET:
        return 0
    kept = data.rstrip(_DIGITS)
    return len(data) - len(kept) + (carried if not kept else 0)


def _leading(data: bytes) -> int:
    match = re.match(rb"[0-9]*", data)
    return match.end() if match else 0


class LongDigits(Exception):
    """A chunk held a run of :data:`LONG_DIGITS` digits; it was not handed on."""


class Guarded:
    """A binary handle for ijson's C parser that raises :class:`LongDigits` rather than
    return bytes holding a run of :data:`LONG_DIGITS` digits (a run may span chunks)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.carried = 0
        """Digits that ended the bytes read so far."""

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        if long_digits(data, self.carried):
            raise LongDigits
        self.carried = trailing_digits(data, self.carried)
        return data


def events(handle: IO[bytes], buf_size: int) -> Iterator[tuple[str, Any]]:
    """ijson's ``basic_parse`` events of the document in ``handle`` (numbers as floats where
    they have a fraction or exponent), from its C parser, or from its Python parser when the
    document holds a run of digits the C parser may crash on (see the module).

    A handle that cannot go back (a pipe) gets a clean ``JSONError`` for such a run instead.
    """
    start = handle.tell() if handle.seekable() else None
    given = 0
    try:
        for event in ijson.basic_parse(Guarded(handle), use_float=True, buf_size=buf_size):
            given += 1
            yield event
    except LongDigits:
        if start is None:
            raise ijson.JSONError(f"a run of more than {LONG_DIGITS:,} digits") from None
        handle.seek(start)
        slow = python_parser.basic_parse(handle, use_float=True, buf_size=buf_size)
        yield from itertools.islice(slow, given, None)


def parser(data: bytes) -> Any:
    """The ijson parser module to read ``data`` with (held in memory): the C one unless
    ``data`` holds a run of digits it may crash on."""
    return python_parser if long_digits(data) else ijson
