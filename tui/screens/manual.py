"""The Manual screen: the formulated manual, its versions and their diffs, and the rule system
behind it — each rule with its history and validation log.

The manual is shown a part at a time (:class:`~tui.widgets.manual_view.ManualView`): its
first part at once, the next ones as the view scrolls near them. ``f`` formulates the next
manual version (:func:`workbench.manual.formulate.formulate`) and
``b`` builds rules by running episodes
(:func:`workbench.manual.build.build`), both with the app's backend, in thread workers with a progress bar; ``escape``
cancels a build.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from store import Manual, ManualRule, RuleEvent, Store
from tui.cells import plural
from tui.data import Session
from tui.escapes import shown
from tui.navigation import OpenTrajectory
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.job_progress import JobProgress
from tui.widgets.key_footer import KeyFooter
from tui.widgets.manual_view import ManualView
from tui.widgets.record_table import Column, RecordTable
from workbench.demo import demo_families
from workbench.llm.client import ConfigError, ModelError
from workbench.manual.build import BuildReport, build
from workbench.manual.formulate import ManualError, diff, formulate, parse_log_entry
from workbench.progress import Cancelled, Progress
from workbench.runner import RunConfig

BUILD_EPISODES = 10
"""Episodes one ``b`` plays (a build resumes where the last one stopped)."""

HELP = Help(
    "Manual",
    "The manual formulated from the rule system and the active artifacts, one version per formulation. Beside it, the rules the Builder wrote: each with the history of its changes (who, from which episode) and its validation log — the episodes, step spans and rules that trace it.",
    [
        ("[  ]", "previous / next manual version"),
        ("d", "diff against the previous version (d again: the manual)"),
        ("↑ ↓", "move in the table"),
        ("tab  shift+tab", "manual → rules → history → validation log"),
        ("enter", "on a rule: its validation log; on a log entry: the cited episode at its step"),
        ("f", "formulate the next manual version from the rules"),
        (
            "b",
            f"build rules: {BUILD_EPISODES} episodes over {', '.join(demo_families())} (minutes)",
        ),
        ("escape  ctrl+x", "cancel a running build"),
    ],
)

RULE_COLUMNS = [Column("id"), Column("type"), Column("content", text=True), Column("log")]
HISTORY_COLUMNS = [Column("op"), Column("actor"), Column("episode"), Column("at")]
LOG_COLUMNS = [Column("entry"), Column("cites")]
"""A log entry is a citation (``episode@start-end``) or a rule id: an identifier."""
OP_STYLES = {"write": "green", "update": "cyan", "delete": "red"}

NO_MANUAL = (
    "# No manual yet\n\nPress **f** to formulate one from the rules, or **b** to build rules "
    "by running episodes first."
)


@dataclass(frozen=True)
class ManualData:
    """Every manual version, the live rules, and each rule's history."""

    manuals: list[Manual] = field(default_factory=list)
    rules: list[ManualRule] = field(default_factory=list)
    events: dict[str, list[RuleEvent]] = field(default_factory=dict)

    def manual(self, version: int | None) -> Manual | None:
        """The manual of ``version`` (the latest when ``None``)."""
        if version is None:
            return self.manuals[-1] if self.manuals else None
        return next((m for m in self.manuals if m.version == version), None)


def read_manual(store: Store) -> ManualData:
    """Every manual version (oldest first), the rules in order of writing, their events."""
    rules = store.manual_rules()
    return ManualData(store.manuals(), rules, {r.id: store.rule_events(r.id) for r in rules})


def summary(data: ManualData, version: int | None) -> Text:
    """The line above the panes: the version shown, and how many rules of which type."""
    if not data.manuals and not data.rules:
        return Text.assemble(
            ("No rules and no manual yet. ", "bold"),
            "b builds rules by running episodes, then f formulates the manual.",
        )
    line = Text()
    manual = data.manual(version)
    if manual is None:
        line.append("No manual yet", "bold")
        line.append(" (f formulates one)")
    else:
        line.append(f"manual v{manual.version}", "bold")
        line.append(f" of {data.manuals[-1].version}")
        line.append(f" · {plural(len(manual.rules), 'rule')}, ")
        line.append(f"{plural(len(manual.artifacts), 'artifact')} · {shown(manual.reasoner)} · ")
        line.append(f"{manual.created_at:%Y-%m-%d %H:%M}", "dim")
    line.append(" · ")
    line.append(plural(len(data.rules), "rule") if data.rules else "no rules yet", "bold")
    if not data.rules:
        line.append(" (b builds them)")
    return line


