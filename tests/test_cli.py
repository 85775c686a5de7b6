"""The `workbench` command, through click's runner and as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from store import Store
from workbench.cli import main


@pytest.fixture
def run(db_path):
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True):
        result = runner.invoke(
            main, [*args], env={"WORKBENCH_DB": str(db_path)}, catch_exceptions=False
        )
        if ok:
            assert result.exit_code == 0, result.output
        return result

    return invoke


def all_commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from all_commands(command, (*prefix, name))


def test_every_command_documents_itself():
    runner = CliRunner()
    assert "Usage: workbench" in runner.invoke(main, ["--help"]).output
    for path, command in all_commands(main):
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, path
        assert (command.help or "").strip(), f"`workbench {' '.join(path)}` has no help text"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"option {param.opts} of `{' '.join(path)}` has no help"


def test_import_ls_show_search_stats_export(run, data_dir, tmp_path):
    result = run("import", str(data_dir / "workbench" / "two_episodes.jsonl"))
    assert "imported 2 episode(s)" in result.output
    listing = run("ls", "--failed").output
    assert "boil-3-s8" in listing and "boil-3-s7" not in listing
    assert "1 of 1 episode(s)" in listing
    shown = run("show", "boil-3-s8", "--steps", "2:3").output
    assert "focus on sink" in shown and "open door to kitchen" not in shown
    assert "wrong-focus" in shown
    assert "boil-3-s8" in run("search", "sink").output
    stats = run("stats", "--by", "family").output
    assert "boil" in stats and "50.0%" in stats
    out = tmp_path / "export.jsonl"
    run("export", "--passed", "--out", str(out))
    [line] = out.read_text().splitlines()
    assert json.loads(line)["episode"]["id"] == "boil-3-s7"


def test_bad_input_is_a_message_not_a_traceback(run, tmp_path, db_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "trajectory-workbench", "version": 1, "task": {}}\n')
    result = run("import", str(bad), ok=False)
    assert result.exit_code == 1
    assert f"{bad}: line 1: field 'batch'" in result.output
    assert "nothing was imported" in result.output
    assert "Traceback" not in result.output
    assert Store(db_path).count_episodes() == 0


def test_show_unknown_episode_and_bad_range(run, data_dir):
    run("import", str(data_dir / "workbench" / "two_episodes.jsonl"))
    assert "no episode 'nope'" in run("show", "nope", ok=False).output
    assert "expected a:b" in run("show", "boil-3-s8", "--steps", "x:y", ok=False).output


def _long_episode(db_path, steps: int, big: int) -> None:
    from store import Batch, Episode, Step, Task

    with Store(db_path) as store:
        store.put_batch(Batch(id="b", name="b"))
        store.put_task(Task(id="t", environment="x", family="f"))
        text = "".join(f"{k:09d}\n" for k in range(big // 10))
        rows = [
            Step(
                episode_id="long",
                index=i,
                kind="action",
                action=f"act {i}",
                observation=text if i == 1 else f"seen {i}",
                raw={"output": text} if i == 1 else {"n": i},
            )
            for i in range(steps)
        ]
        store.add_episode(Episode(id="long", task_id="t", batch_id="b"), rows)


def test_show_pages_steps_and_cuts_texts_to_a_window_with_their_length(run, db_path):
    _long_episode(db_path, 250, 30_000)
    first = run("show", "long").output
    assert "act 99" in first and "act 100" not in first
    assert "steps 0..99 of 250: --steps 100:200 for the next, --all for every step" in first
    assert "[characters 0..1,999 of 30,000: --chars for more]" in first
    assert "000000199" in first and "000000200" not in first  # 2,000 characters of it
    every = run("show", "long", "--all").output
    assert "act 249" in every and "for the next" not in every
    window = run("show", "long", "--steps", "1", "--chars", "29990:", "--raw").output
    assert "000002999" in window and "000000000" not in window
    assert "[characters 29,990..29,999 of 30,000: --chars for more]" in window
    assert "a record of" in window and "not shown with a cut text" in window
    whole = run("show", "long", "--steps", "1", "--chars", "0:", "--raw").output
    assert "--chars for more" not in whole and '"output": "000000000' in whole
    assert "--steps or --all" in run("show", "long", "--all", "--steps", "1", ok=False).output
    assert "expected a:b" in run("show", "long", "--chars", "5:2", ok=False).output


def test_show_names_the_agent_of_each_step_of_a_group_chat(run, tmp_path):
    chat = {
        "messages": [
            {"role": "user", "content": "2 + 2?", "name": "Admin"},
            {"role": "WebSurfer", "content": "It is 4."},
        ]
    }
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(chat) + "\n")
    run("import", str(path))
    episode_id = run("ls").output.split("episode:")[1].split()[0]
    shown = run("show", episode_id).output
    assert "step 0 · message · user · Admin" in shown
    assert "step 1 · message · assistant · WebSurfer" in shown


def test_console_script_runs_as_a_subprocess(db_path):
    Store(db_path).close()
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "ls", "--db", str(db_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "0 of 0 episode(s)" in result.stdout


@pytest.mark.parametrize(
    "command",
    [["ls"], ["show", "e1"], ["search", "door"], ["stats"], ["export"], ["clusters"],
     ["analyze"], ["compile"], ["repo", "ls"], ["repo", "show", "1"], ["manual", "export",
     "--out", "m.md"], ["spans", "export"], ["plot", "evolution", "--out", "p"]],
)  # fmt: skip
def test_a_mistyped_database_path_is_an_error_and_creates_nothing(tmp_path, command):
    typo = tmp_path / "runz" / "workbnech.db"
    result = CliRunner().invoke(main, ["--db", str(typo), *command])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: no database at {typo}")
    assert not typo.parent.exists()


def test_every_integer_a_command_takes_fits_sqlite():
    from workbench.cli.options import SQLITE_INT_MAX

    for path, command in all_commands(main):
        for param in command.params:
            if isinstance(param.type, click.types.IntParamType):
                bounded = isinstance(param.type, click.IntRange) and param.type.max is not None
                assert bounded and param.type.max <= SQLITE_INT_MAX, (path, param.name)


@pytest.mark.parametrize(
    "command",
    [["ls", "--limit"], ["compile", "--show"], ["repo", "show"], ["replay", "--artifact"],
     ["search", "x", "--limit"]],
)  # fmt: skip
def test_a_number_too_large_for_sqlite_is_a_usage_error(run, store, command):
    result = run(*command, "99999999999999999999", ok=False)
    assert result.exit_code == 2, result.output
    assert "99999999999999999999" in result.output and "9223372036854775807" in result.output


def test_show_steps_out_of_range_and_export_under_a_file_are_one_line(run, data_dir, tmp_path):
    run("import", str(data_dir / "workbench" / "two_episodes.jsonl"))
    steps = run("show", "boil-3-s8", "--steps", "99999999999999999999:", ok=False)
    assert steps.exit_code == 2 and "is too large" in steps.output
    (tmp_path / "afile").write_text("")
    for command in (["export", "--out"], ["spans", "export", "--out"]):
        out = run(*command, str(tmp_path / "afile" / "x.jsonl"), ok=False)
        assert out.exit_code == 1
        assert (
            out.output.strip()
            == f"Error: cannot write under {tmp_path / 'afile'}: {tmp_path / 'afile'} is a file"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "workbench.db"]


def test_quick_start_imports_every_sample_format_and_lists_failures(run):
    from workbench.ingest import formats

    imported = run("import", "--samples").output
    for importer in formats.IMPORTERS:
        if importer.name != "workbench":
            assert f": {importer.name}: " in imported, importer.name
    failed = run("ls", "--failed").output
    assert "FAIL" in failed and "pass" not in failed
    assert "already imported" in run("import", "--samples").output


def test_run_records_a_batch_and_a_second_run_resumes(run, db_path):
    args = [
        "run",
        "--family",
        "find-living-thing",
        "--episodes",
        "3",
        "--workers",
        "1",
        "--batch",
        "cli",
        "--step-limit",
        "30",
    ]
    first = run(*args).output
    assert "batch cli: 3 episode(s) run" in first
    assert "3 already recorded" in run(*args).output
    with Store(db_path) as store:
        assert store.count_episodes() == 3 and store.batch("cli").kind == "run"


def test_run_reports_bad_options_clearly(run, monkeypatch):
    assert (
        "unknown mode 'dance'"
        in run("run", "--family", "boil", "--rate", "dance=0.5", ok=False).output
    )
    assert "--cmd" in run("run", "--family", "boil", "--agent", "command", ok=False).output
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "WORKBENCH_MODEL"):
        monkeypatch.delenv(name, raising=False)
    result = run("run", "--family", "boil", "--agent", "openai", ok=False)
    assert (
        result.exit_code == 1
        and "OPENAI_BASE_URL" in result.output
        and "Traceback" not in result.output
    )
    assert "no run batch 'nope'" in run("run", "--resume", "nope", ok=False).output


@pytest.mark.parametrize("env", ["scienceworld", "textworld"])
def test_run_and_evolve_list_the_families_of_their_own_world(run, env):
    from workbench.envs.registry import environment_plugin

    result = run("run", "--env", env, ok=False)
    assert result.exit_code == 2 and "Traceback" not in result.output
    families = environment_plugin(env).families()
    assert f"{env}'s families: {', '.join(families)}" in " ".join(result.output.split())
    result = run("evolve", "--env", env, "--stream", f"{families[0]},nonsense", ok=False)
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(result.output.split())
    assert f"unknown task family nonsense; {env}'s families: {', '.join(families)}" in said


def test_demo_builds_train_and_test_batches_in_every_world(run, db_path):
    assert "demo ready" in run("demo", "--train", "4", "--test", "2", "--workers", "1").output
    with Store(db_path) as store:
        names = {b.name for b in store.batches()}
        assert names == {"demo-train", "demo-test", "demo-textworld-train", "demo-textworld-test"}
        assert store.count_episodes() == 12
        assert {e.split for e in store.episodes()} == {"train", "test"}
        worlds = {store.task(e.task_id).environment for e in store.episodes()}
        assert worlds == {"scienceworld", "textworld"}


def test_demo_of_one_world(run, db_path):
    run("demo", "--env", "textworld", "--train", "2", "--test", "1", "--workers", "1")
    with Store(db_path) as store:
        assert {b.name for b in store.batches()} == {"demo-textworld-train", "demo-textworld-test"}
        assert store.count_episodes() == 3


def test_a_file_that_is_not_a_database_is_the_same_one_line_error_for_ls_and_tui(
    tmp_path, monkeypatch
):
    from tui.app import WorkbenchApp

    monkeypatch.setattr(WorkbenchApp, "run", lambda self, **kwargs: None)
    notadb = tmp_path / "notadb.txt"
    notadb.write_text("these are notes, not a database\n")
    outputs = []
    for command in ("ls", "tui"):
        result = CliRunner().invoke(main, [command, "--db", str(notadb)])
        assert isinstance(result.exception, SystemExit) and result.exit_code == 1, command
        outputs.append(result.output)
    assert (
        outputs[0]
        == outputs[1]
        == f"Error: cannot open database {notadb}: file is not a database\n"
    )


@pytest.mark.parametrize("command", [["ls"], ["search", "sink"], ["stats"], ["export"]])
def test_a_filter_value_that_names_nothing_is_one_line_with_the_close_ones(run, data_dir, command):
    run("import", str(data_dir / "workbench" / "two_episodes.jsonl"))
    for option, value, message in (
        ("--family", "biol", "no family is called 'biol'; close ones: boil"),
        ("--family", "xyz", "no family is called 'xyz'; known ones: boil"),
        ("--agent", "scriptd", "no agent is called 'scriptd'; close ones: scripted"),
        ("--batch", "scripted-basline", "no batch is called 'scripted-basline'; close ones: "),
        ("--task", "scienceworld:boil:4", "no task is called 'scienceworld:boil:4'; close ones: "),
    ):
        result = run(*command, option, value, ok=False)
        assert result.exit_code == 1, (command, option, result.output)
        assert result.output.startswith(f"Error: {message}"), result.output
        assert result.output.count("\n") == 1, result.output
    for option, value in (("--batch", "run-7"), ("--batch", "scripted-baseline")):
        run(*command, option, value)  # a batch by id or by name
    # the values exist; only their combination is empty: the normal empty result
    run(*command, "--family", "boil", "--split", "test", "--task", "scienceworld:boil:3")


def test_a_filter_value_of_another_workspace_names_nothing_here(run, data_dir):
    run("import", str(data_dir / "workbench" / "two_episodes.jsonl"))
    result = run("--workspace", "elsewhere", "ls", "--family", "boil", ok=False)
    assert result.output == "Error: no family is called 'boil'; there are no families here yet\n"
    assert "0 of 0 episode(s)" in run("ls", "--family", "boil", "--split", "test").output
    analyzed = run("analyze", "--family", "biol", ok=False).output
    assert analyzed == "Error: no family is called 'biol'; close ones: boil\n"


@pytest.mark.slow
def test_a_run_whose_agent_cannot_start_names_the_error_once_with_its_count(
    run, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    output = run(
        "run", "--family", "find-living-thing", "--episodes", "2", "--workers", "1",
        "--step-limit", "10", "--agent", "command", "--cmd", f"{sys.executable} my_agent.py",
    ).output  # fmt: skip
    assert "2 episode(s) run, 2 failed" in output
    [line] = [line for line in output.splitlines() if "my_agent.py" in line]
    assert line.strip().startswith("2× agent exited with code 2: "), output
    assert "can't open file" in line and line.strip().endswith("No such file or directory")


@pytest.fixture
def shared_folder():
    """A folder every user may enter and write in (pytest's own are the owner's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="workbench-shared-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder)


def test_a_read_only_database_is_read_and_a_write_to_it_is_one_line(shared_folder, data_dir):
    db = shared_folder / "w.db"
    with Store(db) as store:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.chmod(0o444)  # the folder stays writable: only the file is read-only
    as_other = []
    if os.geteuid() == 0:  # root writes any file: run as nobody, for whom the file is read-only
        as_other = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    workbench = [*as_other, sys.executable, "-m", "workbench", "--db", str(db)]
    listing = subprocess.run([*workbench, "ls"], capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    sample = data_dir / "workbench" / "two_episodes.jsonl"
    written = subprocess.run([*workbench, "import", str(sample)], capture_output=True, text=True)
    assert written.returncode == 1
    assert (
        written.stderr.strip()
        == f"Error: cannot write to database {db}: it is read-only here (check the permissions of the file and its folder)"
    )


HOSTILE = "do \x1b]0;pwned\x07 it \x1b[2J\x1b[31mred\x9b"


@pytest.mark.parametrize("terminal", [False, True])
def test_control_sequences_from_imported_logs_never_reach_the_terminal(tmp_path, terminal):
    log = tmp_path / "evil.jsonl"
    record = {"messages": [{"role": "user", "content": HOSTILE}], "success": False}
    log.write_text(json.dumps({**record, "id": HOSTILE}) + "\n")
    env = {"WORKBENCH_DB": str(tmp_path / "w.db"), "COLUMNS": "120"}
    if terminal:  # rich styles its output as for a terminal: its own escapes, none of the log's
        env |= {"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "0"}
    runner = CliRunner()
    outputs = [runner.invoke(main, ["import", str(log)], env=env).output]
    (episode,) = Store(tmp_path / "w.db").episodes()
    for command in (["ls"], ["show", episode.id], ["search", "pwned"], ["stats"]):
        result = runner.invoke(main, command, env=env)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    shown = "".join(outputs)
    assert "\\x1b]0;pwned" in shown and "\\x9b" in shown  # shown, not obeyed (rich drops BEL)
    assert "\x07" not in shown and "\x9b" not in shown and "\x1b]" not in shown
    assert "\x1b[2J" not in shown and "\x1b[31mred" not in shown
