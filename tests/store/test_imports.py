"""Opening a store stays cheap: sqlite_utils (and pandas and numpy, which it imports whenever
they are installed) load only when ``Store.db`` is first used."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("sqlite_utils", "pandas", "numpy")


def loaded_after(code: str, *args: str) -> list[str]:
    """The HEAVY modules a fresh interpreter has loaded after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def test_opening_a_store_imports_neither_sqlite_utils_nor_pandas(tmp_path):
    code = "import sys\nfrom store import Store\nStore(sys.argv[1]).close()"
    assert loaded_after(code, str(tmp_path / "a.db")) == []


def test_store_db_is_a_sqlite_utils_database_on_the_same_connection(tmp_path):
    code = (
        "import sys\nfrom store import Store\nstore = Store(sys.argv[1])\n"
        "assert store.db.conn is store.conn and 'steps' in store.db.table_names()"
    )
    assert "sqlite_utils" in loaded_after(code, str(tmp_path / "a.db"))


def test_record_models_are_built_on_first_use_even_from_many_threads_at_once():
    """Importing the store builds no record validator (``defer_build``); the first uses, from
    eight threads at once as the TUI's workers do, each get the model's own validator."""
    probe = """
import json, threading
from pydantic import ValidationError
from store import Episode, Span, Step, Task

models = (Episode, Span, Step, Task)
assert not any(model.__pydantic_complete__ for model in models)
start, results = threading.Barrier(8), []

def use() -> None:
    start.wait()
    step = Step(episode_id="e", index=3, kind="action", action="look")
    try:
        Step(episode_id="e", index=3, kind="action", colour="red")
    except ValidationError as error:
        results.append((step.action, error.errors()[0]["type"]))

threads = [threading.Thread(target=use) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"seen": sorted(set(results)), "n": len(results), "built": Step.__pydantic_complete__}))
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"seen": [["look", "extra_forbidden"]], "n": 8, "built": True}
