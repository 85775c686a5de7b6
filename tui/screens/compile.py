"""The Compile screen: the intervention specs of the latest analysis run, each field with the
trajectory spans it cites, and every attempted schema's obligations with their witnesses.

``r`` compiles the run's supported clusters (:func:`workbench.compile.compiler.compile_run`,
with the app's backend) in a thread worker, with a progress bar; ``escape`` cancels it.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from store import ArtifactVersion, Citation, CompileAttempt, InterventionSpec
from tui.cells import plural, status_text
from tui.data import Session
from tui.escapes import shown
from tui.navigation import OpenRepository, OpenTrajectory
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.job_progress import JobProgress
from tui.widgets.key_footer import KeyFooter
from tui.widgets.record_table import Column, RecordTable, Whole
from workbench.compile.compiler import CompileReport, compile_run
from workbench.compile.specs import claims_of
from workbench.compile.witness import SpecData, read_specs
from workbench.llm.client import ModelError
from workbench.progress import Cancelled, Progress

HELP = Help(
    "Compile",
    "Intervention specs of the latest analysis run. A supported spec is compiled first-closure: Rule, then Skill, then Subagent, until one schema closes all four obligations (observation, state, decision, completion); that schema's contract is staged as an artifact version. Below: the selected spec's fields, each with the trajectory steps it cites, and every attempted schema's obligations — closed by a contract slot, or open with the witness of why the schema cannot close it.",
    [
        ("↑ ↓", "move in the table"),
        ("tab  shift+tab", "specs → fields → obligations"),
        ("enter", "on a spec: its fields; on a citation: open the trajectory at the cited step"),
        ("enter on a field", "open its first citation (an obligation: the evidence it cites)"),
        ("R", "the artifact repository, at the version staged from the spec"),
        ("r", "compile the run's supported clusters (heuristic, or the model in the title)"),
        ("escape  ctrl+x", "cancel a running compilation"),
    ],
)

SPEC_COLUMNS = [
    Column("spec"),
    Column("status"),
    Column("mechanism"),
    Column("families"),
    Column("attempts"),
    Column("staged / reason", text=True),
]
"""The staged version is an identifier in a free-text column: shown whole, the reasons cut."""
FIELD_COLUMNS = [Column("field"), Column("text", text=True), Column("value", text=True)]
WITNESS_COLUMNS = [
    Column("schema"),
    Column("obligation"),
    Column("status"),
    Column("slot"),
    Column("witness / citations", text=True),
]


def summary(data: SpecData, cluster_id: int | None = None) -> Text:
    """The line above the tables: which run, how many specs in which state."""
    if data.run is None:
        return Text.assemble(
            ("No analysis run yet. ", "bold"),
            "Analyse the failures first: C on the Runs screen, then r.",
        )
    line = Text.assemble(
        (f"analysis run {data.run.id}", "bold"), shown(f" · {data.run.reasoner} · ")
    )
    if not data.specs:
        line.append_text(
            Text.assemble(
                "no spec yet. Press ",
                ("r", "bold #ffa62b"),
                " to compile its supported clusters.",
            )
        )
        return line
    statuses = Counter(s.status for s in data.specs)
    line.append(plural(len(data.specs), "spec"), "bold")
    line.append(" (" + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) + ")")
    line.append(f" · {plural(len(data.staged), 'version')} staged from them")
    if cluster_id is not None and data.spec_covering(cluster_id) is None:
        line.append(f" · cluster {cluster_id} has no spec yet", "yellow")
    return line


def listed(specs: list[InterventionSpec]) -> list[InterventionSpec]:
    """The specs in the table's order: the supported ones first, then the deferred ones (each
    group as read, newest first), so the cursor starts on a spec with obligations to show."""
    return sorted(specs, key=lambda spec: spec.status == "deferred")


def attempts_line(attempts: list[CompileAttempt]) -> Text:
    """``rule ✗ → skill ✓``: the schemas attempted, in runtime order."""
    line = Text()
    for attempt in attempts:
        if line:
            line.append(" → ", "dim")
        line.append(attempt.kind + " ")
        line.append("✓" if attempt.closed else "✗", "bold green" if attempt.closed else "red")
    return line or Text("–", style="dim")


def spec_cells(
    spec: InterventionSpec, attempts: list[CompileAttempt], version: ArtifactVersion | None
) -> list[Text]:
    """One spec's row."""
    if version is not None:
        outcome: Text = Whole(f"{version.artifact} v{version.version} ")
        outcome.append_text(status_text(version.status))
    elif spec.reason:
        style = "yellow" if spec.status == "deferred" else ""
        outcome = Text(spec.reason, style=style)
    else:
        outcome = Text("no schema closed" if attempts else "–", style="dim")
    return [
        Text(str(spec.id), justify="right"),
        status_text(spec.status),
        Text(spec.mechanism or "–"),
        Text(", ".join(spec.families) or "–"),
        attempts_line(attempts),
        outcome,
    ]


