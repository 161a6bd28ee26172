"""CSV renderer: one row per op, raw integers, written with the csv module.

Text cells that start with ``=``, ``+``, ``-`` or ``@`` are prefixed with ``'`` so that a
spreadsheet does not run a tensor name as a formula.
"""

from __future__ import annotations

import csv
import io

from ...report import Report
from . import register_format

COLUMNS = ["subgraph", "index", "op_type", "name", "phase", "executions", "status", "precision", "macs", "flops",
           "bytes_read", "bytes_written", "params", "live_bytes", "temporaries_bytes", "inputs", "outputs",
           "shapes_resolved", "latency_ms", "xnnpack", "xnnpack_reason", "xnnpack_partition", "gpu", "gpu_reason",
           "gpu_partition", "formula", "note"]
_OPTIONAL = ("latency_ms", "live_bytes", "temporaries_bytes", "xnnpack", "xnnpack_reason", "xnnpack_partition", "gpu",
             "gpu_reason", "gpu_partition")  # empty cells when not known
_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """Neutralise text that a spreadsheet would evaluate; numbers pass unchanged."""
    if isinstance(value, str) and value.startswith(_DANGEROUS):
        return "'" + value
    return value


def shapes_cell(shapes: tuple[tuple[int, ...], ...]) -> str:
    """'1x32x32x3;16x3x3x3' (a scalar is '')."""
    return ";".join("x".join(str(d) for d in s) for s in shapes)


@register_format("csv", (".csv",), order=30)
def render_csv(report: Report) -> str:
    """Every op of every subgraph as one CSV row."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    columns = COLUMNS
    if report.prediction is not None:  # the column only when predicted: the other reports stay as they were
        at = COLUMNS.index("latency_ms") + 1
        columns = COLUMNS[:at] + ["predicted_ms"] + COLUMNS[at:]
    writer.writerow(columns)
    for op in report.ops:
        row = {**{c: getattr(op, c, "") for c in columns},
               "inputs": shapes_cell(op.inputs), "outputs": shapes_cell(op.outputs),
               **{c: "" if getattr(op, c) is None else getattr(op, c) for c in _OPTIONAL + ("predicted_ms",)}}
        writer.writerow([safe_cell(row[c]) for c in columns])
    return buf.getvalue()
