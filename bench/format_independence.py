"""Format independence: the demo analysed natively, then the same episodes as plain OpenAI
chat logs with tool calls, imported into a fresh database and analysed again.

The export keeps what any tool-calling agent's log has: the task's instruction (first user
message), the world's first text (second user message), one assistant tool call per action
(the action's verb phrase as the tool name, the rest as its ``target`` argument) answered by a
tool message with the observation, the declared tools, an opaque task id, the trial and the
run's success and score. It strips the world, the family, step rewards, thoughts and every
other metadata; the scripted agent's ground truth (its first mistake) is kept aside here.

Measured on the failures of the native analysis that have a ground truth: how often the
causal step lands within ±1 action of the first mistake, natively and imported (target:
imported within 5 points of native); the number of supported clusters and of staged rules
(``workbench compile``) in each database (target: imported within 20% of native).

    python bench/format_independence.py [--demo bench-demo.db]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import _demo

from store import Episode, EpisodeFilter, Store
from workbench.agents.scripted import TRUTH_KEY
from workbench.compare import verb_of
from workbench.envs.registry import lexicon_of

SYSTEM = "You act in a text environment through tools. Call one tool per turn."


def tool_of(action: str, lexicon: Any) -> tuple[str, dict[str, str]]:
    """An action as a tool call: its verb phrase as the name, the rest as ``target``."""
    verb = verb_of(action, lexicon)
    rest = " ".join(action.split())[len(verb) :].strip()
    name = "_".join(verb.split()) or "act"
    return name, ({"target": rest} if rest else {})


def export_record(store: Store, episode: Episode, trial: int, tools: list[str]) -> dict:
    """One episode as an OpenAI chat record, without world, family or step metadata."""
    task = store.task(episode.task_id)
    assert task is not None
    lexicon = lexicon_of(task.environment)
    steps = store.steps(episode.id)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": task.instruction},
    ]
    messages += [{"role": "user", "content": s.observation} for s in steps if not s.action][:1]
    for step in (s for s in steps if s.action):
        name, arguments = tool_of(step.action, lexicon)
        call = {"id": f"call_{step.index}", "type": "function"}
        call["function"] = {"name": name, "arguments": json.dumps(arguments)}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"call_{step.index}", "content": step.observation}
        )
    return {
        "task_id": hashlib.sha1(task.id.encode()).hexdigest()[:10],
        "trial": trial,
        "agent": episode.agent,
        "success": bool(episode.outcome.success),
        "reward": episode.outcome.score,
        "tools": [{"type": "function", "function": {"name": t}} for t in tools],
        "messages": messages,
    }


def exported_episodes(store: Store) -> list[Episode]:
    """The native analysis' failures and the successes of the same scope (their contrasts
    are among them)."""
    where = EpisodeFilter(replays=False, held_out=False)
    failed = list(store.iter_episodes(EpisodeFilter(**{**vars(where), "outcome": "failed"})))
    passed = list(store.iter_episodes(EpisodeFilter(**{**vars(where), "outcome": "passed"})))
    return failed + passed


def export(store: Store, path: Path) -> list[str]:
    """Write the chat logs to ``path``; the native episode id of each record, in order."""
    episodes = exported_episodes(store)
    lexicons = {e.id: lexicon_of(_environment(store, e)) for e in episodes}
    tools = sorted(
        {
            tool_of(s.action, lexicons[e.id])[0]
            for e in episodes
            for s in store.steps(e.id)
            if s.action
        }
    )
    trials: dict[str, int] = {}
    with path.open("w") as out:
        for episode in episodes:
            trial = trials[episode.task_id] = trials.get(episode.task_id, -1) + 1
            out.write(json.dumps(export_record(store, episode, trial, tools)) + "\n")
    return [e.id for e in episodes]


def _environment(store: Store, episode: Episode) -> str:
    task = store.task(episode.task_id)
    return task.environment if task else ""


def truths(store: Store) -> dict[str, int]:
    """Native episode id → stored index of its first mistake (kept aside, never exported)."""
    found = {}
    for episode in store.iter_episodes(EpisodeFilter(outcome="failed")):
        mistakes = episode.metadata.get(TRUTH_KEY, {}).get("mistakes", [])
        if mistakes:
            found[episode.id] = mistakes[0]["step"]
    return found


def native_action(store: Store, episode_id: str, index: int) -> int:
    """The native step index an imported step stands for (its tool call's ``call_<n>``;
    the messages before the first call stand for step 0)."""
    steps = store.steps(episode_id)
    at = next((s for s in steps if s.index == index), None)
    if at is not None and at.tool_call_id.startswith("call_"):
        return int(at.tool_call_id.removeprefix("call_"))
    return 0


def measure(db: Path, truth: dict[str, int], native_of: dict[str, str] | None) -> dict:
    """Analyse and compile ``db`` with the CLI; the hit rate on ``truth``, supported clusters
    and staged rules. ``native_of`` maps imported episode ids to native ones (``None``:
    ``db`` is native)."""
    _demo.workbench(db, "analyze")
    compiled = _demo.workbench(db, "compile")
    with Store(db) as store:
        run = store.analysis_runs()[0]
        assert run.id is not None
        hits = total = 0
        for analysis in store.analyses(run.id):
            native = native_of.get(analysis.episode_id) if native_of else analysis.episode_id
            if native not in truth:
                continue
            start = analysis.start
            if native_of:
                start = native_action(store, analysis.episode_id, start)
            total += 1
            hits += abs(start - truth[native]) <= 1
        supported = [c for c in store.clusters(run.id) if c.status == "supported"]
        merged = len({(c.trigger, c.correction) for c in supported})
        staged = store.versions(status="staged")
        rules = sum(v.kind == "rule" for v in staged)
    return {
        "hits": hits,
        "total": total,
        "supported": len(supported),
        "merged": merged,
        "rules": rules,
        "staged": len(staged),
        "kinds": ", ".join(
            sorted({f"{sum(v.kind == k for v in staged)} {k}" for k in {v.kind for v in staged}})
        ),
        "out": compiled,
    }


def imported_ids(store: Store, natives: list[str]) -> dict[str, str]:
    """Imported episode id → native id, by record position (ids end with ``-r<record>``)."""
    found = {}
    for episode in store.iter_episodes(EpisodeFilter()):
        record = int(episode.id.rsplit("-r", 1)[1])
        found[episode.id] = natives[record]
    return found


def within(value: float, target: float, share: float) -> bool:
    """Whether ``value`` is within ``share`` of ``target`` (both zero counts as within)."""
    return abs(value - target) <= share * target if target else value == 0


def report(native: dict, imported: dict) -> None:
    """Print the figures and whether each meets its target."""
    rate = {
        k: r["hits"] / r["total"] if r["total"] else 0.0
        for k, r in (("n", native), ("i", imported))
    }
    close = abs(rate["n"] - rate["i"]) <= 0.05
    print(
        f"causal step within ±1 of the first mistake: native {native['hits']}/{native['total']} "
        f"{rate['n']:.1%}, imported {imported['hits']}/{imported['total']} {rate['i']:.1%} "
        f"(target: within 5 points) {'OK' if close else 'MISSED'}"
    )
    for key, label in (("supported", "supported clusters"), ("rules", "staged rules")):
        ok = within(imported[key], native[key], 0.2)
        print(
            f"{label}: native {native[key]}, imported {imported[key]} "
            f"(target: within 20%) {'OK' if ok else 'MISSED'}"
        )
    print(
        f"  staged artifacts of any type: native {native['staged']} ({native['kinds']}), "
        f"imported {imported['staged']} ({imported['kinds']}) — an imported log has no "
        "simulator to gate a skill or a subagent on, so its specs close as rules"
    )
    print(
        f"  supported clusters with families not told apart (trigger, correction): "
        f"native {native['merged']}, imported {imported['merged']}"
    )


@contextlib.contextmanager
def _folder(keep: Path | None) -> Iterator[str]:
    """``keep`` (created, emptied of earlier databases), else a temporary folder."""
    if keep is None:
        with tempfile.TemporaryDirectory() as folder:
            yield folder
        return
    keep.mkdir(parents=True, exist_ok=True)
    for name in ("native.db", "imported.db", "chat.jsonl"):
        (keep / name).unlink(missing_ok=True)
    yield str(keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, default=Path("bench-demo.db"))
    parser.add_argument("--keep", type=Path, help="keep the databases and logs in this folder")
    args = parser.parse_args()
    _demo.ensure_demo(args.demo)
    with _folder(args.keep) as folder:
        native_db, fresh_db = Path(folder) / "native.db", Path(folder) / "imported.db"
        logs = Path(folder) / "chat.jsonl"
        shutil.copy(args.demo, native_db)
        with Store(native_db) as store:
            truth = truths(store)
            natives = export(store, logs)
        print(
            f"exported {len(natives)} episode(s) as OpenAI chat logs ({logs.stat().st_size:,} bytes)"
        )
        native = measure(native_db, truth, None)
        _demo.workbench(fresh_db, "import", str(logs))
        with Store(fresh_db) as store:
            mapping = imported_ids(store, natives)
        imported = measure(fresh_db, truth, mapping)
    report(native, imported)


if __name__ == "__main__":
    main()
