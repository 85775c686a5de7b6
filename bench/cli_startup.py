"""Start-up cost: CPU of ``workbench --help``, ``workbench ls`` and the terminal UI's first paint.

Each is measured against its anchor, in the same run (issue 14; target: workbench's CPU ≤ the
anchor's for all three):

- ``help``: ``workbench --help`` against ``sqlite-utils --help`` (the sqlite-utils installed
  as the workbench's own dependency, in the same environment);
- ``ls``: ``workbench ls --limit 1`` on a database holding the shipped samples (built first
  with ``workbench import --samples``) against the same anchor;
- ``tui``: the terminal UI opening a 10,000-step mini-swe-agent run, against mini-swe-agent's
  own trajectory inspector (``mini-extra inspector FILE``) opening the same run. The run is
  synthesised in mini-swe-agent's trajectory format (``mini-swe-agent-1.1``, as its
  ``DefaultAgent.save`` writes it: ``--steps`` assistant messages with one
  ``mswea_bash_command`` block each, each answered by an observation, between the system and
  task messages and the ``exit`` message) and imported into a fresh database with
  ``workbench import``. mini-swe-agent (pinned, ``MINI_SWE_AGENT``) lives in a bench-only
  virtualenv under ``~/.cache/workbench-bench/`` (``--cache``), made with pip on first use —
  never in the project's environment.

What one measurement is: the CPU time (user + sys of the child, from
``getrusage(RUSAGE_CHILDREN)``) of one fresh process from its start to its exit; the figure is
the median of ``--repeat`` processes after one unmeasured warm-up (which also writes bytecode
caches: the children run without ``PYTHONDONTWRITEBYTECODE``, as an installed package would). CPU time, not wall time, so that other load on the machine does not blur it.

Both UIs start through their real console scripts, each told the run to open:
``mini-extra inspector FILE`` and ``workbench tui --db DB --episode ID`` (the episode the
import made of FILE). That is the fair pair: the inspector is given one run file and opens on
its first step; ``--episode`` is the workbench's way to do the same from the shell (``q``
goes back to the Runs screen, which is made, and reads its episodes, only then). Opening the Runs screen first and
pressing ``enter`` there measures browsing a database, which the inspector does not do.

Both run under the same small driver (``DRIVER`` below) in their own interpreters. The driver
only makes Textual's ``App.run`` headless at 120x36 with an auto pilot, which, once the app
is ready:

- inspector: goes straight on (its first screen is the run's first page: the system and task
  messages, mounted by its ``on_mount``);
- workbench: waits until the Trajectory screen has its step list and first step;

then, for both alike, waits until the screen has handled its pending messages and refreshed
its layout, renders its full frame into a terminal-like Rich console (the work one real
terminal frame costs; the headless driver itself renders nothing) and checks that the frame
shows the first step's text — if not yet (mounts still under way), waits and renders again —
then quits. The frames rendered are printed. The driver imports ``textual.app`` before the
console script runs; both apps import it anyway.

Prints each pair, its ratio workbench/anchor and whether the target is met. Exit status 0,
unless ``--check`` is given and a target is missed (then 1).

    python bench/cli_startup.py [--repeat 5] [--steps 10000] [--only help,ls,tui] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MINI_SWE_AGENT = "2.4.6"
"""The mini-swe-agent release whose inspector is the anchor of the ``tui`` pair."""

SIZE = (120, 36)
MARKER = "helpful assistant"
"""Text of the run's first step (the system message) that both first frames must show."""

DRIVER = r"""
import io, json, runpy, sys

import textual.app
from rich.console import Console

script, kind, width, height, marker, *argv = sys.argv[1:]
size = (int(width), int(height))
result = {}


def frame_text(app):
    # One full frame of the current screen, rendered the way the terminal driver renders it.
    console = Console(
        width=size[0], height=size[1], file=io.StringIO(), force_terminal=True,
        color_system="truecolor", legacy_windows=False, safe_box=False, record=True,
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text(styles=False)


async def first_paint(pilot):
    app = pilot.app
    if kind == "workbench":
        while not hasattr(app.screen, "painted"):  # the Trajectory screen is pushed
            await pilot.pause()
        await app.screen.painted.wait()  # its step list and first step are there
    frames, shown = 0, False
    while not shown and frames < 20:  # mounts may still be under way: one more frame then
        await pilot._wait_for_screen()
        await pilot.pause()  # and the layout is refreshed, as the screen's update timer does
        frames += 1
        shown = marker in frame_text(app)
    result.update(screen=type(app.screen).__name__, shows_first_step=shown, frames=frames)
    app.exit()


run = textual.app.App.run
textual.app.App.run = lambda self, **_: run(self, headless=True, size=size, auto_pilot=first_paint)
sys.argv = [script, *argv]
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as error:
    result["exit"] = error.code
print(json.dumps(result))
"""


