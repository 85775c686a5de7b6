"""What the SWE-bench importers share: evaluation reports, instance ids, problem statements.

The SWE-agent and mini-swe-agent importers read one run per file, named for its instance
(:func:`id_from_file_name`), and join its success from such a report (:func:`read_run`,
:func:`run_episode`).

The SWE-bench harness (``python -m swebench.harness.run_evaluation``) writes a run report,
``<model>.<run_id>.json``, one JSON object summarising a run::

    {"total_instances": 500, "submitted_instances": 3, "completed_instances": 2,
     "resolved_instances": 1, "unresolved_instances": 1, "empty_patch_instances": 1,
     "error_instances": 0,
     "completed_ids": [...], "incomplete_ids": [...], "empty_patch_ids": [...],
     "submitted_ids": [...], "resolved_ids": [...], "unresolved_ids": [...],
     "error_ids": [...], "schema_version": 2}

and, per evaluated instance, a ``report.json`` of the form
``{instance_id: {"resolved": bool, "patch_exists": bool, "tests_status": {...}, ...}}``.
Both are accepted as ``--results``; several per-instance reports merged into one object work
too, and so does a per-instance ``{"resolved": bool, ...}`` without the id, as it lies in a
``logs/<instance_id>/report.json`` folder named for its instance. An instance in
``resolved_ids`` succeeded; one in ``unresolved_ids``, ``error_ids``, ``empty_patch_ids``,
``completed_ids`` or ``submitted_ids`` (and not resolved) failed. An instance only in
``incomplete_ids`` (never evaluated) or not in the report at all stays unknown.

SWE-bench instance ids read ``<owner>__<repo>-<number>`` (``astropy__astropy-12907``); the
task family is the repository name (``astropy``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store import Episode, Outcome, Step, Task
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, load_json
from workbench.ingest.values import loads

RESOLVED_KEY = "resolved_ids"
FAILED_KEYS = ("unresolved_ids", "error_ids", "empty_patch_ids", "completed_ids", "submitted_ids")
"""Summary-report lists whose instances, unless resolved, were evaluated and failed."""

SWE_BENCH = "swe-bench"
INSTANCE_ID = re.compile(r"^(?P<owner>[^\s/]+?)__(?P<repo>[^\s/]+)-(?P<number>\d+)$")


def load_report(ctx: ReadContext) -> dict[str, bool]:
    """Whether each instance in the import's results file was resolved; ``{}`` without one,
    or when the file is the SWE-bench task instances themselves (see :func:`load_references`).

    Raises:
        IngestError: naming the report file and the field at fault when it is not a
            SWE-bench report.
    """
    if ctx.results is None:
        return {}
    data = _results_data(ctx, ctx.results)
    if is_dataset(data):
        return {}
    return parse_report(data, ctx.results)


REFERENCE_KEYS = ("patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")
"""Fields of a SWE-bench task instance that make its reference solution (``patch`` is the
gold patch; the tests it must turn from failing to passing and keep passing)."""


def is_dataset(data: Any) -> bool:
    """Whether ``data`` is a list of SWE-bench task instances (``instance_id`` and the gold
    ``patch``, as in the dataset's JSON or JSON lines)."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(row, dict) and "instance_id" in row and "patch" in row for row in data)
    )


def load_references(ctx: ReadContext) -> dict[str, dict[str, Any]]:
    """The reference solution of each instance when the results file is the SWE-bench task
    instances (``{}`` otherwise): its gold patch, test patch and test lists."""
    if ctx.results is None:
        return {}
    data = _results_data(ctx, ctx.results)
    if not is_dataset(data):
        return {}
    return {
        str(row["instance_id"]): {k: row[k] for k in REFERENCE_KEYS if row.get(k)} for row in data
    }


def _results_data(ctx: ReadContext, path: Path) -> Any:
    """The results file parsed: one JSON document, or JSON lines as a list."""
    try:
        return load_json(ctx, path)
    except IngestError as error:
        with ctx.open(path) as handle:
            lines = [line for line in handle.read().splitlines() if line.strip()]
        try:
            return [loads(line) for line in lines]
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise error from None  # neither: the whole-document error names the line


def parse_report(data: Any, path: Path) -> dict[str, bool]:
    """``{instance_id: resolved}`` from a parsed run report or per-instance report."""
    if not isinstance(data, dict):
        raise IngestError(path, "", "", "expected a JSON object (a SWE-bench evaluation report)")
    if RESOLVED_KEY in data:
        return _from_summary(data, path)
    if isinstance(data.get("resolved"), bool) and INSTANCE_ID.match(path.parent.name):
        return {path.parent.name: data["resolved"]}  # logs/<instance_id>/report.json
    if data and all(isinstance(value, dict) for value in data.values()):
        return _from_instances(data, path)
    raise IngestError(
        path,
        "",
        RESOLVED_KEY,
        "field required: expected a SWE-bench run report with 'resolved_ids' "
        "or a per-instance report {instance_id: {'resolved': true|false}}",
    )


def _from_summary(data: dict[str, Any], path: Path) -> dict[str, bool]:
    outcomes: dict[str, bool] = {}
    for key in FAILED_KEYS:
        for instance_id in _id_list(data, key, path):
            outcomes[instance_id] = False
    for instance_id in _id_list(data, RESOLVED_KEY, path):
        outcomes[instance_id] = True
    return outcomes


