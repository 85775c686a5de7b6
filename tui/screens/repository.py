"""The Repository screen: every artifact version with its gate verdicts, and for the selected
version its gate checks, its paired replay ledger and its contract.

``a`` admits the selected staged version (:func:`workbench.admit.repository.admit`: the
contract gate, then the paired replay on the real environment) in a thread worker, with a
progress bar; ``escape`` cancels it.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from store import ArtifactVersion, Gate, LedgerEntry, Store
from tui.cells import mark, plural, status_text
from tui.data import Session
from tui.escapes import shown
from tui.navigation import OpenTrajectory
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.job_progress import JobProgress
from tui.widgets.key_footer import KeyFooter
from tui.widgets.record_table import Column, RecordTable
from workbench.admit.evidence import recorded_only
from workbench.admit.repository import Admission, admit
from workbench.compile.contracts import form_fields
from workbench.progress import Cancelled, Progress

HELP = Help(
    "Repository",
    "Every artifact version compiled or staged by hand. A staged version faces the contract gate (does it implement what its type claims?) and then the replay gate (each correction and preservation case is replayed on the real environment without and with it, same task and seed); only a version that passes both becomes active. Below: the selected version's gate checks, its replay ledger and its contract.",
    [
        ("↑ ↓", "move in the table"),
        ("tab  shift+tab", "versions → gate checks → contract → ledger"),
        ("enter", "on a version: its ledger; on a ledger case: the replay with the artifact"),
        ("b", "open the ledger case's replay without the artifact (the baseline)"),
        ("a", "admit the selected staged version: both gates (replays take minutes)"),
        (
            "A",
            "admit it on its contract gate alone, marked not replayed (for rules read off "
            "imported logs, which no simulator replays); press twice to confirm",
        ),
        ("escape  ctrl+x", "cancel a running admission"),
    ],
)

VERSION_COLUMNS = [
    Column("id"),
    Column("artifact"),
    Column("v"),
    Column("kind"),
    Column("status"),
    Column("contract"),
    Column("replay"),
    Column("cases"),
]
GATE_COLUMNS = [
    Column("gate"),
    Column("check"),
    Column("passed", ""),
    Column("detail", text=True),
]
LEDGER_COLUMNS = [
    Column("case"),
    Column("role"),
    Column("without"),
    Column("with"),
    Column("change"),
    Column("fired"),
]
CHANGE_STYLES = {"fixed": "bold green", "regressed": "bold red", "same": "", "pending": "dim"}

SHOWN_APART = ("kind", "name", "description", "form", "positive", "negative", "probes")
"""Contract keys the contract view shows in its own way (the rest are listed as they are)."""
NUMBERED = ("procedure", "steps", "loop")
"""Contract and form lists whose order matters."""


@dataclass(frozen=True)
class RepositoryData:
    """Every artifact version, and the selected one's ledger."""

    versions: list[ArtifactVersion] = field(default_factory=list)
    ledgers: dict[int, list[LedgerEntry]] = field(default_factory=dict)
    recorded: frozenset[int] = frozenset()
    """Staged versions whose evidence is only imported logs (no replay can judge them)."""


def read_repository(store: Store) -> RepositoryData:
    """Every version (by artifact, then version) with its replay ledger."""
    versions = store.versions()
    ledgers = {v.id: store.ledger(v.id) for v in versions if v.id is not None}
    recorded = frozenset(
        v.id
        for v in versions
        if v.id is not None and v.status == "staged" and recorded_only(store, v)
    )
    return RepositoryData(versions, ledgers, recorded)


def summary(data: RepositoryData) -> Text:
    """The line above the tables: how many versions in which status."""
    if not data.versions:
        return Text.assemble(
            ("The repository is empty. ", "bold"),
            "Compile specs first: K on the Runs screen, then r.",
        )
    statuses = Counter(v.status for v in data.versions)
    artifacts = len({v.artifact for v in data.versions})
    line = Text.assemble(
        (plural(len(data.versions), "version"), "bold"), f" of {plural(artifacts, 'artifact')} · "
    )
    for i, (status, n) in enumerate(sorted(statuses.items())):
        line.append(", " if i else "")
        line.append(f"{n} ", "bold")
        line.append_text(status_text(status))
    return line