def cited(citations: list[Citation]) -> str:
    """``door-1@1-2, boil-ok@4``."""
    return ", ".join(c.label() for c in citations)


Row = tuple[list[Text], Citation | None]
"""A table row's cells and the citation enter opens from it."""


def field_rows(spec: InterventionSpec) -> list[Row]:
    """Why the spec is deferred (when it is), then each of its fields (name, text, value)
    followed by one row per citation the field makes."""
    rows: list[Row] = []
    if spec.status == "deferred":
        reason = Text(spec.reason or "no reason given", style="yellow")
        rows.append(([Text("deferred", style="bold yellow"), reason, Text("")], None))
    for name, claim in claims_of(spec):
        first = claim.citations[0] if claim.citations else None
        text = Text(claim.text)
        if not claim.citations:
            text.append(" · no evidence", "bold red")
        rows.append(([Text(name, style="bold"), text, Text(claim.value, style="cyan")], first))
        for citation in claim.citations:
            label = Whole.assemble(("  ↳ ", "dim"), ("cites ", "dim"), (citation.label(), "bold"))
            rows.append(([Text(""), label, Text("")], citation))
    return rows


def witness_rows(attempts: list[CompileAttempt]) -> list[Row]:
    """Every attempt's obligations (closed by a slot, or open with a witness), then the slots
    it left empty and the witnesses of earlier attempts it had to close."""
    rows: list[Row] = []
    for attempt in attempts:
        schema = Text(f"{attempt.position} {attempt.kind} ", style="bold")
        schema.append("✓" if attempt.closed else "✗", "green" if attempt.closed else "red")
        for i, check in enumerate(attempt.checks):
            status = Text("closed", "green") if check.closed else Text("open", "bold red")
            why = Text(check.witness) if check.witness else Text(cited(check.citations), "dim")
            cells = [schema if i == 0 else Text(""), Text(check.obligation), status]
            cells += [Text(check.slot or "–"), why]
            rows.append((cells, check.citations[0] if check.citations else None))
        if attempt.missing:
            missing = Text(", ".join(attempt.missing), style="yellow")
            rows.append(([Text(""), Text("missing", "yellow"), Text(""), Text(""), missing], None))
        for witness in attempt.carried:
            carried = Text(witness, style="italic")
            rows.append(([Text(""), Text("had to close"), Text(""), Text(""), carried], None))
    return rows


