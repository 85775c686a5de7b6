"""The ``compile``, ``replay`` and ``repo`` commands: thin layers over
:mod:`workbench.compile` and :mod:`workbench.admit`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.text import Text

from workbench.cli.options import (
    RichProgress,
    chosen_backends,
    console,
    db_option,
    errors,
    executor_options,
    existing_db_option,
    integer,
    out_folder,
    parse_integer,
    reasoner_option,
)
from workbench.cli.tables import Column, print_records

if TYPE_CHECKING:
    from store import ArtifactVersion, InterventionSpec, Store
    from workbench.admit.gates import SubagentModel
    from workbench.executors import ExecutorChoice

STATUS_STYLE = {
    "active": "green",
    "staged": "cyan",
    "rejected": "red",
    "superseded": "dim",
    "supported": "green",
    "deferred": "yellow",
}


def _status(text: str) -> str:
    return f"[{STATUS_STYLE.get(text, 'white')}]{text}[/]"


def _status_cell(text: str) -> Text:
    return Text(text, STATUS_STYLE.get(text, "white"))


CHECK_COLUMNS = [
    Column("obligation"),
    Column("status"),
    Column("slot"),
    Column("citations"),
    Column("witness", text=True),
]


def attempts_line(store: Store, spec: InterventionSpec) -> str:
    """``rule ✗ → skill ✓`` for a spec's attempts."""
    marks = [f"{a.kind} {'✓' if a.closed else '✗'}" for a in store.attempts(spec.id or 0)]
    return " → ".join(marks) or "–"


def show_spec(store: Store, spec: InterventionSpec) -> None:
    """A spec with every field's citations, then each attempt's obligation table."""
    from workbench.compile.specs import claims_of

    console.print(
        f"[bold]spec {spec.id}[/] {_status(spec.status)} · {escape(spec.mechanism or '–')} · "
        f"clusters {', '.join(map(str, spec.clusters))} · {escape(', '.join(spec.families))}"
    )
    if spec.reason:
        console.print(f"[yellow]{escape(spec.reason)}[/]")
    for name, claim in claims_of(spec):
        cited = ", ".join(c.label() for c in claim.citations) or "no evidence"
        value = f"  [dim]{escape(claim.value)}[/]" if claim.value else ""
        console.print(
            f"  {name:<26} {escape(claim.text)}{value}\n  {'':<26} [dim]cites {escape(cited)}[/]"
        )
    for attempt in store.attempts(spec.id or 0):
        rows = [
            [
                check.obligation,
                Text("closed", "green") if check.closed else Text("open", "red"),
                check.slot or "–",
                ", ".join(c.label() for c in check.citations),
                check.witness,
            ]
            for check in attempt.checks
        ]
        print_records(
            console,
            CHECK_COLUMNS,
            rows,
            title=f"attempt {attempt.position}: {attempt.kind} — {'closed' if attempt.closed else 'not closed'}",
        )
        if attempt.missing:
            console.print(f"  missing slots: {escape(', '.join(attempt.missing))}")
        if attempt.carried:
            console.print(f"  had to close: {escape('; '.join(attempt.carried))}")


