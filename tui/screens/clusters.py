"""The Clusters screen: the latest analysis run's failure clusters, their members (each with
its proposed causal span, to accept, edit or reject) and the successes to contrast them with.

``r`` runs the analysis (:func:`workbench.analyze.analyzer.analyze`, with the app's backend:
the offline heuristic unless another is configured) over the failures of the scope shown under the summary, in a thread worker, with a progress bar;
``escape`` cancels it. ``s`` picks the scope (:mod:`workbench.analyze.scopes`): the default one
(every failure but replays and held-out test episodes, as ``workbench analyze`` without
options), one batch, one split, or all with the held-out episodes.

``l`` learns from the causal spans people marked: it fits the step scorer of
:func:`workbench.analyze.heuristic.learned_analyst` on the scope's marked failures and analyses
the others with it, the same way. Once some failure of the scope carries a person's span, a
line under the summary compares the heuristic's steps with theirs, beside the trivial baselines
(:func:`workbench.analyze.agreement.summary`). ``g`` groups the clusters by the agent their
members' analyses hold responsible; the member table names each member's agent and marks the
spans that came from a person or from the learned scorer.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from typing import ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from store import Analysis, Cluster
from tui.cells import STATUS_STYLES
from tui.data import Session
from tui.escapes import shown
from tui.navigation import OpenCompare, OpenCompile, OpenTrajectory
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.job_progress import JobProgress
from tui.widgets.key_footer import KeyFooter
from tui.widgets.record_table import Column, RecordTable
from workbench.analyze import review
from workbench.analyze.agreement import agreement, summary
from workbench.analyze.analyzer import AnalysisReport, analyze, failures_in_scope
from workbench.analyze.clusters import ClusterData, read_clusters
from workbench.analyze.heuristic import learned_analyst
from workbench.analyze.learned import NotEnoughLabels
from workbench.analyze.scopes import DEFAULT_SCOPE, AnalysisScope, analysis_scopes, counted
from workbench.llm.client import ConfigError, ModelError
from workbench.progress import Cancelled, Progress

HELP = Help(
    "Clusters",
    "Failures of the latest analysis run, grouped when the same correction applies under the same observable trigger in the same family. A cluster is deferred when no single trigger or correction holds. Below: the selected cluster's members — each failure's proposed causal span, to accept, correct or reject — and successful runs of the same family to contrast them with. A member's span that a person marked says person's span, one the scorer learned from people's spans chose says learned. Once a failure of the scope carries a person's causal span, the line under the summary gives the heuristic's agreement with people's spans beside the first-step, last-step and random baselines.",
    [
        ("↑ ↓", "move in the table"),
        ("tab  shift+tab", "clusters → members → contrasts"),
        ("enter", "on a cluster: its members; on a member: open it at its causal span"),
        ("enter on a contrast", "compare the selected member with that success"),
        ("c", "compare the selected member with its contrast, at the divergence"),
        ("a", "accept the member's causal span"),
        ("e", "edit the member's causal span (start and end step)"),
        ("x", "reject the member's analysis"),
        ("k", "the intervention spec compiled from the cluster (r there compiles)"),
        ("r", "analyse the failures of the scope shown (heuristic, or the model in the title)"),
        ("s", "pick the scope r analyses: default, one batch, one split, or all"),
        (
            "l",
            "learn from marked spans: fit a step scorer on the failures of the scope people marked, then analyse the others with it",
        ),
        ("g", "group the clusters by the agent held responsible (g again: one list)"),
        ("escape  ctrl+x", "cancel a running analysis (r or l)"),
    ],
)

CLUSTER_COLUMNS = [
    Column("size"),
    Column("family"),
    Column("trigger", text=True),
    Column("correction", text=True),
    Column("status"),
    Column("reason", text=True),
]
MEMBER_COLUMNS = [
    Column("episode"),
    Column("span"),
    Column("conf"),
    Column("status"),
    Column("change", text=True),
]
AGENT_COLUMN = Column("agent")
CONTRAST_COLUMNS = [Column("episode")]
Verdict = Literal["accept", "edit", "reject"]
ONE_AGENT = "(one agent)"
"""The group of clusters whose members come from logs of a single agent."""
ORIGINS = {"human": "person's span", "learned": "learned"}
"""How a member whose span did not come from the analyzer's own judgment is marked."""
LEARN_HINT = "mark causal spans (v in a trajectory, a or e on a member here), then l again"
"""What to do when ``l`` finds too few marked failures to learn from."""


