"""``analyze`` and ``clusters``: failures analysed and grouped, a thin layer over
:mod:`workbench.analyze`."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.text import Text

from workbench.cli.options import (
    SPLITS,
    LazyChoice,
    RichProgress,
    check_filter,
    chosen_backends,
    console,
    errors,
    existing_db_option,
    integer,
    reasoner_option,
)
from workbench.cli.tables import Cell, Column, print_records

if TYPE_CHECKING:
    from store import Cluster, EpisodeFilter, Store
    from workbench.analyze.analyst import Analyst
    from workbench.analyze.analyzer import AnalysisReport


def _strategies() -> tuple[str, ...]:
    from workbench.analyze.strategies import STRATEGIES

    return STRATEGIES


@click.command("analyze")
@click.option("--batch", help="Only failures of this batch (id or name).")
@click.option("--family", help="Only failures of this task family.")
@click.option(
    "--split",
    type=click.Choice(SPLITS),
    help="Only failures of this split (default: every split but the held-out test split).",
)
@reasoner_option
@click.option(
    "--strategy",
    type=LazyChoice(_strategies),
    help="With --reasoner openai: how the model finds the decisive step: the whole log in one call (all-at-once, the default), each step in turn until the first decisive one (step-by-step), or by halving the log (binary-search). Each strategy keeps its own analysis runs.",
)
@click.option(
    "--max-calls",
    type=integer(min=1),
    help="With --reasoner openai: send at most N model calls in this whole run; failures left when they are spent are reported as not analysed (budget), and running again continues (answers already given come from the cache).",
)
@click.option(
    "--new-run",
    is_flag=True,
    help="Start a new analysis run instead of continuing the latest one of this scope and reasoner.",
)
@click.option(
    "--learn",
    is_flag=True,
    help="Fit a step scorer on the scope's failures that carry a person's causal span and let it choose the causal step of the other failures (offline; failures people marked keep their span).",
)
@click.option(
    "--agreement",
    "show_agreement",
    is_flag=True,
    help="Report agreement between analyzer and human causal spans (exact start, ±1 and ±3 steps, IoU, responsible agent) beside three baselines (first agent step, last step, a uniformly random step), instead of analysing.",
)
@click.option(
    "--cv",
    "folds",
    type=integer(min=2),
    help="With --agreement: add the learned scorer's K-fold cross-validated agreement (each fold scored by a scorer fitted on the others).",
)
@click.option(
    "--author",
    help="With --agreement: compare against this labeller's spans only (the name in `spans import`'s author field).",
)
@existing_db_option
def analyze_command(
    store: Store,
    batch: str | None,
    family: str | None,
    split: str | None,
    reasoner_name: str | None,
    strategy: str | None,
    max_calls: int | None,
    new_run: bool,
    learn: bool,
    show_agreement: bool,
    folds: int | None,
    author: str | None,
) -> None:
    """Analyse failures: evaluator-visible failure, earliest causal span, required change; then cluster them.

    Without --batch or --split, held-out (test) episodes and candidates' replays are left out."""
    from store import EpisodeFilter
    from workbench.analyze.strategies import BUDGET_SPENT
    from workbench.backends import analyst_of
    from workbench.llm import ConfigError

    where = EpisodeFilter(batch=batch, family=family, split=split)
    check_filter(store, where)
    if author is not None and not show_agreement:
        raise click.UsageError("--author goes with --agreement")
    if show_agreement and (strategy or max_calls):
        raise click.UsageError("--strategy and --max-calls go with analysing, not --agreement")
    if folds is not None and not show_agreement:
        raise click.UsageError("--cv goes with --agreement")
    if learn and (show_agreement or strategy or max_calls or reasoner_name):
        raise click.UsageError(
            "--learn fits an offline scorer: it goes with no --reasoner, --strategy or --agreement"
        )
    if show_agreement:
        _print_agreement(store, where, author, folds)
        return
    if learn:
        analyst = _learned_analyst(store, where)
        report = _run_analysis(store, where, analyst, new_run)
        _print_report(report, [], [])
        return
    backends = chosen_backends(store, reasoner_name)
    if (strategy or max_calls) and backends.name != "openai":
        raise click.UsageError(
            "--strategy and --max-calls go with the openai reasoner (--reasoner openai)"
        )
    try:
        analyst = analyst_of(backends, strategy, max_calls)
    except ConfigError as error:
        raise click.ClickException(str(error)) from error
    report = _run_analysis(store, where, analyst, new_run)
    over = [reason for reason in report.failed if BUDGET_SPENT in reason]
    failed = [reason for reason in report.failed if BUDGET_SPENT not in reason]
    _print_report(report, failed, over)
    budget = getattr(analyst, "budget", None)
    if budget is not None:
        spent = "; the budget is spent: run again to continue" if over else ""
        console.print(f"{budget.describe()}{spent}")
    for reason in failed:
        errors.print(f"[yellow]not analysed:[/] {escape(reason)}")


def _run_analysis(
    store: Store, where: EpisodeFilter, analyst: Analyst, new_run: bool
) -> AnalysisReport:
    from workbench.analyze.analyzer import analyze
    from workbench.progress import Cancelled

    try:
        return analyze(store, where, analyst, new_run=new_run, progress=RichProgress())
    except Cancelled:
        raise click.ClickException(
            "analysis cancelled; analysed failures are kept — run again to continue"
        ) from None


def _print_report(report: AnalysisReport, failed: list[str], over: list[str]) -> None:
    console.print(
        f"analysis run {report.run.id} ({report.run.reasoner}): {report.analyzed} failure(s) analysed"
        + (f" ({report.marked} at a person's causal span)" if report.marked else "")
        + (f", {report.skipped} already analysed" if report.skipped else "")
        + (f", {len(failed)} not analysed (model error)" if failed else "")
        + (f", {len(over)} not analysed (budget)" if over else "")
        + (f", {report.no_steps} left out (no steps: outcome only)" if report.no_steps else "")
        + f"; {report.clusters} cluster(s), {report.deferred} deferred"
    )
    for reason in report.rejected:
        errors.print(f"[yellow]rejected proposal:[/] {escape(reason)}")


def _learned_analyst(store: Store, where: EpisodeFilter) -> Analyst:
    from workbench.analyze.heuristic import learned_analyst
    from workbench.analyze.learned import NotEnoughLabels

    try:
        return learned_analyst(store, where)
    except NotEnoughLabels as error:
        raise click.ClickException(
            f"--learn: {error} (mark causal spans in the TUI or the notebook, or load them"
            " with `workbench spans import`)"
        ) from None


def _print_agreement(
    store: Store, where: EpisodeFilter, author: str | None, folds: int | None
) -> None:
    from workbench.analyze.agreement import agreement
    from workbench.analyze.learned import NotEnoughLabels

    try:
        rows = agreement(store, where, author, baselines=True, folds=folds, heuristic=True)
    except NotEnoughLabels as error:
        raise click.ClickException(f"--cv: {error}") from None
    if not rows:
        who = f"{author!r}" if author else "a human"
        raise click.ClickException(
            f"no failure in scope has a causal span by {who} yet"
            " (mark spans in the TUI or the notebook, or load labels with `workbench spans import`)"
        )
    console.print(f"scope: {escape(_scope_name(store, where))}")
    columns = [Column("group"), Column("method")] + [
        Column(name, justify="right") for name in ("episodes", "exact", "±1", "±3", "IoU", "agent")
    ]
    cells = [
        [
            row.key,
            row.method,
            str(row.episodes),
            f"{row.exact:.0%}",
            f"{row.within_one:.0%}",
            f"{row.within_three:.0%}",
            f"{row.iou:.2f}",
            "–" if row.agent is None else f"{row.agent:.0%} of {row.agent_episodes}",
        ]
        for row in rows
    ]
    print_records(console, columns, cells)


def _scope_name(store: Store, where: EpisodeFilter) -> str:
    """The filter in words: ``all episodes``, or ``batch <name>, family <name>``."""
    parts = []
    if where.batch is not None:
        found = store.batch(where.batch)
        parts.append(f"batch {found.name if found and found.name else where.batch}")
    if where.family is not None:
        parts.append(f"family {where.family}")
    if where.split is not None:
        parts.append(f"split {where.split}")
    return ", ".join(parts) or "all episodes"


ONE_AGENT = "(one agent)"
"""Where ``clusters --by agent`` lists the members that come from logs of a single agent."""
ORIGINS = {"human": "person's span", "learned": "learned"}
"""How ``clusters --show`` marks a member whose span is not the analyzer's own judgment."""
CLUSTER_COLUMNS = [
    Column("id", justify="right"),
    Column("size", justify="right"),
    Column("family"),
    Column("status"),
    Column("trigger", text=True),
    Column("correction", text=True),
    Column("reason", text=True),
]


@click.command("clusters")
@click.option("--run", "run_id", type=integer(), help="Analysis run (default: the latest).")
@click.option(
    "--show",
    "cluster_id",
    type=integer(),
    help="Show one cluster: its members (each with its responsible agent, and whether its span is a person's or the learned scorer's) and contrastive successes.",
)
@click.option(
    "--by",
    type=click.Choice(["agent"]),
    help="Group the listing under the agent each member's analysis holds responsible: a cluster whose members blame several agents is listed under each (size: that agent's members of all), members from logs of one agent under '(one agent)'.",
)
@existing_db_option
def clusters_command(
    store: Store, run_id: int | None, cluster_id: int | None, by: str | None
) -> None:
    """List failure clusters (supported first, largest first), or show one."""
    if cluster_id is not None:
        if by is not None:
            raise click.UsageError("--by groups the listing; it does not go with --show")
        _show_cluster(store, cluster_id)
        return
    runs = store.analysis_runs()
    run = (
        next((r for r in runs if r.id == run_id), None)
        if run_id is not None
        else (runs[0] if runs else None)
    )
    if run is None:
        raise click.ClickException(
            "no analysis run yet; run `workbench analyze`"
            if run_id is None
            else f"no analysis run {run_id}"
        )
    title = f"analysis run {run.id} ({run.reasoner})"
    clusters = store.clusters(run.id)
    if by is None:
        rows = [_cluster_row(c, str(len(c.members))) for c in clusters]
        print_records(console, CLUSTER_COLUMNS, rows, title=title)
        return
    console.print(Text(f"{title}, by responsible agent", "italic"), soft_wrap=True)
    for i, (agent, listed) in enumerate(_by_agent(store, run.id, clusters)):
        failures = sum(mine for _, mine in listed)
        rows = [
            _cluster_row(c, str(mine) if mine == len(c.members) else f"{mine}/{len(c.members)}")
            for c, mine in listed
        ]
        if i == 0 or console.is_terminal:
            console.print()  # after the title or a table (records printed as blocks end blank)
        console.print(
            Text.assemble((agent, "bold"), f": {failures} failure(s) in {len(listed)} cluster(s)"),
            soft_wrap=True,
        )
        print_records(console, CLUSTER_COLUMNS, rows)


def _show_cluster(store: Store, cluster_id: int) -> None:
    """``clusters --show``: one cluster, its members and its contrastive successes."""
    cluster = store.cluster(cluster_id)
    if cluster is None:
        raise click.ClickException(f"no cluster {cluster_id} (see `workbench clusters`)")
    console.print(
        f"[bold]cluster {cluster.id}[/] {cluster.status} · {escape(cluster.family)} · {len(cluster.members)} member(s)"
    )
    console.print(
        f"trigger    {escape(cluster.trigger)}\ncorrection {escape(cluster.correction) or '–'}"
    )
    if cluster.reason:
        console.print(f"[yellow]deferred:[/] {escape(cluster.reason)}")
    for analysis_id in cluster.members:
        a = store.analysis(analysis_id)
        if a is not None:
            marks = [f"agent {escape(a.agent)}"] if a.agent else []
            marks += [ORIGINS[a.origin]] if a.origin in ORIGINS else []
            said = f" ({', '.join(marks)})" if marks else ""
            console.print(
                f"  {escape(a.episode_id)} steps {a.start}..{a.end}{said} conf {a.confidence:.2f} \\[{a.status}] {escape(a.change)}"
            )
    console.print(
        "contrastive successes: " + (", ".join(escape(e) for e in cluster.contrasts) or "none")
    )


def _cluster_row(cluster: Cluster, size: str) -> list[Cell]:
    """A cluster's line in the listing, its size as given."""
    return [
        str(cluster.id),
        size,
        cluster.family,
        Text(cluster.status, style="green" if cluster.status == "supported" else "yellow"),
        cluster.trigger,
        cluster.correction,
        cluster.reason,
    ]


def _by_agent(
    store: Store, run_id: int, clusters: list[Cluster]
) -> list[tuple[str, list[tuple[Cluster, int]]]]:
    """Each agent the run's analyses hold responsible, with its clusters and how many members
    of each are its failures: the agent blamed for the most failures first, the failures of
    single-agent logs (:data:`ONE_AGENT`) last."""
    agents = {a.id: a.agent or ONE_AGENT for a in store.analyses(run_id)}
    groups: dict[str, list[tuple[Cluster, int]]] = {}
    failures: Counter[str] = Counter()
    for cluster in clusters:
        counted = Counter(agents[m] for m in cluster.members if m in agents)
        failures.update(counted)
        for agent, mine in counted.items():
            groups.setdefault(agent, []).append((cluster, mine))
    order = sorted(groups, key=lambda agent: (agent == ONE_AGENT, -failures[agent], agent))
    return [(agent, groups[agent]) for agent in order]