class CompileScreen(Screen[None]):
    """Specs of the latest analysis run, their cited fields and their closure reports.

    Args:
        session: the app's session.
        cluster_id: preselect the spec covering this cluster.
        spec_id: preselect this spec.
    """

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "compile", "Compile"),
        Binding("R", "repository", "Repository"),
        Binding("escape,ctrl+x", "cancel_compile", "Cancel compile"),
    ]

    def __init__(
        self, session: Session, *, cluster_id: int | None = None, spec_id: int | None = None
    ) -> None:
        super().__init__()
        self.session = session
        self.cluster_id = cluster_id
        self.spec_id = spec_id
        self.data = SpecData()
        self.specs: list[InterventionSpec] = []
        """The specs in the table's order (:func:`listed`)."""
        self.loaded = False
        """Whether the first read has been shown."""
        self.field_citations: list[Citation | None] = []
        """The citation enter opens from each row of the field table."""
        self.witness_citations: list[Citation | None] = []
        """The citation enter opens from each row of the witness table."""
        self._cancel: threading.Event | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("reading specs…", id="compile-info")
        yield JobProgress("escape cancels", id="compile-progress")
        yield RecordTable(SPEC_COLUMNS, id="spec-table", zebra_stripes=True)
        yield RecordTable(FIELD_COLUMNS, id="field-table", wrap=True)
        yield RecordTable(WITNESS_COLUMNS, id="witness-table", wrap=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"compile · {self.session.pool.name}"
        self.spec_table.border_title = "specs"
        self.field_table.border_title = "fields"
        self.witness_table.border_title = "obligations"
        self.spec_table.focus()
        self.reload()

    @property
    def spec_table(self) -> RecordTable:
        return self.query_one("#spec-table", RecordTable)

    @property
    def field_table(self) -> RecordTable:
        return self.query_one("#field-table", RecordTable)

    @property
    def witness_table(self) -> RecordTable:
        return self.query_one("#witness-table", RecordTable)

    @property
    def running(self) -> bool:
        """Whether a compilation is running."""
        return self._cancel is not None

    @property
    def spec(self) -> InterventionSpec | None:
        """The spec under the spec table's cursor."""
        row, specs = self.spec_table.cursor_row, self.specs
        return specs[row] if 0 <= row < len(specs) and self.spec_table.row_count else None

    # -- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the latest run's specs again, keeping the selection where it can."""
        self._load()

    @work(thread=True, exclusive=True, group="compile-load")
    def _load(self) -> None:
        with self.session.pool.store() as store:
            data = read_specs(store)
        deliver(self, self._loaded, data)

    def _loaded(self, data: SpecData) -> None:
        current = self.spec
        self.data = data
        self.specs = listed(data.specs)
        self.query_one("#compile-info", Static).update(summary(data, self.cluster_id))
        table = self.spec_table
        table.set_rows(
            (
                spec_cells(s, data.attempts.get(s.id or 0, []), data.staged.get(s.id or 0))
                for s in self.specs
            ),
            [str(s.id) for s in self.specs],
        )
        table.border_title = f"specs · {len(data.specs)}"
        wanted = self._wanted(current)
        ids = [s.id for s in self.specs]
        if self.specs:
            table.move_cursor(row=ids.index(wanted) if wanted in ids else 0, animate=False)
        self._show_spec()
        self.loaded = True

    def _wanted(self, current: InterventionSpec | None) -> int | None:
        """The spec to select: the one selected, else the one asked for, else the cluster's."""
        if current is not None:
            return current.id
        if self.spec_id is not None:
            return self.spec_id
        covering = self.data.spec_covering(self.cluster_id) if self.cluster_id else None
        return covering.id if covering else None

    @on(DataTable.RowHighlighted, "#spec-table")
    def _spec_highlighted(self) -> None:
        self._show_spec()

    def _show_spec(self) -> None:
        """Fill the field and witness tables from the selected spec."""
        spec = self.spec
        attempts = self.data.attempts.get(spec.id, []) if spec and spec.id else []
        self.field_citations = _fill(self.field_table, field_rows(spec) if spec else [])
        self.witness_citations = _fill(self.witness_table, witness_rows(attempts))
        self.field_table.border_title = f"fields of spec {spec.id}" if spec else "fields"
        self.witness_table.border_title = "obligations"
        if attempts:
            self.witness_table.border_title += " · " + attempts_line(attempts).plain
        self.witness_table.border_subtitle = (
            "deferred specs are not compiled" if spec and spec.status == "deferred" else ""
        )

    # -- opening ----------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#spec-table")
    def _spec_selected(self) -> None:
        if self.field_table.row_count:
            self.field_table.focus()

    @on(DataTable.RowSelected, "#field-table")
    def _field_selected(self, event: DataTable.RowSelected) -> None:
        self._open_citation(self.field_citations, event.cursor_row)

    @on(DataTable.RowSelected, "#witness-table")
    def _witness_selected(self, event: DataTable.RowSelected) -> None:
        self._open_citation(self.witness_citations, event.cursor_row)

    def _open_citation(self, targets: list[Citation | None], row: int) -> None:
        citation = targets[row] if 0 <= row < len(targets) else None
        if citation is None:
            self.notify("no evidence cited here", severity="warning")
        else:
            self.post_message(OpenTrajectory(citation.episode_id, citation.start))

    def action_repository(self) -> None:
        spec = self.spec
        version = self.data.staged.get(spec.id) if spec and spec.id else None
        self.post_message(OpenRepository(version.id if version else None))

    # -- compiling --------------------------------------------------------------------------

    def action_compile(self) -> None:
        if self.running:
            self.notify("a compilation is already running")
            return
        problem = self.session.reasoner_problem()
        if problem is not None:
            self.notify(problem, severity="error", markup=False)
            return
        self._cancel = threading.Event()
        self.refresh_bindings()
        self._compile(self._cancel, self.query_one(JobProgress).reporter())

    @work(thread=True, exclusive=True, group="compile-run")
    def _compile(self, cancel: threading.Event, progress: Progress) -> None:
        with self.session.pool.store() as store:
            try:
                report: CompileReport | str | None = compile_run(
                    store, self.session.backends(store).compiler, progress=progress, cancel=cancel
                )
            except Cancelled:
                report = None
            except (ValueError, ModelError) as error:  # a configuration error is a ValueError
                report = str(error)
        deliver(self, self._compiled, report)

    def _compiled(self, report: CompileReport | str | None) -> None:
        self._cancel = None
        self.refresh_bindings()
        if report is None:
            self.notify("compilation cancelled; compiled specs are kept", severity="warning")
        elif isinstance(report, str):
            self.notify(report, severity="error", markup=False)
        else:
            reused = sum(c.reused for c in report.compiled)
            text = f"{len(report.compiled)} specs, {len(report.staged)} versions staged"
            if reused:
                text += f" ({reused} unchanged)"
            self.notify(text, timeout=3)
        self.reload()

    def action_cancel_compile(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def on_unmount(self) -> None:
        self.action_cancel_compile()  # the thread outlives the screen unless told to stop

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_compile":
            return self.running
        return True


def _fill(table: RecordTable, rows: list[Row]) -> list[Citation | None]:
    """Replace the table's rows; returns their citations."""
    table.set_rows(cells for cells, _ in rows)
    if rows:
        table.move_cursor(row=0, animate=False)
    return [citation for _, citation in rows]
