"""``workbench evolve``: the repository-evolution experiment, a thin layer over
:mod:`workbench.evolution.experiment`."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from workbench.cli.options import (
    LazyChoice,
    RichProgress,
    chosen_backends,
    console,
    db_option,
    errors,
    executor_options,
    family_list,
    integer,
    parse_rates,
    reasoner_option,
)
from workbench.cli.plugins import env_option, families_default, world_families
from workbench.cli.tables import Column, print_records

if TYPE_CHECKING:
    from store import Checkpoint, Store
    from workbench.executors import ExecutorChoice


def regime_names() -> tuple[str, ...]:
    """The regimes an experiment can compare (see :data:`store.REGIMES`)."""
    from store import REGIMES

    return REGIMES


def _families(env: str, text: str, option: str) -> list[str]:
    families = family_list(text)
    known = world_families(env)
    unknown = [f for f in families if f not in known]
    if unknown or not families:
        raise click.BadParameter(
            f"unknown task famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown) or '(none given)'}; "
            f"{env}'s families: {', '.join(known)}",
            param_hint=option,
        )
    return families


def _row(checkpoint: Checkpoint) -> list[str]:
    sizes = "/".join(str(checkpoint.sizes.get(k, 0)) for k in ("rule", "skill", "subagent"))
    use = "–" if checkpoint.use_rate is None else f"{checkpoint.use_rate:.0%}"
    degradation = f"{checkpoint.degradation:+.1%}"
    if checkpoint.degradation > 0:
        degradation = f"[red]{degradation}[/]"
    statuses = Counter(a["status"] for a in checkpoint.admissions)
    return [
        checkpoint.regime,
        str(checkpoint.position),
        str(checkpoint.tasks),
        f"{checkpoint.passed}/{checkpoint.total} ({checkpoint.pass_rate:.0%})",
        sizes,
        use,
        f"{degradation} (−{checkpoint.lost} +{checkpoint.recovered})",
        ", ".join(f"{n} {status}" for status, n in sorted(statuses.items())) or "–",
    ]


def admission_lines(checkpoint: Checkpoint) -> list[str]:
    """What admission decided in the stretch before a checkpoint, one candidate a line."""
    return [
        f"    {a['status']}: {a['artifact']} ({a['kind']} v{a['version']})"
        + (f" — {a['why']}" if a["why"] else "")
        for a in checkpoint.admissions
    ]


CHECKPOINT_COLUMNS = [
    Column("regime"),
    Column("#", justify="right"),
    Column("tasks", justify="right"),
    Column("held-out pass"),
    Column("R/S/A"),
    Column("use", justify="right"),
    Column("signed degradation"),
    Column("candidates"),
]


def print_checkpoints(checkpoints: list[Checkpoint], title: str, out: Console = console) -> None:
    """The experiment's numbers, one record per regime and checkpoint (on ``out``, by default
    the CLI's console)."""
    rows = [[Text.from_markup(cell) for cell in _row(c)] for c in checkpoints]
    print_records(out, CHECKPOINT_COLUMNS, rows, title=title)


def summary_lines(checkpoints: list[Checkpoint]) -> list[str]:
    """Per regime: pass rate from the reference to the last checkpoint, and the largest
    signed degradation seen."""
    lines = []
    for regime in regime_names():
        own = [c for c in checkpoints if c.regime == regime]
        if len(own) < 2:
            continue
        worst = max(own, key=lambda c: c.degradation)
        lines.append(
            f"{regime}: held-out pass {own[0].pass_rate:.0%} → {own[-1].pass_rate:.0%}; "
            f"max signed degradation {worst.degradation:+.1%}"
            + (f" (checkpoint {worst.position})" if worst.degradation > 0 else "")
            + f"; {own[-1].stored} artifacts"
        )
    return lines