def replay_text(gate: Gate | None) -> Text:
    """``pass +2/-0 reg 0 p=0.5``: the replay verdict and the numbers behind it."""
    if gate is None:
        return Text("–", style="dim")
    if gate.stats.get("not_replayed"):
        return Text("not replayed", "yellow")
    line = mark(gate.passed)
    stats = gate.stats
    if stats:
        line.append(f" +{stats['fixed']}/-{stats['broken']} reg {stats['regressed']}")
        line.append(f" p={stats['mcnemar_p']:.2g}", "dim")
    return line


def version_cells(version: ArtifactVersion, recorded: bool = False) -> list[Text]:
    """One version's row (``recorded``: its evidence is only imported logs, see
    :class:`RepositoryData`)."""
    corrections = sum(c.role == "correction" for c in version.cases)
    gate = version.contract_gate
    return [
        Text(str(version.id), justify="right"),
        Text(version.artifact),
        Text(str(version.version), justify="right"),
        Text(version.kind),
        status_text(version.status),
        mark(gate.passed) if gate else Text("–", style="dim"),
        Text("not replayed", "yellow") if recorded else replay_text(version.replay_gate),
        Text(f"{corrections}+{len(version.cases) - corrections}"),
    ]


def gate_rows(version: ArtifactVersion) -> list[list[Text]]:
    """Each gate's checks (name, passed, detail), or that it has not run."""
    rows = []
    for name, gate in (("contract", version.contract_gate), ("replay", version.replay_gate)):
        if gate is None:
            rows.append([Text(name), Text("not run", "dim"), Text(""), Text("")])
            continue
        for i, check in enumerate(gate.checks):
            label = Text("" if i else name, style="bold")
            rows.append([label, Text(check.name), mark(check.passed, "✓", "✗"), Text(check.detail)])
    return rows


def ledger_cells(entry: LedgerEntry) -> list[Text]:
    """One paired replay case's row."""
    return [
        Text(entry.case),
        Text(entry.role),
        mark(entry.baseline_success),
        mark(entry.candidate_success),
        Text(entry.change, style=CHANGE_STYLES.get(entry.change, "")),
        Text("yes", "bold") if entry.fired else Text("no", "dim"),
    ]


def contract_view(version: ArtifactVersion) -> Group:
    """The version's contract: its description, its type's slots, its checks' cases, and the
    executable form the agent runs."""
    contract = version.contract
    origin = f"{version.kind} · {version.origin}"
    origin += f" from spec {version.spec_id}" if version.spec_id is not None else ""
    origin += f" · revises version {version.parent}" if version.parent is not None else ""
    table = _table()
    for key, value in contract.items():
        if key not in SHOWN_APART:
            table.add_row(key, _value(value, numbered=key in NUMBERED))
    cases = [
        plural(len(contract["probes"]), "probe")
        if key == "probes"
        else f"{len(contract[key])} {key}"
        for key in ("positive", "negative", "probes")
        if key in contract
    ]
    if cases:
        table.add_row("gate cases", ", ".join(cases))
    form = _table()
    for key, value in form_fields(contract):
        form.add_row(key, _value(value, numbered=key in NUMBERED))
    return Group(
        Text(shown(f"{version.artifact} v{version.version}"), "bold"),
        Text(origin, "dim"),
        Text(shown(str(contract.get("description", ""))), "italic"),
        Text(""),
        table,
        Text(""),
        Text("executable form", "bold"),
        form,
    )


def _table() -> Table:
    """Two borderless columns: a bold name, and its value taking the rest."""
    table = Table(box=None, show_header=False, padding=(0, 1, 0, 0), expand=True)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(ratio=1)
    return table


def _value(value: Any, numbered: bool = False) -> Text:
    if isinstance(value, list) and numbered:
        return Text(shown("\n".join(f"{i}. {v}" for i, v in enumerate(value, start=1))) or "–")
    if isinstance(value, list):
        return Text(shown(", ".join(map(str, value))) or "–")
    if isinstance(value, dict):
        return Text(shown(json.dumps(value, ensure_ascii=False)), "dim")
    return Text(shown(str(value)) or "–")