@click.command("compile")
@click.option("--run", "run_id", type=integer(), help="Analysis run (default: the latest).")
@click.option(
    "--cluster", "cluster_id", type=integer(), help="Compile only the spec covering this cluster."
)
@click.option(
    "--show", "spec_id", type=integer(), help="Show one spec: citations and witness tables."
)
@click.option(
    "--again", is_flag=True, help="Recompile even when an equal spec exists (a revision)."
)
@reasoner_option
@existing_db_option
def compile_command(
    store: Store,
    run_id: int | None,
    cluster_id: int | None,
    spec_id: int | None,
    again: bool,
    reasoner_name: str | None,
) -> None:
    """Compile clusters: spec → first closed of Rule, Skill, Subagent → staged version."""
    if spec_id is not None:
        spec = store.spec(spec_id)
        if spec is None:
            raise click.ClickException(f"no spec {spec_id} (see `workbench compile`)")
        show_spec(store, spec)
        return
    from workbench.compile.compiler import compile_run
    from workbench.progress import Cancelled

    compiler = chosen_backends(store, reasoner_name).compiler
    try:
        report = compile_run(
            store,
            compiler,
            run_id=run_id,
            cluster_id=cluster_id,
            again=again,
            progress=RichProgress(),
        )
    except Cancelled:
        raise click.ClickException("compilation cancelled; compiled specs are kept") from None
    except ValueError as error:
        raise click.ClickException(str(error)) from error
    rows = [
        [
            str(item.spec.id) + (" (existing)" if item.reused else ""),
            _status_cell(item.spec.status),
            item.spec.mechanism or "–",
            ", ".join(map(str, item.spec.clusters)),
            attempts_line(store, item.spec),
            Text.assemble(
                f"{item.version.artifact} v{item.version.version} (",
                _status_cell(item.version.status),
                ")",
            )
            if item.version
            else "–",
            "" if item.version else item.spec.reason or "no schema closed: deferred",
        ]
        for item in report.compiled
    ]
    print_records(console, COMPILED_COLUMNS, rows, title=f"analysis run {report.run_id}")
    for cluster, why in report.skipped:
        console.print(
            f"[yellow]cluster {cluster.id} not compiled[/] (deferred by the analysis): {escape(why)}"
        )
    console.print(f"{len(report.staged)} new version(s) staged; admit them with `workbench replay`")
    _recorded_hint(store, report.staged)


def _recorded_hint(store: Store, staged: list[ArtifactVersion]) -> None:
    """Say which staged versions only imported logs back (no replay can judge them)."""
    from workbench.admit.evidence import recorded_only

    recorded = [v for v in staged if recorded_only(store, v)]
    if recorded:
        ids = " ".join(str(v.id) for v in recorded)
        console.print(
            f"[yellow]{len(recorded)} of them come from imported logs and are not replayed[/]: "
            "their contract gate runs on the recorded trajectories only; admit one explicitly "
            f"with `workbench repo admit ID --without-replay` (ids: {ids})"
        )


COMPILED_COLUMNS = [
    Column("spec"),
    Column("status"),
    Column("mechanism"),
    Column("clusters"),
    Column("attempts"),
    Column("staged"),
    Column("reason", text=True),
]


def _targets(store: Store, artifact: str | None) -> list[ArtifactVersion]:
    from workbench.admit.repository import admission_order

    staged = store.versions(status="staged")
    if artifact is None:
        return admission_order(staged)
    if artifact.isdigit():
        version = store.version(parse_integer(artifact, "--artifact"))
        if version is None:
            raise click.ClickException(f"no artifact version {artifact} (see `workbench repo ls`)")
        return [version]
    chosen = [v for v in staged if v.artifact == artifact]
    if not chosen:
        raise click.ClickException(f"artifact {artifact!r} has no staged version")
    return chosen


@click.command("replay")
@click.option(
    "--artifact",
    help="A version id, or an artifact name (its staged versions); default: every staged version.",
)
@executor_options
@reasoner_option
@existing_db_option
def replay_command(
    store: Store, artifact: str | None, executor: ExecutorChoice, reasoner_name: str | None
) -> None:
    """Admit staged versions: contract gate, then paired replay on the real environment."""
    model = _subagent_model(store, reasoner_name)
    _admit_all(store, _targets(store, artifact), executor, without_replay=False, model=model)


def _subagent_model(store: Store, reasoner_name: str | None) -> SubagentModel | None:
    """The endpoint model-written subagents run on in the contract gate (``openai`` only)."""
    from workbench.admit.gates import SubagentModel

    config = chosen_backends(store, reasoner_name).config
    if config.backend != "openai":
        return None
    return SubagentModel(config.base_url, config.model, config.api_key_env)


