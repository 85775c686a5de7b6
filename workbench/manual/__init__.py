"""AutoManual: the rule system built online from episodes, consolidated, and formulated into a
Markdown manual (the rule system's typed operations are in :mod:`workbench.manual.operations`)."""
