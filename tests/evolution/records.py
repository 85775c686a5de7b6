"""A realistic repository-evolution experiment written through the Store, shared by the
tests of the evolution plots (figures and notebook widget, ``workbench plot evolution``, the
TUI's Evolution screen).

Held-out set of 50 cases, ledger of the 21 the artifact-free reference solved, a checkpoint
every 5 learning tasks. The gated regime climbs 0.42 → 0.62 and never degrades; without the
replay gate the repository grows faster and, at 10 tasks, loses 3 ledger cases (+0.14)."""

from __future__ import annotations

from pathlib import Path

from store import Checkpoint, Evolution, Store

NAME = "rq3-scienceworld"
TOTAL = 50
LEDGER = 21

# tasks, passed, (rules, skills, subagents), used, lost, recovered
GATED = [
    (0, 21, (0, 0, 0), 0, 0, 0),
    (5, 24, (2, 0, 0), 1, 0, 0),
    (10, 27, (3, 1, 0), 3, 0, 1),
    (15, 31, (3, 2, 1), 4, 0, 0),
]
NO_REPLAY_GATE = [
    (0, 21, (0, 0, 0), 0, 0, 0),
    (5, 23, (3, 1, 0), 2, 0, 0),
    (10, 20, (5, 2, 0), 3, 3, 0),
    (15, 25, (6, 3, 1), 4, 1, 2),
]
REGIMES = {"gated": GATED, "no-replay-gate": NO_REPLAY_GATE}


def checkpoint(name: str, regime: str, position: int, row: tuple) -> Checkpoint:
    tasks, passed, (rules, skills, subagents), used, lost, recovered = row
    sizes = {"rule": rules, "skill": skills, "subagent": subagents}
    admitted = [
        {"artifact": f"{regime}-{kind}-{i}", "version": 1, "kind": kind, "status": "active"}
        for kind, n in sizes.items()
        for i in range(n)
    ]
    return Checkpoint(
        evolution=name,
        regime=regime,
        position=position,
        tasks=tasks,
        passed=passed,
        total=TOTAL,
        sizes=sizes,
        stored=rules + skills + subagents,
        used=used,
        ledger=LEDGER,
        lost=lost,
        recovered=recovered,
        degradation=(lost - recovered) / LEDGER,
        admissions=admitted if position else [],
        batch_id=f"{name}-{regime}-{position}",
    )


def write_experiment(path: Path, name: str = NAME, upto: int = len(GATED)) -> None:
    """Store the experiment with its first ``upto`` checkpoints per regime."""
    with Store(path) as store:
        store.put_evolution(Evolution(name=name, params={"interval": 5, "held_out": TOTAL}))
        for regime, rows in REGIMES.items():
            for position, row in enumerate(rows[:upto]):
                store.put_checkpoint(checkpoint(name, regime, position, row))


def add_gated_checkpoint(path: Path, name: str = NAME) -> Checkpoint:
    """A fifth gated checkpoint at 20 tasks: 33/50 with seven artifacts."""
    with Store(path) as store:
        row = (20, 33, (4, 2, 1), 5, 0, 0)
        return store.put_checkpoint(checkpoint(name, "gated", len(GATED), row))
