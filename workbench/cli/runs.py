"""Commands that play episodes: ``run`` and ``demo``."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from workbench.cli.options import (
    LazyChoice,
    RichProgress,
    check_endpoint,
    console,
    db_option,
    executor_options,
    family_list,
    integer,
    parse_rates,
    workers_option,
)
from workbench.cli.plugins import (
    agent_choice,
    env_option,
    environment_names,
    world_families,
)
from workbench.demo import DEMO_TEST, DEMO_TRAIN

if TYPE_CHECKING:
    from store import Store
    from workbench.agents.guidance import Guidance
    from workbench.executors import ExecutorChoice
    from workbench.runner import Executor, RunConfig, RunReport


def run_and_report(
    store: Store, config: RunConfig, batch: str | None, executor: Executor
) -> RunReport:
    """Run (or resume) a batch on ``executor``, printing its summary and each distinct error."""
    from workbench.executors import ClusterLost
    from workbench.progress import Cancelled
    from workbench.runner import run_batch

    try:
        report = run_batch(store, config, executor=executor, batch=batch, progress=RichProgress())
    except Cancelled:
        raise click.ClickException(
            "run cancelled; finished episodes are kept — run again to resume"
        ) from None
    except ClusterLost as error:
        raise click.ClickException(f"{error}; {_resume_hint(store, config, batch)}") from None
    except (ValueError, RuntimeError) as error:
        raise click.ClickException(str(error)) from error
    done = f"batch {report.batch_id}: {report.finished} episode(s) run, {report.failed} failed"
    if report.skipped:
        done += f"; {report.skipped} already recorded (resumed)"
    if report.lost:
        done += f"; {len(report.lost)} lost to crashed workers (recorded as failed)"
    console.print(done)
    for error, count in report.errors.most_common():
        console.print(f"  {count}× {escape(error)}", soft_wrap=True)
    return report


def _resume_hint(store: Store, config: RunConfig, batch: str | None) -> str:
    """What to do after a run stopped early: resume its batch (the newest run batch of
    ``config`` when no name was given)."""
    if batch is None:
        stored = config.model_dump(mode="json")
        same = [b for b in store.batches() if b.kind == "run" and b.params.get("config") == stored]
        batch = same[-1].name if same else None
    if batch is None:
        return "finished episodes are kept"
    return f"finished episodes are kept — `workbench run --resume {batch}` plays the rest"


@click.command("run")
@env_option("Environment (any installed environment plugin).")
@click.option(
    "--family",
    "families",
    help="Comma-separated task families of the environment (without it: the list).",
)
@click.option(
    "--split",
    type=click.Choice(["train", "dev", "test"]),
    default="train",
    show_default=True,
    help="The environment's variation split.",
)
@click.option(
    "--episodes",
    type=integer(min=1),
    default=10,
    show_default=True,
    help="Episodes to run (spread over the families).",
)
@click.option(
    "--agent",
    "agent_kind",
    type=agent_choice(),
    default="scripted",
    show_default=True,
    help="Which agent acts.",
)
@click.option(
    "--cmd", help="Command agent: the command line of your agent (JSON lines on stdin/stdout)."
)
@click.option("--model", help="LLM agent: model name [default: env WORKBENCH_MODEL].")
@click.option(
    "--rate",
    "rates",
    multiple=True,
    help="Scripted agent: MODE=P mistake probability (repeatable).",
)
@click.option(
    "--guidance",
    "guidance_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON file of guidance (rules, skills, subagents) the agent follows.",
)
@click.option(
    "--with-repo",
    is_flag=True,
    help="The agent follows the active artifact repository (see `workbench repo ls`).",
)
@click.option(
    "--with-manual",
    is_flag=True,
    help="The agent follows the manual's rules that have an executable form (see `workbench manual build`).",
)
@click.option(
    "--with-examples",
    "with_examples",
    type=integer(min=1),
    default=None,
    metavar="K",
    help="The agent is given K synthesized examples at each step (agentic retrieval; "
    "--agent openai or exemplar; the exemplar agent's default is 10).",
)
@click.option(
    "--example-kind",
    type=click.Choice(["backward", "whole"]),
    default=None,
    help="Only retrieve examples of this kind [default: both].",
)
@click.option(
    "--example-fallback",
    type=click.Choice(["stop", "explorer"]),
    default=None,
    help="What the exemplar agent does where no example applies: stop (fail honestly) or take "
    "the scripted explorer's greedy choice [default: stop].",
)
@executor_options
@click.option(
    "--seed",
    type=integer(),
    default=0,
    show_default=True,
    help="Run seed (episode seeds derive from it).",
)
@click.option(
    "--step-limit",
    type=integer(min=1),
    default=100,
    show_default=True,
    help="Most actions per episode.",
)
@click.option(
    "--batch",
    "batch_name",
    help="Batch name; an existing run batch with the same settings resumes.",
)
@click.option("--resume", "resume", help="Resume the named run batch with its stored settings.")
@click.option(
    "--like",
    "like",
    help="Repeat this run batch's plan (same tasks and seeds) and compare the two, paired.",
)
@db_option
def run_command(
    store: Store,
    env: str,
    families: str | None,
    split: str,
    episodes: int,
    agent_kind: str,
    cmd: str | None,
    model: str | None,
    rates: tuple[str, ...],
    guidance_file: Path | None,
    with_repo: bool,
    with_manual: bool,
    with_examples: int | None,
    example_kind: str | None,
    example_fallback: str | None,
    executor: ExecutorChoice,
    seed: int,
    step_limit: int,
    batch_name: str | None,
    resume: str | None,
    like: str | None,
) -> None:
    """Run an agent on environment tasks and record every episode (resumable, parallel)."""
    from workbench.executors import make_executor
    from workbench.runner import AgentSpec, RunConfig

    examples = (with_examples or 0, example_kind)
    if like:
        _run_like(
            store, like, guidance_file, with_repo, with_manual, batch_name, executor, examples
        )
        return
    if resume:
        existing = store.batch(resume)
        if existing is None or existing.kind != "run":
            raise click.ClickException(f"no run batch {resume!r} to resume")
        config = RunConfig.model_validate(existing.params["config"])
        with make_executor(executor) as pool:
            run_and_report(store, config, existing.name, pool)
        return
    if not families:
        raise click.UsageError(
            f"give --family or --resume BATCH; {env}'s families: {', '.join(world_families(env))}"
        )
    if agent_kind == "command" and not cmd:
        raise click.UsageError("--agent command needs --cmd 'your agent command'")
    if agent_kind == "script":
        raise click.UsageError(
            "--agent script replays recorded actions (the synthesis filter uses it); "
            "`workbench run` has no actions to give it"
        )
    if agent_kind == "openai":
        check_endpoint(store, model)
    if example_fallback and agent_kind != "exemplar":
        raise click.UsageError("--example-fallback is for --agent exemplar")
    _check_examples(store, env, agent_kind, *examples, fallback=example_fallback or "stop")
    guidance = _guidance(store, guidance_file, with_repo, with_manual)
    manuals = store.manuals() if with_manual else []
    config = RunConfig(
        env=env,
        families=family_list(families),
        split=split,
        episodes=episodes,
        seed=seed,
        step_limit=step_limit,
        agent=AgentSpec(
            kind=agent_kind,
            rates=parse_rates(rates),
            cmd=shlex.split(cmd or ""),
            model=model,
            examples=examples[0],
            example_kind=example_kind,  # type: ignore[arg-type]
            example_fallback=example_fallback or "stop",  # type: ignore[arg-type]
        ),
        guidance=guidance,
        manual=manuals[-1].markdown if manuals else "",
    )
    with make_executor(executor) as pool:
        run_and_report(store, config, batch_name, pool)


EXAMPLE_AGENTS = ("openai", "exemplar")
"""The agents that read retrieved examples."""


def _check_examples(
    store: Store, env: str, agent: str, count: int, kind: str | None, fallback: str = "stop"
) -> None:
    """Refuse examples for an agent that reads none; open (and build, once) the index the
    workers will read, and say what it holds — or that there is nothing to retrieve."""
    if not count and agent != "exemplar":
        if kind:
            raise click.UsageError("--example-kind needs --with-examples K")
        return
    if agent not in EXAMPLE_AGENTS:
        raise click.UsageError(
            f"--with-examples needs an agent that reads examples ({', '.join(EXAMPLE_AGENTS)}), "
            f"not {agent}"
        )
    from workbench.synth.retrieval import ExampleIndex

    index = ExampleIndex.open(store, env=env, kind=kind)
    what = f"kept {kind} examples" if kind else "kept examples"
    if not len(index):
        if agent != "exemplar":
            raise click.ClickException(f"the database holds no {what} of {env} to retrieve")
        does = "stop at once" if fallback == "stop" else "play as the explorer"
        console.print(f"no {what} of {env}: the exemplar agent will {does}", soft_wrap=True)
        return
    retrievers = "BM25 and dense" if index.dense else "BM25"
    console.print(f"retrieving from {len(index)} {what} of {env} ({retrievers})")
    if index.dense_note():
        console.print(index.dense_note(), markup=False, soft_wrap=True)


def _guidance(
    store: Store, guidance_file: Path | None, with_repo: bool, with_manual: bool = False
) -> Guidance:
    from workbench.agents.guidance import Guidance

    guidance = Guidance()
    if guidance_file is not None:
        try:
            guidance = Guidance.model_validate_json(guidance_file.read_text())
        except ValueError as error:
            raise click.ClickException(f"{guidance_file}: {error}") from error
    if with_repo:
        from workbench.admit.repository import active_guidance

        active = active_guidance(store)
        if not active.forms:
            raise click.ClickException(
                "the repository has no active artifact yet (see `workbench repo ls`)"
            )
        guidance = Guidance(forms=[*guidance.forms, *active.forms])
    if with_manual:
        from workbench.manual.build import guidance_of

        rules = guidance_of(store)
        if not rules.forms and not store.manuals():
            raise click.ClickException(
                "no manual yet: build rules with `workbench manual build` (executable ones guide "
                "any agent) or formulate one with `workbench manual formulate` (an LLM agent reads it)"
            )
        guidance = Guidance(forms=[*guidance.forms, *rules.forms])
    return guidance


def _run_like(
    store: Store,
    like: str,
    guidance_file: Path | None,
    with_repo: bool,
    with_manual: bool,
    batch_name: str | None,
    executor: ExecutorChoice,
    examples: tuple[int, str | None] = (0, None),
) -> None:
    from workbench.admit.evaluate import compare_runs
    from workbench.executors import make_executor
    from workbench.runner import RunConfig

    existing = store.batch(like)
    if existing is None or existing.kind != "run":
        raise click.ClickException(f"no run batch {like!r} to repeat")
    config = RunConfig.model_validate(existing.params["config"])
    update: dict = {"guidance": _guidance(store, guidance_file, with_repo, with_manual)}
    if examples[0]:
        _check_examples(store, config.env, config.agent.kind, *examples)
        update["agent"] = config.agent.model_copy(
            update={"examples": examples[0], "example_kind": examples[1]}
        )
    config = config.model_copy(update=update)
    suffix = (
        "repo" if with_repo else "manual" if with_manual else "examples" if examples[0] else "again"
    )
    name = batch_name or f"{existing.name}-{suffix}"
    with make_executor(executor) as pool:
        report = run_and_report(store, config, name, pool)
    paired = compare_runs(store, existing.id, report.batch_id)
    for label, successes in (
        (existing.name, paired.baseline_successes),
        (report.batch_id, paired.candidate_successes),
    ):
        rate, low, high = paired.rate(successes)
        console.print(
            f"{escape(label)}: {successes}/{paired.pairs} succeeded ({rate:.0%}, 95% CI {low:.0%}–{high:.0%})"
        )
    console.print(
        f"paired: {paired.fixed} fixed, {paired.broken} broken; exact McNemar p = {paired.mcnemar_p:.3g}"
    )


def play_demo(
    store: Store,
    train: int | None,
    test: int | None,
    workers: int,
    env: str | None = None,
) -> None:
    """Run (or resume) the demo's batches into ``store``, each summarised as ``run`` does
    (every world the workbench ships unless ``env`` names one; sizes: each world's own
    unless given)."""
    from workbench.demo import demo_configs
    from workbench.executors import LocalPool

    with LocalPool(workers) as executor:
        for name, config in demo_configs(train, test, env=env):
            run_and_report(store, config, name, executor)


@click.command("demo")
@click.option(
    "--train",
    type=integer(min=1),
    default=None,
    help=f"Episodes on train tasks in each world [default: the world's own; {DEMO_TRAIN} in most].",
)
@click.option(
    "--test",
    "test_",
    type=integer(min=1),
    default=None,
    help=f"Episodes on test tasks in each world [default: the world's own; {DEMO_TEST} in most].",
)
@click.option(
    "--env",
    "env",
    type=LazyChoice(environment_names),
    default=None,
    help="Play only this world [default: every world the workbench ships].",
)
@workers_option
@db_option
def demo_command(
    store: Store, train: int | None, test_: int | None, env: str | None, workers: int
) -> None:
    """Build a demo database offline: the scripted agent on the real tasks of the workbench's
    own worlds."""
    play_demo(store, train, test_, workers, env)
    console.print(f"demo ready in {store.path}: try `workbench ls --failed` or `workbench stats`")
