"""Rules of the test suite itself, checked on the source of tests/ (no test is run).

* No test reads a clock to decide its verdict: a limit on ``time.perf_counter()`` fails on a
  loaded machine and passes on a fast one whatever the code does. Count the work instead
  (``tests/work_counter.py``).
* A test marked ``runtime``, ``tf`` or ``micro`` never calls ``pytest.importorskip``: CI must
  fail, not skip, when a dependency is missing (conftest.py skips them locally, and not in CI).
"""

from __future__ import annotations

import ast
from pathlib import Path

import source_trees

TESTS = Path(__file__).resolve().parent
CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "process_time"}
MARKERS = {"runtime", "tf", "micro", "bundle", "engine"}


def _modules() -> list[Path]:
    return sorted(TESTS.glob("*.py"))


def _calls(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def _attr_call(call: ast.Call, owner: str, names: set[str]) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in names and isinstance(f.value, ast.Name) and f.value.id == owner


def _marks(decorators: list[ast.expr]) -> set[str]:
    """Names of ``pytest.mark.X`` among decorators or in a ``pytestmark`` value (also inside pytest.param)."""
    out = set()
    for node in decorators:
        for n in ast.walk(node):
            if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"
                    and isinstance(n.value.value, ast.Name) and n.value.value.id == "pytest"):
                out.add(n.attr)
    return out


def test_no_test_reads_a_clock():
    found = [f"{path.name}:{c.lineno}" for path in _modules()
             for c in source_trees.nodes(path) if isinstance(c, ast.Call) and _attr_call(c, "time", CLOCKS)]
    assert not found, f"wall-clock reads in tests (count work instead, see work_counter.py): {found}"


def test_marked_tests_do_not_importorskip():
    found = []
    for path in _modules():
        nodes = source_trees.nodes(path)
        module_marks = set()
        for node in nodes[0].body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                    for t in node.targets):
                module_marks |= _marks([node.value])
        for node in nodes:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                if (module_marks | _marks(node.decorator_list)) & MARKERS and any(
                        _attr_call(c, "pytest", {"importorskip"}) for c in _calls(node)):
                    found.append(f"{path.name}:{node.lineno} {node.name}")
    assert not found, f"tests marked runtime/tf/micro must import directly, not importorskip: {found}"
