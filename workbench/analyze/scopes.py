"""The scopes an analysis can be asked for by name: the default one (what ``workbench
analyze`` reads without options), one batch, one split, or all failures with the held-out ones.
The terminal UI's Clusters screen offers them before ``r`` analyses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from store import EpisodeFilter, Store
from store.records import Split
from workbench.analyze.analyzer import failures_in_scope

ScopeKind = Literal["default", "batch", "split", "all"]


@dataclass(frozen=True)
class AnalysisScope:
    """One scope to analyse: what it is called and the filter :func:`analyze` gets."""

    kind: ScopeKind
    name: str = ""
    """The batch or split named (empty for the default scope and for all)."""
    failures: int | None = None
    """Failures :func:`analyze` reads in this scope (``None``: not counted)."""

    @property
    def where(self) -> EpisodeFilter:
        """The filter to pass to :func:`workbench.analyze.analyzer.analyze`."""
        if self.kind == "batch":
            return EpisodeFilter(batch=self.name)
        if self.kind == "split":
            return EpisodeFilter(split=self.name)
        if self.kind == "all":
            return EpisodeFilter(held_out=True)
        return EpisodeFilter()

    @property
    def label(self) -> str:
        """A short name: ``default``, ``batch demo-train``, ``split test``, ``all``."""
        return f"{self.kind} {self.name}" if self.name else self.kind

    @property
    def description(self) -> str:
        """What the scope covers, in words."""
        return {
            "default": "every failure but replays and held-out (test) episodes",
            "batch": f"the failures of batch {self.name}, as named",
            "split": f"the failures of the {self.name} split, as named",
            "all": "every failure, held-out (test) episodes included; replays left out",
        }[self.kind]


DEFAULT_SCOPE = AnalysisScope("default")


def analysis_scopes(store: Store) -> list[AnalysisScope]:
    """The scopes of the store's workspace with the failures each covers: the default one,
    every batch but candidates' replays (by name), every split holding episodes, then all."""
    batches = [AnalysisScope("batch", b.name) for b in store.batches() if b.kind != "replay"]
    splits = [
        AnalysisScope("split", split)
        for split in get_args(Split)
        if store.count_episodes(EpisodeFilter(split=split))
    ]
    scopes = [DEFAULT_SCOPE, *batches, *splits, AnalysisScope("all")]
    return [counted(store, scope) for scope in scopes]


def counted(store: Store, scope: AnalysisScope) -> AnalysisScope:
    """``scope`` with the number of failures :func:`analyze` reads in it."""
    failures = store.count_episodes(failures_in_scope(scope.where))
    return AnalysisScope(scope.kind, scope.name, failures)
