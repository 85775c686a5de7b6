"""Conversion between records and table rows.

A record becomes one flat row: a nested record field ``outcome`` becomes columns
``outcome_success``, ``outcome_score``...; dict, list and free-form fields become JSON text;
datetimes become ISO-8601 text. The reverse conversion validates through the model again, so
a row that no longer fits its model fails loudly instead of loading half-right.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, partial
from itertools import chain
from json.encoder import c_make_encoder, encode_basestring
from operator import attrgetter, itemgetter
from typing import Any

import msgspec
from pydantic import BaseModel, TypeAdapter

from store import raw as raw_texts
from store.records import Record, Step

M = typing.TypeVar("M", bound=BaseModel)


def _is_json(annotation: Any) -> bool:
    if annotation is Any:
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return not issubclass(annotation, Record)  # a nested part, kept whole as JSON
    origin = typing.get_origin(annotation)
    if origin in (dict, list):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_is_json(arg) for arg in typing.get_args(annotation))
    return False


def _nested(annotation: Any) -> type[Record] | None:
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return annotation
    return None


@cache
def columns(model: type[BaseModel]) -> tuple[tuple[str, str, str | None, bool], ...]:
    """The flat columns of a model, as ``(column, field, nested_field, is_json)`` tuples."""
    plan = []
    for name, field in model.model_fields.items():
        nested = _nested(field.annotation)
        if nested is None:
            plan.append((name, name, None, _is_json(field.annotation)))
            continue
        for sub, sub_field in nested.model_fields.items():
            plan.append((f"{name}_{sub}", name, sub, _is_json(sub_field.annotation)))
    return tuple(plan)


def column_names(model: type[BaseModel]) -> list[str]:
    """Names of the flat columns of ``model``, in field order."""
    return [column for column, *_ in columns(model)]


@cache
def column_positions(model: type[BaseModel]) -> dict[str, int]:
    """Where each flat column of ``model`` is in its rows (:func:`row_values`)."""
    return {column: position for position, column in enumerate(column_names(model))}


Convert = Callable[[Any], Any] | None
"""How a field's Python value becomes its column value; ``None``: it is stored as it is."""

_STORED_AS_IS = (str, int, bool, type(None))


