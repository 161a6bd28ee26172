"""Per-op figures computed from the resolved ops: one small pass each, declared with :func:`per_op_pass`.

A pass here reads one walked op (:class:`~tflite_flops.analysis.entries.Entry`: its type, resolved
shapes, cost, executions) with its model and returns the op's value of one declared per-op column
(:mod:`tflite_flops.report.columns`), or None where the figure does not apply.
:func:`~tflite_flops.analysis.assemble.build_report` runs every pass of :data:`PASSES` after the
walk; nothing else wires them. A pass that raises gives the op None, a line in its note and a
warning in the report naming the op and the figure: never a silent 0, never a crash of the analysis.

The passes that need more than one op at a time (the memory plan, each delegate's placement) are
declared in :mod:`tflite_flops.analysis.assemble` itself.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from ..reader.model import Model
from .entries import Entry

OpPass = Callable[[Entry, Model], Any]  # (the walked op, its model) -> the op's value, or None


class PerOpPass(NamedTuple):
    """One declared pass: the column it fills and the function that computes the op's value."""

    column: str
    run: OpPass


PASSES: list[PerOpPass] = []


def per_op_pass(column: str) -> Callable[[OpPass], OpPass]:
    """Declare ``fn`` as the pass that computes the per-op column ``column`` (one pass per column)."""
    def register(fn: OpPass) -> OpPass:
        if any(p.column == column for p in PASSES):
            raise ValueError(f"per-op column {column!r} has two passes")
        PASSES.append(PerOpPass(column, fn))
        return fn
    return register
