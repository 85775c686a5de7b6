"""The README stays true: quick start matches CI, every command and record field is documented."""

from __future__ import annotations

import re
from pathlib import Path

import click

from store import Batch, Episode, Span, Step, Task
from workbench.cli import main
from workbench.ingest import formats

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def code_blocks() -> list[str]:
    return re.findall(r"```(?:bash|console|python|json|toml)?\n(.*?)```", README, flags=re.S)


def test_quick_start_is_the_first_block_and_ci_runs_its_test_command():
    first, second = code_blocks()[:2]
    assert "workbench tui" in first and "install-java.sh" in first
    test_command = second.strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command.replace("pip install", "pip install -q") in ci
    assert "install-java.sh" in test_command


def test_every_cli_command_is_in_the_reference():
    reference = README.split("## CLI reference", 1)[1].split("\n## ", 1)[0]
    for name, command in main.commands.items():
        assert f"`workbench {name}" in reference, name
        subcommands = command.commands.items() if isinstance(command, click.Group) else []
        for sub, _ in subcommands:
            assert f"{name} {sub}" in reference, f"{name} {sub}"
        for label, each in [(name, command), *((f"{name} {s}", c) for s, c in subcommands)]:
            for param in each.params:
                if isinstance(param, click.Option) and param.name not in {
                    "db_path",
                    "help",
                    "outcome",
                }:
                    assert any(opt in reference for opt in param.opts), f"{label} {param.opts}"


def test_every_format_is_listed():
    table = README.split("## Formats", 1)[1].split("\n## ", 1)[0]
    for importer in formats.IMPORTERS:
        assert f"| `{importer.name}` |" in table


def test_every_record_field_is_documented():
    schema = README.split("## The workbench JSONL format", 1)[1].split("\n## ", 1)[0]
    for model in (Task, Batch, Episode, Step, Span):
        for field in model.model_fields:
            assert f"`{field}`" in schema, f"{model.__name__}.{field}"


def test_guidance_example_is_valid_guidance():
    from workbench.agents.guidance import Guidance

    [example] = [block for block in code_blocks() if block.startswith('{"forms"')]
    guidance = Guidance.model_validate_json(example)
    assert [f.kind for f in guidance.forms] == ["rule", "skill", "subagent"]