@click.command("evolve")
@env_option("Environment of the stream and the held-out set.")
@click.option(
    "--stream",
    default=families_default(lambda plugin: plugin.evolve_defaults()),
    show_default=True,
    help="Comma-separated families of the learning stream (train variations).",
)
@click.option(
    "--stream-size",
    type=integer(min=1),
    default=60,
    show_default=True,
    help="Learning tasks in the stream.",
)
@click.option(
    "--heldout",
    default=None,
    help="Comma-separated families of the held-out set (test variations) [default: the stream's].",
)
@click.option(
    "--heldout-size",
    type=integer(min=1),
    default=30,
    show_default=True,
    help="Held-out tasks scored at every checkpoint.",
)
@click.option(
    "--every",
    type=integer(min=1),
    default=20,
    show_default=True,
    help="Learning tasks between checkpoints.",
)
@click.option(
    "--regime",
    "regimes",
    type=LazyChoice(regime_names),
    multiple=True,
    help="Regime (repeat for several) [default: gated, no-replay-gate, no-preservation]; the "
    "ablations no-contract-gate, no-closure, rules-only and no-subagent on request.",
)
@click.option(
    "--rate",
    "rates",
    multiple=True,
    help="Scripted agent: MODE=P mistake probability over the demo's rates (repeatable).",
)
@click.option("--name", default="evolve", show_default=True, help="Experiment name (resumes).")
@click.option("--seed", type=integer(), default=0, show_default=True, help="Plan seed.")
@click.option("--step-limit", type=integer(min=1), default=100, show_default=True, help="Steps.")
@reasoner_option
@executor_options
@db_option
def evolve_command(
    store: Store,
    env: str,
    stream: str,
    stream_size: int,
    heldout: str | None,
    heldout_size: int,
    every: int,
    regimes: tuple[str, ...],
    rates: tuple[str, ...],
    name: str,
    seed: int,
    step_limit: int,
    reasoner_name: str | None,
    executor: ExecutorChoice,
) -> None:
    """Repository evolution: learn along an ordered stream and score the frozen repository on
    a fixed held-out set every N tasks, under each regime (gated: first closure and both
    gates; no-replay-gate: contract gate only; no-preservation: replay without the
    preservation set; no-contract-gate: replay gate only; no-closure: the compiler picks the
    type directly; rules-only and no-subagent: the gated repository with skills and subagents,
    or subagents, taken away — they run gated too). The scripted agent plays; interrupted runs
    resume with the same command."""
    from workbench.demo import demo_rates
    from workbench.evolution.experiment import EvolveConfig, evolve
    from workbench.executors import make_executor
    from workbench.progress import Cancelled
    from workbench.runner import AgentSpec

    config = EvolveConfig(
        env=env,
        stream=_families(env, stream, "--stream"),
        stream_size=stream_size,
        heldout=_families(env, heldout or stream, "--heldout"),
        heldout_size=heldout_size,
        every=every,
        seed=seed,
        step_limit=step_limit,
        agent=AgentSpec(rates=parse_rates(rates, demo_rates())),
    )
    chosen_backends(store, reasoner_name)  # fail early on a misconfigured endpoint

    def shown(checkpoint: Checkpoint) -> None:
        console.print("  ".join(_row(checkpoint)[:7]), highlight=False)
        for line in admission_lines(checkpoint):
            console.print(escape(line), highlight=False)

    try:
        with make_executor(executor) as pool:
            checkpoints = evolve(
                store.path,
                name,
                config,
                lambda scoped: chosen_backends(scoped, reasoner_name),
                executor=pool,
                regimes=list(regimes) or None,
                progress=RichProgress("checkpoints"),
                on_checkpoint=shown,
            )
    except ValueError as error:
        raise click.ClickException(str(error)) from error
    except (Cancelled, KeyboardInterrupt):
        errors.print("interrupted: finished checkpoints are kept; run the same command to resume")
        raise SystemExit(130) from None
    print_checkpoints(checkpoints, f"evolution {name}")
    for line in summary_lines(checkpoints):
        console.print(line, highlight=False)
    console.print(f"plot it with `workbench plot evolution --name {name} --out DIR`")
