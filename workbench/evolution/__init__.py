"""Repository evolution: checkpoints along an ordered learning stream, scored on a fixed
held-out set, under different admission regimes."""

from workbench.evolution.series import KINDS, Series, evolution_series, latest_evolution

__all__ = ["KINDS", "Series", "evolution_series", "latest_evolution"]