@dataclass
class Pair:
    """One measured pair: the workbench command and its anchor."""

    name: str
    workbench: list[str]
    anchor: list[str]
    anchor_name: str


def cpu_seconds(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """CPU (user + sys) of one run of ``command`` to its exit, and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, out.stdout


def median_cpu(command: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """Median CPU of ``repeat`` fresh runs after one unmeasured warm-up."""
    cpu_seconds(command, env)
    return statistics.median(cpu_seconds(command, env)[0] for _ in range(repeat))


def script(name: str, bindir: Path) -> str:
    """The console script ``name`` of the environment whose interpreter lives in ``bindir``."""
    path = bindir / name
    if not path.exists():
        found = shutil.which(name)
        if found is None:
            raise SystemExit(f"no {name} script beside {bindir} or on PATH")
        path = Path(found)
    return str(path)


# -- the 10,000-step run ---------------------------------------------------------------------


def mini_trajectory(steps: int, observation: int) -> dict:
    """A mini-swe-agent run of ``steps`` commands in its own format (``mini-swe-agent-1.1``)."""
    rng = random.Random(0)
    words = ["def", "return", "self", "import", "class", "None", "value", "path", "test", "x"]
    messages: list[dict] = [
        {
            "role": "system",
            "content": "You are a helpful assistant that can interact with a computer shell "
            "to solve programming tasks.",
            "extra": {},
        },
        {
            "role": "user",
            "content": "<pr_description>\nFix the separability matrix of nested compound "
            "models.\n</pr_description>",
            "extra": {},
        },
    ]
    for i in range(steps):
        command = f"grep -n 'value_{i}' src/module_{i % 37}.py | head -20"
        content = (
            f"THOUGHT: step {i}: I look for where value_{i} is defined before changing it.\n\n"
            f"```mswea_bash_command\n{command}\n```"
        )
        output = " ".join(rng.choices(words, k=observation // 5))
        messages.append(
            {
                "role": "assistant",
                "content": content,
                "extra": {
                    "actions": [{"command": command}],
                    "response": {
                        "id": f"chatcmpl-{i}",
                        "model": "gpt-5-mini",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 1000 + 120 * i,
                            "completion_tokens": 60,
                            "total_tokens": 1060 + 120 * i,
                        },
                    },
                    "cost": 0.0004,
                    "timestamp": 1_760_000_000.0 + i,
                },
            }
        )
        messages.append(
            {
                "role": "user",
                "content": f"<returncode>0</returncode>\n<output>\n{output}\n</output>",
                "extra": {
                    "raw_output": output,
                    "returncode": 0,
                    "timestamp": 1_760_000_000.5 + i,
                    "exception_info": None,
                },
            }
        )
    messages.append(
        {
            "role": "exit",
            "content": "LimitsExceeded",
            "extra": {"exit_status": "LimitsExceeded", "submission": ""},
        }
    )
    return {
        "info": {
            "model_stats": {"instance_cost": 0.0004 * steps, "api_calls": steps},
            "config": {
                "agent": {"step_limit": steps, "cost_limit": 0.0},
                "agent_type": "minisweagent.agents.default.DefaultAgent",
                "model": {"model_name": "gpt-5-mini"},
            },
            "mini_version": MINI_SWE_AGENT,
            "exit_status": "LimitsExceeded",
            "submission": "",
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "astropy__astropy-12907",
    }


def mini_swe_agent_env(cache: Path) -> Path:
    """The bin folder of the bench-only virtualenv with mini-swe-agent, made on first use."""
    venv = cache / "mini-swe-agent-venv"
    python = venv / "bin" / "python"
    wanted = f"mini-swe-agent=={MINI_SWE_AGENT}"
    if python.exists():
        probe = subprocess.run(
            [str(python), "-m", "pip", "show", "mini-swe-agent"], capture_output=True, text=True
        )
        if f"Version: {MINI_SWE_AGENT}" in probe.stdout:
            return venv / "bin"
    print(f"installing {wanted} into {venv} (once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", wanted], check=True)
    return venv / "bin"


def imported_episode(db: Path) -> str:
    """The id of the one episode in ``db`` (the run imported)."""
    from store import Store

    with Store(db) as store:
        (episode,) = store.listing()
    return episode.id


def textual_version(python: Path) -> str:
    out = subprocess.run(
        [str(python), "-c", "from importlib.metadata import version; print(version('textual'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def ui_command(python: Path, console_script: str, kind: str, driver: Path, *argv: str) -> list[str]:
    return [str(python), str(driver), console_script, kind, *map(str, SIZE), MARKER, *argv]


def check_first_paint(command: list[str], env: dict[str, str], screen: str) -> int:
    """Run the UI once; fail unless it ends on ``screen`` showing the first step. Returns how
    many frames the driver rendered until the first step was on screen."""
    _, out = cpu_seconds(command, env)
    result = json.loads(out.strip().splitlines()[-1])
    if result.get("screen") != screen or not result.get("shows_first_step"):
        raise SystemExit(f"{command[2]}: expected {screen} showing {MARKER!r}, got {result}")
    return result["frames"]


# -- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="measured processes per command")
    parser.add_argument("--steps", type=int, default=10_000, help="commands in the run (tui)")
    parser.add_argument("--observation", type=int, default=400, help="characters per output")
    parser.add_argument("--only", default="help,ls,tui", help="pairs to measure, comma-separated")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".cache" / "workbench-bench",
        help="where the bench-only mini-swe-agent virtualenv lives",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    only = set(args.only.split(","))

    bindir = Path(sys.executable).parent
    workbench = script("workbench", bindir)
    anchor = [script("sqlite-utils", bindir), "--help"]
    env = dict(os.environ)
    # PYTHONDONTWRITEBYTECODE would keep the warm-up from writing bytecode caches: each
    # measured process would compile the workbench's own modules again (the anchors' modules
    # were compiled when pip installed them)
    for name in (
        "WORKBENCH_DB",
        "WORKBENCH_WORKSPACE",
        "MSWEA_SILENT_STARTUP",
        "NO_COLOR",
        "PYTHONDONTWRITEBYTECODE",
    ):
        env.pop(name, None)
    pairs: list[Pair] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        env["MSWEA_GLOBAL_CONFIG_DIR"] = str(tmp_path / "mini-config")
        if "help" in only:
            pairs.append(Pair("help", [workbench, "--help"], anchor, "sqlite-utils --help"))
        if "ls" in only:
            samples = tmp_path / "samples.db"
            cpu_seconds([workbench, "import", "--samples", "--db", str(samples)], env)
            ls = [workbench, "ls", "--limit", "1", "--db", str(samples)]
            pairs.append(Pair("ls", ls, anchor, "sqlite-utils --help"))
        if "tui" in only:
            mini_bin = mini_swe_agent_env(args.cache)
            run_file = tmp_path / "run" / "astropy__astropy-12907.traj.json"
            run_file.parent.mkdir()
            run_file.write_text(json.dumps(mini_trajectory(args.steps, args.observation)))
            db = tmp_path / "tui.db"
            cpu_seconds([workbench, "import", str(run_file), "--db", str(db)], env)
            driver = tmp_path / "first_paint.py"
            driver.write_text(DRIVER)
            ours = ui_command(
                Path(sys.executable),
                workbench,
                "workbench",
                driver,
                "tui",
                "--db",
                str(db),
                "--episode",
                imported_episode(db),
            )
            inspector = ui_command(
                mini_bin / "python",
                script("mini-extra", mini_bin),
                "inspector",
                driver,
                "inspector",
                str(run_file),
            )
            frames = (
                check_first_paint(ours, env, "TrajectoryScreen"),
                check_first_paint(inspector, env, "Screen"),
            )
            pairs.append(Pair("tui", ours, inspector, f"mini-swe-agent {MINI_SWE_AGENT} inspector"))
            print(
                f"tui: {args.steps:,} commands, {run_file.stat().st_size / 1e6:.1f} MB run file; "
                f"textual {textual_version(Path(sys.executable))} / "
                f"{textual_version(mini_bin / 'python')}, frames rendered {frames[0]} / "
                f"{frames[1]} (workbench / inspector)"
            )

        missed = 0
        measured: dict[tuple[str, ...], float] = {}
        print(f"CPU seconds (user+sys), median of {args.repeat} fresh processes")
        print(f"{'pair':<5} {'workbench':>10} {'anchor':>8}  {'ratio':>5}  anchor")
        for pair in pairs:
            ours_cpu = median_cpu(pair.workbench, args.repeat, env)
            key = tuple(pair.anchor)
            if key not in measured:  # help and ls share their anchor
                measured[key] = median_cpu(pair.anchor, args.repeat, env)
            anchor_cpu = measured[key]
            ratio = ours_cpu / anchor_cpu
            verdict = "OK" if ratio <= 1 else "ABOVE TARGET"
            missed += ratio > 1
            print(
                f"{pair.name:<5} {ours_cpu:10.2f} {anchor_cpu:8.2f}  {ratio:5.2f}  "
                f"{pair.anchor_name} (target ratio <= 1) {verdict}",
                flush=True,
            )
    if args.check and missed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
