"""CSV renderer: one row per op, raw integers, written with the csv module.

The columns are the per-op columns that show in ``csv`` (:data:`tflite_flops.report.columns.OP_COLUMNS`),
in their order: a value not known is an empty cell. Text cells that start with ``=``, ``+``, ``-``
or ``@`` are prefixed with ``'`` so that a spreadsheet does not run a tensor name as a formula.
"""

from __future__ import annotations

import csv
import io

from ...report import Report
from ...report.columns import columns_for
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


def _cell(value: object, unit: str) -> object:
    """A raw value as the CSV writes it: shapes joined, None empty."""
    if value is None:
        return ""
    return shapes_cell(value) if unit == "shapes" else value  # type: ignore[arg-type]


@register_format("csv", (".csv",), order=30)
def render_csv(report: Report) -> str:
    """Every op of every subgraph as one CSV row."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    columns = columns_for("csv", report)
    writer.writerow([c.name for c in columns])
    for op in report.ops:
        writer.writerow([safe_cell(_cell(c.read(op, report), c.unit)) for c in columns])
    return buf.getvalue()
