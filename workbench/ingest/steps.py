"""Step fields the importers build alike: tool calls and results of chat messages, and checks.

Each importer reads and checks its own messages (their roles, tool-call shapes and error texts
differ); what they then make of a tool call, a tool result or a list of step fields is the
same, and lives here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from operator import itemgetter
from typing import Any, overload

from pydantic import TypeAdapter, ValidationError

from store import Step
from store.rows import column_positions, step_values
from workbench.ingest.base import ReadContext, validation_error
from workbench.ingest.values import compact_json, indented_json, reindented_json

ToolCall = tuple[str, Any, str]
"""``(function name, arguments, call id)`` of one tool call."""


def render_call(function: str, arguments: Any) -> str:
    """A tool call as text: ``name(arguments)``, a JSON-string argument kept verbatim."""
    if arguments is None:
        return f"{function}()"
    if isinstance(arguments, str):
        return f"{function}({arguments})"
    return f"{function}({compact_json(arguments)})"


def render_pretty_call(function: str, arguments: Any) -> str:
    """A tool call as its name and its arguments as indented JSON: ``Bash({\\n  "command": …})``.

    Arguments given as a JSON string are parsed first; other text is kept verbatim.
    """
    if isinstance(arguments, str):
        if not arguments or arguments.isspace():  # (as `not arguments.strip()`)
            return f"{function}()"
        try:
            text = reindented_json(arguments)
        except json.JSONDecodeError:
            return f"{function}({arguments})"
        return f"{function}()" if text in ("{}", "null") else f"{function}({text})"
    if arguments is None or arguments == {}:
        return f"{function}()"
    return f"{function}({indented_json(arguments)})"


def tool_call_steps(
    calls: Sequence[ToolCall], content: str, thought: str, tool_names: dict[str, str]
) -> list[dict[str, Any]]:
    """One ``tool_call`` step per call of an assistant message, its text and thought on the first.

    Args:
        calls: the message's tool calls, already checked.
        content: the message's text.
        thought: its reasoning.
        tool_names: tool name by call id, updated so that results can name their tool.
    """
    steps = []
    for k, (function, arguments, call_id) in enumerate(calls):
        tool_names[call_id] = function
        steps.append(
            {
                "kind": "tool_call",
                "role": "assistant",
                "content": content if k == 0 else "",
                "thought": thought if k == 0 else "",
                "action": render_call(function, arguments),
                "tool_name": function,
                "tool_call_id": call_id,
            }
        )
    return steps


def tool_result_step(observation: str, call_id: str, tool_name: str) -> dict[str, Any]:
    """The ``tool_result`` step of a tool message answering call ``call_id``."""
    return {
        "kind": "tool_result",
        "role": "tool",
        "observation": observation,
        "tool_name": tool_name,
        "tool_call_id": call_id,
    }


def first_user_message(steps: Sequence[Step]) -> str:
    """The text of the first user ``message`` step (the usual instruction); ``""`` if none."""
    kinds, roles, texts = (step_column(steps, field) for field in ("kind", "role", "content"))
    users = zip(kinds, roles, texts, strict=True)
    return next((text for kind, role, text in users if (kind, role) == ("message", "user")), "")


def step_column(steps: Sequence[Step], field: str) -> list[Any]:
    """One field's value for every step (read off the fields of :class:`StepFields`)."""
    if isinstance(steps, StepFields):
        return steps.column(field)
    return [getattr(step, field) for step in steps]


@cache
def step_list() -> TypeAdapter[list[Step]]:
    """Validates a whole list of steps in one call (made on first use, not at import)."""
    return TypeAdapter(list[Step])


class StepFields(Sequence[Step]):
    """An episode's steps, kept as the fields they were checked from (``store.rows``'s
    :func:`~store.rows.step_values`), made :class:`Step` records only when read.

    An import stores the steps' rows straight from :attr:`table` (records cost more to make
    than the rows do to store); anything that reads the steps (a dry run's preview, an
    importer's own look at them, an error naming a field) gets the records, validated once
    from the same fields.
    """

    def __init__(self, episode_id: str, fields: list[dict[str, Any]], table: list[tuple]) -> None:
        self.episode_id = episode_id
        """The episode every step names."""
        self.table = table
        """Each step's column values, unconverted (see ``store.rows.step_rows``)."""
        self._fields: list[dict[str, Any]] | None = fields
        self._records: list[Step] | None = None

    def column(self, field: str) -> list[Any]:
        """One field's value for every step, read off :attr:`table` (no record made)."""
        return list(map(itemgetter(column_positions(Step)[field]), self.table))

    def records(self) -> list[Step]:
        """The steps as records (validated on first use; the fields passed the same checks)."""
        if self._records is None:
            self._records = step_list().validate_python(self._fields)
            self._fields = None
        return self._records

    def __len__(self) -> int:
        return len(self.table)

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        return self.records()[index]

    def __iter__(self) -> Iterator[Step]:
        return iter(self.records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StepFields):
            other = other.records()
        return isinstance(other, list) and self.records() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StepFields({self.episode_id!r}, {len(self)} steps)"


def build_steps(
    ctx: ReadContext,
    where: str,
    episode_id: str,
    fields: Iterable[dict[str, Any]],
    own: bool = False,
) -> Sequence[Step]:
    """Steps from their fields, in order; a field at fault is named as ``steps.<index>``.

    Fields of the types a step holds (what importers build) are checked at C speed and kept
    as they are (:class:`StepFields`: stored without records being made); any other is
    validated into records here, which converts what it may or says what is wrong, as one
    ``Step(...)`` per step would. With ``own``, the field dicts are the caller's own to
    change (none is shared): each gets its episode and index in place instead of in a copy.
    """
    if own:
        items = list(fields)
        for i, step in enumerate(items):
            step["episode_id"], step["index"] = episode_id, i
    else:
        items = [{**step, "episode_id": episode_id, "index": i} for i, step in enumerate(fields)]
    table = step_values(items)
    if table is not None:
        return StepFields(episode_id, items, table)
    try:
        return step_list().validate_python(items)
    except ValidationError as error:
        raise validation_error(ctx.path, where, error, "steps") from None
