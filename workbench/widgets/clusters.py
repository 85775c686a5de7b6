"""An analysis run's failure clusters, their members and contrastive successes; a member or
a contrast opens in a :class:`TrajectoryStepper`."""

from __future__ import annotations

import os

import ipywidgets as widgets

from store import Analysis, Cluster, Store
from workbench.analyze.clusters import ClusterData, read_clusters
from workbench.widgets import html
from workbench.widgets.stepper import TrajectoryStepper


def cluster_option(cluster: Cluster) -> str:
    """``#3 boil · go to <X> | is not open → open door to <X> (2, supported)``."""
    correction = cluster.correction or "–"
    return (
        f"#{cluster.id} {cluster.family or '–'} · {cluster.trigger or '–'} → {correction} "
        f"({len(cluster.members)}, {cluster.status})"
    )


def member_option(analysis: Analysis) -> str:
    """``door-1 · steps 1–1 · 0.80 proposed``."""
    return (
        f"{analysis.episode_id} · steps {analysis.start}–{analysis.end} · "
        f"{analysis.confidence:.2f} {analysis.status}"
    )


def member_html(analysis: Analysis) -> str:
    """What the analyzer concluded about one member."""
    rows = [
        ("episode", analysis.episode_id),
        ("failure", analysis.failure),
        ("causal span", f"steps {analysis.start}–{analysis.end}"),
        ("change", analysis.change),
        ("trigger", analysis.trigger),
        ("correction", analysis.correction),
        ("contrast", analysis.contrast_id or "–"),
        ("rationale", analysis.rationale),
    ]
    return html.table(["", ""], rows)


class ClusterInspector(widgets.VBox):
    """Clusters of an analysis run (the latest by default), their members and contrasts.

    Args:
        db: the database file.
        stepper: where *open* shows a member (at its causal step) or a contrast.

    Attributes:
        data: the run, its clusters and analyses as last read.
        cluster: the chosen cluster; ``member``: the chosen member analysis;
        ``contrast``: the chosen contrastive success.
    """

    def __init__(
        self, db: str | os.PathLike[str], stepper: TrajectoryStepper | None = None
    ) -> None:
        self.store = Store(db)
        self.stepper = stepper
        self.data = ClusterData()
        self.runs = widgets.Dropdown(description="run").add_class("wb-run")
        self.summary = widgets.HTML().add_class("wb-run-summary")
        self.clusters = widgets.Select(rows=6, description="clusters", layout={"width": "95%"})
        self.clusters.add_class("wb-clusters")
        self.members = widgets.Select(rows=5, description="members", layout={"width": "60%"})
        self.members.add_class("wb-members")
        self.contrasts = widgets.Select(rows=5, description="contrasts")
        self.contrasts.add_class("wb-contrasts")
        self.detail = widgets.HTML().add_class("wb-member")
        self.open_button = widgets.Button(description="open member in stepper")
        self.open_button.add_class("wb-open")
        self.open_contrast_button = widgets.Button(description="open contrast in stepper")
        self.open_contrast_button.add_class("wb-open-contrast")
        self.status = widgets.HTML().add_class("wb-status")
        super().__init__(
            [
                self.runs,
                self.summary,
                self.clusters,
                widgets.HBox([self.members, self.contrasts]),
                self.detail,
                widgets.HBox([self.open_button, self.open_contrast_button]),
                self.status,
            ]
        )
        self.add_class("wb-cluster-inspector")
        self.runs.observe(lambda change: self.load(change["new"]), names="value")
        self.clusters.observe(lambda _: self._show_cluster(), names="value")
        self.members.observe(lambda _: self._show_member(), names="value")
        self.open_button.on_click(lambda _: self.open_member())
        self.open_contrast_button.on_click(lambda _: self.open_contrast())
        self.refresh()

    @property
    def cluster(self) -> Cluster | None:
        return next((c for c in self.data.clusters if c.id == self.clusters.value), None)

    @property
    def member(self) -> Analysis | None:
        return self.data.analyses.get(self.members.value) if self.members.value else None

    @property
    def contrast(self) -> str | None:
        return self.contrasts.value

    def refresh(self) -> None:
        """Read the analysis runs again and show the latest."""
        runs = self.store.analysis_runs()
        options = [
            (f"run {r.id} · {r.reasoner} · {r.created_at:%Y-%m-%d %H:%M}", r.id) for r in runs
        ]
        self.runs.options = options
        if runs:
            self.runs.value = runs[0].id
        self.load(runs[0].id if runs else None)

    def load(self, run_id: int | None) -> None:
        """Show the clusters of analysis run ``run_id``."""
        self.data = read_clusters(self.store, run_id) if run_id is not None else ClusterData()
        if self.data.run is None:
            self.summary.value = html.status(
                "no analysis run yet: run `workbench analyze` (or r on the Clusters screen)", "info"
            )
        else:
            deferred = sum(c.status == "deferred" for c in self.data.clusters)
            self.summary.value = html.text(
                f"{len(self.data.analyses)} analyses · {len(self.data.clusters)} clusters"
                f" ({deferred} deferred)"
            )
        self.clusters.options = [(cluster_option(c), c.id) for c in self.data.clusters]
        self.clusters.value = self.data.clusters[0].id if self.data.clusters else None
        self._show_cluster()

    def open_member(self) -> bool:
        """Show the chosen member in the stepper at its causal step."""
        member = self.member
        if member is None or self.stepper is None:
            self._say("choose a member (and give the inspector a stepper)", "warning")
            return False
        self.stepper.episode_id = member.episode_id
        self.stepper.go(member.start)
        self._say(f"opened {member.episode_id} at step {member.start}", "ok")
        return True

    def open_contrast(self) -> bool:
        """Show the chosen contrastive success in the stepper."""
        contrast = self.contrast
        if contrast is None or self.stepper is None:
            self._say("choose a contrast (and give the inspector a stepper)", "warning")
            return False
        self.stepper.episode_id = contrast
        self._say(f"opened {contrast}", "ok")
        return True

    def _show_cluster(self) -> None:
        cluster = self.cluster
        members = self.data.members(cluster) if cluster else []
        self.members.options = [(member_option(a), a.id) for a in members]
        self.members.value = members[0].id if members else None
        self.contrasts.options = list(cluster.contrasts) if cluster else []
        self.contrasts.value = cluster.contrasts[0] if cluster and cluster.contrasts else None
        if cluster is not None and cluster.status == "deferred":
            self._say(f"deferred: {cluster.reason}", "warning")
        else:
            self.status.value = ""
        self._show_member()

    def _show_member(self) -> None:
        member = self.member
        self.detail.value = member_html(member) if member else ""

    def _say(self, message: str, level: str) -> None:
        self.status.value = html.status(message, level)

    def close(self) -> None:
        """Close the widget and its store."""
        super().close()
        self.store.close()