def run_summary(data: ClusterData) -> Text:
    """The line above the tables: which run, how many analyses in which state, clusters."""
    if data.run is None:
        return Text.assemble(
            ("No analysis run yet. ", "bold"),
            "Press ",
            ("r", "bold #ffa62b"),
            " to analyse the failures of the scope below with the offline heuristic reasoner",
            " (",
            ("s", "bold #ffa62b"),
            " picks another).",
        )
    run = data.run
    statuses = Counter(a.status for a in data.analyses.values())
    deferred = sum(c.status == "deferred" for c in data.clusters)
    scope = ", ".join(f"{k} {v}" for k, v in run.scope.items()) or "default scope"
    line = Text.assemble(
        (f"analysis run {run.id}", "bold"),
        shown(f" · {run.reasoner} · {scope} · "),
        (f"{len(data.analyses)} analyses", "bold"),
    )
    if statuses:
        line.append(" (" + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) + ")")
    line.append(" · ")
    line.append(f"{len(data.clusters)} clusters", "bold")
    if deferred:
        line.append(f", {deferred} deferred", "yellow")
    return line


def scope_line(scope: AnalysisScope) -> Text:
    """The line saying which failures ``r`` analyses."""
    line = Text.assemble(
        ("r", "bold #ffa62b"),
        " analyses ",
        (shown(scope.label), "bold"),
        shown(f": {scope.description}"),
    )
    if scope.failures is not None:
        line.append(f" · {scope.failures} failures")
    line.append(" · ")
    line.append("s", "bold #ffa62b")
    line.append(" picks the scope", "dim")
    return line


def agreement_line(line: str, scope: AnalysisScope) -> Text:
    """The agreement summary of ``scope`` (empty when nobody marked a failure of it)."""
    if not line:
        return Text()
    head, _, rest = shown(line).partition(": ")
    return Text.assemble((f"{head}: ", "bold"), rest, (f" · {shown(scope.label)}", "dim"))


def scope_help(scope: AnalysisScope) -> Help:
    """The screen's help, saying which scope ``r`` analyses now."""
    return replace(HELP, intro=f"{HELP.intro} r analyses now: {scope.label} — {scope.description}.")


def cluster_cells(cluster: Cluster) -> list[Text]:
    """One cluster's row."""
    return [
        Text(str(len(cluster.members)), justify="right"),
        Text(cluster.family or "–"),
        Text(cluster.trigger or "–"),
        Text(cluster.correction or "–", style="" if cluster.correction else "dim"),
        Text(cluster.status, style=STATUS_STYLES.get(cluster.status, "")),
        Text(cluster.reason, style="dim"),
    ]


def member_cells(analysis: Analysis, agents: bool = False) -> list[Text]:
    """One member analysis's row (with its agent's cell when ``agents``)."""
    span = Text(f"{analysis.start}–{analysis.end}")
    if analysis.origin in ORIGINS:
        span.append(f" {ORIGINS[analysis.origin]}", "italic #7fbfff")
    cells = [
        Text(analysis.episode_id),
        span,
        Text(f"{analysis.confidence:.2f}", justify="right"),
        Text(analysis.status, style=STATUS_STYLES.get(analysis.status, "")),
        Text(analysis.change),
    ]
    if agents:
        cells.insert(1, Text(analysis.agent or "–", style="" if analysis.agent else "dim"))
    return cells


def member_columns(agents: bool) -> list[Column]:
    """The member table's columns: an agent column after the episode in a run of several
    agents' logs."""
    return [MEMBER_COLUMNS[0], AGENT_COLUMN, *MEMBER_COLUMNS[1:]] if agents else MEMBER_COLUMNS


def agent_of(analysis: Analysis) -> str:
    """The agent a member's analysis holds responsible, or :data:`ONE_AGENT`."""
    return analysis.agent or ONE_AGENT


