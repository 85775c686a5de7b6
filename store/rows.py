"""Conversion between records and table rows.

A record becomes one flat row: a nested record field ``outcome`` becomes columns
``outcome_success``, ``outcome_score``...; dict, list and free-form fields become JSON text;
datetimes become ISO-8601 text. The reverse conversion validates through the model again, so
a row that no longer fits its model fails loudly instead of loading half-right.
"""

from __future__ import annotations

import json
import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel

from store.records import Record

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


def to_row(record: BaseModel) -> dict[str, Any]:
    """Flatten a record into a row of SQLite-ready values."""
    data = record.model_dump(mode="json")
    row: dict[str, Any] = {}
    for column, name, sub, is_json in columns(type(record)):
        value = data[name] if sub is None else data[name][sub]
        if is_json:
            value = None if value is None else json.dumps(value, ensure_ascii=False)
        row[column] = value
    return row


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
            value = json.loads(value)
        if sub is None:
            data[name] = value
        else:
            data.setdefault(name, {})[sub] = value
    return model.model_validate(data)
