"""The terminal UI's first screen loads only what it draws: no model client, no data-frame
library, no plotting library (those load with the screens that use them)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("openai", "pandas", "numpy", "sqlite_utils", "plotext", "textual_plotext", "plotly")


def test_the_app_and_its_first_screen_import_nothing_heavy():
    probe = (
        "import sys\nimport tui.app\nimport tui.screens.trajectory\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == []
