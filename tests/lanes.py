"""The quick lane's share of a parametrized set (``pytest -m "not slow"``; CI runs every case).

``slow_cases(values, names, key)`` is ``values`` with the cases whose ``key`` is in ``names`` marked ``slow``:
the costly ones (the generative decoders, whose analysis costs several times a CNN's, a second or third format
of the same figures) leave the quick lane, and the rest keep each area in it. A name that matches no case is an
error at collection, so that a renamed sample cannot quietly bring its costly case back into the quick lane.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import pytest


def slow_cases(values: Iterable[Any], names: Iterable[str], key: Callable[[Any], str] = str) -> list[Any]:
    """``values`` for ``pytest.mark.parametrize`` (or a fixture's ``params``), those whose ``key`` is in
    ``names`` wrapped in ``pytest.param(..., marks=pytest.mark.slow)``."""
    values, names = list(values), set(names)
    keys = [key(v) for v in values]
    unknown = names - set(keys)
    if unknown:
        raise ValueError(f"no such case among {keys}: {sorted(unknown)}")
    return [pytest.param(v, marks=pytest.mark.slow) if k in names else v for v, k in zip(values, keys)]
