"""CSV renderer: one row per op, raw integers, written with the csv module.

The columns are the per-op columns that show in ``csv`` (:data:`tflite_flops.report.columns.OP_COLUMNS`),
in their order: a value not known is an empty cell. Text cells that start with ``=``, ``+``, ``-``
or ``@`` are prefixed with ``'`` so that a spreadsheet does not run a tensor name as a formula.
"""

from __future__ import annotations

import io
from operator import attrgetter
from typing import Callable

from ...report import OpRecord, Report
from ...report.columns import Column, columns_for
from . import register_format

_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """Neutralise text that a spreadsheet would evaluate; numbers pass unchanged."""
    if isinstance(value, str) and value.startswith(_DANGEROUS):
        return "'" + value
    return value


def shapes_cell(shapes: tuple[tuple[int, ...], ...]) -> str:
    """'1x32x32x3;16x3x3x3' (a scalar is '')."""
    return ";".join("x".join(str(d) for d in s) for s in shapes)


def _reader(column: Column, report: Report) -> Callable[[OpRecord], object]:
    """The raw value of ``column`` for an op (a plain attribute read when the column has no function)."""
    if column.value is None:
        return attrgetter(column.name)
    return lambda op: column.read(op, report)


@register_format("csv", (".csv",), order=30)
def render_csv(report: Report) -> str:
    """Every op of every subgraph as one CSV row."""
    buf = io.StringIO()
    import csv  # here: a run that writes no CSV never loads it

    writer = csv.writer(buf, lineterminator="\n")
    columns = columns_for("csv", report)
    writer.writerow([c.name for c in columns])
    readers = [(_reader(c, report), c.unit == "shapes") for c in columns]
    for op in report.ops:
        row: list[object] = []
        for read, shapes in readers:
            value = read(op)
            if value is None:  # not known: an empty cell
                value = ""
            elif shapes:
                value = shapes_cell(value)  # type: ignore[arg-type]
            row.append(safe_cell(value) if isinstance(value, str) else value)
        writer.writerow(row)
    return buf.getvalue()
