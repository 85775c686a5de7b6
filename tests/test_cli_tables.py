"""Listings: identifiers whole and free text truncated in a table on a wide terminal; one
record per block in a pipe or on a narrow terminal, nothing cut."""

from __future__ import annotations

import io
import re

import click
import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.text import Text

from store import Batch, Episode, Outcome, Store, Task
from tests.analyze.test_causes import SUCCESS, add
from workbench.cli import main
from workbench.cli.tables import Column, print_records, table_widths

BATCH = "a-rather-long-run-batch-name-20261130T235356"
AGENT = "command:python agents/my_agent.py --temperature 0.7"
MESSAGE = (
    "Agent stopped before completing the task (score 25) after focusing on the red apple "
    "that was lying on the kitchen table next to the stove"
)
PIPE = {"TTY_COMPATIBLE": None, "FORCE_COLOR": None}


def terminal(columns: int) -> dict[str, str]:
    """Environment of a terminal ``columns`` wide (rich reads both on every print)."""
    return {"TTY_COMPATIBLE": "1", "COLUMNS": str(columns)}


@pytest.fixture
def listed(store: Store) -> Store:
    """Three failed episodes with long ids, agent and message."""
    store.put_batch(Batch(id=BATCH, name=BATCH, kind="run"))
    for variation in (3, 35, 103):
        task = f"scienceworld:find-living-thing:{variation}"
        store.put_task(Task(id=task, environment="scienceworld", family="find-living-thing"))
        store.add_episode(
            Episode(
                id=f"{BATCH}:find-living-thing:{variation}",
                task_id=task,
                agent=AGENT,
                batch_id=BATCH,
                family="find-living-thing",
                outcome=Outcome(success=False, score=25, message=MESSAGE),
            ),
            [],
        )
    return store


def cli(db_path, *args: str, env: dict[str, str | None]) -> str:
    result = CliRunner().invoke(main, ["--db", str(db_path), *args], env=env)
    assert result.exit_code == 0, result.output
    return click.unstyle(result.output)


def blocks(output: str) -> list[dict[str, str]]:
    """The records of block output (``key: value`` lines, a blank line after each)."""
    records = []
    for chunk in output.strip("\n").split("\n\n"):
        pairs = [re.fullmatch(r"([^:]+):\s*(.*)", line) for line in chunk.splitlines()]
        if all(pairs):
            records.append({m.group(1): m.group(2) for m in pairs})
    return records


@pytest.mark.parametrize("env", [PIPE, terminal(80)], ids=["pipe", "narrow terminal"])
def test_ls_in_a_pipe_or_a_narrow_terminal_is_one_block_per_episode_with_nothing_cut(
    listed, db_path, env
):
    output = cli(db_path, "ls", env=env)
    records = blocks(output)
    assert [r["episode"] for r in records] == [
        f"{BATCH}:find-living-thing:{v}" for v in (3, 35, 103)
    ]
    assert all(r["agent"] == AGENT and r["message"] == MESSAGE for r in records)
    assert records[0] == {
        "episode": f"{BATCH}:find-living-thing:3",
        "outcome": "FAIL",
        "score": "25",
        "family": "find-living-thing",
        "task": "scienceworld:find-living-thing:3",
        "agent": AGENT,
        "steps": "0",
        "message": MESSAGE,
    }
    assert output.endswith("\n\n3 of 3 episode(s)\n")


def test_ls_on_a_wide_terminal_is_a_table_with_ids_whole_and_the_message_truncated(listed, db_path):
    lines = cli(db_path, "ls", env=terminal(250)).splitlines()
    assert lines[0].split() == [
        "episode", "outcome", "score", "family", "task", "agent", "steps", "message",
    ]  # fmt: skip
    assert len(lines) == 5 and all(len(line) <= 250 for line in lines)
    for line, variation in zip(lines[1:4], (3, 35, 103), strict=True):
        assert line.startswith(f"{BATCH}:find-living-thing:{variation} ")
        assert f" scienceworld:find-living-thing:{variation} " in line and f" {AGENT} " in line
        assert MESSAGE not in line and line.endswith("…")
        assert MESSAGE.startswith(line.rsplit("  ", 1)[1].removesuffix("…"))


def test_clusters_get_one_line_each_at_80_columns_and_blocks_when_narrower(db_path):
    with Store(db_path) as store:
        add(store, "ok", "sw:boil:1", True, SUCCESS)
        add(store, "door", "sw:boil:1", False, [("go to kitchen", "The door is not open.")])
    cli(db_path, "analyze", env=PIPE)
    table = cli(db_path, "clusters", env=terminal(80)).splitlines()
    assert table[0].startswith("analysis run 1") and len(table) == 3
    assert table[1].split()[:4] == ["id", "size", "family", "status"]
    assert "go to <X> | is not open" in table[2] and "open door to <X>" in table[2]
    [record] = blocks(cli(db_path, "clusters", env=terminal(60)))
    assert record["trigger"] == "go to <X> | is not open" and record["status"] == "supported"


def test_stats_in_a_pipe_are_blocks_too(listed, db_path):
    stats = blocks(cli(db_path, "stats", "--by", "agent", env=PIPE))
    assert stats == [
        {
            "agent": AGENT,
            "episodes": "3",
            "passed": "0",
            "failed": "3",
            "unknown": "0",
            "success rate": "0.0%",
        }
    ]


def test_widths_keep_identifiers_whole_and_share_the_rest_among_free_text():
    columns = [Column("id"), Column("note", text=True), Column("reason", text=True)]
    rows = [[Text("x" * 30), Text("short"), Text("r" * 100)]]
    # the id whole; the short note its own width; the reason what is left
    assert table_widths(80, columns, rows) == [
        30,
        5,
        80 - 30 - 5 - 2 * 2,
    ]
    assert table_widths(200, columns, rows) == [30, 5, 100]
    # too narrow for the id and 20 columns of reason: blocks
    assert table_widths(30 + 5 + 4 + 19, columns, rows) is None
    assert table_widths(20, [Column("id")], [[Text("x" * 30)]]) is None


@pytest.mark.parametrize("width", [40, 200])
def test_print_records_follows_the_console(width):
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    print_records(console, [Column("id"), Column("note", text=True)], [["a" * 25, "b" * 60]])
    if width == 40:
        assert out.getvalue() == f"id:   {'a' * 25}\nnote: {'b' * 60}\n\n"
    else:
        assert out.getvalue().splitlines()[1] == f"{'a' * 25}  {'b' * 60}"


def test_blocks_give_no_line_to_free_text_with_nothing_in_it():
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None)  # a file: blocks
    columns = [Column("spec"), Column("staged"), Column("reason", text=True)]
    print_records(console, columns, [["1", "open-door v1", ""], ["2", "–", "deferred: no success"]])
    assert out.getvalue() == (
        "spec:   1\nstaged: open-door v1\n\nspec:   2\nstaged: –\nreason: deferred: no success\n\n"
    )


def test_output_in_a_pipe_is_not_wrapped_unless_columns_sets_a_width(listed, db_path):
    episode = f"{BATCH}:find-living-thing:3"
    lines = cli(db_path, "show", episode, env={**PIPE, "COLUMNS": None}).splitlines()
    assert f"outcome {MESSAGE}" in lines and len(MESSAGE) > 80
    narrow = cli(db_path, "show", episode, env={**PIPE, "COLUMNS": "60"}).splitlines()
    assert f"outcome {MESSAGE}" not in narrow and all(len(line) <= 60 for line in narrow)
    assert " ".join(narrow).count("next to the stove") == 1