def agent_groups(data: ClusterData) -> list[tuple[str, list[Cluster]]]:
    """The clusters under each agent their members' analyses hold responsible (a cluster
    whose members name two agents is under both): the agents blamed for the most failures
    first, :data:`ONE_AGENT` last."""
    groups: dict[str, list[Cluster]] = {}
    failures: Counter[str] = Counter()
    for cluster in data.clusters:
        agents = Counter(agent_of(a) for a in data.members(cluster))
        failures.update(agents)
        for agent in agents:
            groups.setdefault(agent, []).append(cluster)
    order = sorted(groups, key=lambda agent: (agent == ONE_AGENT, -failures[agent], agent))
    return [(agent, groups[agent]) for agent in order]


def grouped_cells(data: ClusterData, agent: str, cluster: Cluster, first: bool) -> list[Text]:
    """A cluster's row under ``agent`` (its name on the group's first row): the size says
    how many of the members are that agent's when not all are."""
    cells = cluster_cells(cluster)
    members = data.members(cluster)
    mine = sum(agent_of(a) == agent for a in members)
    if mine != len(members):
        cells[0] = Text(f"{mine}/{len(members)}", justify="right")
    name = Text(agent if first else "", style="dim italic" if agent == ONE_AGENT else "bold")
    return [name, *cells]


