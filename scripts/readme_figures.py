"""README's times and numbers, measured: the quick start's main job and README's Example run
as a user runs them, and README rewritten from what they gave.

    .venv/bin/python scripts/readme_figures.py            # measure, write the figures, rewrite README
    .venv/bin/python scripts/readme_figures.py --readme   # rewrite README from the figures file only
    .venv/bin/python scripts/readme_figures.py --check    # exit 1 when README disagrees with it

In a fresh copy of the repository at a commit (``git archive``; HEAD by default), as a user's
fresh clone, with a fresh per-user cache, it runs every command of README's Example in order
through the ``workbench`` CLI of this interpreter's environment, one subprocess each, with the
copy's code first on ``PYTHONPATH`` — so what is measured is the commit, whatever else the
working tree holds. The first command, ``workbench demo``, is also the job of the quick
start's first line (``workbench tui`` builds the same demo database before it opens). A command that needs a
model endpoint is skipped and listed as such. Each command's wall time and the CPU time of it
and of every process it started (workers, simulators, game generators — this script adopts the
ones left behind and waits for them) are recorded with the load average around it;
the numbers README quotes (demo episodes, what ``replay`` judged and admitted, the held-out
run before and after the repository, the manual, the evolution checkpoints) are read from the
database the commands wrote. Everything goes to ``scripts/readme_figures.json`` with the
machine (CPU model, cores, memory), the load average before and after, the date and the
commit, with the number of tests the copy's suite collects (the second quick-start line runs
them).

README then gets its figures from that file and nowhere else: the times in the Example's
comments, and the text between ``<!-- figures: NAME -->`` and ``<!-- /figures -->`` markers,
which :func:`regions` writes. ``tests/test_readme_figures.py`` fails when README and the file
disagree, or when the file's commands are not the Example's — so a changed Example, or a
figure edited by hand, means running this script again. Run it again too when the code the
figures measure changes; the machine is shared, so say what load it saw.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FIGURES = Path(__file__).with_suffix(".json")

SKIPPED = {"--agent openai": "needs a model endpoint (OPENAI_BASE_URL, OPENAI_API_KEY)"}
"""Example commands this script does not run, by a piece of their text, with why."""

TIMED = 10.0
"""Seconds: an Example command that takes at least this long shows its time in its comment;
the others are summed up as a range under the Example."""

TIME_IN_COMMENT = re.compile(r"(?::\s*|^)(?:\d+ min(?: \d+ s)?|\d+ s)$")
"""A time at the end of an Example comment (``…: 1 min 38 s``, or the whole comment)."""


# -- README's Example ---------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One line of README's Example."""

    command: str
    """The command, as the user types it."""
    code: str
    """The line up to its comment (``$ `` and the command, then the spaces before ``#``)."""
    comment: str
    """The comment without its time."""


def example_block(readme: str) -> str:
    """The Example's console block (without its fences)."""
    return readme.split("## Example", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]


def example(readme: str) -> list[Line]:
    """Every line of README's Example."""
    lines = []
    for text in example_block(readme).splitlines():
        code, _, comment = text.partition("  #")
        code = code + "  " if comment else code
        lines.append(Line(code[2:].strip(), code, TIME_IN_COMMENT.sub("", comment.strip())))
    return lines


def skipped(command: str) -> str | None:
    """Why the script does not run ``command`` (``None``: it runs)."""
    return next((why for key, why in SKIPPED.items() if key in command), None)


# -- measuring ----------------------------------------------------------------------------


PR_SET_CHILD_SUBREAPER = 36
"""Linux's ``prctl`` option that makes this process adopt its orphaned descendants."""


