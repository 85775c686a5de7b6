"""No import cycle between the project's modules (store, workbench, tui).

Every import statement counts, wherever it is written: at module level, inside a function,
under ``if TYPE_CHECKING:``. Relative imports are resolved against the importing module, and
``from package import name`` points at the submodule ``package.name`` when there is one (else
at the package, whose ``__init__`` holds the name).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("store", "workbench", "tui")


def module_files() -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _base(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if level == 0:
        return target or ""
    parts = module.split(".")
    anchor = parts if is_package else parts[:-1]
    anchor = anchor[: len(anchor) - (level - 1)]
    return ".".join([*anchor, target] if target else anchor)


def imported(module: str, path: Path, modules: set[str]) -> Iterator[str]:
    """The project modules ``module`` imports (any statement, anywhere in the file)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node.level, node.module)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in modules:
                    yield submodule
                elif base in modules:
                    yield base


@cache
def import_graph() -> dict[str, set[str]]:
    """Module → the project modules it imports (itself left out)."""
    files = module_files()
    names = set(files)
    return {m: set(imported(m, p, names)) - {m} for m, p in files.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's
    algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def cycle_in(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One cycle through the component's first module, as ``a → b → … → a``."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return component


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    assert "store" in graph["workbench.llm.client"]  # from store import Store
    assert "workbench.analyze.causes" in graph["workbench.compile.heuristic"]
    assert "workbench.admit.repository" in graph["workbench.compile.compiler"]  # in a function
    assert "tui.screens.help" in graph["tui.app"]
    assert _base("tui.screens.clusters", False, 1, "compare") == "tui.screens.compare"
    assert _base("tui.screens.clusters", False, 2, "data") == "tui.data"
    assert _base("tui.screens", True, 1, None) == "tui.screens"  # from . import x in __init__


def test_no_import_cycle():
    graph = import_graph()
    cycles = list(strongly_connected(graph))
    described = "\n".join(" → ".join(cycle_in(graph, c)) + f"  ({len(c)} modules)" for c in cycles)
    assert not cycles, f"import cycles:\n{described}"
