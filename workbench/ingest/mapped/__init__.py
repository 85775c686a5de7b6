"""Logs of any shape, read through a mapping file (``workbench import --map mapping.toml``).

A mapping is a TOML file that says where a log keeps its episodes and their steps, so a JSON,
JSONL or text log imports without code::

    name = "my-agent"            # the tasks' environment and the episodes' source format
    format = "json"              # json | jsonl | text; default: text with [text], else from
                                 # the file: .json whole, .jsonl/.ndjson a record per line

    [episodes]
    path = "runs[*]"             # where the list of episodes is (default: the whole file;
                                 # JSONL: each line)
    id = "run_id"                # a path, never a constant
    task = "task.id"
    instruction = "task.goal"    # default: the first user message
    agent = "meta.model | meta.agent"              # the first path that gives a value
    family = { value = "files" }                   # a constant text
    success = { path = "result.status", equals = "done" }   # or a path read as true/false
    score = "result.reward"

    [steps]                      # leave out for records of outcomes alone
    path = "trace[*]"            # inside an episode
    action = "act.cmd"
    observation = "obs"
    thought = "think"
    content = "text"
    reward = "r"
    kind = "type"                # optional; values mapped through [steps.kinds]
    kinds = { tool = "action", note = "thought" }
    role = { map = "who", values = { bot = "assistant", human = "user" }, default = "agent" }
    agent = "speaker | name"     # a log of several agents: who spoke or acted at the step

**Paths** are dotted keys with list indices and wildcards: ``info.reward``, ``traj[0].role``,
``traj[*].content`` (every element; text fields join them with newlines); ``$`` is the record
itself. ``"name | role"`` reads the first of the paths that gives a value (neither absent,
null nor empty text).

**A field** of ``[episodes]`` or ``[steps]`` is a path (a string), a **constant** (``false``,
``0``, ``1.5``; text as ``{ value = "gaia" }``, since a bare string is a path) or a **value
map** ``{ map = PATH, values = { LOG_VALUE = VALUE, ... }, default = VALUE }``: the value at
the path looked up in ``values`` (a number or boolean of the log as its JSON text, ``"1"``,
``"true"``); a value missing from them becomes ``default``, and without one is an error
quoting it; nothing at the path gives ``default``, or nothing. Constants and mapped values are
checked when the mapping is loaded: text for text fields, ``true``/``false`` for ``success``,
numbers for ``score`` and ``reward``, one of the six roles for ``role``. A step's ``role``
read from the log must be one of them too (``system``, ``user``, ``assistant``, ``tool``,
``environment``, ``agent``); map a log's own (``Orchestrator``, ``user_proxy``) with a value
map.

**Records with no steps** (nothing at ``steps.path``, an empty list, or no ``[steps]``
table at all) are episodes of no steps when they have an outcome: a results file imports as
outcome-only episodes. Without steps or an outcome, a record is an error. Each step keeps its
element of the log as its raw record (a text log's step: ``{"line": N}``, its first line).

**Text logs** use ``[text]`` with regular expressions matched per line, the first that matches
reading it, in this order: ``episode`` (a line that starts an episode; groups ``id``, ``task``,
``instruction``, ``agent``, ``family``), ``instruction``, ``user`` and ``assistant`` (message
steps), ``thought``, ``action``, ``observation`` (the group of the same name, else the whole
match) and ``outcome`` (groups ``success``, read as success when its value is in
``success_values``, and ``score``). A thought, the action after it and the observation after
that make one ``action`` step; lines that match nothing continue an observation. Fields named
in ``multiline = ["user", "assistant", ...]`` keep every line after their match up to the next
line another pattern matches (see :mod:`~workbench.ingest.mapped.text_reader`). The
``[episodes]`` table of a text mapping may hold constants (``family = { value = "aider" }``),
which fill what start lines do not say. A start line with neither a step nor an outcome after
it is an error.

A mapping with an unknown key, a bad path, a bad pattern or a constant of the wrong type is
one error naming the mapping file and the key; a record that does not fit is one error naming
the log file, its line or record, the mapping key that failed and the value it met (cut).

Modules: :mod:`~workbench.ingest.mapped.paths` (paths), ``language`` (the tables as models),
``json_reader`` and ``text_reader`` (reading), ``episodes`` (what a record becomes).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext
from workbench.ingest.mapped.json_reader import RecordReader
from workbench.ingest.mapped.language import FIELDS, SHAPE_TAGS, Mapping
from workbench.ingest.mapped.paths import parse_alternatives, parse_path, resolve
from workbench.ingest.mapped.text_reader import TextReader

__all__ = ["MappedImporter", "Mapping", "load", "parse_alternatives", "parse_path", "resolve"]


def load(path: Path | str) -> MappedImporter:
    """The importer a mapping file describes; raises :class:`IngestError` naming the key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise IngestError(path, "", "", f"cannot read the mapping: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise IngestError(path, "", "", f"invalid TOML: {error}") from None
    try:
        return MappedImporter(Mapping.model_validate(data), path)
    except ValidationError as error:
        first = error.errors()[0]
        raise IngestError(path, "", _key(first["loc"]), first["msg"].lower()) from None


def _key(loc: tuple[int | str, ...]) -> str:
    """The mapping key an error is about, as the file writes it: the shape pydantic tried
    for a field (``read``, ``constant``, ``map``, ``check``) left out, and a path's own
    ``path`` (a path is written as a string)."""
    kept: list[str] = []
    for i, part in enumerate(loc):
        shape = i > 0 and part in SHAPE_TAGS and loc[i - 1] in FIELDS
        read_path = i > 1 and part == "path" and loc[i - 1] == "read" and loc[i - 2] in FIELDS
        if not (shape or read_path):
            kept.append(str(part))
    return ".".join(kept)


@dataclass
class MappedImporter:
    """An importer built from a mapping; pass it as ``import_paths(format=...)``."""

    mapping: Mapping
    path: Path
    """The mapping file."""
    description: str = "a log read through a mapping file (--map)"
    name: str = field(init=False)
    binary: bool = field(init=False)
    """A text log may quote a binary file's bytes; JSON never holds a NUL byte."""

    def __post_init__(self) -> None:
        self.name = self.mapping.name
        self.binary = self.mapping.is_text

    def sniff(self, path: Path, head: str) -> bool:
        """A mapping is only ever used when given, never detected."""
        return False

    def read(self, ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
        """Yield the log's episodes; a record that does not fit is yielded as an error."""
        how = self.mapping.format_of(ctx.path)
        if how == "text":
            return TextReader(self.mapping, ctx).read()
        return RecordReader(self.mapping, ctx, lines=how == "jsonl").read()