def rule_cells(rule: ManualRule) -> list[Text]:
    """One rule's row."""
    return [
        Text(rule.id),
        Text(rule.type),
        Text(rule.content),
        Text(str(len(rule.validation_logs)), justify="right"),
    ]


def event_cells(event: RuleEvent) -> list[Text]:
    """One change's row."""
    return [
        Text(event.op, style=OP_STYLES.get(event.op, "")),
        Text(event.actor),
        Text(event.episode_id or "–", style="" if event.episode_id else "dim"),
        Text(f"{event.at:%Y-%m-%d %H:%M}", style="dim"),
    ]


Target = tuple[str, int | None] | str
"""What enter opens from a log entry: (episode, step), or a rule id."""


def log_target(entry: str) -> Target:
    """The episode and first step a validation-log entry cites, or the rule it names."""
    parsed = parse_log_entry(entry)
    return parsed if isinstance(parsed, str) else (parsed.episode_id, parsed.start)


def log_cells(entry: str) -> list[Text]:
    """One validation-log entry's row: the entry and what it cites."""
    parsed = parse_log_entry(entry)
    if isinstance(parsed, str):
        cites = Text("rule", style="magenta")
    elif parsed.start is None:
        cites = Text("episode")
    elif parsed.start == parsed.end:
        cites = Text(f"step {parsed.start}", style="cyan")
    else:
        cites = Text(f"steps {parsed.start}-{parsed.end}", style="cyan")
    return [Text(entry), cites]


def diff_text(text: str) -> Text:
    """A unified diff, added lines green, removed red, hunk headers cyan."""
    out = Text()
    for line in text.splitlines():
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        out.append(shown(line) + "\n", style)
    return out


