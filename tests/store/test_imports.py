"""Opening a store stays cheap: sqlite_utils (and pandas and numpy, which it imports whenever
they are installed) load only when ``Store.db`` is first used."""

from __future__ import annotations

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