def _admit_all(
    store: Store,
    targets: list[ArtifactVersion],
    executor: ExecutorChoice,
    without_replay: bool,
    model: SubagentModel | None = None,
) -> None:
    """Run the gates on each target and print every check and the verdict."""
    from workbench.admit.repository import admit
    from workbench.executors import make_executor
    from workbench.progress import Cancelled

    if not targets:
        raise click.ClickException("nothing is staged; stage candidates with `workbench compile`")
    with make_executor(executor) as pool:  # one pool for every version's replays
        for version in targets:
            console.print(
                f"[bold]{escape(version.artifact)} v{version.version}[/] ({version.kind}, id {version.id})"
            )
            try:
                result = admit(
                    store,
                    version.id or 0,
                    executor=pool,
                    progress=RichProgress("episodes"),
                    without_replay=without_replay,
                    model=model,
                )
            except Cancelled:
                raise click.ClickException(
                    "replay cancelled; replayed episodes are kept — run again to resume"
                ) from None
            except ValueError as error:
                raise click.ClickException(str(error)) from error
            _print_admission(result)


def _print_admission(result) -> None:
    from workbench.admit.evidence import NOT_REPLAYED, not_replayed

    for check in result.contract.checks:
        mark = "[green]✓[/]" if check.passed else "[red]✗[/]"
        console.print(f"  contract {mark} {escape(check.name)}: {escape(check.detail)}")
    if result.replay is not None:
        for check in result.replay.checks:
            mark = (
                "[yellow]![/]"
                if check.name == NOT_REPLAYED
                else "[green]✓[/]"
                if check.passed
                else "[red]✗[/]"
            )
            console.print(f"  replay   {mark} {escape(check.name)}: {escape(check.detail)}")
        if "mcnemar_p" in result.replay.stats:
            console.print(f"  exact McNemar p = {result.replay.stats['mcnemar_p']:.3g}")
    version = result.version
    if version.status == "staged" and result.contract.passed:
        console.print(
            f"  → {_status('staged')} [yellow]not replayed[/]: its evidence is imported logs, "
            "which no simulator can replay; if its contract checks convince you, admit it "
            f"with `workbench repo admit {version.id} --without-replay`"
        )
        return
    marked = " [yellow](not replayed)[/]" if not_replayed(version) else ""
    console.print(f"  → {_status(result.status)}{marked}")


@click.group("repo")
def repo_group() -> None:
    """The artifact repository: versions, gate results, ledgers, export."""


@repo_group.command("admit")
@click.argument("artifact", required=False)
@click.option(
    "--without-replay",
    is_flag=True,
    help="Admit on the contract gate alone (versions from imported logs, which cannot be "
    "replayed); the version is marked 'not replayed' everywhere.",
)
@executor_options
@existing_db_option
def repo_admit(
    store: Store, artifact: str | None, without_replay: bool, executor: ExecutorChoice
) -> None:
    """Admit staged versions (a version id or an artifact name; default: every staged one)."""
    _admit_all(store, _targets(store, artifact), executor, without_replay=without_replay)


@repo_group.command("ls")
@click.option(
    "--status", type=click.Choice(list(STATUS_STYLE)[:4]), help="Only versions in this status."
)
@existing_db_option
def repo_ls(store: Store, status: str | None) -> None:
    """List artifact versions with their status and gate results."""
    rows = [
        [
            str(v.id),
            v.artifact,
            str(v.version),
            v.kind,
            _status_cell(v.status),
            Text.from_markup(_gate(v.contract_gate)),
            Text.from_markup(_replay_cell(store, v)),
            f"{sum(c.role == 'correction' for c in v.cases)}+{sum(c.role == 'preservation' for c in v.cases)}",
        ]
        for v in store.versions(status=status)  # type: ignore[arg-type]
    ]
    columns = [Column("id", justify="right"), Column("artifact"), Column("v", justify="right")]
    columns += [Column(name) for name in ("kind", "status", "contract", "replay", "cases")]
    print_records(console, columns, rows)


def _replay_cell(store: Store, version: ArtifactVersion) -> str:
    """The replay column: the verdict, or "not replayed" for versions no replay judged."""
    from workbench.admit.evidence import not_replayed, recorded_only

    if not_replayed(version):
        return "[yellow]not replayed[/]"
    if version.status == "staged" and recorded_only(store, version):
        return "[yellow]not replayed[/] (imported)"
    return _gate(version.replay_gate, replay=True)