class ManualScreen(Screen[None]):
    """The manual (a version at a time, or its diff) beside the rules, their history and
    validation logs.

    Args:
        session: the app's session.
    """

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left_square_bracket", "version(-1)", "Prev version"),
        Binding("right_square_bracket", "version(1)", "Next version"),
        Binding("d", "diff", "Diff"),
        Binding("f", "formulate", "Formulate"),
        Binding("b", "build", "Build"),
        Binding("escape,ctrl+x", "cancel_build", "Cancel build"),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.data = ManualData()
        self.version: int | None = None
        """The manual version shown (``None``: the latest)."""
        self.diffing = False
        """Whether the diff is shown instead of the manual."""
        self.loaded = False
        """Whether the first read has been shown."""
        self.job: str | None = None
        """``formulate`` or ``build`` while one runs."""
        self._cancel: threading.Event | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("reading the manual…", id="manual-info")
        yield JobProgress("escape cancels", id="manual-progress")
        with Horizontal(id="manual-panes"):
            yield ManualView(id="manual-view")
            with VerticalScroll(id="diff-view"):
                yield Static(id="diff-text")
            with Vertical(id="rule-pane"):
                yield RecordTable(RULE_COLUMNS, id="rule-table", zebra_stripes=True)
                yield RecordTable(HISTORY_COLUMNS, id="history-table")
                yield RecordTable(LOG_COLUMNS, id="log-table")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"manual · {self.session.pool.name}"
        self.rule_table.border_title = "rules"
        self.history_table.border_title = "history"
        self.log_table.border_title = "validation log"
        self.query_one("#manual-view").border_title = "manual"
        self.query_one("#diff-view").border_title = "diff"
        self.rule_table.focus()
        self.reload()

    @property
    def rule_table(self) -> RecordTable:
        return self.query_one("#rule-table", RecordTable)

    @property
    def history_table(self) -> RecordTable:
        return self.query_one("#history-table", RecordTable)

    @property
    def log_table(self) -> RecordTable:
        return self.query_one("#log-table", RecordTable)

    @property
    def running(self) -> bool:
        """Whether a formulation or build is running."""
        return self.job is not None

    @property
    def manual(self) -> Manual | None:
        """The manual version shown."""
        return self.data.manual(self.version)

    @property
    def rule(self) -> ManualRule | None:
        """The rule under the rule table's cursor."""
        row, rules = self.rule_table.cursor_row, self.data.rules
        return rules[row] if 0 <= row < len(rules) and self.rule_table.row_count else None

    # -- loading ----------------------------------------------------------------------------

    def reload(self, latest: bool = False) -> None:
        """Read manuals and rules again, keeping the rule selected (and, unless ``latest``,
        the version shown)."""
        if latest:
            self.version = None
        self._load()

    @work(thread=True, exclusive=True, group="manual-load")
    def _load(self) -> None:
        with self.session.pool.store() as store:
            data = read_manual(store)
        deliver(self, self._loaded, data)

    async def _loaded(self, data: ManualData) -> None:
        current = self.rule
        self.data = data
        table = self.rule_table
        table.set_rows(map(rule_cells, data.rules), [rule.id for rule in data.rules])
        table.border_title = f"rules · {len(data.rules)}" if data.rules else "rules · none yet"
        ids = [r.id for r in data.rules]
        if data.rules:
            wanted = current.id if current else None
            table.move_cursor(row=ids.index(wanted) if wanted in ids else 0, animate=False)
        self._show_rule()
        await self._show_manual()
        self.loaded = True

    async def _show_manual(self) -> None:
        """Show the selected version (or its diff) and the summary line."""
        if self.version is not None and self.manual is None:
            self.version = None
        manual = self.manual
        self.query_one("#manual-info", Static).update(summary(self.data, self.version))
        viewer = self.query_one("#manual-view", ManualView)
        viewer.border_title = f"manual v{manual.version}" if manual else "manual"
        await viewer.show(shown(manual.markdown) if manual else NO_MANUAL)
        if self.diffing:
            self._diff(manual.version if manual else 0)
        self._show_diff(self.diffing)

    def _show_diff(self, shown: bool) -> None:
        self.diffing = shown
        self.query_one("#manual-view").display = not shown
        self.query_one("#diff-view").display = shown

    @on(DataTable.RowHighlighted, "#rule-table")
    def _rule_highlighted(self) -> None:
        self._show_rule()

    def _show_rule(self) -> None:
        """Fill the history and validation-log tables from the selected rule."""
        rule = self.rule
        history = self.history_table
        events = self.data.events.get(rule.id, []) if rule else []
        history.set_rows(map(event_cells, events))
        history.border_title = f"history of {rule.id} · {len(events)}" if rule else "history"
        log = self.log_table
        log.set_rows(map(log_cells, rule.validation_logs if rule else []))
        log.border_title = f"validation log · {len(rule.validation_logs)}" if rule else "log"
        log.border_subtitle = "" if log.row_count or not rule else "empty"

    # -- versions and diffs -----------------------------------------------------------------

    async def action_version(self, step: int) -> None:
        versions = [m.version for m in self.data.manuals]
        manual = self.manual
        if manual is None:
            self.notify("no manual yet: f formulates one", severity="warning")
            return
        index = versions.index(manual.version) + step
        if not 0 <= index < len(versions):
            self.notify(f"v{manual.version} is the {'first' if step < 0 else 'latest'} version")
            return
        self.version = versions[index]
        await self._show_manual()

    def action_diff(self) -> None:
        if self.diffing:
            self._show_diff(False)
            return
        manual = self.manual
        if manual is None or manual.version == 1:
            self.notify("no earlier version to compare with", severity="warning")
            return
        self._diff(manual.version)
        self._show_diff(True)

    def _diff(self, version: int) -> None:
        self.query_one("#diff-view").border_title = f"diff v{version - 1} → v{version}"
        self.query_one("#diff-text", Static).update("reading the diff…")
        self._read_diff(version)

    @work(thread=True, exclusive=True, group="manual-diff")
    def _read_diff(self, version: int) -> None:
        with self.session.pool.store() as store:
            try:
                text = diff(store, version - 1, version) or "the versions are identical"
            except ManualError as error:
                text = str(error)
        deliver(self, self._diff_read, version, text)

    def _diff_read(self, version: int, text: str) -> None:
        manual = self.manual
        if manual is None or manual.version != version:
            return  # another version was chosen meanwhile
        self.query_one("#diff-text", Static).update(diff_text(text))

    # -- opening ----------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#rule-table")
    def _rule_selected(self) -> None:
        if self.log_table.row_count:
            self.log_table.focus()

    @on(DataTable.RowSelected, "#log-table")
    def _entry_selected(self, event: DataTable.RowSelected) -> None:
        rule = self.rule
        if rule is None or not 0 <= event.cursor_row < len(rule.validation_logs):
            return
        target = log_target(rule.validation_logs[event.cursor_row])
        if isinstance(target, str):
            self._select_rule(target)
        else:
            self._open_episode(*target)

    def _select_rule(self, rule_id: str) -> None:
        ids = [r.id for r in self.data.rules]
        if rule_id not in ids:
            self.notify(f"{rule_id} was deleted", severity="warning", markup=False)
            return
        self.rule_table.move_cursor(row=ids.index(rule_id))
        self.rule_table.focus()

    @work(thread=True, group="manual-open")
    def _open_episode(self, episode_id: str, step: int | None) -> None:
        with self.session.pool.store() as store:
            found = store.episode(episode_id) is not None
        deliver(self, self._episode_checked, episode_id, step, found)

    def _episode_checked(self, episode_id: str, step: int | None, found: bool) -> None:
        if found:
            self.post_message(OpenTrajectory(episode_id, step))
        else:
            self.notify(
                f"episode {episode_id} is not in this database", severity="warning", markup=False
            )

    # -- formulating and building -----------------------------------------------------------

    def _start(self, job: str) -> bool:
        if self.running:
            self.notify(f"a {self.job} is already running")
            return False
        problem = self.session.reasoner_problem()
        if problem is not None:
            self.notify(problem, severity="error", markup=False)
            return False
        self.job = job
        self.refresh_bindings()
        return True

    def action_formulate(self) -> None:
        if self._start("formulation"):
            self._formulate(self.query_one(JobProgress).reporter())

    @work(thread=True, exclusive=True, group="manual-formulate")
    def _formulate(self, progress: Progress) -> None:
        progress.start(None, "formulating the manual")
        with self.session.pool.store() as store:
            try:
                latest = store.manuals()
                before = latest[-1].version if latest else 0
                manual = formulate(store, self.session.backends(store).formulator)
                result: tuple[Manual, bool] | str = (manual, manual.version > before)
            except (ManualError, ConfigError, ModelError) as error:
                result = str(error)
            finally:
                progress.finish()
        deliver(self, self._formulated, result)

    def _formulated(self, result: tuple[Manual, bool] | str) -> None:
        self._finish()
        if isinstance(result, str):
            self.notify(result, severity="error", markup=False)
            return
        manual, new = result
        if new:
            self.notify(f"manual v{manual.version} formulated", timeout=3)
        else:
            self.notify(f"nothing changed: v{manual.version} is current", timeout=3)
        self.reload(latest=True)

    def action_build(self) -> None:
        if self._start("build"):
            self._cancel = threading.Event()
            self._build(self._cancel, self.query_one(JobProgress).reporter())

    @work(thread=True, exclusive=True, group="manual-build")
    def _build(self, cancel: threading.Event, progress: Progress) -> None:
        config = RunConfig(families=demo_families(), episodes=BUILD_EPISODES, seed=0)
        with self.session.pool.store() as store, self.session.make_executor(1) as executor:
            try:
                report: BuildReport | str | None = build(
                    store,
                    self.session.backends(store).builder,
                    config,
                    executor=executor,
                    progress=progress,
                    cancel=cancel,
                )
            except Cancelled:
                report = None
            except (ValueError, RuntimeError, OSError) as error:  # e.g. no simulator runtime
                report = str(error) or type(error).__name__
        deliver(self, self._built, report)

    def _built(self, report: BuildReport | str | None) -> None:
        self._finish()
        if report is None:
            self.notify("build cancelled; played episodes and their rules are kept, b resumes")
        elif isinstance(report, str):
            self.notify(report, severity="error", markup=False)
        else:
            self.notify(
                f"{plural(report.episodes, 'episode')} played, "
                f"{plural(report.written, 'rule change')}; f formulates the manual",
                timeout=4,
            )
        self.reload()

    def _finish(self) -> None:
        self.job = None
        self._cancel = None
        self.refresh_bindings()

    def action_cancel_build(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def on_unmount(self) -> None:
        self.action_cancel_build()  # the thread outlives the screen unless told to stop

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_build":
            return self._cancel is not None
        return True
