"""The mapping language: a mapping file's tables as pydantic models, and the values they read.

A field of ``[episodes]`` or ``[steps]`` is one of three shapes (see :data:`Value`): a path
read in the record (``"task.goal"``, or ``"name | role"``: the first that gives a value), a
constant (``false``, ``0``, ``{ value = "gaia" }``) or a value map (``{ map = "role", values =
{ ... }, default = "assistant" }``). ``success`` may also be ``{ path, equals }``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    field_validator,
    model_validator,
)

from store.records import Role, StepKind
from workbench import patterns
from workbench.ingest.base import shortened
from workbench.ingest.mapped.paths import first_found, parse_alternatives
from workbench.ingest.values import compact_json

ROLE_NAMES: tuple[str, ...] = get_args(Role)
"""The roles a step may have."""
STEP_KINDS: tuple[str, ...] = get_args(StepKind)
"""The kinds a step may have."""
SUCCESS_VALUES = ["success", "succeeded", "pass", "passed", "won", "win", "true", "yes", "1"]
"""Values of a text log's ``success`` group read as success (case-insensitive)."""
SHOWN_CHARS = 160
"""The most characters of a log's value quoted in an error message."""


class Misfit(ValueError):
    """A value of the log that the mapping cannot take; the message quotes it."""


def shown(value: Any) -> str:
    """A value of the log as an error quotes it: text in quotes, anything else as JSON, cut
    to :data:`SHOWN_CHARS`."""
    if isinstance(value, str):
        return repr(shortened(value, SHOWN_CHARS))
    return shortened(compact_json(value), SHOWN_CHARS)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_path(text: str) -> str:
    parse_alternatives(text)
    return text


PathText = Annotated[str, AfterValidator(_check_path)]
"""A path, or paths separated by ``|`` (the first that gives a value)."""
Written = StrictStr | StrictBool | StrictInt | StrictFloat
"""A value written in the mapping file itself."""


# -- the shapes of a field --------------------------------------------------------------------


class Read(_Section):
    """A value read in the record at a path: ``"task.goal"``; ``"name | role"`` reads the
    first path that gives a value (neither absent, null nor empty text)."""

    path: PathText
    """The path, or paths separated by ``|``."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value

    def read(self, record: Any) -> list[Any]:
        """The values at the path (several for a wildcard; none when absent)."""
        return first_found(record, self.path)

    @property
    def source(self) -> str:
        """Where the value comes from, as an error says it."""
        return repr(self.path)


class Constant(_Section):
    """The same value for every record: ``false``, ``0``, or text as ``{ value = "gaia" }``
    (a bare string is a path)."""

    value: Written
    """The value."""

    @model_validator(mode="before")
    @classmethod
    def _from_scalar(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else {"value": value}

    def read(self, record: Any) -> list[Any]:
        """The constant, whatever the record."""
        return [self.value]

    @property
    def source(self) -> str:
        """Where the value comes from, as an error says it."""
        return f"the constant {shown(self.value)}"


class ValueMap(_Section):
    """A value read at a path and looked up in a table: ``{ map = "role", values = {
    Orchestrator = "assistant", user_proxy = "user" }, default = "assistant" }``."""

    map: PathText
    """Where the value is read (``|`` alternatives allowed)."""
    values: dict[str, Written]
    """What each value of the log becomes (a number or boolean of the log is looked up as
    its JSON text: ``"1"``, ``"true"``)."""
    default: Written | None = None
    """What a value missing from :attr:`values`, or nothing at the path, becomes; without it a
    missing value is an error quoting it, and nothing at the path gives nothing."""

    def read(self, record: Any) -> list[Any]:
        """The mapped values (raises :class:`Misfit` for a value the table lacks)."""
        found = [v for v in first_found(record, self.map) if v is not None and v != ""]
        if not found:
            return [] if self.default is None else [self.default]
        return [self._lookup(value) for value in found]

    def _lookup(self, value: Any) -> Any:
        key = value if isinstance(value, str) else compact_json(value)
        if key in self.values:
            return self.values[key]
        if self.default is not None:
            return self.default
        known = shortened(", ".join(self.values), SHOWN_CHARS // 2)
        raise Misfit(
            f"{shown(value)} at {self.map!r} is not in the value map ({known}) and it has no "
            "default"
        )

    @property
    def source(self) -> str:
        """Where the value comes from, as an error says it."""
        return f"{self.map!r} (mapped)"


class Check(_Section):
    """Whether a value says the episode succeeded: ``{ path = "result.status", equals =
    "done" }``."""

    path: PathText
    """Where the value is."""
    equals: Any = None
    """Success when the value equals this (or is in it, for a list); else the value's truth."""

    def read(self, record: Any) -> list[bool]:
        """``[success]``; nothing when the value is absent or null."""
        values = first_found(record, self.path)
        if not values or values[0] is None:
            return []
        if self.equals is None:
            return [bool(values[0])]
        wanted = self.equals if isinstance(self.equals, list) else [self.equals]
        return [values[0] in wanted]

    @property
    def source(self) -> str:
        """Where the value comes from, as an error says it."""
        return repr(self.path)