def _gate(gate, replay: bool = False) -> str:
    if gate is None:
        return "–"
    mark = "[green]pass[/]" if gate.passed else "[red]fail[/]"
    if replay and gate.stats:
        s = gate.stats
        return f"{mark} +{s['fixed']}/-{s['broken']} reg {s['regressed']} p={s['mcnemar_p']:.2g}"
    return mark


@repo_group.command("show")
@click.argument("version_id", type=integer())
@existing_db_option
def repo_show(store: Store, version_id: int) -> None:
    """Show a version: contract, gate checks, replay ledger, and the spec it came from."""
    from workbench.admit.evidence import not_replayed

    version = store.version(version_id)
    if version is None:
        raise click.ClickException(f"no artifact version {version_id} (see `workbench repo ls`)")
    console.print(
        f"[bold]{escape(version.artifact)} v{version.version}[/] {version.kind} {_status(version.status)} "
        f"(origin {version.origin}"
        + (f", revises {version.parent}" if version.parent else "")
        + ")"
        + (" [yellow]not replayed[/]" if not_replayed(version) else "")
    )
    _show_contract(version.contract)
    for name, gate in (
        ("contract gate", version.contract_gate),
        ("replay gate", version.replay_gate),
    ):
        if gate is None:
            console.print(f"{name}: not run")
            continue
        console.print(f"{name}: {'[green]pass[/]' if gate.passed else '[red]fail[/]'}")
        for check in gate.checks:
            console.print(
                f"  {'✓' if check.passed else '✗'} {escape(check.name)}: {escape(check.detail)}"
            )
    ledger = store.ledger(version_id)
    if ledger:
        rows = [
            [
                e.case,
                e.role,
                Text.from_markup(_ok(e.baseline_success)),
                Text.from_markup(_ok(e.candidate_success)),
                e.change,
                "yes" if e.fired else "no",
            ]
            for e in ledger
        ]
        columns = [Column(name) for name in ("case", "role", "without", "with", "change", "fired")]
        print_records(console, columns, rows, title="replay ledger")
    if version.spec_id is not None:
        spec = store.spec(version.spec_id)
        if spec is not None:
            show_spec(store, spec)


def _show_contract(contract: dict) -> None:
    """A contract's slots, then its executable form field by field as the agent runs it
    (named after the artifact, not the stored form's placeholders)."""
    from workbench.compile.contracts import form_fields

    for key, value in contract.items():
        if key in ("kind", "name", "form", "positive", "negative", "probes"):
            continue
        console.print(f"  {key:<16} {escape(str(value))}")
    console.print("executable form:")
    for key, value in form_fields(contract):
        console.print(f"  {key:<16} {escape(str(value))}")


def _ok(value: bool | None) -> str:
    return "–" if value is None else ("[green]pass[/]" if value else "[red]fail[/]")


@repo_group.command("export")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@existing_db_option
def repo_export(store: Store, folder: Path) -> None:
    """Export the active repository: RULES.md, skills/<name>/SKILL.md, agents/<name>.md."""
    from workbench.admit.repository import export

    try:
        written = export(store, out_folder(folder))
    except (OSError, ValueError) as error:
        raise click.ClickException(str(error)) from error
    for path in written:
        console.print(str(path))


@repo_group.command("stage")
@click.argument("contract_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--spec", "spec_id", type=integer(), help="Spec whose evidence gives the correction cases."
)
@db_option
def repo_stage(store: Store, contract_file: Path, spec_id: int | None) -> None:
    """Stage a hand-written contract (JSON); it faces the same gates as compiled ones."""
    from workbench.admit.repository import ContractError, stage_file

    try:
        version = stage_file(store, contract_file, spec_id)
    except ContractError as error:
        raise click.ClickException(str(error)) from error
    console.print(
        f"staged {escape(version.artifact)} v{version.version} (id {version.id}) with "
        f"{len(version.cases)} replay case(s); admit it with `workbench replay --artifact {version.id}`"
    )
    if not version.cases:
        errors.print("[yellow]no replay case was found: the replay gate will reject it[/]")
