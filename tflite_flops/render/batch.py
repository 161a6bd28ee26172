"""Renderers of ``batch`` rows (one dict per model, every key of :data:`COLUMNS`): table, csv,
json, md. The format table is :data:`BATCH_FORMATS` (extensions from
:data:`tflite_flops.render.formats.FORMATS`). The rows are made by :mod:`tflite_flops.studies.batch`.
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any, Iterable, Mapping

from ..report.summary import MEMORY
from ..units import human
from .formats import RendererTable
from .formats.csv import safe_cell
from .formats.markdown import md_table, md_text
from .prediction import flags_short
from ..studies.batch import columns
from .text import text_table


def rows_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """CSV with a fixed header (raw integers)."""
    rows = list(rows)
    cols = columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([safe_cell(r.get(c, "")) for c in cols])
    return buf.getvalue()


def rows_json(rows: Iterable[Mapping[str, Any]]) -> str:
    """``{"models": [row, ...]}`` as JSON (empty cells become null)."""
    rows = list(rows)
    cols = columns(rows)
    clean = [{c: (None if r.get(c, "") == "" else r.get(c)) for c in cols} for r in rows]
    return json.dumps({"schema_version": 1, "models": clean}, indent=2, ensure_ascii=False) + "\n"


def rows_markdown(rows: Iterable[Mapping[str, Any]]) -> str:
    """A Markdown table of the main columns (a "predicted ms" column when predicted, "budget" when checked)."""
    rows = list(rows)
    cols = columns(rows)
    predicted, budget = "predicted_ms" in cols, "budget" in cols
    body = []
    for r in rows:
        ok = r["status"] != "error"
        body.append([md_text(os.path.basename(str(r["model"]))), md_text(r["status"]),
                     human(r["macs"]) if ok else "-", human(r["flops"]) if ok else "-",
                     human(r["params"]) if ok else "-", _memory(r), _partitions(r)]
                    + ([_predicted(r), md_text(_confidence(r))] if predicted else []) + [md_text(r["error"])[:120]]
                    + ([md_text(_budget(r))[:160]] if budget else []))
    headers = ["model", "status", "MACs", "FLOPs", "params", "memory", "XNNPACK"]
    headers += (["predicted ms", "prediction confidence"] if predicted else []) + ["error"] + (["budget"] if budget else [])
    right = [False, False] + [True] * (len(headers) - 3 - budget) + [False] * (1 + budget)
    if predicted:
        right[-2 - budget] = False  # the confidence is text
    return "\n".join(md_table(headers, body, right)) + "\n"


def _budget(row: Mapping[str, Any]) -> str:
    """A row's budget cell: ``ok``, ``not checked``, or ``exceeded:`` and the violated limits."""
    if row.get("budget") == "exceeded":
        return f"exceeded: {row.get('budget_violations', '')}"
    return str(row.get("budget", ""))


def _memory(row: Mapping[str, Any]) -> str:
    """The memory headline of a row (:data:`tflite_flops.report.summary.MEMORY`, as the model's own report
    reads it), or '-' (an error row, or a report without the default runtime's figures)."""
    value = row.get(MEMORY.key)
    return MEMORY.text(value) if isinstance(value, int) and row["status"] != "error" else "-"


def _partitions(row: Mapping[str, Any]) -> str:
    """XNNPACK's partitions and kept ops of a row ("1 part" or "2 parts, 3 kept"), or '-'."""
    parts, kept = row.get("xnnpack_partitions"), row.get("xnnpack_kept_ops")
    if not isinstance(parts, int) or row["status"] == "error":
        return "-"
    return f"{parts} part{'s' if parts != 1 else ''}" + (f", {kept} kept" if isinstance(kept, int) and kept else "")


def _predicted(row: Mapping[str, Any]) -> str:
    """The predicted ms of a row, or '-' (an error row, or a model without a prediction)."""
    value = row.get("predicted_ms")
    return f"{value:.3f}" if isinstance(value, float) and row["status"] != "error" else "-"


def _confidence(row: Mapping[str, Any]) -> str:
    """The share of a row's predicted time on low-confidence ops, and its prediction's flags ("37% low;
    quick profile"), or '-'."""
    share = row.get("predicted_low_confidence_share")
    if not isinstance(share, float) or row["status"] == "error":
        return "-"
    flags = flags_short([f for f in str(row.get("predicted_flags") or "").split(";") if f])
    return f"{100 * share:.0f}% low" + (f"; {flags}" if flags else "")


def rows_table(rows: Iterable[Mapping[str, Any]]) -> str:
    """A plain-text table for the terminal (a "predicted ms" column when predicted, "budget" when checked)."""
    rows = list(rows)
    cols = columns(rows)
    predicted, budget = "predicted_ms" in cols, "budget" in cols
    data = []
    for r in rows:
        ok = r["status"] != "error"
        lat = r.get("latency_median_ms")
        data.append([os.path.basename(str(r["model"])), str(r["status"]), human(r["macs"]) if ok else "-",
                     human(r["flops"]) if ok else "-", human(r["params"]) if ok else "-", _memory(r),
                     _partitions(r), (f"{lat:.3f}" + (" NOISY" if r.get("latency_noisy") else "")) if isinstance(lat, float)
                     else "-"]
                    + ([_predicted(r), _confidence(r)] if predicted else []) + [str(r["error"])[:80]]
                    + ([_budget(r)[:100]] if budget else []))
    headers = ["model", "status", "MACs", "FLOPs", "params", "memory", "XNNPACK", "median ms"]
    headers += (["predicted ms", "prediction confidence"] if predicted else []) + ["error"] + (["budget"] if budget else [])
    right = [False, False] + [True] * (len(headers) - 3 - budget) + [False] * (1 + budget)
    if predicted:
        right[-2 - budget] = False  # the confidence is text
    return "\n".join(text_table(headers, data, right)) + "\n"


BATCH_FORMATS: RendererTable[list[dict[str, Any]]] = RendererTable("batch", {
    "table": rows_table,
    "csv": rows_csv,
    "json": rows_json,
    "md": rows_markdown,
})


def batch_format_for_path(path: str) -> str:
    """The batch output format an extension selects."""
    return BATCH_FORMATS.for_path(path)
