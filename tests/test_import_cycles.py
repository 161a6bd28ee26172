"""The package's modules import each other without cycles (module-level and function-level relative imports)."""

from __future__ import annotations

import ast
from pathlib import Path

import source_trees

PACKAGE = Path(__file__).resolve().parent.parent / "tflite_flops"

# Cycles that are known and waiting for a fix (each with the reason); the test fails when one disappears
# while still listed here, and on any other cycle.
KNOWN_CYCLES: set[frozenset[str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_only(nodes) -> set[int]:
    """The ids of the imports under ``if TYPE_CHECKING:`` among a tree's ``nodes``: a type checker's, never run."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _imports(path: Path) -> set[str]:
    """The package modules that ``path`` imports with relative imports, anywhere in the file but under
    ``if TYPE_CHECKING:`` (what breaks a cycle the typing way)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    nodes = source_trees.nodes(path)
    type_only = _type_only(nodes)
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level and id(node) not in type_only:
            base = package.split(".")
            base = base[:len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            found.add(target)
            for alias in node.names:  # `from . import x` / `from .ops import conv`: submodules too
                found.add(f"{target}.{alias.name}")
    return found


def graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {}
    for name, path in files.items():
        # a submodule name stands for its package's subpackage when that is what exists
        edges[name] = {t for t in _imports(path) if t in files and t != name}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _collapse(name: str) -> str:
    """render.* modules count as the render package (the known cycle is report <-> the render package)."""
    return "tflite_flops.render" if name.startswith("tflite_flops.render.") else name


def test_no_import_cycles():
    edges: dict[str, set[str]] = {}
    for src, targets in graph().items():
        edges.setdefault(_collapse(src), set()).update(_collapse(t) for t in targets if _collapse(t) != _collapse(src))
    # the package __init__ re-exports the API: every module importing "from . import __version__" is not a cycle
    edges.pop("tflite_flops", None)
    for targets in edges.values():
        targets.discard("tflite_flops")
    found = [frozenset(c) for c in _cycles(edges)]
    cycles = [c for c in found if c not in KNOWN_CYCLES]
    assert not cycles, f"import cycles: {[sorted(c) for c in cycles]}"
    assert KNOWN_CYCLES <= set(found), "a known cycle is gone: remove it from KNOWN_CYCLES"


def test_the_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