def _value_kind(value: Any) -> str | None:
    """Which shape a field is written in (``None``: none, an error)."""
    if isinstance(value, str):
        return "read"
    if isinstance(value, bool | int | float):
        return "constant"
    if isinstance(value, dict):
        for key, kind in (("map", "map"), ("value", "constant"), ("path", "read")):
            if key in value:
                return kind
        return None
    return {Read: "read", Constant: "constant", ValueMap: "map", Check: "check"}.get(type(value))


def _success_kind(value: Any) -> str | None:
    if isinstance(value, dict) and "path" in value:
        return "check"
    return _value_kind(value)


SHAPES = (
    'expected a path ("a.b", "a | b"), a constant (false, 0, { value = "text" }) or a '
    'value map ({ map = "a.b", values = { ... }, default = ... })'
)
_Shapes = Annotated[Read, Tag("read")] | Annotated[Constant, Tag("constant")]
Value = Annotated[
    _Shapes | Annotated[ValueMap, Tag("map")],
    Discriminator(_value_kind, custom_error_type="shape", custom_error_message=SHAPES),
]
"""A field: a path, a constant or a value map."""
Success = Annotated[
    _Shapes | Annotated[ValueMap, Tag("map")] | Annotated[Check, Tag("check")],
    Discriminator(_success_kind, custom_error_type="shape", custom_error_message=SHAPES),
]
"""The ``success`` field: a path read as true/false, ``{ path, equals }``, a constant or a
value map."""


SHAPE_TAGS = ("read", "constant", "map", "check")
"""The shapes a field is written in, as pydantic names them in an error's location."""


def _written(spec: Any) -> list[Any]:
    """The values a field's spec writes itself: a constant's, a value map's and its default."""
    if isinstance(spec, Constant):
        return [spec.value]
    if isinstance(spec, ValueMap):
        return [*spec.values.values(), *([spec.default] if spec.default is not None else [])]
    return []


def _writes(problem: Callable[[Any], str | None]) -> Any:
    """A field validator refusing written values for which ``problem`` says what is wrong."""

    def check(spec: Any) -> Any:
        for value in _written(spec):
            if (wrong := problem(value)) is not None:
                raise ValueError(wrong)
        return spec

    return check


def _not_text(value: Any) -> str | None:
    if isinstance(value, str):
        return None
    return f'expected text, got {shown(value)} (text is written {{ value = "..." }})'


def _not_number(value: Any) -> str | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return None if ok else f"expected a number, got {shown(value)}"


def _not_bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {shown(value)}"


def _not_role(value: Any) -> str | None:
    if value in ROLE_NAMES:
        return None
    return f"{shown(value)} is no role (one of {', '.join(ROLE_NAMES)})"


# -- the tables -------------------------------------------------------------------------------


