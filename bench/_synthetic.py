"""Synthetic workbench JSONL for the benchmarks: realistic shapes, deterministic content."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
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


def _grown(record: dict, key: str) -> dict:
    """``record`` with its list ``key`` grown to :data:`LENGTH` entries: the opening system and
    user entries and the last entry kept, the ones between repeated (ATIF steps renumbered)."""
    entries = record[key]
    head = 0
    while head < len(entries) - 1 and _role(entries[head]) in _OPENING:
        head += 1
    body, tail = entries[head:-1] or entries[head:], entries[-1:] if entries[head:-1] else []
    grown = entries[:head] + [body[k % len(body)] for k in range(LENGTH - head - len(tail))]
    grown += tail
    if key == "steps":  # ATIF numbers its steps
        grown = [{**step, "step_id": k + 1} for k, step in enumerate(grown)]
    return {**record, key: grown}


def _role(entry: object) -> object:
    """Who wrote a message or step (chat ``role``, ATIF ``source``)."""
    return entry.get("role", entry.get("source")) if isinstance(entry, dict) else None


def _repeat_lines(sample: Path, key: str, out: Path, episodes: int) -> Path:
    lines = [json.dumps(_grown(json.loads(line), key)) for line in sample.open() if line.strip()]
    with open(out, "w") as handle:
        for k in range(episodes):
            handle.write(lines[k % len(lines)] + "\n")
    return out


def _copies(sample: Path, key: str, folder: Path, episodes: int) -> Path:
    folder.mkdir()
    text = json.dumps(_grown(json.loads(sample.read_text()), key), indent=2)
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
        return _repeat_lines(SAMPLES / sample, key, target.with_suffix(".jsonl"), episodes)
    if fmt in FILE_SAMPLES:
        sample, key = FILE_SAMPLES[fmt]
        return _copies(SAMPLES / sample, key, target, episodes)
    if fmt == "inspect":
        return _inspect_log(SAMPLES / "inspect/log.json", target.with_suffix(".json"), episodes)
    if fmt == "react-text":
        sample = SAMPLES / "react-text/scienceworld_run.log"
        return _react_log(sample, target.with_suffix(".log"), episodes)
    raise KeyError(f"no synthetic {fmt!r} file")
