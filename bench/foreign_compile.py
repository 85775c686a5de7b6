"""Knowledge compiled from real logs: does it group, and is it free of instance values?

For each source of ``bench/labels/`` (real public logs; the people's spans are *not* loaded,
so the analyzer finds the causes itself) this imports the logs into a fresh database, runs
``analyze`` and ``compile`` through the CLI, then ``compile`` again, and prints:

- failures analysed, clusters (supported / deferred) and the share of singletons;
- specs staged and deferred, the deferrals counted by reason;
- staged artifacts whose executable form carries instance literals (ids and codes with
  digits, file paths, quoted strings) — the target is 0;
- staged rules that only order two steps that change nothing (``Do not psql before cat``) —
  the target is 0;
- the versions a second ``compile`` of the same analysis stages — the target is 0.

    python bench/foreign_compile.py [SOURCE ...]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _demo
from attribution import LABELS, sources

from store import Store
from workbench.analyze.reading import effect_of
from workbench.compile.contracts import executable_form

LITERAL = re.compile(
    r"""(?<![\w<])(?:[A-Za-z#_\-]*\d[A-Za-z0-9#_\-]{2,}|[\w.\-]+(?:/[\w.\-]+)+\.\w+)(?![\w>])"""
    r"""|"[^"<>{}]{4,}"|'[^'<>{}]{4,}'"""
)
"""An instance value in an artifact's text: an id or code with digits in it, a file path, a
quoted string (placeholders such as ``<E1>`` and ``<X>`` are not)."""


def literals(contract: dict) -> list[str]:
    """The instance literals of what an artifact does: its executable form's text and
    patterns (its name and the recorded cases it was checked on left out)."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.extend(m.group() for m in LITERAL.finditer(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk({k: v for k, v in executable_form(contract).items() if k not in ("id", "kind")})
    return found


ORDER = re.compile(r"^Do not (\S+) before (\S+);")
"""How a staged rule that orders two actions describes itself."""


def reorders_reads(contract: dict) -> bool:
    """Whether a rule only puts one step that changes nothing before another (``Do not psql
    before cat``): an order of lookups, not a decision worth a rule."""
    found = ORDER.match(str(executable_form(contract).get("description", "")))
    if found is None:
        return False
    return all(effect_of(word) != "change" for word in found.groups())


def reason_kind(reason: str) -> str:
    """A deferral reason without its particulars: the cluster it names, quoted actions and
    what follows a ``:`` or ``(`` after them."""
    text = re.sub(r"^cluster \d+:\s*", "", reason)
    text = re.sub(r"'[^']*'", "'…'", text)
    return re.split(r"[:(;]", text, maxsplit=1)[0].strip() or "(no reason)"


def measure(folder: Path, db: Path) -> dict:
    spec = json.loads((folder / "source.json").read_text())
    args = ["import", *(str(folder / p) for p in spec["paths"]), "--batch", spec["name"]]
    if spec.get("map"):
        args += ["--map", str(folder / spec["map"])]
    elif spec.get("format"):
        args += ["--format", spec["format"]]
    if spec.get("results"):
        args += ["--results", str(folder / spec["results"])]
    _demo.workbench(db, *args)
    _demo.workbench(db, "analyze")
    _demo.workbench(db, "compile")
    with Store(db) as store:
        before = len(store.versions())
    _demo.workbench(db, "compile")
    with Store(db) as store:
        run = store.analysis_runs()[0]
        assert run.id is not None
        analyses = store.analyses(run.id)
        clusters = store.clusters(run.id)
        specs = store.specs(run.id)
        staged = store.versions(status="staged")
        again = len(store.versions()) - before
    sizes = [len(c.members) for c in clusters]
    with_literals = [v for v in staged if literals(v.contract)]
    return {
        "failures": len(analyses),
        "clusters": len(clusters),
        "supported": sum(c.status == "supported" for c in clusters),
        "singletons": sum(size == 1 for size in sizes),
        "staged specs": sum(s.status != "deferred" for s in specs),
        "deferred": Counter(reason_kind(s.reason) for s in specs if s.status == "deferred"),
        "staged versions": len(staged),
        "with literals": len(with_literals),
        "reorders reads": sum(reorders_reads(v.contract) for v in staged),
        "examples": [lit for v in with_literals[:3] for lit in literals(v.contract)[:2]],
        "second compile": again,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help=f"folders of {LABELS} (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for folder in sources(args.sources):
            found = measure(folder, Path(tmp) / f"{folder.name}.db")
            share = found["singletons"] / found["clusters"] if found["clusters"] else 0.0
            print(f"== {folder.name}")
            print(
                f"failures {found['failures']}; clusters {found['clusters']}"
                f" ({found['supported']} supported), singletons {share:.0%}"
            )
            deferred = ", ".join(f"{n} {k}" for k, n in found["deferred"].most_common()) or "none"
            print(f"specs staged {found['staged specs']}; deferred: {deferred}")
            print(
                f"staged versions {found['staged versions']}, with instance literals"
                f" {found['with literals']} (target 0)"
                + (f", e.g. {', '.join(found['examples'])}" if found["examples"] else "")
            )
            print(
                f"staged rules that only order steps changing nothing: {found['reorders reads']}"
                " (target 0)"
            )
            print(f"a second compile staged {found['second compile']} version(s) (target 0)")


if __name__ == "__main__":
    sys.exit(main())