class Episodes(_Section):
    """Where episodes and their fields are in a JSON or JSONL log (in a text log: constants
    only, filling what its start lines do not say)."""

    path: PathText | None = None
    """The list of episodes in a JSON file (in a JSONL file: in each line); unset: the whole
    file (JSONL: each line)."""
    id: Read | None = None
    """The episode's id (default: its line or record number); a path, never a constant."""
    task: Value | None = None
    """The task's id (default: the episode's id)."""
    instruction: Value | None = None
    """The task's instruction (default: the first user message)."""
    agent: Value | None = None
    """The agent that ran it."""
    family: Value | None = None
    """The task's family."""
    success: Success | None = None
    """Whether it succeeded: a path read as true/false, ``{ path, equals }``, a constant or a
    value map."""
    score: Value | None = None
    """Its score or final reward (a number)."""

    @field_validator("id", mode="before")
    @classmethod
    def _id_is_read(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise ValueError("an id is read from each record: give a path, not a constant")
        return value

    _texts = field_validator("task", "instruction", "agent", "family")(_writes(_not_text))
    _success = field_validator("success")(_writes(_not_bool))
    _score = field_validator("score")(_writes(_not_number))

    def constants(self) -> dict[str, Any]:
        """The fields written as constants, by name."""
        return {
            name: spec.value
            for name in type(self).model_fields
            if isinstance(spec := getattr(self, name), Constant)
        }


class Steps(_Section):
    """Where an episode's steps and their fields are."""

    path: PathText
    """The list of steps inside an episode, e.g. ``trace[*]``; nothing there (or an empty
    list): an episode of no steps, which must then have an outcome."""
    action: Value | None = None
    """The step's action."""
    observation: Value | None = None
    """What the environment answered."""
    thought: Value | None = None
    """The agent's reasoning before acting."""
    content: Value | None = None
    """Message text, for message steps."""
    reward: Value | None = None
    """The step's reward (a number)."""
    kind: Value | None = None
    """The step's kind (default ``action``), through :attr:`kinds` when given."""
    role: Value | None = None
    """The step's role (default from its kind); a value map turns a log's roles or speakers
    into the six roles."""
    agent: Value | None = None
    """The agent that spoke or acted at the step, in a log of several agents (a group chat's
    speaker: ``agent = "name | role"``)."""
    kinds: dict[str, StepKind] = {}
    """The log's kind values mapped to step kinds."""

    _texts = field_validator("action", "observation", "thought", "content", "agent")(
        _writes(_not_text)
    )
    _reward = field_validator("reward")(_writes(_not_number))
    _role = field_validator("role")(_writes(_not_role))


TextKey = Literal["instruction", "user", "assistant", "thought", "action", "observation"]
"""The ``[text]`` patterns whose match may run over the lines after it (``multiline``)."""


class Text(_Section):
    """Line patterns of a text log (regular expressions, matched with ``re.search``; a line
    is read by the first that matches, in the order of the fields here)."""

    episode: str | None = None
    """A line that starts an episode (unset: the file is one episode)."""
    instruction: str | None = None
    """A line giving the task's instruction."""
    user: str | None = None
    """A user message: a ``message`` step of role ``user``."""
    assistant: str | None = None
    """An assistant message: a ``message`` step of role ``assistant``."""
    thought: str | None = None
    """A thought line."""
    action: str | None = None
    """An action line."""
    observation: str | None = None
    """An observation line (the lines after it that match nothing continue it)."""
    outcome: str | None = None
    """A line with the outcome: groups ``success`` and/or ``score``."""
    success_values: list[str] = SUCCESS_VALUES
    """Values of the ``success`` group that mean success (case-insensitive)."""
    multiline: list[TextKey] = []
    """Fields whose match keeps the lines after it, blank ones included, up to the next line
    another pattern matches (a line its own pattern matches again adds its group)."""

    @field_validator(
        "episode", "instruction", "user", "assistant", "thought", "action", "observation", "outcome"
    )
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None and (problem := patterns.error(value)) is not None:
            raise ValueError(f"bad regular expression: {problem}")
        return value

    @model_validator(mode="after")
    def _multiline_have_patterns(self) -> Text:
        for key in self.multiline:
            if getattr(self, key) is None:
                raise ValueError(f"multiline names {key!r}, which has no pattern")
        return self

    def patterns(self) -> dict[str, str]:
        """The patterns given, by field, in the order lines are matched against them."""
        keys = ("episode", "instruction", "user", "assistant", "thought", "action")
        keys += ("observation", "outcome")
        return {key: pattern for key in keys if (pattern := getattr(self, key)) is not None}


class Mapping(_Section):
    """A mapping file: where a log keeps episodes, steps and outcomes."""

    name: str = Field("mapped", pattern=r"^[\w.\-]+$")
    """The tasks' environment (task ids are ``<name>:<task>``) and the source format."""
    format: Literal["json", "jsonl", "text"] | None = None
    """How the log is read (default: ``text`` with ``[text]``, else from the file's name:
    ``.json`` whole, ``.jsonl``/``.ndjson`` a record per line; any other name ``json`` with
    ``episodes.path``, else ``jsonl``)."""
    episodes: Episodes = Episodes()
    """Episodes of a JSON or JSONL log (constants only, for a text log)."""
    steps: Steps | None = None
    """Steps of a JSON or JSONL log's episodes (none: every record is outcome only)."""
    text: Text | None = None
    """Line patterns of a text log."""

    @model_validator(mode="after")
    def _complete(self) -> Mapping:
        if self.is_text:
            if self.text is None:
                raise ValueError("a text mapping needs a [text] table")
            read = [k for k, v in self.episodes if v is not None and not isinstance(v, Constant)]
            if read:
                raise ValueError(
                    f"a text log has no records to read paths in: episodes.{read[0]} must be a "
                    'constant (e.g. { value = "..." }); its lines are read by [text]'
                )
        elif self.steps is None and not (self.episodes.success or self.episodes.score):
            raise ValueError(
                f"a {self.format or 'JSON'} mapping needs a [steps] table, or episodes.success "
                "or episodes.score to read records of outcomes alone"
            )
        return self

    @property
    def is_text(self) -> bool:
        """Whether logs are read as text, by ``[text]``."""
        return self.format == "text" or (self.format is None and self.text is not None)

    def format_of(self, path: Path) -> str:
        """How the log ``path`` is read: ``json``, ``jsonl`` or ``text``."""
        if self.format:
            return self.format
        if self.text is not None:
            return "text"
        suffix = path.suffix.lower()
        if suffix == ".json":
            return "json"
        if suffix in (".jsonl", ".ndjson"):
            return "jsonl"
        return "json" if self.episodes.path else "jsonl"


FIELDS = frozenset(Episodes.model_fields) | frozenset(Steps.model_fields)
"""Names of the fields of ``[episodes]`` and ``[steps]``."""
