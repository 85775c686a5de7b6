"""An experiment's checkpoints as plot-ready series, one per regime (what the Evolution screen,
the notebook plot and ``workbench plot evolution`` draw)."""

from __future__ import annotations

from dataclasses import dataclass, field

from store import REGIMES, Checkpoint, Store

KINDS = ("rule", "skill", "subagent")


@dataclass
class Series:
    """One regime's checkpoints in order: x is the number of learning tasks seen."""

    regime: str
    tasks: list[int] = field(default_factory=list)
    pass_rate: list[float] = field(default_factory=list)
    """Held-out pass rate (0–1)."""
    sizes: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in KINDS})
    """Active artifacts by kind."""
    use_rate: list[float | None] = field(default_factory=list)
    """Fraction of stored artifacts invoked on the held-out set (``None``: nothing stored)."""
    degradation: list[float] = field(default_factory=list)
    """Signed degradation over the baseline-success ledger (positive: net loss)."""
    checkpoints: list[Checkpoint] = field(default_factory=list)

    def add(self, checkpoint: Checkpoint) -> None:
        self.checkpoints.append(checkpoint)
        self.tasks.append(checkpoint.tasks)
        self.pass_rate.append(checkpoint.pass_rate)
        for kind in KINDS:
            self.sizes[kind].append(checkpoint.sizes.get(kind, 0))
        self.use_rate.append(checkpoint.use_rate)
        self.degradation.append(checkpoint.degradation)


def evolution_series(store: Store, name: str) -> list[Series]:
    """The experiment's series, regimes in the order of :data:`store.REGIMES` (checkpoints
    come from the store ordered by regime, then position)."""
    by_regime: dict[str, Series] = {}
    for checkpoint in store.checkpoints(name):
        by_regime.setdefault(checkpoint.regime, Series(checkpoint.regime)).add(checkpoint)
    return [by_regime[r] for r in REGIMES if r in by_regime]


def latest_evolution(store: Store) -> str | None:
    """The newest experiment's name (``None`` when there is none)."""
    found = store.evolutions()
    return found[0].name if found else None
