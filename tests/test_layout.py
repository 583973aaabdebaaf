"""The package's shape (DESIGN.md §3): no import cycles, no module over 500 lines.

An import cycle hidden by a deferred import (inside a function) or a type-only one (under
``if TYPE_CHECKING:``) still ties the modules together: neither can be understood, tested or
moved without the other. So every import statement counts, wherever it sits.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolcycle"
MAX_LINES = 500
#: Modules allowed past MAX_LINES, each with why it stays whole.
LONGER = {
    # The Playbook class is the package's one public facade: its constructor's options, the
    # engine's interface (attach, plan, observe) and learn_from, the one place a finished
    # run's learning is read top to bottom. Splitting it moves methods away from the object
    # users hold; it is at 501 since the skipped-tool filter passes the tools' descriptions.
    "toolcycle.playbook.playbook": 520,
}


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (packages by __init__)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file.

    ``from pkg import x`` imports the submodule ``pkg.x`` when there is one, else ``pkg``
    (its ``__init__``); ``import a.b`` imports ``a.b``.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                targets.add(submodule if submodule in modules else source)
    return {target for target in targets if target in modules and target != name}


def _cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], set[str]]]:
    """Per strongly connected component, one cycle (a path back to its start) and its members."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan; the package is small enough for recursion
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [(_path_back(graph, component), component) for component in components]


def _path_back(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """The shortest path from the component's first module back to itself."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & component):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start}")


def test_no_module_imports_itself_through_a_cycle() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles (deferred and TYPE_CHECKING imports count):\n" + "\n".join(
        f"  {' -> '.join(cycle)}   (tied together: {', '.join(sorted(members))})"
        for cycle, members in cycles)


def test_no_module_is_over_500_lines() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in _modules().items()}
    too_long = {name: lines for name, lines in sizes.items()
                if lines > LONGER.get(name, MAX_LINES)}
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"


def test_the_cycle_finder_finds_deferred_and_type_only_cycles(tmp_path: Path) -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert _cycles(graph) == [(["p.a", "p.b", "p.c", "p.a"], {"p.a", "p.b", "p.c"})]
    assert _cycles({"p.a": {"p.b"}, "p.b": set()}) == []
    package = tmp_path / "p"
    package.mkdir()
    (package / "__init__.py").write_text("from .a import A\n")
    (package / "a.py").write_text("def f():\n    from . import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n")
    modules = {"p": package / "__init__.py", "p.a": package / "a.py", "p.b": package / "b.py"}
    assert _imports("p.a", modules["p.a"], modules) == {"p.b"}
    assert _imports("p.b", modules["p.b"], modules) == {"p.a"}
    assert _imports("p", modules["p"], modules) == {"p.a"}
