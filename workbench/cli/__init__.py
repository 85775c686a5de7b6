"""The ``workbench`` command: thin commands over the engine, errors turned into messages.

One module per command group, registered here and nowhere else; no command module imports
this package's group back. Command modules import the store and the engine inside their
commands, so ``workbench --help`` loads click and rich only.
"""

from __future__ import annotations

from workbench.cli import (
    analysis,
    episodes,
    evolve,
    manual,
    model,
    plot,
    repo,
    runs,
    spans,
    synth,
    tui,
)
from workbench.cli.group import main

for command in (
    episodes.import_command,
    episodes.ls_command,
    episodes.show_command,
    episodes.search_command,
    episodes.stats_command,
    episodes.export_command,
    spans.spans_group,
    runs.run_command,
    runs.demo_command,
    tui.tui_command,
    analysis.analyze_command,
    analysis.clusters_command,
    repo.compile_command,
    repo.replay_command,
    repo.repo_group,
    manual.manual_group,
    evolve.evolve_command,
    plot.plot_group,
    synth.synth_group,
    model.model_group,
):
    main.add_command(command)

__all__ = ["main"]
