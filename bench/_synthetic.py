"""Synthetic workbench JSONL for the benchmarks: realistic shapes, deterministic content."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

FAMILIES = [
    # ScienceWorld's 30 task families, the workbench's built-in environment.
    "boil", "melt", "freeze", "change-the-state-of-matter-of", "use-thermometer",
    "measure-melting-point-known-substance", "measure-melting-point-unknown-substance",
    "power-component", "power-component-renewable-vs-nonrenewable-energy", "test-conductivity",
    "test-conductivity-of-unknown-substances", "find-living-thing", "find-non-living-thing",
    "find-plant", "find-animal", "grow-plant", "grow-fruit", "chemistry-mix",
    "chemistry-mix-paint-secondary-color", "chemistry-mix-paint-tertiary-color",
    "lifespan-longest-lived", "lifespan-shortest-lived",
    "lifespan-longest-lived-then-shortest-lived", "identify-life-stages-1",
    "identify-life-stages-2", "inclined-plane-determine-angle",
    "inclined-plane-friction-named-surfaces", "inclined-plane-friction-unnamed-surfaces",
    "mendelian-genetics-known-plant", "mendelian-genetics-unknown-plant",
]  # fmt: skip
ACTIONS = [
    "open door to kitchen",
    "go to kitchen",
    "pick up thermometer",
    "focus on substance in metal pot",
    "move metal pot to stove",
    "activate stove",
    "use thermometer in inventory on substance in metal pot",
    "wait1",
    "look around",
]


def episode_line(number: int, n_steps: int, observation_chars: int = 120) -> dict:
    """One episode in the workbench's JSONL format."""
    rng = random.Random(number)
    family = FAMILIES[number % len(FAMILIES)]
    task_id = f"scienceworld:{family}:{number % 30}"
    episode_id = f"ep{number:07d}"
    filler = "You see a counter, a sink, a stove and a fridge. " * (observation_chars // 50 + 1)
    steps = [
        {
            "index": i,
            "kind": "action",
            "role": "agent",
            "thought": f"step {i}: I should try {ACTIONS[(i + number) % len(ACTIONS)]}",
            "action": ACTIONS[(i * 7 + number) % len(ACTIONS)],
            "observation": filler[: observation_chars - 10] + f" [{rng.randint(0, 99):02d}]",
            "reward": 0.0,
        }
        for i in range(n_steps)
    ]
    return {
        "format": "trajectory-workbench",
        "version": 1,
        "task": {"id": task_id, "environment": "scienceworld", "family": family, "split": "train"},
        "batch": {
            "id": "bench",
            "name": "bench",
            "kind": "run",
            "created_at": "2026-11-29T00:00:00Z",
        },
        "episode": {
            "id": episode_id,
            "task_id": task_id,
            "batch_id": "bench",
            "agent": "scripted",
            "seed": number,
            "outcome": (
                {"success": True, "score": 100.0, "message": "Task completed."}
                if rng.random() < 0.6
                else {
                    "success": False,
                    "score": float(rng.choice([-100, 0, 35, 50])),
                    "message": "Task failed: the episode ended before completion.",
                }
            ),
            "source": {
                "path": f"runs/2026-11-20/scienceworld-{family}/episodes-{number // 1000:03d}.jsonl",
                "format": "workbench",
                "hash": f"{rng.getrandbits(256):064x}",
                "record": f"line {number % 1000 + 1}",
            },
            "started_at": "2026-11-20T10:00:00Z",
            "ended_at": "2026-11-20T10:02:00Z",
            "metadata": {
                "variation": number % 30,
                "step_limit": 100,
                "simplifications": "easy",
                "trial": number % 3,
            },
            "family": family,
            "split": "train",
        },
        "steps": steps,
    }


def lines(n_episodes: int, n_steps: int, observation_chars: int = 120) -> Iterator[str]:
    """JSONL lines for ``n_episodes`` episodes of ``n_steps`` steps each."""
    for number in range(n_episodes):
        yield json.dumps(episode_line(number, n_steps, observation_chars)) + "\n"


def write(path: Path, n_episodes: int, n_steps: int, observation_chars: int = 120) -> Path:
    """Write a synthetic JSONL file and return its path."""
    with open(path, "w") as handle:
        handle.writelines(lines(n_episodes, n_steps, observation_chars))
    return path


# -- every format, grown from the samples the tests use ----------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "tests" / "data"
"""Real-shaped sample files, one folder per format (written from each format's documentation)."""

LENGTH = 40
"""Steps (messages, events) per synthetic episode: agent runs on real benchmarks take tens of
steps, while the samples are kept short for the tests."""

LINE_SAMPLES = {
    "openai-chat": ("openai-chat/tools.jsonl", "messages"),
    "openhands": ("openhands/output.jsonl", "history"),
    "atif": ("atif/runs.jsonl", "steps"),
    "group-chat": ("group-chat/chats.jsonl", "history"),
}
"""Formats with one episode per line: each sample line, its list of steps grown to
:data:`LENGTH`, repeated (episode ids come from the line number)."""

FILE_SAMPLES = {
    "swe-agent": ("swe-agent/sympy__sympy-20590.traj", "trajectory"),
    "mini-swe-agent": (
        "mini-swe-agent/sympy__sympy-20590/sympy__sympy-20590.traj.json",
        "messages",
    ),
}
"""Formats with one episode per file: the sample, its steps grown, copied into a folder; each
copy made distinct by trailing whitespace (so its content hash, and its episode id, differs)."""

_OPENING = ("system", "user")


def _grown(record: dict, key: str, per_step: float = 1.0) -> dict:
    """``record`` with its list ``key`` grown to about :data:`LENGTH` steps, ``per_step``
    entries each: the opening system and user entries and the last entry kept, the ones
    between repeated (ATIF steps renumbered)."""
    entries = record[key]
    head = 0
    while head < len(entries) - 1 and _role(entries[head]) in _OPENING:
        head += 1
    body, tail = entries[head:-1] or entries[head:], entries[-1:] if entries[head:-1] else []
    size = round(LENGTH * per_step) - head - len(tail)
    grown = entries[:head] + [body[k % len(body)] for k in range(size)]
    grown += tail
    if key == "steps":  # ATIF numbers its steps
        grown = [{**step, "step_id": k + 1} for k, step in enumerate(grown)]
    return {**record, key: grown}


def _role(entry: object) -> object:
    """Who wrote a message or step (chat ``role``, ATIF ``source``)."""
    return entry.get("role", entry.get("source")) if isinstance(entry, dict) else None


def _entries_per_step(fmt: str, sample: Path, key: str) -> float:
    """Entries of list ``key`` per step the format's importer makes of the sample, at least
    one (chat formats: a message a step, or less; mini-swe-agent and OpenHands: an action and
    the observation after it make one)."""
    from store import Store
    from workbench.ingest import import_paths

    with Store(":memory:") as store:
        steps = sum(f.steps for f in import_paths(store, [sample], format=fmt).files)
    text = sample.read_text()
    if sample.suffix == ".jsonl":
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        records = [json.loads(text)]
    return max(1.0, sum(len(record[key]) for record in records) / steps)


def _repeat_lines(sample: Path, key: str, out: Path, episodes: int, per_step: float) -> Path:
    lines = [
        json.dumps(_grown(json.loads(line), key, per_step))
        for line in sample.open()
        if line.strip()
    ]
    with open(out, "w") as handle:
        for k in range(episodes):
            handle.write(lines[k % len(lines)] + "\n")
    return out


def _copies(sample: Path, key: str, folder: Path, episodes: int, per_step: float) -> Path:
    folder.mkdir()
    text = json.dumps(_grown(json.loads(sample.read_text()), key, per_step), indent=2)
    for k in range(episodes):
        padding = " " * (k % 64) + "\n" * (k // 64 + 1)
        (folder / f"run-{k:06d}{''.join(sample.suffixes)}").write_text(text + padding)
    return folder


def _inspect_log(sample: Path, out: Path, episodes: int) -> Path:
    log = json.loads(sample.read_text())
    samples = [_grown(sample, "messages") for sample in log["samples"]]
    log["samples"] = [
        {**samples[k % len(samples)], "id": f"{samples[k % len(samples)]['id']}-{k}"}
        for k in range(episodes)
    ]
    out.write_text(json.dumps(log))
    return out


def _react_log(sample: Path, out: Path, episodes: int) -> Path:
    """The sample's header, then its first episode over and over, its steps repeated."""
    lines = sample.read_text().splitlines()
    first = lines.index("===== Episode 1 =====")
    end = lines.index("===== Episode 2 =====")
    steps = next(i for i in range(first, end) if lines[i].startswith("Thought:"))
    score = next(i for i in range(steps, end) if lines[i].startswith("Score:"))
    header, task, body = lines[:first], lines[first + 1 : steps], lines[steps:score]
    repeats = max(1, LENGTH // sum(line.startswith("Action:") for line in body))
    with open(out, "w") as handle:
        handle.write("\n".join(header) + "\n")
        for k in range(episodes):
            episode = [f"===== Episode {k + 1} =====", *task, *body * repeats, *lines[score:end]]
            handle.write("\n".join(episode) + "\n")
    return out


def _renamed(entries: list, ids: dict[str, str]) -> list:
    """``entries`` (JSON values) with every occurrence of each id replaced, inside JSON-string
    values too (a tool call's id in an OTLP span's message list)."""
    text = json.dumps(entries)
    for old, new in ids.items():
        text = text.replace(f'"{old}"', f'"{new}"').replace(f'\\"{old}\\"', f'\\"{new}\\"')
    return json.loads(text)


def _repeated(lines: list[dict], start: int, end: int, repeats: int, ids: Iterable) -> list[dict]:
    """JSON lines with ``lines[start:end]`` repeated ``repeats`` times, each repeat with its
    own ``ids`` (suffixed) and later in time (each line's ISO ``timestamp``), then the rest."""
    first, after = _stamp(lines[start]), _stamp(lines[end]) if end < len(lines) else None
    duration = (after - first) if after and first else timedelta(0)
    grown = lines[:end]
    for k in range(1, repeats):
        grown += _later(_renamed(lines[start:end], {i: f"{i}-{k}" for i in ids if i}), k * duration)
    return grown + _later(lines[end:], (repeats - 1) * duration)


def _stamp(line: dict) -> datetime | None:
    value = line.get("timestamp")
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _later(lines: list[dict], by: timedelta) -> list[dict]:
    """Copies of JSON lines with their ``timestamp`` moved ``by`` later (same ISO form)."""
    moved = []
    for line in lines:
        stamp = _stamp(line)
        if stamp is not None:
            text = (stamp + by).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            line = {**line, "timestamp": text}
        moved.append(line)
    return moved


def _write_lines(out: Path, records: Iterable[object], padding: str = "") -> Path:
    with open(out, "w") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)
        handle.write(padding)
    return out


def _padding(k: int) -> str:
    """Blank text that makes the ``k``-th copy of a file distinct (its content hash differs)."""
    return " " * (k % 64) + "\n" * (k // 64 + 1)


def _codex_rollouts(sample: Path, folder: Path, episodes: int) -> Path:
    """Copies of a rollout, its calls and outputs (from the first reasoning item to the last
    output) repeated with fresh call ids; the session header and the final reply kept."""
    lines = [json.loads(line) for line in sample.open() if line.strip()]
    items = [
        line["payload"].get("type") if line["type"] == "response_item" else None for line in lines
    ]
    start = items.index("reasoning")
    end = max(k for k, item in enumerate(items) if item and item.endswith("_output")) + 1
    body = lines[start:end]
    calls = [line["payload"]["call_id"] for line in body if "call_id" in line["payload"]]
    steps = sum(item.endswith(("call", "_output")) for item in items[start:end] if item)
    repeats = max(1, round((LENGTH - 3) / steps))  # 3: the context, the prompt, the reply
    grown = _repeated(lines, start, end, repeats, calls)
    folder.mkdir()
    for k in range(episodes):
        _write_lines(folder / f"rollout-{k:06d}.jsonl", grown, _padding(k))
    return folder


def _claude_sessions(sample: Path, folder: Path, episodes: int) -> Path:
    """Copies of a session: its main chain's calls and results after the sub-agent's run
    repeated with fresh uuids, message and tool ids (the chain relinked), the rest kept."""
    lines = [json.loads(line) for line in sample.open() if line.strip()]
    main = [k for k, line in enumerate(lines) if line.get("isSidechain") is False]
    last_side = max(k for k, line in enumerate(lines) if line.get("isSidechain") is True)
    start = next(k for k in main if k > last_side and lines[k]["type"] == "assistant")
    end = max(k for k in main if lines[k]["type"] == "assistant")
    body = lines[start:end]
    ids = [line["uuid"] for line in body] + [line["message"].get("id") for line in body]
    ids += [
        block.get("id") or block.get("tool_use_id")
        for line in body
        for block in line["message"]["content"]
    ]
    outside = sum(_claude_steps(lines[k]) for k in main if not start <= k < end)
    steps = sum(_claude_steps(line) for line in body)
    repeats = max(1, round((LENGTH - outside) / steps))
    grown = _repeated(lines, start, end, repeats, ids)
    previous = None
    for line in grown[start:]:  # one linear chain: each line's parent is the one before
        if previous is not None and line.get("isSidechain") is False:
            line["parentUuid"] = previous
        previous = line.get("uuid", previous)
    folder.mkdir()
    for k in range(episodes):
        _write_lines(folder / f"session-{k:06d}.jsonl", grown, _padding(k))
    return folder


def _claude_steps(line: dict) -> int:
    """Steps a Claude Code line gives (about: a text, a call or a result each; thinking none)."""
    content = line.get("message", {}).get("content")
    if not isinstance(content, list):
        return 1 if line.get("type") == "user" else 0
    return sum(block.get("type") != "thinking" for block in content)


def _otlp_traces(sample: Path, out: Path, episodes: int) -> Path:
    """JSON lines of one trace each (as the collector's file exporter writes them): the
    sample's trace, its model and tool spans after the first call repeated later in time with
    fresh span and call ids, the final reply and the root span moved to the end, and a trace id
    per line."""
    data = json.loads(sample.read_text())
    scope = data["resourceSpans"][0]["scopeSpans"][0]
    spans = scope["spans"]
    operations = [_otlp_attribute(span, "gen_ai.operation.name") for span in spans]
    start = operations.index("execute_tool") + 1
    end = max(k for k, op in enumerate(operations) if op == "execute_tool") + 1
    body = spans[start:end]
    duration = int(spans[end]["startTimeUnixNano"]) - int(body[0]["startTimeUnixNano"])
    calls = [_otlp_attribute(span, "gen_ai.tool.call.id") for span in body]
    steps = 2 * operations[start:end].count("execute_tool")  # a call and its result each
    repeats = max(1, round((LENGTH - 4) / steps))  # 4: prompt, first call and result, reply
    grown = spans[:end]
    for k in range(1, repeats):
        ids = {span["spanId"]: f"{int(span['spanId'], 16) + (k << 8):016x}" for span in body}
        grown += _shifted(_renamed(body, ids | {c: f"{c}-{k}" for c in calls if c}), k * duration)
    for span, moved in zip(
        spans[end:], _shifted(spans[end:], (repeats - 1) * duration), strict=True
    ):
        if not span["parentSpanId"]:  # the root starts when it did, and ends last
            moved["startTimeUnixNano"] = span["startTimeUnixNano"]
        grown.append(moved)
    resource = {**data["resourceSpans"][0], "scopeSpans": [{**scope, "spans": grown}]}
    text = json.dumps({**data, "resourceSpans": [resource]})
    trace = spans[0]["traceId"]
    with open(out, "w") as handle:
        for k in range(episodes):
            handle.write(text.replace(trace, f"{k + 1:032x}") + "\n")
    return out


def _shifted(spans: list[dict], nanos: int) -> list[dict]:
    """Copies of ``spans``, ``nanos`` later."""
    keys = ("startTimeUnixNano", "endTimeUnixNano")
    return [{**span, **{key: str(int(span[key]) + nanos) for key in keys}} for span in spans]


def _otlp_attribute(span: dict, key: str) -> object:
    return next(
        (next(iter(a["value"].values())) for a in span.get("attributes", []) if a["key"] == key),
        None,
    )


def _agentbench_runs(sample: Path, folder: Path, episodes: int) -> Path:
    """A task's ``runs.jsonl`` (with its ``overall.json``): each sample line in turn, its last
    agent turn and the answer to it repeated, under a sample index of its own."""
    task = folder / "gpt-4o" / sample.parent.name
    task.mkdir(parents=True)
    (task / "overall.json").write_text((sample.parent / "overall.json").read_text())
    records = []
    for line in sample.open():
        record = json.loads(line)
        history = record["output"]["history"]
        pair = max(
            k
            for k in range(len(history) - 1)
            if history[k]["role"] == "agent" and history[k + 1]["role"] == "user"
        )
        head, body, tail = history[:pair], history[pair : pair + 2], history[pair + 2 :]
        history = head + body * max(1, LENGTH - len(head) - len(tail)) + tail
        records.append({**record, "output": {**record["output"], "history": history}})
    numbered = ({**records[k % len(records)], "index": f"std-{k:05d}"} for k in range(episodes))
    return _write_lines(task / "runs.jsonl", numbered)


GROWN = {
    "codex": (
        "codex/rollout-2025-10-14T16-10-00-0199a3c2-7e41-7d20-b5a9-3f1e2d4c6b80.jsonl",
        _codex_rollouts,
        "",
    ),
    "claude-code": ("claude-code/session.jsonl", _claude_sessions, ""),
    "otlp": ("otlp/genai_agent_trace.json", _otlp_traces, ".jsonl"),
    "agentbench": ("agentbench/gpt-4o/os-std/runs.jsonl", _agentbench_runs, ""),
}
"""Formats grown by a function of their own: ``(sample, grower, suffix of what it writes)``.
Codex and Claude Code write one session per file (copies, made distinct as above); an OTLP
export and an AgentBench ``runs.jsonl`` hold many episodes."""


class NoSyntheticFile(KeyError):
    """A format :func:`format_file` cannot make a file of."""

    def __init__(self, fmt: str) -> None:
        super().__init__(fmt)
        self.format = fmt

    def __str__(self) -> str:
        return f"no synthetic {self.format!r} file (add one to bench/_synthetic.py)"


def format_file(fmt: str, folder: Path, episodes: int, steps: int = 50) -> Path:
    """A file (or folder) of ``episodes`` episodes in format ``fmt``, for ``import``.

    The workbench's own format is generated (``steps`` steps per episode); every other format
    grows its sample from ``tests/data`` (see :data:`LENGTH`), keeping the sample's shape.
    """
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / fmt
    if fmt == "workbench":
        return write(target.with_suffix(".jsonl"), episodes, steps)
    if fmt in LINE_SAMPLES:
        sample, key = LINE_SAMPLES[fmt]
        out = target.with_suffix(".jsonl")
        per_step = _entries_per_step(fmt, SAMPLES / sample, key)
        return _repeat_lines(SAMPLES / sample, key, out, episodes, per_step)
    if fmt in FILE_SAMPLES:
        sample, key = FILE_SAMPLES[fmt]
        per_step = _entries_per_step(fmt, SAMPLES / sample, key)
        return _copies(SAMPLES / sample, key, target, episodes, per_step)
    if fmt == "inspect":
        return _inspect_log(SAMPLES / "inspect/log.json", target.with_suffix(".json"), episodes)
    if fmt == "react-text":
        sample = SAMPLES / "react-text/scienceworld_run.log"
        return _react_log(sample, target.with_suffix(".log"), episodes)
    if fmt in GROWN:
        sample, grow, suffix = GROWN[fmt]
        return grow(SAMPLES / sample, target.with_suffix(suffix), episodes)
    raise NoSyntheticFile(fmt)
