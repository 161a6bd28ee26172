"""Import a script of benchmarks/ (not a package) as a module for a test, under a name of its own, and take it
out of ``sys.modules`` afterwards (its dataclasses look their module up there while it is loaded)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from typing import Any, Iterator

BENCHMARKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks")


@contextlib.contextmanager
def bench_module(script: str, name: str) -> Iterator[Any]:
    """``benchmarks/<script>`` loaded as module ``name`` for the ``with`` block."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCHMARKS, script))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)
