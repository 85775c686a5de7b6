"""The Synthesis screen: synthesized tasks, the episodes that played them and their examples
(instruction, span, kind, the filters' verdicts and reasons), and a retrieval box over the kept
examples with each retriever's score.

``b`` constructs examples backward for the episodes that have none
(:func:`workbench.synth.backward.construct`), ``f`` filters the pending examples
(:func:`workbench.synth.filters.filter_examples`: replays in the real simulator), each in a
thread worker with a progress bar; ``escape`` cancels. Everything is read from and written to
the database's ``synth`` workspace, whatever workspace the app shows.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from store import Episode, EpisodeFilter, SynthExample
from store.synth import SYNTH_WORKSPACE, SynthTask
from tui.cells import mark, outcome_badge, plural
from tui.data import Session, StorePool
from tui.escapes import shown
from tui.navigation import OpenTrajectory
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.job_progress import JobProgress
from tui.widgets.key_footer import KeyFooter
from tui.widgets.record_table import Column, RecordTable
from tui.widgets.retrieval_box import RetrievalBox
from workbench.llm.client import ConfigError, ModelError
from workbench.progress import Cancelled, Progress
from workbench.synth.backward import BackwardReport, construct
from workbench.synth.catalog import (
    VERDICTS,
    Catalog,
    ExampleDetail,
    PlayedEpisode,
    read_catalog,
    read_example,
)
from workbench.synth.filters import FilterReport, filter_examples
from workbench.synth.retrieval import ExampleIndex, Hit

HELP = Help(
    "Synthesis",
    "Learn-by-interact synthesis, from the database's synth workspace: the tasks proposed from a world's documentation (top left), the episodes that played the selected task (top right), and that episode's examples — an instruction written backward for a span of it, or the whole trajectory under the instruction it was played with — with the filters' verdicts (bottom). The selected example's span, provenance and every filter's check are on the right. The retrieval box searches the kept examples as an agent would: BM25 over their observations and instructions (and dense embeddings with the extra), each retriever's score shown.",
    [
        ("↑ ↓", "move in the table"),
        ("tab  shift+tab", "tasks → episodes → examples → example"),
        ("enter", "on a task: its episodes; on an episode: its trajectory"),
        ("enter on an example", "open the trajectory at the example's span"),
        ("v", "show the examples of one verdict: all → kept → rejected → pending"),
        ("/", "the retrieval box: type a query (and an observation, K), enter searches"),
        ("enter on a hit", "open the trajectory at the hit's span"),
        ("b", "construct examples backward for the episodes that have none"),
        ("f", "filter the pending examples: committee, replay in the simulator, duplicates"),
        ("escape", "close the retrieval box; cancel a running job (also ctrl+x)"),
        ("ctrl+r", "read everything again"),
    ],
)

TASK_COLUMNS = [
    Column("task"),
    Column("family"),
    Column("var"),
    Column("played"),
    Column("instruction", text=True),
]
EPISODE_COLUMNS = [
    Column("episode"),
    Column("agent"),
    Column("outcome"),
    Column("steps"),
    Column("examples"),
]
REASON_WIDTH = 14
"""The reason column is cut to this (the example's pane shows it whole)."""
EXAMPLE_COLUMNS = [
    Column("id"),
    Column("kind"),
    Column("span"),
    Column("verdict"),
    Column("instruction", text=True),
    Column("reason", width=REASON_WIDTH),
]
VERDICT_STYLES = {"kept": "bold green", "rejected": "red", "pending": "yellow"}
FILTERS: tuple[str | None, ...] = (None, *VERDICTS)
"""The examples table's verdict filters, in the order ``v`` cycles through them."""
SYNTH_EPISODES = EpisodeFilter(workspace=SYNTH_WORKSPACE, replays=False)
"""What ``H``/``L`` walk in a trajectory opened from here."""


def summary(catalog: Catalog) -> Text:
    """The line above the tables: tasks, episodes, examples by verdict, what to do next."""
    if not catalog.tasks and not catalog.n_episodes:
        return Text.assemble(
            ("No synthesis yet. ", "bold"),
            "Propose tasks with `workbench synth tasks --env NAME` and play them with "
            "`workbench synth explore --env NAME`; then b here writes their examples.",
        )
    line = Text.assemble((plural(len(catalog.tasks), "synthesized task"), "bold"), " · ")
    line.append(plural(catalog.n_episodes, "episode"), "bold")
    bare = sum(p.n_examples == 0 for group in catalog.episodes.values() for p in group)
    line.append(" · ")
    line.append(plural(catalog.n_examples, "example"), "bold")
    counts = [f"{catalog.counts[v]} {v}" for v in VERDICTS if catalog.counts.get(v)]
    if counts:
        line.append(" (" + ", ".join(counts) + ")")
    if bare:
        line.append(f" · {bare} episode(s) without examples: press ", "yellow")
        line.append("b", "bold #ffa62b")
    if catalog.counts.get("pending"):
        line.append(" · pending examples: press ", "yellow")
        line.append("f", "bold #ffa62b")
    return line


def task_cells(task: SynthTask | None, catalog: Catalog) -> list[Text]:
    """One task's row (``None``: the episodes that played no synthesized task)."""
    played = catalog.played(task.id if task else None)
    count = Text(str(len(played)), justify="right", style="" if played else "dim")
    if task is None:
        return [Text("–"), Text("–"), Text(""), count, Text("(no synthesized task)")]
    return [
        Text(str(task.id), justify="right"),
        Text(task.family),
        Text(str(task.variation), justify="right"),
        count,
        Text(" ".join(task.instruction.split())),
    ]


def short_id(episode: Episode) -> str:
    """The episode's id without its batch's (``task1`` for ``synth/explore-…-1:task1``)."""
    prefix = f"{episode.batch_id}:"
    return episode.id.removeprefix(prefix) if episode.batch_id else episode.id


def episode_cells(played: PlayedEpisode) -> list[Text]:
    """One episode's row: its id within its batch, agent, outcome, steps, examples (kept /
    all)."""
    episode = played.episode
    kept = played.examples.get("kept", 0)
    examples = Text(f"{kept}/{played.n_examples}" if played.n_examples else "none")
    if not played.n_examples:
        examples.stylize("yellow")
    return [
        Text(short_id(episode)),
        Text(episode.agent),
        outcome_badge(episode),
        Text(str(episode.n_steps), justify="right"),
        examples,
    ]


def verdict_text(verdict: str) -> Text:
    return Text(verdict, style=VERDICT_STYLES.get(verdict, ""))


def example_cells(example: SynthExample) -> list[Text]:
    """One example's row: id, kind, span, verdict, instruction, why it was rejected."""
    return [
        Text(str(example.id), justify="right"),
        Text(example.kind),
        Text(f"{example.start}–{example.end}"),
        verdict_text(example.verdict),
        Text(" ".join(example.instruction.split())),
        Text(example.reason, style="yellow") if example.reason else Text(""),
    ]


def example_view(detail: ExampleDetail) -> Group:
    """The example: its instruction, why it was rejected, provenance, checks and span."""
    example = detail.example
    title = Text.assemble((f"example {example.id}", "bold"), f" · {example.kind} · ")
    title.append_text(verdict_text(example.verdict))
    parts = [title, Text(shown(" ".join(example.instruction.split())), "bold italic")]
    if example.reason:
        parts.append(Text(f"rejected: {shown(example.reason)}", "yellow"))
    parts += [Text(""), _rows(detail.provenance()), Text(""), Text("checks", "bold")]
    checks = _table(narrow=2)
    for name, found, passed in detail.checks():
        verdict = mark(passed, "✓", "✗") if passed is not None else Text("·")
        checks.add_row(Text(name), verdict, Text(shown(found)))  # Text: never read as markup
    parts += [checks if detail.checks() else Text("not filtered yet", "dim"), Text("")]
    parts.append(Text(f"span · {plural(len(example.actions), 'action')}", "bold"))
    parts.append(_span(detail))
    return Group(*parts)


def _table(narrow: int = 1) -> Table:
    """A borderless table: ``narrow`` columns as wide as their cells (the first bold), then
    one taking the rest."""
    table = Table(box=None, show_header=False, padding=(0, 1, 0, 0), expand=True)
    table.add_column(style="bold", no_wrap=True)
    for _ in range(narrow - 1):
        table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    return table


def _rows(rows: list[tuple[str, str]]) -> Table:
    table = _table()
    for name, value in rows:
        table.add_row(Text(name), Text(shown(value)))
    return table


def _span(detail: ExampleDetail) -> Table | Text:
    if not detail.steps:  # the episode is gone: the example's own record
        steps = zip(detail.example.actions, detail.example.observations, strict=False)
        return Text(shown("\n".join(f"> {a}\n  {' '.join(o.split())}" for a, o in steps)))
    table = _table()
    for span_step in detail.steps:
        step = span_step.step
        action = shown(step.action)
        said = Text(f"> {action}", "bold cyan")
        said.append(span_step.more("action"), "dim")
        said.append("\n" + shown(" ".join(step.observation.split())), "")
        said.append(span_step.more("observation"), "dim")
        if span_step.trimmed:
            said = Text.assemble((f"> {action}", "dim strike"), ("  trimmed: a repeat", "dim"))
        table.add_row(Text(str(step.index)), said)
    return table


class SynthScreen(Screen[None]):
    """Synthesized tasks → episodes → examples, the selected example, and retrieval.

    Args:
        session: the app's session (its database; the screen reads the ``synth`` workspace).
        replay_workers: episodes the filter's replays play at once (default: the session's
            executor choice).
    """

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "retrieve", "Retrieve"),
        Binding("v", "verdict", "Verdict"),
        Binding("b", "backward", "Backward"),
        Binding("f", "filter", "Filter"),
        Binding("escape", "escape", "Cancel", show=False),
        Binding("ctrl+x", "cancel_job", "Cancel job"),
        Binding("ctrl+r", "reload", "Reload", show=False),
    ]

    def __init__(self, session: Session, *, replay_workers: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.replay_workers = replay_workers
        own = session.pool.workspace == SYNTH_WORKSPACE
        self.pool = session.pool if own else StorePool(session.pool.path, workspace=SYNTH_WORKSPACE)
        self._own_pool = not own
        self.catalog = Catalog()
        self.tasks: list[SynthTask | None] = []
        """The synthesized task of each row of the task table (``None``: the episodes that
        played none)."""
        self.examples: list[SynthExample] = []
        """The examples in the example table (the selected episode's, of the verdict shown)."""
        self.verdict: str | None = None
        """The verdict the example table shows (``None``: every one)."""
        self.detail: ExampleDetail | None = None
        """The example shown on the right."""
        self.hits: list[Hit] = []
        self._wanted: int | None = None
        """The example whose detail is being read."""
        self.loaded = False
        """Whether the first read has been shown."""
        self._index: dict[tuple[str | None, str | None], ExampleIndex] = {}
        self._cancel: threading.Event | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("reading the synthesis…", id="synth-info")
        yield JobProgress("escape cancels", id="synth-progress")
        with Horizontal(id="synth-top"):
            yield RecordTable(TASK_COLUMNS, id="task-table", zebra_stripes=True)
            yield RecordTable(EPISODE_COLUMNS, id="episode-table")
        with Horizontal(id="synth-bottom"):
            yield RecordTable(EXAMPLE_COLUMNS, id="example-table")
            with VerticalScroll(id="example-view"):
                yield Static(id="example-text")
        yield RetrievalBox(id="retrieval")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"synthesis · {self.pool.name}"
        self.task_table.border_title = "tasks"
        self.episode_table.border_title = "episodes"
        self.example_table.border_title = "examples"
        self.query_one("#example-view").border_title = "example"
        self.task_table.focus()
        self.reload()

    @property
    def task_table(self) -> RecordTable:
        return self.query_one("#task-table", RecordTable)

    @property
    def episode_table(self) -> RecordTable:
        return self.query_one("#episode-table", RecordTable)

    @property
    def example_table(self) -> RecordTable:
        return self.query_one("#example-table", RecordTable)

    @property
    def retrieval(self) -> RetrievalBox:
        return self.query_one(RetrievalBox)

    @property
    def running(self) -> bool:
        """Whether a job (backward construction, filter) is running."""
        return self._cancel is not None

    @property
    def task_id(self) -> int | None:
        """The synthesized task under the task table's cursor (``None``: none, or the row of
        the episodes that played none)."""
        task = _at(self.tasks, self.task_table)
        return task.id if task else None

    @property
    def episodes(self) -> list[PlayedEpisode]:
        """The episodes in the episode table (the selected task's)."""
        return self.catalog.played(self.task_id) if self.tasks else []

    @property
    def episode(self) -> PlayedEpisode | None:
        """The episode under the episode table's cursor."""
        return _at(self.episodes, self.episode_table)

    @property
    def example(self) -> SynthExample | None:
        """The example under the example table's cursor."""
        return _at(self.examples, self.example_table)

    # -- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the tasks, episodes and counts again, keeping the selection where it can."""
        self._index.clear()  # the kept examples may have changed
        self._load()

    def action_reload(self) -> None:
        self.reload()

    @work(thread=True, exclusive=True, group="synth-load")
    def _load(self) -> None:
        with self.pool.store() as store:
            catalog = read_catalog(store)
        deliver(self, self._loaded, catalog)

    def _loaded(self, catalog: Catalog) -> None:
        task, episode = self.task_id, self.episode
        self.catalog = catalog
        self.query_one("#synth-info", Static).update(summary(catalog))
        rows: list[SynthTask | None] = list(catalog.listed())
        if catalog.played(None):
            rows.append(None)
        self.tasks = rows
        table = self.task_table
        table.set_rows(
            (task_cells(t, catalog) for t in rows), [str(t.id if t else "") for t in rows]
        )
        played = sum(1 for t in catalog.tasks if catalog.played(t.id))
        table.border_title = f"tasks · {len(catalog.tasks)} ({played} played)"
        ids = [t.id if t else None for t in rows]
        if rows:
            table.move_cursor(row=ids.index(task) if task in ids else 0, animate=False)
        self._show_task(episode.episode.id if episode else None)
        self.loaded = True

    @on(DataTable.RowHighlighted, "#task-table")
    def _task_highlighted(self) -> None:
        self._show_task()

    def _show_task(self, keep: str | None = None) -> None:
        """Fill the episode table from the selected task, its cursor on ``keep`` if listed."""
        episodes = self.episodes
        table = self.episode_table
        table.set_rows(map(episode_cells, episodes), [p.episode.id for p in episodes])
        ids = [p.episode.id for p in episodes]
        if episodes:
            table.move_cursor(row=ids.index(keep) if keep in ids else 0, animate=False)
        task = self.task_id
        table.border_title = f"episodes · {len(episodes)}"
        table.border_subtitle = (
            "not played yet: workbench synth explore" if task is not None and not episodes else ""
        )
        self._show_episode()

    @on(DataTable.RowHighlighted, "#episode-table")
    def _episode_highlighted(self) -> None:
        self._show_episode()

    def _show_episode(self) -> None:
        played = self.episode
        if played is None:
            self._examples_loaded(None, None, [])
        else:
            self._load_examples(played.episode.id, self.verdict)

    @work(thread=True, exclusive=True, group="synth-examples")
    def _load_examples(self, episode_id: str, verdict: str | None) -> None:
        with self.pool.store() as store:
            examples = store.synth_examples(episode_id=episode_id, verdict=verdict)
        deliver(self, self._examples_loaded, episode_id, verdict, examples)

    def _examples_loaded(
        self, episode_id: str | None, verdict: str | None, examples: list[SynthExample]
    ) -> None:
        played = self.episode
        if (played.episode.id if played else None) != episode_id or verdict != self.verdict:
            return  # another episode (or verdict) was chosen meanwhile
        current = self.example
        self.examples = examples
        table = self.example_table
        table.set_rows(map(example_cells, examples), [str(e.id) for e in examples])
        ids = [e.id for e in examples]
        if examples:
            wanted = current.id if current else None
            table.move_cursor(row=ids.index(wanted) if wanted in ids else 0, animate=False)
        which = f" · {verdict}" if verdict else ""
        table.border_title = f"examples · {len(examples)}{which}"
        table.border_subtitle = (
            "no example yet: b constructs them" if played and not played.n_examples else ""
        )
        self._show_example(self.example)

    @on(DataTable.RowHighlighted, "#example-table")
    def _example_highlighted(self) -> None:
        self._show_example(self.example)

    def _show_example(self, example: SynthExample | None) -> None:
        self._wanted = example.id if example else None
        if example is None:
            self._detail_loaded(None, None)
        else:
            self._load_detail(example)

    @work(thread=True, exclusive=True, group="synth-detail")
    def _load_detail(self, example: SynthExample) -> None:
        with self.pool.store() as store:
            detail = read_example(store, example)
        deliver(self, self._detail_loaded, example.id, detail)

    def _detail_loaded(self, example_id: int | None, detail: ExampleDetail | None) -> None:
        if example_id != self._wanted:
            return  # another example was chosen meanwhile
        self.detail = detail
        view = self.query_one("#example-text", Static)
        view.update(example_view(detail) if detail else Text("no example selected", "dim"))

    def action_verdict(self) -> None:
        self.verdict = FILTERS[(FILTERS.index(self.verdict) + 1) % len(FILTERS)]
        self._show_episode()

    # -- opening ----------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#task-table")
    def _task_selected(self) -> None:
        if self.episode_table.row_count:
            self.episode_table.focus()

    @on(DataTable.RowSelected, "#episode-table")
    def _episode_selected(self) -> None:
        played = self.episode
        if played is not None:
            self.post_message(OpenTrajectory(played.episode.id, None, SYNTH_EPISODES))

    @on(DataTable.RowSelected, "#example-table")
    def _example_selected(self) -> None:
        self.open_example(self.example)

    def open_example(self, example: SynthExample | None) -> None:
        """Open the trajectory of ``example``'s episode at the first step of its span."""
        if example is not None:
            self.post_message(OpenTrajectory(example.episode_id, example.start, SYNTH_EPISODES))

    # -- retrieval --------------------------------------------------------------------------

    def action_retrieve(self) -> None:
        self.retrieval.open()

    @on(RetrievalBox.Submitted)
    def _retrieval_submitted(self, event: RetrievalBox.Submitted) -> None:
        self._search(event.query, event.observation, event.k)

    @work(thread=True, exclusive=True, group="synth-search")
    def _search(self, query: str, observation: str | None, k: int) -> None:
        with self.pool.store() as store:
            index = self._index.get((None, None)) or ExampleIndex.open(store)
        self._index[(None, None)] = index
        hits = index.search(query, k, observation=observation)
        deliver(self, self._found, hits, len(index), index.dense_note())

    def _found(self, hits: list[Hit], searched: int, note: str) -> None:
        self.hits = hits
        if not searched:
            self.notify("no kept example to search yet (f filters the pending ones)")
        self.retrieval.show_hits(hits, searched, note)

    @on(RetrievalBox.Highlighted)
    def _hit_highlighted(self, event: RetrievalBox.Highlighted) -> None:
        self._show_example(event.hit.example)

    @on(RetrievalBox.Chosen)
    def _hit_chosen(self, event: RetrievalBox.Chosen) -> None:
        self.open_example(event.hit.example)

    @on(RetrievalBox.Closed)
    def _retrieval_closed(self) -> None:
        self.example_table.focus()
        self._show_example(self.example)

    # -- jobs -------------------------------------------------------------------------------

    def action_backward(self) -> None:
        if self._start_job():
            self._backward(self._cancel, self.query_one(JobProgress).reporter())

    def action_filter(self) -> None:
        if self._start_job():
            self._filter(self._cancel, self.query_one(JobProgress).reporter())

    def _start_job(self) -> bool:
        if self.running:
            self.notify("a job is already running")
            return False
        problem = self.session.reasoner_problem()
        if problem is not None:
            self.notify(problem, severity="error", markup=False)
            return False
        self._cancel = threading.Event()
        self.refresh_bindings()
        return True

    @work(thread=True, exclusive=True, group="synth-job")
    def _backward(self, cancel: threading.Event, progress: Progress) -> None:
        with self.pool.store() as store:
            try:
                result: BackwardReport | str | None = construct(
                    store,
                    relabeler=self.session.backends(store).relabeler,
                    progress=progress,
                    cancel=cancel,
                )
            except Cancelled:
                result = None
            except (ValueError, ConfigError) as error:
                result = str(error)
        deliver(self, self._finished, result, "backward construction")

    @work(thread=True, exclusive=True, group="synth-job")
    def _filter(self, cancel: threading.Event, progress: Progress) -> None:
        with self.pool.store() as store:
            try:
                relabeler = self.session.backends(store).relabeler
                with self.session.make_executor(self.replay_workers) as executor:
                    result: FilterReport | str | None = filter_examples(
                        store,
                        executor=executor,
                        relabeler=relabeler,
                        progress=progress,
                        cancel=cancel,
                    )
            except Cancelled:
                result = None
            except (ValueError, RuntimeError, ConfigError, ModelError) as error:
                result = str(error)
        deliver(self, self._finished, result, "filter")

    def _finished(self, result: BackwardReport | FilterReport | str | None, job: str) -> None:
        self._cancel = None
        self.refresh_bindings()
        if result is None:
            self.notify(f"{job} cancelled; what was finished is kept", severity="warning")
        elif isinstance(result, str):
            self.notify(result, severity="error", markup=False)
        else:
            self.notify(job_line(result), timeout=4, markup=False)
        self.reload()

    def action_cancel_job(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def action_escape(self) -> None:
        """Cancel the running job, else close the retrieval box."""
        if self._cancel is not None:
            self._cancel.set()
        elif self.retrieval.has_class("-shown"):
            self.retrieval.action_close()

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()  # the thread outlives the screen unless told to stop
        if self._own_pool:
            self.pool.close()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_job":
            return self.running
        return True


def job_line(report: BackwardReport | FilterReport) -> str:
    """What a finished job did, in one line."""
    if isinstance(report, BackwardReport):
        if not report.episodes:
            return "nothing to relabel: every synthesized episode has examples"
        return (
            f"{plural(report.episodes, 'episode')} relabelled: "
            f"{report.relabel_calls} relabel calls, {report.examples} backward and "
            f"{report.whole} whole examples"
        )
    rejected = ", ".join(f"{n} {why}" for why, n in report.rejected.most_common())
    return (
        f"{report.examined} pending examined: {report.kept} kept, "
        f"{sum(report.rejected.values())} rejected"
        + (f" ({rejected})" if rejected else "")
        + f"; {report.replays_played} replays played"
    )


def _at(items: list, table: RecordTable):
    """The item of ``items`` under ``table``'s cursor (``None``: none)."""
    row = table.cursor_row
    return items[row] if table.row_count and 0 <= row < len(items) else None
