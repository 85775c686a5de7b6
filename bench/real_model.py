"""One real language model through every ``openai`` path, offline: SmolLM2-135M-Instruct (the
``model`` extra) served on 127.0.0.1 by ``workbench.llm.local``.

On a fresh database built with a small ``workbench demo``, through the CLI: the LLM agent
(``--agent openai``) plays a few ScienceWorld and TextWorld episodes, then ``analyze``,
``compile`` and ``manual formulate`` judge with ``--reasoner openai``. Every stage must end
with a clear outcome whatever the model writes; the table says, per stage, what the model's
calls did (read from the store's ``llm_calls``): calls sent, valid structured outputs,
correction turns, questions that ended in a ``ModelError``, model time and the stage's wall
time. Examples of what the model wrote that was refused follow the table.

    python bench/real_model.py [--train 4] [--test 1] [--episodes 1] [--step-limit 6] [--keep DIR]

The baseline is the same stage with the offline heuristic where there is one (analysis): its
wall time, measured in the same run, gives the ratio model / heuristic.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from store import LLMCall, Store
from workbench.llm.local import LocalModelError, LocalServer

STAGES = {
    "agent": ("agent.",),
    "analyze": ("analyze.",),
    "compile": ("compile.",),
    "formulate": ("manual.formulate",),
}
"""Each stage of the table and the call purposes that belong to it."""


@dataclass
class Outcome:
    """How one CLI command ended."""

    stage: str
    seconds: float
    code: int
    said: str
    """Its last line of output (stdout, else stderr)."""


def workbench(db: Path, stage: str, *args: str) -> Outcome:
    """Run ``workbench --db DB ARGS`` and say how it ended (never raises on failure)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    seconds = time.perf_counter() - started
    lines = [ln for ln in (done.stdout + "\n" + done.stderr).splitlines() if ln.strip()]
    print(f"$ workbench {' '.join(args)}  [{seconds:.0f} s, exit {done.returncode}]")
    for line in lines[-6:]:
        print(f"    {line[:220]}")
    said = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or [""])[-1]
    return Outcome(stage, seconds, done.returncode, said)


def stage_rows(db: Path, outcomes: list[Outcome]) -> list[list[str]]:
    """The table's rows: per stage, what its calls did and how long it took."""
    rows = []
    with Store(db) as store:
        calls = store.calls(limit=1_000_000)
    for stage, prefixes in STAGES.items():
        mine = [c for c in calls if c.purpose.startswith(prefixes) and not is_probe(c)]
        sent = [c for c in mine if not c.cached]
        wall = sum(o.seconds for o in outcomes if o.stage == stage)
        codes = {o.code for o in outcomes if o.stage == stage}
        rows.append(
            [
                stage,
                str(len(sent)),
                str(sum(not c.error for c in sent)),
                str(sum(c.turn > 0 for c in sent)),
                str(sum(bool(c.gave_up) for c in mine)),
                f"{sum(c.latency_ms for c in sent) / 1000:.0f}",
                f"{wall:.0f}",
                "ok" if codes == {0} else f"exit {sorted(codes)}",
            ]
        )
    return rows


def is_probe(call: LLMCall) -> bool:
    """Whether ``call`` is the one a client makes to learn that the endpoint reads the
    ``json_object`` schema form only (one per process; not a judgment)."""
    return "response_format" in call.error and not call.gave_up