def adopt_orphans() -> None:
    """Become the parent of every process a command leaves behind when the process that
    started it exits (a worker's simulator, TextWorld's game generator), instead of init: they
    are then waited for here, and their CPU counts as the command's."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def reap_orphans() -> None:
    """Wait until every process the last command left behind has exited."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def child_cpu() -> float:
    """CPU seconds (user + system) of every child process waited for so far (with their own
    children's, and the orphans :func:`adopt_orphans` made ours)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load() -> list[float]:
    """The 1-, 5- and 15-minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def environment(clone: Path, cache: Path) -> dict[str, str]:
    """A user's environment in ``clone``: this interpreter's ``bin`` first on ``PATH`` (its
    ``workbench`` and ``python``), the clone's code first on ``PYTHONPATH``, no
    ``WORKBENCH_*`` settings, a per-user cache of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(clone)
    env["XDG_CACHE_HOME"] = str(cache)
    env.pop("COLUMNS", None)
    return env


def clone(commit: str, folder: Path) -> Path:
    """The repository's files at ``commit``, written into ``folder``."""
    folder.mkdir()
    archive = subprocess.run(
        ["git", "archive", commit], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def collected(folder: Path, env: dict[str, str]) -> int:
    """How many tests the suite in ``folder`` holds."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    return int(re.search(r"(\d+) tests? collected", done.stdout).group(1))


def run(command: str, folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run one command in ``folder``; its times, load and output."""
    before, cpu = load(), child_cpu()
    started = time.perf_counter()
    done = subprocess.run(shlex.split(command), cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    reap_orphans()
    print(f"{wall:7.1f} s  $ {command}", flush=True)
    return {
        "command": command,
        "wall_s": round(wall, 1),
        "cpu_s": round(child_cpu() - cpu, 1),
        "load_1min": [before[0], load()[0]],
        "returncode": done.returncode,
        "output": done.stdout + done.stderr,
    }


def machine() -> dict[str, Any]:
    """CPU model, cores and memory of this machine."""
    cpu = platform.processor()
    with open("/proc/cpuinfo") as info:
        cpu = next((line.split(":", 1)[1].strip() for line in info if "model name" in line), cpu)
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(pages / 2**30, 1)}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def measure(commit: str, keep: Path | None = None) -> dict[str, Any]:
    """Run the Example in a fresh clone of ``commit`` and return the figures."""
    commit = git("rev-parse", commit)
    folder = Path(tempfile.mkdtemp(prefix="readme-figures-"))
    repository = clone(commit, folder / "clone")
    env = environment(repository, folder / "user-cache")
    lines = example((repository / "README.md").read_text())
    adopt_orphans()
    started, commands = load(), []
    try:
        for line in lines:
            why = skipped(line.command)
            if why:
                commands.append({"command": line.command, "skipped": why})
                continue
            commands.append(run(line.command, repository, env))
            if commands[-1]["returncode"]:
                sys.exit(f"failed:\n{commands[-1]['output']}")
        finished = load()
        numbers = read_numbers(repository, commands)
        numbers["tests"] = collected(repository, env)
    finally:
        if keep:
            shutil.copytree(folder, keep, dirs_exist_ok=True, symlinks=True)
            (keep / "commands.json").write_text(json.dumps(commands, indent=1))
        shutil.rmtree(folder, ignore_errors=True)
    for each in commands:
        each.pop("output", None)
    return {
        "script": "scripts/readme_figures.py",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "machine": machine(),
        "python": platform.python_version(),
        "load": {"before": started, "after": finished},
        "commands": commands,
        "numbers": numbers,
    }


# -- the numbers README quotes, read from the database ------------------------------------

DEMO_BATCH = re.compile(r"demo(?:-[a-z0-9]+)?-(?:train|test)")
"""The demo's own batches (``demo-train``, ``demo-textworld-test``), not later runs like them."""


def read_numbers(repository: Path, commands: list[dict[str, Any]]) -> dict[str, Any]:
    """What README says the Example made, read from its database (with the measured commit's
    own store) and from the commands' outputs."""
    sys.path.insert(0, str(repository))
    from store import EpisodeFilter, Store

    with Store(repository / "workbench.db") as store:
        demo = {}
        for batch in store.batches():
            if DEMO_BATCH.fullmatch(batch.name):
                stats = store.summary(EpisodeFilter(batch=batch.id))
                world = batch.params["config"]["env"]
                counts = demo.setdefault(world, {"episodes": 0, "failed": 0})
                counts["episodes"] += stats.episodes
                counts["failed"] += stats.failed
        judged = [v for v in store.versions() if v.status != "staged" and v.origin != "hand"]
        cases = [len(store.ledger(v.id)) for v in judged if v.replay_gate]
        sources = {entry.case.split(":", 1)[0] for v in judged for entry in store.ledger(v.id)}
        admitted = Counter(v.kind for v in judged if v.status == "active")
        rules = store.manual_rules()
        manuals = store.manuals()
        [evolution] = store.evolutions()
        regimes: dict[str, Any] = {}
        for c in store.checkpoints(evolution.name):
            regime = regimes.setdefault(c.regime, {"tasks": [], "passed": [], "degradation": []})
            regime["tasks"].append(c.tasks)
            regime["passed"].append(c.passed)
            regime["degradation"].append(round(c.degradation, 4))
            regime.update(
                total=c.total,
                sizes=[c.sizes.get(k, 0) for k in ("rule", "skill", "subagent")],
                use=None if c.use_rate is None else round(c.use_rate, 4),
            )
    like = next(c["output"] for c in commands if "--with-repo" in c["command"])
    (before, total), (after, _) = re.findall(r"(\d+)/(\d+) succeeded", like)
    fixed, broken = re.search(r"paired: (\d+) fixed, (\d+) broken", like).groups()
    imported = next(c["output"] for c in commands if c["command"].endswith("--samples"))
    episodes, files = re.search(
        r"imported (\d+) episode\(s\) .* from (\d+) file", imported
    ).groups()
    return {
        "demo": demo,
        "samples": {"episodes": int(episodes), "files": int(files)},
        "replay": {
            "judged": len(judged),
            "cases": [min(cases), max(cases)] if cases else [0, 0],
            "case_batches": sorted(sources),
            "admitted": {k: admitted.get(k, 0) for k in ("rule", "skill", "subagent")},
        },
        "held_out": {
            "before": int(before),
            "after": int(after),
            "total": int(total),
            "fixed": int(fixed),
            "broken": int(broken),
        },
        "manual": {
            "rules": len(rules),
            "types": sorted({r.type for r in rules}),
            "version": manuals[-1].version if manuals else None,
            "artifacts": len(manuals[-1].artifacts) if manuals else 0,
        },
        "evolution": regimes,
    }


# -- README from the figures --------------------------------------------------------------


def duration(seconds: float) -> str:
    """``48 s``, ``75 s``, ``2 min``, ``2 min 46 s``."""
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    return f"{seconds // 60} min" + (f" {seconds % 60} s" if seconds % 60 else "")


def count(n: int, one: str, many: str | None = None) -> str:
    """``a skill``, ``4 rules``."""
    words = {1: "a", 0: "no"}
    return f"{words[n]} {one}" if n in words else f"{n} {many or one + 's'}"


def commands_by_text(figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["command"]: c for c in figures["commands"]}


def timed_example(readme: str, figures: dict[str, Any]) -> str:
    """The Example's block with each long command's time at the end of its comment."""
    measured = commands_by_text(figures)
    lines = []
    for line in example(readme):
        wall = measured.get(line.command, {}).get("wall_s")
        comment = line.comment
        if wall is not None and wall >= TIMED:
            comment = f"{comment}: {duration(wall)}" if comment else duration(wall)
        code = line.code if comment else line.code.rstrip()
        if comment and not code.endswith("  "):
            code += "  "
        lines.append(f"{code}# {comment}" if comment else code)
    return "\n".join(lines) + "\n"


def kinds(admitted: dict[str, int]) -> str:
    parts = [
        count(admitted["rule"], "rule"),
        count(admitted["skill"], "skill"),
        count(admitted["subagent"], "subagent"),
    ]
    return ", ".join(p for p in parts if not p.startswith("no "))


def measured_on(figures: dict[str, Any]) -> str:
    """Which run of the script, on which machine and load."""
    m, load_ = figures["machine"], figures["load"]
    during = max(max(c["load_1min"]) for c in figures["commands"] if "load_1min" in c)
    return (
        f"`scripts/readme_figures.py` ({figures['date'][:10]}, commit {figures['commit'][:7]}) "
        f"on a {m['cores']}-core {m['cpu']} with {m['memory_gb']:g} GB, shared with other work "
        f"(1-minute load average {load_['before'][0]:g} before, up to {during:g} during, "
        f"{load_['after'][0]:g} after)"
    )


WORLDS = {"scienceworld": "ScienceWorld", "textworld": "TextWorld"}
"""How README names the worlds the demo plays."""


def quick_start(figures: dict[str, Any]) -> str:
    numbers = figures["numbers"]
    job = commands_by_text(figures)["workbench demo"]
    worlds = " and ".join(
        f"{counts['episodes']} {WORLDS.get(world, world)} episodes ({counts['failed']} failed)"
        for world, counts in numbers["demo"].items()
    )
    return (
        f"Measured by {measured_on(figures)}: building the demo — {worlds}, the TextWorld "
        f"games generated on the way — takes {duration(job['wall_s'])} "
        f"({duration(job['cpu_s'])} of CPU in all its processes); meanwhile `workbench tui` "
        "shows a progress bar per batch, then opens. Installing comes on top and depends on "
        "the network: pip downloads the dependencies, apt installs Java (and, for the second "
        f"line, chromium) where they are missing. The second line's suite holds "
        f"{numbers['tests']:,} tests."
    )


def example_notes(figures: dict[str, Any]) -> str:
    numbers = figures["numbers"]
    replay, held, manual = numbers["replay"], numbers["held_out"], numbers["manual"]
    short = [c["wall_s"] for c in figures["commands"] if c.get("wall_s", TIMED) < TIMED]
    skipped_ = " and ".join(f"`{c['command']}`" for c in figures["commands"] if "skipped" in c)
    return (
        f"Times are wall-clock, measured by {measured_on(figures)}, running the commands in "
        f"this order in a fresh clone — all but {skipped_}, which needs a model endpoint; each "
        f"command without a time took {min(short):.1f}–{max(short):.1f} s. In that order `replay` judges {replay['judged']} candidates on "
        f"{replay['cases'][0]} to {replay['cases'][1]} cases each, drawn from the "
        f"{' and '.join(f'`{b}`' for b in replay['case_batches'])} runs, and admits "
        f"{sum(replay['admitted'].values())} ({kinds(replay['admitted'])}); the repository then "
        f"lifts the demo's held-out run from {held['before']}/{held['total']} to "
        f"{held['after']}/{held['total']} ({held['fixed']} fixed, {held['broken']} broken). "
        f"`manual build` leaves {manual['rules']} rules of {len(manual['types'])} types, which "
        f"`manual formulate` puts in manual v{manual['version']} beside the "
        f"{manual['artifacts']} active artifacts."
    )


def percent(part: int, whole: int) -> str:
    return f"{part / whole:.0%}"


def evolution_table(figures: dict[str, Any]) -> str:
    regimes = figures["numbers"]["evolution"]
    tasks = next(iter(regimes.values()))["tasks"]
    rows = [
        f"| regime | held-out pass at {' / '.join(map(str, tasks))} tasks | R/S/A at {tasks[-1]} "
        f"| use at {tasks[-1]} | signed degradation at {' / '.join(map(str, tasks[1:]))} |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, regime in regimes.items():
        passed, total = regime["passed"], regime["total"]
        shown = " / ".join(map(str, passed))
        if name == "gated":
            shown += f" of {total} ({percent(passed[0], total)} → {percent(passed[-1], total)})"
        use = "–" if regime["use"] is None else f"{regime['use']:.0%}"
        degradation = " / ".join(
            "0" if d == 0 else f"**{d:+.0%}**" if d > 0 else f"{d:+.0%}"
            for d in regime["degradation"][1:]
        )
        rows.append(
            f"| {name} | {shown} | {'/'.join(map(str, regime['sizes']))} | {use} | {degradation} |"
        )
    return "\n".join(rows) + "\n\n" + preservation(regimes)


def preservation(regimes: dict[str, Any]) -> str:
    """What the preservation set and the replay gate changed in this run, in a sentence."""
    gated, tasks = regimes["gated"], regimes["gated"]["tasks"]
    said = []
    for name, what in (
        ("no-preservation", "the preservation set"),
        ("no-replay-gate", "the replay gate"),
    ):
        regime = regimes[name]
        worst = max(range(len(tasks)), key=lambda k: regime["degradation"][k])
        if regime["passed"] == gated["passed"]:
            said.append(f"without {what} the held-out results were the same as `gated`'s")
        else:
            lost = gated["passed"][-1] - regime["passed"][-1]
            said.append(
                f"without {what} {count(lost, 'held-out case')} fewer passed at the end"
                + (
                    f" (signed degradation {regime['degradation'][worst]:+.0%} at {tasks[worst]} tasks)"
                    if regime["degradation"][worst] > 0
                    else ""
                )
            )
    return "In this run, " + "; ".join(said) + "."


REGIONS = {"quick-start": quick_start, "example": example_notes, "evolve": evolution_table}
"""README's generated passages, by marker name."""


WIDTH = 95
"""README's line width: generated paragraphs are wrapped to it (tables are not)."""


def wrapped(text: str) -> str:
    """Paragraphs filled to :data:`WIDTH` (never between a number and its unit); table lines
    left whole."""
    unit = r"(?<=\d) (?=s\b|min\b|GB\b)|(?<=\bmin) (?=\d)"  # spaces inside "1 min 35 s"
    kept = re.sub(unit, "\u00a0", text)  # textwrap breaks no NBSP
    return "\n\n".join(
        paragraph
        if paragraph.startswith("|")
        else textwrap.fill(paragraph, WIDTH, break_long_words=False, break_on_hyphens=False)
        for paragraph in kept.split("\n\n")
    ).replace("\u00a0", " ")


def regions(figures: dict[str, Any]) -> dict[str, str]:
    """The text of every generated passage."""
    return {name: wrapped(write(figures)) for name, write in REGIONS.items()}


def rewritten(readme: str, figures: dict[str, Any]) -> str:
    """``readme`` with every figure taken from ``figures``."""
    block = example_block(readme)
    readme = readme.replace(block, timed_example(readme, figures), 1)
    for name, text in regions(figures).items():
        pattern = re.compile(rf"(<!-- figures: {name} -->\n).*?(<!-- /figures -->)", re.S)
        if not pattern.search(readme):
            raise SystemExit(f"README has no <!-- figures: {name} --> passage")
        readme = pattern.sub(lambda m, text=text: f"{m.group(1)}{text}\n{m.group(2)}", readme)
    return readme


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--readme", action="store_true", help="only rewrite README")
    choice.add_argument("--check", action="store_true", help="exit 1 if README disagrees")
    parser.add_argument("--commit", default="HEAD", help="what to measure (default: HEAD)")
    parser.add_argument("--keep", type=Path, help="copy the Example's folder here")
    args = parser.parse_args()
    if args.check:
        figures = json.loads(FIGURES.read_text())
        sys.exit(0 if rewritten(README.read_text(), figures) == README.read_text() else 1)
    if not args.readme:
        figures = measure(args.commit, args.keep)
        FIGURES.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
    figures = json.loads(FIGURES.read_text())
    README.write_text(rewritten(README.read_text(), figures))


if __name__ == "__main__":
    main()
