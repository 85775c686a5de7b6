"""The Runs screen: every episode of the current filter, failures first, with live counts."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Header

from store import EpisodeFilter, GroupStats, ListedEpisode, SearchPage
from tui.data import FilterChoices, Session, filter_choices
from tui.navigation import (
    OpenClusters,
    OpenCompare,
    OpenCompile,
    OpenEvolution,
    OpenManual,
    OpenRepository,
    OpenSynthesis,
    OpenTrajectory,
)
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.episode_table import EpisodeTable
from tui.widgets.filter_bar import FilterBar
from tui.widgets.find_bar import FindBar
from tui.widgets.key_footer import KeyFooter
from tui.widgets.run_summary import RunSummary
from tui.widgets.search_hits import SearchHits

HELP = Help(
    "Runs",
    "Episodes of the current filter, failures first. The line under the filters counts the filter's episodes and its success rate; it follows a run that is still writing to the database.",
    [
        ("↑ ↓ PgUp PgDn", "move through the episodes (more are read as you go)"),
        ("g G", "first / last loaded episode"),
        ("enter", "open the trajectory under the cursor"),
        ("c", "compare the failure under the cursor with a successful run"),
        ("f", "go to the filters (tab moves between them, enter opens one)"),
        ("/", "full-text search over the steps of the filter's episodes"),
        ("escape", "close the search"),
        ("C", "failure clusters of the latest analysis run (r there runs one)"),
        ("K", "intervention specs compiled from those clusters (r there compiles)"),
        ("R", "the artifact repository: versions, gate checks, replay ledgers"),
        ("M", "the manual: its versions and diffs, the rules with their history"),
        ("E", "repository evolution: pass rate, size, use and degradation per regime"),
        ("S", "synthesis: synthesized tasks, their episodes and examples, retrieval (b, f there)"),
        ("ctrl+r", "reload now"),
    ],
)


class RunsScreen(Screen[None]):
    """Episodes in a table fed a page at a time; filters, counts and step search on top."""

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search"),
        Binding("c", "compare", "Compare"),
        Binding("f", "focus_filters", "Filters"),
        Binding("ctrl+r", "reload", "Reload", show=False),
        Binding("C", "clusters", "Clusters"),
        Binding("K", "compile", "Compile"),
        Binding("R", "repository", "Repository"),
        Binding("M", "manual", "Manual"),
        Binding("E", "evolution", "Evolution"),
        Binding("S", "synthesis", "Synthesis"),
        Binding("q", "app.quit", "Quit"),  # the first screen: q quits (Back elsewhere)
    ]

    def __init__(
        self,
        session: Session,
        *,
        page_size: int = 200,
        poll_interval: float = 1.0,
        name: str | None = None,
        select: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.select = select
        """The episode the cursor goes to once the first rows are shown (``None``: the first)."""
        self.session = session
        self.page_size = page_size
        self.poll_interval = poll_interval
        self.where = EpisodeFilter()
        self.summary: GroupStats | None = None
        self._generation = 0
        self._token: tuple[int, int] | None = None
        self._polling = False
        self.loaded = asyncio.Event()
        """Set each time a (re)load has been shown."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield FilterBar(id="filters")
        yield RunSummary(id="summary")
        yield EpisodeTable(id="episodes")
        yield FindBar("search steps", "words to find in any step (FTS5 syntax)", id="search")
        yield SearchHits(id="hits")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"runs · {self.session.pool.name}"
        self.query_one(RunSummary).show(None, self.where)
        self.query_one(EpisodeTable).focus()
        self.reload(keep=self.select)
        if self.poll_interval > 0:
            self.set_interval(self.poll_interval, self.action_poll)

    @property
    def table(self) -> EpisodeTable:
        return self.query_one(EpisodeTable)

    # -- loading ----------------------------------------------------------------------------

    def reload(self, keep: str | None = None) -> None:
        """Read counts, choices and the first rows again (as many as are loaded now)."""
        self._generation += 1
        rows = max(self.page_size, len(self.table.ids))
        self._load(self._generation, self.where, rows, keep)

    @work(thread=True, exclusive=True, group="runs-load")
    def _load(self, generation: int, where: EpisodeFilter, rows: int, keep: str | None) -> None:
        with self.session.pool.store() as store:
            token = store.change_token()
            summary = store.summary(where)
            episodes = store.listing(where, limit=rows)
            choices = filter_choices(store)
        deliver(self, self._loaded, generation, token, summary, episodes, choices, keep)

    def _loaded(
        self,
        generation: int,
        token: tuple[int, int],
        summary: GroupStats,
        episodes: list[ListedEpisode],
        choices: FilterChoices,
        keep: str | None,
    ) -> None:
        if generation != self._generation:
            return  # the filter changed while this was read
        self._token = token
        self.summary = summary
        self.query_one(RunSummary).show(summary, self.where)
        self.query_one(FilterBar).set_choices(choices)
        self.table.show(episodes, summary.episodes, keep=keep or self.table.current)
        self.loaded.set()

    @on(EpisodeTable.Wanted)
    def _wanted(self, event: EpisodeTable.Wanted) -> None:
        self._load_page(self._generation, self.where, event.offset)

    @work(thread=True, group="runs-page")
    def _load_page(self, generation: int, where: EpisodeFilter, offset: int) -> None:
        with self.session.pool.store() as store:
            episodes = store.listing(where, limit=self.page_size, offset=offset)
        deliver(self, self._page_loaded, generation, offset, episodes)

    def _page_loaded(self, generation: int, offset: int, episodes: list[ListedEpisode]) -> None:
        if generation == self._generation:
            self.table.add_page(offset, episodes, self.table.total)

    # -- live data --------------------------------------------------------------------------

    def action_poll(self) -> None:
        """Check (cheaply) whether episodes were added; reload what is shown if so."""
        if not self._polling:
            self._polling = True
            self._poll()

    @work(thread=True, group="runs-poll")
    def _poll(self) -> None:
        try:
            with self.session.pool.store() as store:
                token = store.change_token()
        finally:
            self._polling = False
        deliver(self, self._polled, token)

    def _polled(self, token: tuple[int, int]) -> None:
        if self._token is not None and token != self._token:
            self._token = token
            self.reload()

    def action_reload(self) -> None:
        self.reload()

    # -- filters ----------------------------------------------------------------------------

    @on(FilterBar.Changed)
    def _filter_changed(self, event: FilterBar.Changed) -> None:
        self.where = event.where
        self.query_one(RunSummary).show(None, self.where)
        self.table.show([], 0)
        self.reload()

    def action_focus_filters(self) -> None:
        self.query_one("#filter-outcome").focus()

    # -- opening, comparing -----------------------------------------------------------------

    @on(EpisodeTable.Opened)
    def _opened(self, event: EpisodeTable.Opened) -> None:
        self.open_trajectory(event.episode_id)

    def open_trajectory(self, episode_id: str, step: int | None = None) -> None:
        """Ask the app for ``episode_id``'s trajectory (at ``step``), ``H``/``L`` there walking
        this screen's filter."""
        self.post_message(OpenTrajectory(episode_id, step, self.where))

    def select_episode(self, episode_id: str) -> None:
        """Put the table's cursor on ``episode_id`` (the trajectory shown last: ``H``/``L``
        there walk this screen's filter)."""
        self.table.select_episode(episode_id)

    def action_clusters(self) -> None:
        self.post_message(OpenClusters())

    def action_compile(self) -> None:
        self.post_message(OpenCompile())

    def action_repository(self) -> None:
        self.post_message(OpenRepository())

    def action_manual(self) -> None:
        self.post_message(OpenManual())

    def action_evolution(self) -> None:
        self.post_message(OpenEvolution())

    def action_synthesis(self) -> None:
        self.post_message(OpenSynthesis())

    def action_compare(self) -> None:
        if self.table.current is not None:
            self.post_message(OpenCompare(self.table.current))

    # -- search -----------------------------------------------------------------------------

    def action_search(self) -> None:
        self.query_one(FindBar).open()

    @on(FindBar.Submitted, "#search")
    def _search(self, event: FindBar.Submitted) -> None:
        self._run_search(event.query, self.where)

    @work(thread=True, exclusive=True, group="runs-search")
    def _run_search(self, query: str, where: EpisodeFilter) -> None:
        with self.session.pool.store() as store:
            page = store.search_page(query, where, limit=200)
        deliver(self, self._found, query, page)

    def _found(self, query: str, page: SearchPage) -> None:
        newest = None if page.ranked_all else page.window
        self.query_one(SearchHits).show_hits(query, page.hits, newest)

    @on(SearchHits.Chosen)
    def _hit_chosen(self, event: SearchHits.Chosen) -> None:
        self.open_trajectory(event.hit.episode_id, event.hit.index)

    @on(FindBar.Closed, "#search")
    @on(SearchHits.Closed)
    def _search_closed(self) -> None:
        self.query_one(FindBar).remove_class("-shown")
        self.query_one(SearchHits).remove_class("-shown")
        self.table.focus()
