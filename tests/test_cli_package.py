"""The command line as a package: commands registered in one place, the engine imported only
when a command runs."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import get_args

from store.records import Split
from workbench.cli.options import SPLITS

CLI = Path(__file__).resolve().parents[1] / "workbench" / "cli"

HEAVY = ("store", "pydantic", "openai", "sqlite_utils", "workbench.runner", "workbench.analyze")


def loaded_after(*args: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after ``workbench ARGS``."""
    script = (
        "import json, sys\n"
        "from workbench.cli import main\n"
        f"try:\n    main({list(args)!r}, prog_name='workbench')\n"
        "except SystemExit:\n    pass\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.splitlines()[-1])


def test_help_loads_neither_the_store_nor_the_engine():
    assert loaded_after("--help") == []
    assert loaded_after("ls", "--help") == []
    assert loaded_after("repo", "--help") == []


def test_the_import_help_still_lists_every_format():
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "import", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    from workbench.ingest.formats import IMPORTERS

    for importer in IMPORTERS:
        assert importer.name in result.stdout


def test_the_split_choices_are_the_stores_splits():
    assert get_args(Split) == SPLITS


def test_no_command_module_imports_the_package_back():
    for path in sorted(CLI.glob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "workbench.cli":
                raise AssertionError(f"{path.name}:{node.lineno} imports workbench.cli back")
            if isinstance(node, ast.Import) and any(a.name == "workbench.cli" for a in node.names):
                raise AssertionError(f"{path.name}:{node.lineno} imports workbench.cli back")