class ClustersScreen(Screen[None]):
    """Clusters of the latest analysis run, their members and contrasts."""

    HELP = HELP

    scope: reactive[AnalysisScope] = reactive(DEFAULT_SCOPE, init=False)
    """The failures ``r`` analyses."""
    by_agent: reactive[bool] = reactive(False, init=False)
    """Whether the clusters are listed under the agents held responsible."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "review('accept')", "Accept"),
        Binding("e", "edit", "Edit span"),
        Binding("x", "review('reject')", "Reject"),
        Binding("c", "compare", "Compare"),
        Binding("k", "compile", "Compile"),
        Binding("r", "analyze", "Analyse"),
        Binding("s", "pick_scope", "Scope"),
        Binding("l", "learn", "Learn"),
        Binding("g", "toggle_by_agent", "By agent"),
        Binding("escape,ctrl+x", "cancel_analysis", "Cancel analysis"),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.data = ClusterData()
        self.loaded = False
        """Whether the first read has been shown."""
        self._cancel: threading.Event | None = None
        self._rows: list[tuple[str, Cluster]] = []
        """The cluster table's rows: each cluster with the agent it is listed under (empty
        when not grouped)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("reading analyses…", id="clusters-info")
        yield Static("", id="clusters-agreement")
        yield Static(scope_line(self.scope), id="clusters-scope")
        yield JobProgress("escape cancels", id="analysis-progress")
        yield RecordTable(CLUSTER_COLUMNS, id="cluster-table", zebra_stripes=True)
        with Horizontal(id="cluster-detail"):
            yield RecordTable(MEMBER_COLUMNS, id="member-table")
            yield RecordTable(CONTRAST_COLUMNS, id="contrast-table")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"clusters · {self.session.pool.name}"
        self.cluster_table.border_title = "clusters"
        self.member_table.border_title = "members"
        self.contrast_table.border_title = "contrasts"
        self.cluster_table.focus()
        self.watch_scope(self.scope)
        self.reload()

    @property
    def cluster_table(self) -> RecordTable:
        return self.query_one("#cluster-table", RecordTable)

    @property
    def member_table(self) -> RecordTable:
        return self.query_one("#member-table", RecordTable)

    @property
    def contrast_table(self) -> RecordTable:
        return self.query_one("#contrast-table", RecordTable)

    @property
    def running(self) -> bool:
        """Whether an analysis is running."""
        return self._cancel is not None

    # -- selection --------------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster | None:
        """The cluster under the cluster table's cursor."""
        row = self.cluster_table.cursor_row
        rows = self._rows
        return rows[row][1] if 0 <= row < len(rows) and self.cluster_table.row_count else None

    @property
    def member(self) -> Analysis | None:
        """The member analysis under the member table's cursor."""
        cluster = self.cluster
        if cluster is None:
            return None
        members = self.data.members(cluster)
        row = self.member_table.cursor_row
        return members[row] if 0 <= row < len(members) else None

    @property
    def contrast(self) -> str | None:
        """The successful episode under the contrast table's cursor."""
        cluster = self.cluster
        row = self.contrast_table.cursor_row
        if cluster is None or not 0 <= row < len(cluster.contrasts):
            return None
        return cluster.contrasts[row]

    # -- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the latest run's clusters again, keeping the selection where it can."""
        self._load()

    @work(thread=True, exclusive=True, group="clusters-load")
    def _load(self) -> None:
        scope = self.scope
        with self.session.pool.store() as store:
            data = read_clusters(store)
            scope = counted(store, scope)
        deliver(self, self._loaded, data, scope)

    def _loaded(self, data: ClusterData, scope: AnalysisScope | None = None) -> None:
        if scope is not None and scope.label == self.scope.label:
            self.scope = scope  # its failures counted again
        member = self.member
        keep_member = member.id if member else None
        keep_row = self.member_table.cursor_row
        keep = self._row_key()
        self.data = data
        self.query_one("#clusters-info", Static).update(run_summary(data))
        agents = any(a.agent for a in data.analyses.values())
        if self.member_table.record_columns != member_columns(agents):
            self.member_table.set_columns(member_columns(agents))
        self._fill_clusters(keep)
        self._show_cluster(keep_member, keep_row)
        self.loaded = True
        self._agree(self.scope)

    def _row_key(self) -> tuple[str, tuple[str, str, str]] | None:
        """What identifies the row under the cursor across reloads and regrouping."""
        row = self.cluster_table.cursor_row
        if not 0 <= row < len(self._rows) or not self.cluster_table.row_count:
            return None
        agent, cluster = self._rows[row]
        return agent, _key(cluster)

    def _fill_clusters(self, keep: tuple[str, tuple[str, str, str]] | None) -> None:
        """Fill the cluster table from :attr:`data`, one list or grouped by agent, and put
        the cursor back on the cluster ``keep`` names (under the same agent if it can)."""
        data, table = self.data, self.cluster_table
        if self.by_agent:
            groups = agent_groups(data)
            self._rows = [(agent, c) for agent, clusters in groups for c in clusters]
            cells = [
                grouped_cells(data, agent, c, i == 0)
                for agent, clusters in groups
                for i, c in enumerate(clusters)
            ]
        else:
            self._rows = [("", c) for c in data.clusters]
            cells = [cluster_cells(c) for c in data.clusters]
        columns = [AGENT_COLUMN, *CLUSTER_COLUMNS] if self.by_agent else CLUSTER_COLUMNS
        if table.record_columns != columns:
            table.set_columns(columns)
        table.set_rows(cells, map(str, range(len(cells))))
        keys = [(agent, _key(c)) for agent, c in self._rows]
        row = next((i for i, k in enumerate(keys) if k == keep), None)
        if row is None and keep is not None:  # regrouped: the same cluster, any agent
            row = next((i for i, k in enumerate(keys) if k[1] == keep[1]), None)
        if self._rows:
            table.move_cursor(row=row or 0, animate=False)
        table.border_title = "clusters by responsible agent" if self.by_agent else "clusters"

    def watch_by_agent(self) -> None:
        member = self.member
        self._fill_clusters(self._row_key())
        self._show_cluster(member.id if member else None, self.member_table.cursor_row)

    def action_toggle_by_agent(self) -> None:
        self.by_agent = not self.by_agent

    # -- agreement with people's spans ------------------------------------------------------

    @work(thread=True, exclusive=True, group="clusters-agreement")
    def _agree(self, scope: AnalysisScope) -> None:
        """Compare the heuristic's causal steps with those people marked in ``scope``."""
        where = failures_in_scope(scope.where)
        with self.session.pool.store() as store:
            line = summary(agreement(store, where, baselines=True, heuristic=True))
        deliver(self, self._agreed, scope, line)

    def _agreed(self, scope: AnalysisScope, line: str) -> None:
        if scope.label != self.scope.label:
            return  # the scope changed meanwhile: its own line is on its way
        widget = self.query_one("#clusters-agreement", Static)
        widget.update(agreement_line(line, scope))
        widget.display = bool(line)

    @on(DataTable.RowHighlighted, "#cluster-table")
    def _cluster_highlighted(self) -> None:
        member = self.member
        self._show_cluster(member.id if member else None, 0)

    def _show_cluster(self, keep_member: int | None, keep_row: int) -> None:
        """Fill the member and contrast tables from the selected cluster."""
        cluster = self.cluster
        members = self.data.members(cluster) if cluster else []
        contrasts = cluster.contrasts if cluster else []
        table = self.member_table
        agents = AGENT_COLUMN in table.record_columns
        table.set_rows([member_cells(a, agents) for a in members], [str(a.id) for a in members])
        ids = [a.id for a in members]
        row = ids.index(keep_member) if keep_member in ids else min(keep_row, len(ids) - 1)
        if members:
            table.move_cursor(row=max(row, 0), animate=False)
        table.border_title = f"members · {len(members)}"
        if cluster is not None and cluster.status == "deferred":
            table.border_subtitle = Text("deferred: " + shown(cluster.reason))
        else:
            table.border_subtitle = ""
        contrast_table = self.contrast_table
        contrast_table.set_rows([[Text(episode_id)] for episode_id in contrasts], contrasts)
        contrast_table.border_title = f"contrasts · {len(contrasts)}"

    # -- opening ----------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#cluster-table")
    def _cluster_selected(self) -> None:
        if self.member_table.row_count:
            self.member_table.focus()

    @on(DataTable.RowSelected, "#member-table")
    def _member_selected(self) -> None:
        member = self.member
        if member is not None:
            self.post_message(OpenTrajectory(member.episode_id, member.start))

    @on(DataTable.RowSelected, "#contrast-table")
    def _contrast_selected(self) -> None:
        member, contrast = self.member, self.contrast
        if member is None:
            self.notify("no member to compare", severity="warning")
        elif contrast is not None:
            self.post_message(OpenCompare(member.episode_id, success_id=contrast))

    def action_compare(self) -> None:
        member, cluster = self.member, self.cluster
        if member is None or cluster is None:
            self.notify("no member selected", severity="warning")
            return
        contrast = member.contrast_id or next(iter(cluster.contrasts), None)
        if contrast is None:
            self.notify("no successful run to compare with", severity="warning")
            return
        self.post_message(OpenCompare(member.episode_id, success_id=contrast))

    def action_compile(self) -> None:
        cluster = self.cluster
        self.post_message(OpenCompile(cluster.id if cluster else None))

    # -- review -----------------------------------------------------------------------------

    def action_review(self, verdict: Verdict) -> None:
        member = self.member
        if member is None or member.id is None:
            self.notify("no member selected", severity="warning")
            return
        self._review(verdict, member.id, None)

    def action_edit(self) -> None:
        member = self.member
        if member is None or member.id is None:
            self.notify("no member selected", severity="warning")
            return
        self._open_range_modal(member)

    @work(thread=True, group="clusters-edit")
    def _open_range_modal(self, member: Analysis) -> None:
        with self.session.pool.store() as store:
            episode = store.episode(member.episode_id)
        deliver(self, self._push_range_modal, member, episode.n_steps if episode else None)

    def _push_range_modal(self, member: Analysis, n_steps: int | None) -> None:
        from tui.screens.range_modal import RangeModal

        def chosen(found: tuple[int, int] | None) -> None:
            if found is not None and member.id is not None:
                self._review("edit", member.id, found)

        title = f"Causal span of {shown(member.episode_id)}"
        self.app.push_screen(RangeModal(title, member.start, member.end, n_steps), chosen)

    @work(thread=True, group="clusters-review")
    def _review(self, verdict: Verdict, analysis_id: int, span: tuple[int, int] | None) -> None:
        with self.session.pool.store() as store:
            try:
                if verdict == "accept":
                    review.accept(store, analysis_id)
                elif verdict == "reject":
                    review.reject(store, analysis_id)
                else:
                    assert span is not None
                    review.edit(store, analysis_id, *span)
            except (KeyError, ValueError) as error:
                deliver(self, self._review_failed, str(error))
                return
            data = read_clusters(store)
        done = {"accept": "accepted", "reject": "rejected", "edit": "span corrected"}[verdict]
        deliver(self, self._reviewed, data, done)

    def _review_failed(self, message: str) -> None:
        self.notify(message, severity="error", markup=False)

    def _reviewed(self, data: ClusterData, message: str) -> None:
        self._loaded(data)
        self.notify(message, timeout=2)

    # -- scope ------------------------------------------------------------------------------

    def watch_scope(self, scope: AnalysisScope) -> None:
        self.query_one("#clusters-scope", Static).update(scope_line(scope))
        self.HELP = scope_help(scope)

    def action_pick_scope(self) -> None:
        if self.running:
            self.notify("an analysis is running; escape cancels it", severity="warning")
            return
        self._read_scopes()

    @work(thread=True, exclusive=True, group="clusters-scopes")
    def _read_scopes(self) -> None:
        with self.session.pool.store() as store:
            scopes = analysis_scopes(store)
        deliver(self, self._push_scope_modal, scopes)

    def _push_scope_modal(self, scopes: list[AnalysisScope]) -> None:
        from tui.screens.scope_modal import ScopeModal

        def chosen(scope: AnalysisScope | None) -> None:
            if scope is not None and scope != self.scope:
                self.scope = scope
                self._agree(scope)

        self.app.push_screen(ScopeModal(scopes, self.scope), chosen)

    # -- analysing --------------------------------------------------------------------------

    def action_analyze(self) -> None:
        if self.running:
            self.notify("an analysis is already running")
            return
        problem = self.session.reasoner_problem()
        if problem is not None:
            self.notify(problem, severity="error", markup=False)
            return
        self._start_analysis(learn=False)

    def action_learn(self) -> None:
        """Fit the step scorer on the scope's marked failures and analyse the others with it."""
        if self.running:
            self.notify("an analysis is already running")
            return
        self._start_analysis(learn=True)

    def _start_analysis(self, learn: bool) -> None:
        self._cancel = threading.Event()
        self.refresh_bindings()
        self._analyze(self._cancel, self.query_one(JobProgress).reporter(), self.scope, learn)

    @work(thread=True, exclusive=True, group="clusters-analyze")
    def _analyze(
        self,
        cancel: threading.Event,
        progress: Progress,
        scope: AnalysisScope = DEFAULT_SCOPE,
        learn: bool = False,
    ) -> None:
        """Analyse the scope's failures with the app's analyst, or (``learn``) with the step
        scorer fitted on the failures of the scope people marked."""
        report: AnalysisReport | str | None = None
        with self.session.pool.store() as store:
            try:
                if learn:
                    progress.start(None, "learning from marked spans")
                    analyst = learned_analyst(store, scope.where)
                else:
                    analyst = self.session.backends(store).analyst
                report = analyze(store, scope.where, analyst, progress=progress, cancel=cancel)
            except NotEnoughLabels as error:
                progress.finish()
                report = f"cannot learn yet: {error}; {LEARN_HINT}"
            except Cancelled:
                report = None
            except (ConfigError, ModelError) as error:
                report = str(error)
        deliver(self, self._analyzed, report, learn)

    def _analyzed(self, report: AnalysisReport | str | None, learn: bool = False) -> None:
        self._cancel = None
        self.refresh_bindings()
        key = "l" if learn else "r"
        if report is None:
            self.notify(f"analysis cancelled; {key} continues it", severity="warning")
        elif isinstance(report, str):
            self.notify(report, severity="warning" if learn else "error", markup=False)
        else:
            text = "learned from marked spans: " if learn else ""
            text += f"{report.analyzed} failures analysed, {report.clusters} clusters"
            text += f" ({self.scope.label})"
            if report.marked:
                text += f", {report.marked} at a person's span"
            if report.rejected:
                text += f", {len(report.rejected)} proposals refused"
            if report.failed:
                text += f", {len(report.failed)} not analysed (model error)"
            self.notify(text, timeout=3)
        self.reload()

    def action_cancel_analysis(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def on_unmount(self) -> None:
        self.action_cancel_analysis()  # the thread outlives the screen unless told to stop

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_analysis":
            return self.running
        return True


def _key(cluster: Cluster) -> tuple[str, str, str]:
    """What identifies a cluster across re-clustering (its id changes)."""
    return cluster.family, cluster.trigger, cluster.correction