class RepositoryScreen(Screen[None]):
    """Artifact versions, their gate checks, replay ledgers and contracts.

    Args:
        session: the app's session.
        version_id: preselect this version.
    """

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "admit", "Admit"),
        Binding("A", "admit_without_replay", "Admit without replay"),
        Binding("b", "baseline", "Baseline run"),
        Binding("escape,ctrl+x", "cancel_admission", "Cancel admission"),
    ]

    def __init__(self, session: Session, *, version_id: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.version_id = version_id
        self.data = RepositoryData()
        self.loaded = False
        """Whether the first read has been shown."""
        self._cancel: threading.Event | None = None
        self._confirming: int | None = None
        """The version ``A`` was pressed on once (a second press admits it without replay)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("reading the repository…", id="repo-info")
        yield JobProgress("escape cancels", id="admit-progress")
        yield RecordTable(VERSION_COLUMNS, id="version-table", zebra_stripes=True)
        yield RecordTable(GATE_COLUMNS, id="gate-table", wrap=True)
        with Horizontal(id="version-detail"):
            with VerticalScroll(id="contract-view"):
                yield Static(id="contract-text")
            yield RecordTable(LEDGER_COLUMNS, id="ledger-table")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"repository · {self.session.pool.name}"
        self.version_table.border_title = "versions"
        self.gate_table.border_title = "gate checks"
        self.ledger_table.border_title = "replay ledger"
        self.query_one("#contract-view").border_title = "contract"
        self.version_table.focus()
        self.reload()

    @property
    def version_table(self) -> RecordTable:
        return self.query_one("#version-table", RecordTable)

    @property
    def gate_table(self) -> RecordTable:
        return self.query_one("#gate-table", RecordTable)

    @property
    def ledger_table(self) -> RecordTable:
        return self.query_one("#ledger-table", RecordTable)

    @property
    def running(self) -> bool:
        """Whether an admission is running."""
        return self._cancel is not None

    @property
    def version(self) -> ArtifactVersion | None:
        """The version under the version table's cursor."""
        row, versions = self.version_table.cursor_row, self.data.versions
        return versions[row] if 0 <= row < len(versions) and self.version_table.row_count else None

    @property
    def ledger(self) -> list[LedgerEntry]:
        """The selected version's ledger."""
        version = self.version
        return self.data.ledgers.get(version.id or 0, []) if version else []

    @property
    def entry(self) -> LedgerEntry | None:
        """The ledger case under the ledger table's cursor."""
        row, ledger = self.ledger_table.cursor_row, self.ledger
        return ledger[row] if 0 <= row < len(ledger) else None

    # -- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read every version again, keeping the selection where it can."""
        self._load()

    @work(thread=True, exclusive=True, group="repository-load")
    def _load(self) -> None:
        with self.session.pool.store() as store:
            data = read_repository(store)
        deliver(self, self._loaded, data)

    def _loaded(self, data: RepositoryData) -> None:
        current = self.version
        wanted = current.id if current else self.version_id
        self.data = data
        self.query_one("#repo-info", Static).update(summary(data))
        table = self.version_table
        table.set_rows(
            [version_cells(v, v.id in data.recorded) for v in data.versions],
            [str(v.id) for v in data.versions],
        )
        table.border_title = f"versions · {len(data.versions)}"
        ids = [v.id for v in data.versions]
        if data.versions:
            table.move_cursor(row=ids.index(wanted) if wanted in ids else 0, animate=False)
        self._show_version()
        self.loaded = True

    @on(DataTable.RowHighlighted, "#version-table")
    def _version_highlighted(self) -> None:
        self._show_version()

    def _show_version(self) -> None:
        """Fill the gate, contract and ledger views from the selected version."""
        version = self.version
        self.gate_table.set_rows(gate_rows(version) if version else [])
        view = self.query_one("#contract-text", Static)
        view.update(contract_view(version) if version else "")
        self.query_one("#contract-view").scroll_home(animate=False, immediate=True)
        ledger = self.ledger_table
        ledger.set_rows(map(ledger_cells, self.ledger), [entry.case for entry in self.ledger])
        if version is not None and version.replay_gate is not None:
            ledger.border_title = f"replay ledger · {len(self.ledger)}"
            ledger.border_subtitle = _rates(version.replay_gate)
        else:
            ledger.border_title = "replay ledger · not replayed"
            ledger.border_subtitle = f"{len(version.cases)} cases to replay" if version else ""

    # -- opening ----------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#version-table")
    def _version_selected(self) -> None:
        if self.ledger_table.row_count:
            self.ledger_table.focus()

    @on(DataTable.RowSelected, "#ledger-table")
    def _entry_selected(self) -> None:
        entry = self.entry
        if entry is not None:
            self._open_replay(entry.candidate_episode, "with the artifact")

    def action_baseline(self) -> None:
        entry = self.entry
        if entry is None:
            self.notify("no ledger case selected", severity="warning")
        else:
            self._open_replay(entry.baseline_episode, "without the artifact")

    def _open_replay(self, episode_id: str | None, side: str) -> None:
        if episode_id is None:
            self.notify(f"this case has not been replayed {side} yet", severity="warning")
        else:
            self.post_message(OpenTrajectory(episode_id))

    # -- admitting --------------------------------------------------------------------------

    def action_admit(self) -> None:
        version = self.version
        if version is None or version.id is None:
            self.notify("no version selected", severity="warning")
            return
        if self.running:
            self.notify("an admission is already running")
            return
        self._confirming = None
        self._cancel = threading.Event()
        self.refresh_bindings()
        self._admit(version.id, self._cancel, self.query_one(JobProgress).reporter())

    def action_admit_without_replay(self) -> None:
        version = self.version
        if version is None or version.id is None:
            self.notify("no version selected", severity="warning")
            return
        if self.running:
            self.notify("an admission is already running")
            return
        if self._confirming != version.id:
            self._confirming = version.id
            self.notify(
                f"press A again to admit {version.artifact} v{version.version} on its contract "
                "gate alone, marked not replayed",
                severity="warning",
                markup=False,
            )
            return
        self._confirming = None
        self._cancel = threading.Event()
        self.refresh_bindings()
        self._admit(
            version.id, self._cancel, self.query_one(JobProgress).reporter(), without_replay=True
        )

    @work(thread=True, exclusive=True, group="repository-admit")
    def _admit(
        self,
        version_id: int,
        cancel: threading.Event,
        progress: Progress,
        without_replay: bool = False,
    ) -> None:
        with self.session.pool.store() as store, self.session.make_executor() as executor:
            try:
                result: Admission | str | None = admit(
                    store,
                    version_id,
                    executor=executor,
                    progress=progress,
                    cancel=cancel,
                    without_replay=without_replay,
                )
            except Cancelled:
                result = None
            except ValueError as error:
                result = str(error)
        deliver(self, self._admitted, result)

    def _admitted(self, result: Admission | str | None) -> None:
        self._cancel = None
        self.refresh_bindings()
        if result is None:
            self.notify(
                "admission cancelled; replayed episodes are kept, a resumes", severity="warning"
            )
        elif isinstance(result, str):
            self.notify(result, severity="error", markup=False)
        elif result.status == "staged" and result.contract.passed:
            version = result.version
            self.notify(
                f"{version.artifact} v{version.version} is not replayed: its evidence is "
                "imported logs, which no simulator can replay; admit it explicitly with A "
                f"(or `workbench repo admit {version.id} --without-replay`)",
                severity="warning",
                markup=False,
            )
        else:
            version = result.version
            self.notify(
                f"{version.artifact} v{version.version} → {result.status}",
                severity="information" if result.status == "active" else "warning",
                timeout=4,
            )
        self.reload()

    def action_cancel_admission(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def on_unmount(self) -> None:
        self.action_cancel_admission()  # the thread outlives the screen unless told to stop

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_admission":
            return self.running
        return True


def _rates(gate: Gate) -> str:
    """``corrections 0/2 → 2/2 · preservation 1/1 → 1/1``: successes without → with."""
    parts = []
    for role in ("correction", "preservation"):
        before, after = gate.stats.get(f"{role}_baseline"), gate.stats.get(f"{role}_candidate")
        if before and after:
            parts.append(
                f"{role} {before['successes']}/{before['cases']} → "
                f"{after['successes']}/{after['cases']}"
            )
    return " · ".join(parts)
