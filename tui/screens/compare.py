"""The Compare screen: a failure beside a successful run of the same task (or family),
step-aligned by the engine (:mod:`workbench.compare`), the first divergence highlighted."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Header, Static

from store import CutStep, Episode, EpisodeFilter, Store
from tui.cells import outcome_badge
from tui.data import Session
from tui.escapes import shown
from tui.navigation import OpenTrajectory
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.alignment_table import LEGEND, AlignmentTable
from tui.widgets.key_footer import KeyFooter
from tui.widgets.step_detail import WINDOW, StepDetail
from workbench.compare import Comparison, Pair, compare_episodes, contrast_for

HELP = Help(
    "Compare",
    "The failed run (left) and a successful run of the same task — or, when the task has none, of the same family — aligned action by action. Actions are compared after normalisation (case, numbers and the task's own object names abstracted), so runs of different variations line up. The first divergence is highlighted in red.",
    [
        ("↑ ↓  j k", "move through the aligned pairs (both sides scroll together)"),
        ("d", "jump to the first divergence"),
        ("n N", "next / previous divergence"),
        ("enter", "open the failed run at this step"),
        ("s", "open the successful run at this step"),
    ],
)


def comparison_header(comparison: Comparison) -> Text:
    """What is compared with what, and where they first part."""
    failed, success = comparison.failed, comparison.success
    width = max(len(shown(failed.id)), len(shown(success.id)))
    line = Text()
    for episode in (failed, success):
        line.append_text(outcome_badge(episode))
        line.append(f" {shown(episode.id):<{width}}", "bold")
        line.append(shown(f"  {episode.task_id}  agent {episode.agent}"))
        line.append(f"  {episode.n_steps} steps\n")
    alignment = comparison.alignment
    divergence = alignment.first_divergence
    if divergence is None:
        line.append("the runs take the same actions throughout", "bold green")
    else:
        line.append("first divergence: ", "bold")
        line.append(
            f"failed step {_step(divergence.failed_step)} ↔ "
            f"success step {_step(divergence.success_step)} ({divergence.op})",
            "bold red",
        )
    line.append(f"   {alignment.matched} of {len(alignment.pairs)} pairs match", "dim")
    line.append("\n")
    line.append(LEGEND, "dim")
    return line


def _step(index: int | None) -> str:
    return "–" if index is None else str(index)


def _cut_step(store: Store, episode_id: str, index: int | None) -> CutStep | None:
    """Step ``index`` of an episode, its texts cut to what the detail shows."""
    if index is None:
        return None
    found = store.cut_steps(episode_id, index, index + 1, WINDOW)
    return found[0] if found else None


class CompareScreen(Screen[None]):
    """A failed episode and its contrast, step-aligned."""

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "open_success", "Open success"),
    ]

    def __init__(
        self,
        session: Session,
        episode_id: str,
        where: EpisodeFilter | None = None,
        success_id: str | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.episode_id = episode_id
        self.where = where or EpisodeFilter()
        self.success_id = success_id
        """The success to compare with; ``None`` lets the engine choose (``contrast_for``)."""
        self.comparison: Comparison | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("aligning…", id="compare-info")
        yield AlignmentTable(id="alignment")
        with Horizontal(id="compare-panes"):
            yield StepDetail(id="failed-step")
            yield StepDetail(id="success-step")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"compare · {self.session.pool.name}"
        self.query_one("#failed-step").border_title = "failed run"
        self.query_one("#success-step").border_title = "successful run"
        self.query_one(AlignmentTable).focus()
        self._compare(self.episode_id)

    @work(thread=True, exclusive=True, group="compare")
    def _compare(self, episode_id: str) -> None:
        with self.session.pool.store() as store:
            failed = store.episode(episode_id)
            if failed is None:
                success = None
            elif self.success_id is not None:
                success = store.episode(self.success_id)
            else:
                success = contrast_for(store, failed)
            if failed is None or success is None:
                deliver(self, self._no_contrast, failed)
                return
            comparison = compare_episodes(store, failed, success)
        deliver(self, self._compared, comparison)

    def _no_contrast(self, failed: Episode | None) -> None:
        if failed is None:
            text = Text(f"no episode {self.episode_id!r}", "bold red")
        else:
            text = Text.assemble(
                ("nothing to compare with: ", "bold"),
                shown(
                    f"no successful run of task {failed.task_id}"
                    + (f" or of family {failed.family}" if failed.family else "")
                ),
            )
        self.query_one("#compare-info", Static).update(text)

    def _compared(self, comparison: Comparison) -> None:
        self.comparison = comparison
        info = comparison_header(comparison)
        if comparison.failed.outcome.success:
            info.append("\n(this episode passed: it is compared with another success)", "yellow")
        self.query_one("#compare-info", Static).update(info)
        self.query_one(AlignmentTable).show(
            comparison.alignment,
            dict(comparison.failed_actions),
            dict(comparison.success_actions),
            failed_label=f"failed · {comparison.failed.id}",
            success_label=f"success · {comparison.success.id}",
        )

    @on(AlignmentTable.PairChanged)
    def _pair_changed(self, event: AlignmentTable.PairChanged) -> None:
        if self.comparison is not None:
            self._load_pair(self.comparison, event.pair)

    @work(thread=True, exclusive=True, group="compare-pair")
    def _load_pair(self, comparison: Comparison, pair: Pair) -> None:
        with self.session.pool.store() as store:
            failed = _cut_step(store, comparison.failed.id, pair.failed)
            success = _cut_step(store, comparison.success.id, pair.success)
        deliver(self, self._pair_loaded, pair, failed, success)

    def _pair_loaded(self, pair: Pair, failed: CutStep | None, success: CutStep | None) -> None:
        if self.comparison is None:
            return
        for selector, index, step, episode in (
            ("#failed-step", pair.failed, failed, self.comparison.failed),
            ("#success-step", pair.success, success, self.comparison.success),
        ):
            detail = self.query_one(selector, StepDetail)
            if index is None:
                detail.show(0, None, [], episode.n_steps)
                detail.query_one(Static).update(Text("no counterpart on this side", "dim"))
            else:
                detail.show(index, step, [], episode.n_steps)

    @on(AlignmentTable.PairChosen)
    def _pair_chosen(self, event: AlignmentTable.PairChosen) -> None:
        if self.comparison is not None:
            self._open(self.comparison.failed.id, event.pair.failed)

    def action_open_success(self) -> None:
        table = self.query_one(AlignmentTable)
        if self.comparison is not None and table.alignment is not None:
            pair = table.alignment.pairs[table.cursor_row]
            self._open(self.comparison.success.id, pair.success)

    def _open(self, episode_id: str, step: int | None) -> None:
        self.post_message(OpenTrajectory(episode_id, step, self.where))