def _as_is(annotation: Any) -> bool:
    """Whether values of ``annotation`` are the same in Python and in a JSON-mode dump."""
    if annotation in _STORED_AS_IS:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return all(isinstance(arg, _STORED_AS_IS) for arg in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return all(_as_is(arg) for arg in typing.get_args(annotation))
    return False


def _converter(annotation: Any, is_json: bool) -> Convert:
    """The conversion of one field: what ``model_dump(mode="json")`` gives, JSON columns as
    compact JSON text of that value (:func:`to_json_text`), with fast paths for the common
    values."""
    if _as_is(annotation):
        return None
    dump = TypeAdapter(annotation).dump_python

    def slow(value: Any) -> Any:
        value = dump(value, mode="json")
        return _dumped_json(value) if is_json and value is not None else value

    if is_json:

        def to_json(value: Any) -> Any:
            if value is None or (type(value) is float and not math.isfinite(value)):
                return None  # as a dump: a NaN or an infinity alone is JSON null, stored as NULL
            try:
                return to_json_text(value)
            except UnicodeEncodeError:  # a lone surrogate, which pydantic may refuse too
                try:
                    return _json_text(value)
                except (TypeError, ValueError, RecursionError):
                    return slow(value)
            except (TypeError, ValueError, RecursionError):
                return slow(value)

        return to_json
    if annotation in (float, float | None):
        return lambda value: value if value is None or math.isfinite(value) else slow(value)
    if annotation in (datetime, datetime | None):

        def to_iso(value: Any) -> Any:
            """A naive or UTC datetime as pydantic dumps it (ISO 8601, UTC as ``Z``), and any
            other through pydantic."""
            if type(value) is datetime:
                zone = value.tzinfo
                if zone is None:
                    return value.isoformat()
                if zone is UTC:
                    return value.isoformat()[:-6] + "Z"
            return value if value is None else slow(value)

        return to_iso
    return slow


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


@cache
def json_encoder(allow_nan: bool, compact: bool = False) -> Callable[[Any], str]:
    """``JSONEncoder(ensure_ascii=False, allow_nan=allow_nan, check_circular=False).encode``
    (``compact``: with the separators ``","`` and ``":"``).

    ``encode`` makes a new C encoder on every call (and a closure for floats the C encoder
    never uses), which costs as much as encoding a small value; this makes one, once. It does
    not look for cycles (parsed logs hold none): a cycle ends in ``RecursionError``.
    """
    chunks = _json_chunks(allow_nan, compact)
    if chunks is None:  # no C accelerator: the standard way
        return _standard_encoder(allow_nan, compact).encode
    return lambda value: "".join(chunks(value, 0))


def _standard_encoder(allow_nan: bool, compact: bool) -> json.JSONEncoder:
    separators = (",", ":") if compact else None
    return json.JSONEncoder(
        ensure_ascii=False, allow_nan=allow_nan, check_circular=False, separators=separators
    )


@cache
def _json_chunks(allow_nan: bool, compact: bool) -> Callable[[Any, int], Any] | None:
    """The C encoder whose chunks :func:`json_encoder` joins; ``None`` without the C
    accelerator."""
    if c_make_encoder is None:
        return None
    encoder = _standard_encoder(allow_nan, compact)
    separators = (encoder.key_separator, encoder.item_separator)
    return c_make_encoder(
        None, _not_json, encode_basestring, None, *separators, False, False, allow_nan
    )


_encode = msgspec.json.Encoder(enc_hook=_not_json).encode


def to_json_text(value: Any) -> str:
    """A JSON column's text: ``value`` as compact JSON, the value a JSON-mode dump gives
    (NaN and infinities as ``null``; datetimes, dates, times and durations in ISO 8601; UUIDs
    and decimals as strings; enums as their values; sets, tuples and dataclasses as arrays
    and objects), but bytes in base64 (pydantic writes them as UTF-8, which not every byte
    string is). msgspec writes it 3-4 times as fast as the standard library's C encoder, and
    the compact text is 3-6% shorter than ``json.dumps``'s.

    Raises ``TypeError`` for a value of another type (a record), ``ValueError`` for
    text that is not Unicode (a lone surrogate) and ``RecursionError`` for a cycle or deep
    nesting: :func:`_converter` dumps those through pydantic instead.
    """
    return _encode(value).decode()


_json_text = json_encoder(allow_nan=False, compact=True)
"""Compact JSON text as :func:`to_json_text` writes it (floats' exponents aside: ``1e+16``
for ``1e16``) of values it refuses that ``json`` writes: text with a lone surrogate, which
the import finds and replaces later (``workbench.ingest.storable``)."""
_dumped_json = json_encoder(allow_nan=True, compact=True)
"""Compact JSON text of what pydantic dumped of a value :func:`to_json_text` refused."""


@dataclass(frozen=True)
class _Plan:
    """How to read a model's column values: one getter for all, then the conversions."""

    get: Callable[[Any], tuple[Any, ...]]
    """All column values as stored on the record (nested ones by dotted path)."""
    converts: tuple[tuple[int, Callable[[Any], Any]], ...]
    """Columns whose value must be converted, by position."""
    json: frozenset[int] = frozenset()
    """Positions of the JSON columns among :attr:`converts`."""
    raw: tuple[int, tuple[tuple[str, int], ...], Callable[[Any], Any]] | None = None
    """A step's raw column, where it stores references to the step's texts (``store.raw``):
    its position, the texts' fields and positions, and its conversion."""

    lengths: Callable[[Any], tuple[Any, ...]] | None = None
    """The texts :attr:`raw` may refer to, from a record's values (to tell at C speed that
    none is long enough, the usual case)."""
    times: tuple[tuple[int, Callable[[Any], Any], Callable[[list[Any]], list[Any]]], ...] = ()
    """Datetime columns: position, the getter of the field, and the conversion of a whole
    column of values at once (:func:`rows_values`: pydantic writes ISO text several times
    faster in one call than ``datetime.isoformat`` does value by value)."""

    def shared_raw(self, values: list[Any]) -> str | None:
        """The raw column's text with references to the step's long texts, or ``None`` when
        it shares none (``values``: the record's values, unconverted)."""
        position, fields, convert = self.raw  # type: ignore[misc]
        texts = {
            field: text
            for field, at in fields
            if type(text := values[at]) is str and len(text) >= raw_texts.SHORTEST
        }
        value = values[position]
        if not texts or value is None:
            return None
        return raw_texts.stored(value, texts, convert)


@cache
def _plan(model: type[BaseModel]) -> _Plan:
    """The reading plan of a model, made once per model."""
    paths, converts, json_positions, times = [], [], set(), []
    for position, (_column, name, sub, is_json) in enumerate(columns(model)):
        field = model.model_fields[name]
        if sub is not None:
            field = field.annotation.model_fields[sub]
        path = name if sub is None else f"{name}.{sub}"
        paths.append(path)
        convert = _converter(field.annotation, is_json)
        if convert is not None:
            converts.append((position, convert))
            if is_json:
                json_positions.add(position)
        if field.annotation in (datetime, datetime | None):
            dump = TypeAdapter(list[field.annotation]).dump_python
            times.append((position, attrgetter(path), partial(dump, mode="json")))
    raw = lengths = None
    if model is Step:
        names = [name for _column, name, *_ in columns(model)]
        position = names.index("raw")
        convert = dict(converts)[position]
        raw = (position, tuple((f, names.index(f)) for f in raw_texts.TEXTS), convert)
        lengths = itemgetter(*(names.index(f) for f in raw_texts.TEXTS))
    if len(paths) == 1:  # a getter of one path returns the value, not a tuple
        one = attrgetter(paths[0])
        get = lambda record: (one(record),)  # noqa: E731
    elif all("." not in path for path in paths):  # fields only: read off the instance dict
        fields = itemgetter(*paths)
        get = lambda record: fields(record.__dict__)  # noqa: E731
    else:
        get = attrgetter(*paths)
    return _Plan(get, tuple(converts), frozenset(json_positions), raw, lengths, tuple(times))


def _may_share(plan: _Plan, values: list[Any]) -> bool:
    """Whether a record's raw value may hold references (``store.raw``): it is a step with a
    text long enough (told at C speed, the usual answer being no)."""
    if plan.lengths is None:
        return False
    try:
        return max(map(len, plan.lengths(values))) >= raw_texts.SHORTEST
    except TypeError:  # a text that is not one (a record built unvalidated)
        return True


def row_values(record: BaseModel) -> list[Any]:
    """The column values of a record, in :func:`column_names` order (for ``executemany``).

    Reads the record's attributes directly rather than dumping it whole: a record is already
    validated, and the dump costs more than the insert. A step's raw value stores the long
    texts it shares with the step as references (``store.raw``; :func:`from_row` restores
    them).
    """
    plan = _plan(type(record))
    values = list(plan.get(record))
    raw = plan.shared_raw(values) if _may_share(plan, values) else None
    for position, convert in plan.converts:
        value = values[position]
        if value is not None:  # every conversion keeps None
            values[position] = convert(value)
    if raw is not None:
        values[plan.raw[0]] = raw  # type: ignore[index]
    return values


def rows_values(records: Sequence[M]) -> Iterator[list[Any]]:
    """:func:`row_values` of each record (all of one model), a JSON value several of them
    share encoded once.

    Steps read from one source record often keep that same record as their raw value (a
    tool call and its result from one span, the calls of one message); the text of each such
    value is computed once per call, by the value's identity. ``records`` holds every value
    while this runs, so no identity is reused for another value. A step's raw value that
    holds one of the step's long texts is stored with references instead (``store.raw``),
    for that step alone.
    """
    if not records:
        return
    plan = _plan(type(records[0]))
    yield from _converted(plan, list(map(plan.get, records)))


def _converted(plan: _Plan, table: Sequence[Sequence[Any]]) -> Iterator[list[Any]]:
    """The column values of each row of ``table`` (a model's values as its records hold
    them, in column order) made SQLite's, as :func:`rows_values` describes."""
    texts: dict[int, Any] = {}
    lengths = plan.lengths
    times = [
        (position, dump([values[position] for values in table])) for position, _, dump in plan.times
    ]
    at_once = {position for position, _ in times}
    converts = [
        (position, convert, position in plan.json)
        for position, convert in plan.converts
        if position not in at_once
    ]
    for k, row in enumerate(table):
        values = list(row)
        skip = -1
        if lengths is not None and _may_share(plan, values):
            raw = plan.shared_raw(values)
            if raw is not None:
                skip = plan.raw[0]
                values[skip] = raw
        for position, column in times:
            values[position] = column[k]
        for position, convert, is_json in converts:
            value = values[position]
            if value is None or position == skip:  # None stays None
                continue
            if is_json and type(value) in (dict, list):
                text = texts.get(id(value))
                if text is None:
                    text = texts[id(value)] = convert(value)
                values[position] = text
            else:
                values[position] = convert(value)
        yield values


@dataclass(frozen=True)
class _StepFields:
    """What :func:`step_rows` checks step fields against, made once."""

    names: frozenset[str]
    """The fields a step has."""
    defaults: dict[str, Any]
    """The value of each field that has a default."""
    get: Callable[[dict[str, Any]], tuple[Any, ...]]
    """All field values of a complete dict, in column order."""
    kinds: frozenset[str]
    roles: frozenset[str]
    kind: Callable[[Any], Any]
    role: Callable[[Any], Any]
    texts: Callable[[Any], tuple[Any, ...]]
    """The text columns of a row (the episode id among them)."""
    episode: Callable[[Any], Any]
    index: Callable[[Any], Any]
    reward: Callable[[Any], Any]
    timestamp: Callable[[Any], Any]


@cache
def _step_fields() -> _StepFields:
    fields = Step.model_fields
    names = column_names(Step)
    at = column_positions(Step)
    texts = [n for n, f in fields.items() if f.annotation is str]
    return _StepFields(
        names=frozenset(names),
        defaults={n: f.default for n, f in fields.items() if not f.is_required()},
        get=itemgetter(*names),
        kinds=frozenset(typing.get_args(fields["kind"].annotation)),
        roles=frozenset(typing.get_args(fields["role"].annotation)),
        kind=itemgetter(at["kind"]),
        role=itemgetter(at["role"]),
        texts=itemgetter(*(at[n] for n in texts)),
        episode=itemgetter(at["episode_id"]),
        index=itemgetter(at["index"]),
        reward=itemgetter(at["reward"]),
        timestamp=itemgetter(at["timestamp"]),
    )


_TEXT, _NO_REWARD, _NO_TIME = {str}, {float, type(None)}, {datetime, type(None)}


def step_values(fields: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]] | None:
    """The column values of steps given as their fields (``Step``'s keyword arguments, the
    episode id and index included), as records validated from them would hold them; ``None``
    when a field is not one a validated ``Step`` holds as it is (a missing or unknown field,
    a kind or role it does not know, text that is not ``str``, a reward that is not a float,
    a time that is not a ``datetime``...): validate those into records instead, which says
    what is wrong or converts what it may.

    Checked column by column at C speed: importers give fields of the right types, and
    validating them into records costs more than storing them. :func:`step_rows` makes the
    rows.
    """
    known = _step_fields()
    names, defaults, get = known.names, known.defaults, known.get
    table = []
    try:
        for item in fields:
            if not item.keys() <= names:
                return None
            table.append(get({**defaults, **item}))
    except KeyError:  # a field without a default is missing
        return None
    if not table:
        return table
    try:
        kinds, roles = set(map(known.kind, table)), set(map(known.role, table))
    except TypeError:  # an unhashable kind or role
        return None
    if not (kinds <= known.kinds and roles <= known.roles):
        return None
    if not set(map(type, chain.from_iterable(map(known.texts, table)))) <= _TEXT:
        return None
    indices = list(map(known.index, table))
    if set(map(type, indices)) != {int} or min(indices) < 0:
        return None
    if "" in set(map(known.episode, table)):
        return None
    if not set(map(type, map(known.reward, table))) <= _NO_REWARD:
        return None
    if not set(map(type, map(known.timestamp, table))) <= _NO_TIME:
        return None
    return table


def step_rows(table: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows of steps whose values :func:`step_values` gave: what :func:`rows_values`
    makes of the records validated from the same fields."""
    return [tuple(values) for values in _converted(_plan(Step), table)]


def to_row(record: BaseModel) -> dict[str, Any]:
    """Flatten a record into a row of SQLite-ready values."""
    return dict(zip(column_names(type(record)), row_values(record), strict=True))


def from_row(model: type[M], row: typing.Mapping[str, Any] | Any) -> M:
    """Rebuild a record from a row made by :func:`to_row`."""
    if not isinstance(row, dict):
        row = dict(row)  # sqlite3.Row: `in` tests values, not keys
    data: dict[str, Any] = {}
    for column, name, sub, is_json in columns(model):
        if column not in row:
            continue
        value = row[column]
        if is_json and value is not None:
            if model is Step and name == "raw":
                value = raw_texts.restored(value, row)
            else:
                value = json.loads(value)
        if sub is None:
            data[name] = value
        else:
            data.setdefault(name, {})[sub] = value
    return model.model_validate(data)