def _id_list(data: dict[str, Any], key: str, path: Path) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise IngestError(path, "", key, "expected a list of instance ids")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise IngestError(
                path, "", f"{key}.{index}", f"expected an instance id string, got {item!r}"
            )
    return value


def _from_instances(data: dict[str, dict[str, Any]], path: Path) -> dict[str, bool]:
    outcomes: dict[str, bool] = {}
    for instance_id, entry in data.items():
        if "resolved" not in entry:
            raise IngestError(path, "", f"{instance_id}.resolved", "field required")
        if not isinstance(entry["resolved"], bool):
            raise IngestError(
                path,
                "",
                f"{instance_id}.resolved",
                f"expected true or false, got {entry['resolved']!r}",
            )
        outcomes[instance_id] = entry["resolved"]
    return outcomes


# -- instance ids and prompts -----------------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    """How an instance id names its task."""

    id: str
    environment: str
    family: str = ""
    repo: str = ""
    """``owner/repo`` for SWE-bench ids."""

    @property
    def task_id(self) -> str:
        return f"{self.environment}:{self.id}"

    def task(self, instruction: str) -> Task:
        """The instance's task, its id (and ``owner/repo``) kept as metadata."""
        metadata = {"instance_id": self.id}
        if self.repo:
            metadata["repo"] = self.repo
        return Task(
            id=self.task_id,
            environment=self.environment,
            family=self.family,
            instruction=instruction,
            metadata=metadata,
        )


def instance(instance_id: str, default_environment: str) -> Instance:
    """The task naming of an instance: SWE-bench when the id reads ``owner__repo-NUMBER``."""
    match = INSTANCE_ID.match(instance_id)
    if match is None:
        return Instance(id=instance_id, environment=default_environment)
    return Instance(
        id=instance_id,
        environment=SWE_BENCH,
        family=match["repo"],
        repo=f"{match['owner']}/{match['repo']}",
    )


def id_from_file_name(path: Path) -> str:
    """The instance id a run file is named for: its name without ``.json`` and ``.traj``."""
    return path.name.removesuffix(".json").removesuffix(".traj") or path.name


PR_DESCRIPTION = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.DOTALL)
PR_PREAMBLE = re.compile(r"^Consider the following PR description:\s*", re.IGNORECASE)
ISSUE_SECTION = re.compile(r"(?:^|\n)ISSUE:\n(.*?)\n+INSTRUCTIONS:", re.DOTALL)


def problem_statement(prompt: str) -> str:
    """The issue text inside a SWE-agent / mini-swe-agent instance prompt, or the whole prompt.

    Recognises the ``<pr_description>...</pr_description>`` block of current templates and the
    ``ISSUE: ... INSTRUCTIONS:`` layout of SWE-agent 0.x; anything else is returned whole.
    """
    match = PR_DESCRIPTION.search(prompt)
    if match is not None:
        return PR_PREAMBLE.sub("", match[1]).strip()
    match = ISSUE_SECTION.search(prompt)
    if match is not None:
        return match[1].strip()
    return prompt


# -- one run per file -------------------------------------------------------------------------


def read_run(
    ctx: ReadContext,
    keys: set[str],
    expected: str,
    episode: Callable[[ReadContext, dict[str, Any], dict[str, bool]], ParsedEpisode],
) -> Iterator[ParsedEpisode | IngestError]:
    """Yield the episode of a file holding one run, joined with the report given as results.

    Args:
        ctx: the import's context.
        keys: top-level keys of which the run's JSON object has at least one.
        expected: the file error when it has none, saying what was expected.
        episode: makes the episode from the context, the run and :func:`load_report`'s map.
    """
    data = load_json(ctx)
    if not isinstance(data, dict) or not (keys & data.keys()):
        raise ctx.error("", "", expected)
    resolved = load_report(ctx)
    try:
        parsed = episode(ctx, data, resolved)
    except IngestError as error:
        yield error
        return
    reference = load_references(ctx).get(str(parsed.task.metadata.get("instance_id")))
    if reference:
        parsed.task.metadata["reference"] = reference
    yield parsed


def run_episode(
    ctx: ReadContext,
    task_instance: Instance,
    steps: list[Step],
    resolved: dict[str, bool],
    exit_status: Any,
    agent: str,
    model: str,
    **fields: Any,
) -> Episode:
    """The episode of one run of ``task_instance``.

    Its success comes from the report (unknown when the instance is not in it), its outcome
    message is the run's exit status, its agent ``<agent>/<model>`` (``agent`` alone when the
    model is unknown); ``fields`` give the rest (usage, times, metadata).
    """
    message = exit_status if isinstance(exit_status, str) else ""
    return Episode(
        id=ctx.episode_id(task_instance.id),
        task_id=task_instance.task_id,
        agent=f"{agent}/{model}" if model else agent,
        batch_id=ctx.batch_id,
        outcome=Outcome(success=resolved.get(task_instance.id), message=message),
        n_steps=len(steps),
        source=ctx.source(task_instance.id),
        family=task_instance.family,
        **fields,
    )
