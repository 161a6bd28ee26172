"""The nodes of a Python file's syntax tree, parsed once for all the tests of a test module (test_layers,
test_import_cycles, test_op_facts and test_suite_rules read the source).

``ast.parse`` of the package's ~160 modules takes seconds on a 2-core machine, and ``ast.walk`` of them about
a second more: test_layers parsed each module twice (its own test, then the function-length check) and
test_suite_rules every test file twice. The cache is emptied after each test module (``tests/conftest.py``):
kept for the session, its million nodes would be walked again by every full collection of the garbage
collector. The nodes are shared and must not be changed (no test does: they only read them).
"""

from __future__ import annotations

import ast
import gc
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the syntax tree of the Python file at ``path``, in ``ast.walk`` order (the module first)."""
    text = path.read_text(encoding="utf-8")
    enabled = gc.isenabled()
    gc.disable()  # a syntax tree holds no reference cycle: collections run for its nodes would find nothing
    try:
        return tuple(ast.walk(ast.parse(text)))
    finally:
        if enabled:
            gc.enable()


def forget() -> None:
    """Empty the cache (after each test module)."""
    nodes.cache_clear()