def print_table(rows: list[list[str]]) -> None:
    head = ["stage", "calls", "valid", "corrections", "ModelErrors", "model s", "wall s", "exit"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(" --- " for _ in head) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def print_refusals(db: Path, limit: int = 3) -> None:
    """A few distinct things the model wrote that were refused, per stage."""
    with Store(db) as store:
        calls = list(reversed(store.calls(limit=1_000_000)))
    for stage, prefixes in STAGES.items():
        seen: set[str] = set()
        for call in calls:
            why = call.gave_up or call.error
            if not call.purpose.startswith(prefixes) or not why or is_probe(call):
                continue
            key = re.sub(r"\d+", "N", why)[:80]
            if key in seen:
                continue
            seen.add(key)
            wrote = str((call.response or {}).get("content") or "")
            print(f"- {stage} ({call.purpose}, turn {call.turn}): {why[:300]}")
            print(f"  wrote: {wrote[:300]!r}")
            if len(seen) >= limit:
                break


def analysis_run(output: str) -> str | None:
    """The analysis run id an ``analyze`` summary names."""
    found = re.search(r"analysis run (\d+)", output)
    return found.group(1) if found else None


def supported_run(db: Path, runs: list[str | None]) -> str | None:
    """The first of ``runs`` with a supported cluster (else the first)."""
    with Store(db) as store:
        for run in runs:
            if run and any(c.status == "supported" for c in store.clusters(int(run))):
                return run
    return next((r for r in runs if r), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", default="4", help="demo train episodes per world")
    parser.add_argument("--test", default="1", help="demo test episodes per world")
    parser.add_argument("--episodes", default="1", help="LLM-agent episodes per world")
    parser.add_argument("--step-limit", default="6", help="LLM-agent actions per episode")
    parser.add_argument("--workers", default="2")
    parser.add_argument("--keep", type=Path, help="keep the database in this folder")
    parser.add_argument(
        "--demo", type=Path, help="start from a copy of this demo database instead of building one"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    try:
        server = LocalServer().start()
    except LocalModelError as error:
        sys.exit(str(error))
    print(f"model server up in {time.perf_counter() - started:.1f} s at {server.base_url}")
    os.environ.update(server.environment())
    try:
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "workbench.db"
            if args.demo:
                shutil.copy(args.demo, db)
            run_stages(db, args)
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(db, args.keep / "workbench.db")
    finally:
        server.stop()
    print(f"whole bench {time.perf_counter() - started:.0f} s")


AGENT_FAMILIES = {"scienceworld": "find-living-thing", "textworld": "tw-coin_collector-level2"}
"""The family the LLM agent plays in each world (short tasks)."""


def run_stages(db: Path, args: argparse.Namespace) -> None:
    """Every stage on ``db``, then the table."""
    outcomes = []
    if not args.demo:
        demo = ("--train", args.train, "--test", args.test, "--workers", args.workers)
        outcomes.append(workbench(db, "demo", "demo", *demo))
    for env, family in AGENT_FAMILIES.items():
        agent = ("--env", env, "--family", family, "--agent", "openai", "--batch", f"llm-{env}")
        limits = ("--episodes", args.episodes, "--step-limit", args.step_limit, "--workers", "1")
        outcomes.append(workbench(db, "agent", "run", *agent, *limits))
    runs = []  # the LLM agent's failures, judged offline and by the model
    for env in AGENT_FAMILIES:
        heuristic = workbench(db, "heuristic", "analyze", "--batch", f"llm-{env}")
        outcomes.append(heuristic)
        runs.append(analysis_run(heuristic.said))
        model = ("analyze", "--batch", f"llm-{env}", "--reasoner", "openai")
        outcomes.append(workbench(db, "analyze", *model))
    for batch in ("demo-textworld-train", "demo-train"):  # the demo's own, if the agent's fail
        offline = workbench(db, "heuristic", "analyze", "--batch", batch)
        outcomes.append(offline)
        runs.append(analysis_run(offline.said))
    run = supported_run(db, runs)  # compile offline clusters the analysis supports
    compiled = ("compile", "--reasoner", "openai", *(["--run", run] if run else []))
    outcomes.append(workbench(db, "compile", *compiled))
    outcomes.append(workbench(db, "rules", "manual", "build", "--episodes", "3"))
    outcomes.append(workbench(db, "formulate", "manual", "formulate", "--reasoner", "openai"))
    print()
    print_table(stage_rows(db, outcomes))
    model = sum(o.seconds for o in outcomes if o.stage == "analyze")
    offline = sum(o.seconds for o in outcomes if o.stage == "heuristic")
    print(
        f"\nanalysis of the same failures: model {model:.0f} s, heuristic {offline:.0f} s "
        f"→ ratio {model / max(offline, 1e-9):.1f}"
    )
    print("\nwhat the model wrote that was refused:")
    print_refusals(db)


if __name__ == "__main__":
    main()
