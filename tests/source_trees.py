"""The syntax trees of Python files, each parsed once a test session, for the tests that read the source
(test_layers, test_import_cycles, test_op_facts; test_suite_rules reads tests/).

``ast.parse`` of the package's ~160 modules takes seconds on a 2-core machine, and ``ast.walk`` of them about
a second more: those tests parsed and walked the same files five times a run. The trees are shared and must
not be changed (no test does: they only read them).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def tree(path: Path) -> ast.Module:
    """The syntax tree of the Python file at ``path`` (shared: read it, never change it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of :func:`tree`, in ``ast.walk`` order."""
    return tuple(ast.walk(tree(path)))
