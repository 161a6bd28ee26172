"""A Report in a notebook or a REPL: a one-line ``repr``, a pandas DataFrame of the ops, a compact HTML view.

:class:`~tflite_flops.report.Report` calls these from ``__repr__``, ``to_dataframe`` and
``_repr_html_`` (Jupyter's rich display), registered in :data:`~tflite_flops.report.records.VIEWS` when the
report package loads (the records import no view: the views read the per-op columns, which read the
records). They only read the report. The DataFrame has the CSV's
columns (the per-op columns declared for ``csv`` in :mod:`tflite_flops.report.columns`), one row per
op; pandas is imported only when a DataFrame is asked for (it is not a dependency of the package).

The HTML view is a fragment, not a page: a line of headline figures and the top ops, every text
escaped, no script and no style sheet of its own (inline styles only), so that a notebook shows it
as it shows any table. The full page is :func:`tflite_flops.render.render` with ``"html"``; this
module cannot use the HTML renderer's pieces (the report layer imports no renderer,
tests/test_layers.py), so it keeps to the per-op column declarations and :mod:`tflite_flops.units`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..units import grouped, human, human_bytes
from .columns import columns_for
from .headline import runtime_total
from .summary import MEMORY
from .records import VIEWS

if TYPE_CHECKING:
    from .records import Report


def model_name(report: "Report") -> str:
    """The model file's name (``<bytes>`` for a model given as bytes)."""
    return os.path.basename(report.model.path) if report.model.path else "<bytes>"


def memory_headline(report: "Report") -> tuple[str, int] | None:
    """The memory figure a reader is shown first: ``(what it is, bytes)``, None without it.

    The declared memory headline (:data:`tflite_flops.report.summary.MEMORY`): LiteRT's default configuration,
    XNNPACK on, with the weights mapped from the file, as the table, the JSON and ``--max-memory`` read it.
    """
    total, value = runtime_total(report.memory), MEMORY.read(report)  # the declared figure, its configuration
    if total is None or value is None:
        return None
    return f"{total.config}, weights mapped", value


def latency_headline(report: "Report") -> tuple[str, float] | None:
    """The latency figure a reader is shown first: ``("measured" | "predicted", ms)``; measured wins; None
    when neither (a skipped measurement is no figure)."""
    if report.latency is not None and report.latency.median_ms is not None:
        return "measured", report.latency.median_ms
    if report.prediction is not None:
        return "predicted", report.prediction.latency_ms
    return None


def _headline(report: "Report") -> list[tuple[str, str, str]]:
    """``(label, value, detail)`` of the headline figures, in order."""
    t = report.totals
    out = [("ops", str(report.model.operators), f"{report.model.subgraphs} subgraph(s)"),
           ("MACs", human(t.macs), grouped(t.macs)), ("FLOPs", human(t.flops), grouped(t.flops)),
           ("params", human(t.params), human_bytes(t.param_bytes))]
    mem = memory_headline(report)
    if mem is not None:
        out.append(("memory", human_bytes(mem[1]), mem[0]))
    lat = latency_headline(report)
    if lat is not None:
        out.append(("latency", f"{lat[1]:.3f} ms", lat[0]))
    return out


def summary_line(report: "Report") -> str:
    """The one-line ``repr``: model, ops, MACs, params, the headline memory and latency."""
    parts = [f"{report.model.operators} ops", f"{human(report.totals.macs)} MACs",
             f"{human(report.totals.params)} params"]
    mem = memory_headline(report)
    if mem is not None:
        parts.append(f"memory {human_bytes(mem[1])} ({mem[0]})")
    lat = latency_headline(report)
    if lat is not None:
        parts.append(f"latency {lat[1]:.3f} ms ({lat[0]})")
    if not report.totals.complete:
        parts.append("PARTIAL totals")
    return f"<tflite_flops Report {model_name(report)!r}: {' · '.join(parts)}>"


def to_dataframe(report: "Report") -> Any:
    """One row per op with the CSV's columns; integer columns stay integers (pandas' nullable ``Int64``
    where an op has no value), shapes stay tuples.

    Raises:
        ImportError: pandas is not installed (one line saying so).
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("Report.to_dataframe() needs pandas, which tflite_flops does not install: "
                          "pip install 'tflite_flops[notebook]' (or pandas)") from None
    columns = columns_for("csv", report)
    data: dict[str, Any] = {}
    for c in columns:
        values = [c.read(op, report) for op in report.ops]
        known = [v for v in values if v is not None]
        if len(known) < len(values) and known:  # a missing value would turn an int column into floats
            if all(type(v) is bool for v in known):
                data[c.name] = pd.array(values, dtype="boolean")
                continue
            if all(type(v) is int for v in known):
                data[c.name] = pd.array(values, dtype="Int64")
                continue
        data[c.name] = pd.Series(values, dtype=object) if c.unit == "shapes" else values
    return pd.DataFrame(data, columns=[c.name for c in columns])


_CELL = "padding:2px 8px;text-align:{}"


def _cell(tag: str, text: str, right: bool = False, title: str = "") -> str:
    from html import escape  # here: only a notebook's view loads the module

    style = _CELL.format("right" if right else "left")
    tip = f' title="{escape(title)}"' if title else ""
    return f'<{tag} style="{style}"{tip}>{escape(text)}</{tag}>'


def to_html(report: "Report", top: int = 10) -> str:
    """A compact HTML fragment for Jupyter: the model, the headline figures, warnings and the top ops by FLOPs."""
    from html import escape

    head = "".join(_cell("th", label, right=True) for label, _, _ in _headline(report))
    values = "".join(_cell("td", value, right=True) for _, value, _ in _headline(report))
    details = "".join(_cell("td", detail, right=True) for _, _, detail in _headline(report))
    parts = [f'<div class="tflite-flops-report"><p><b>{escape(model_name(report))}</b> '
             f'<span style="opacity:.7">tflite_flops {escape(str(report.tool.get("version", "")))}'
             f'{" · PARTIAL totals" if not report.totals.complete else ""}</span></p>',
             f"<table><thead><tr>{head}</tr></thead><tbody><tr>{values}</tr>"
             f'<tr style="opacity:.7">{details}</tr></tbody></table>']
    if report.warnings:
        shown = "".join(f"<li>{escape(str(w))}</li>" for w in report.warnings[:5])
        more = f"<li>… {len(report.warnings) - 5} more</li>" if len(report.warnings) > 5 else ""
        parts.append(f"<p>{len(report.warnings)} warning(s):</p><ul>{shown}{more}</ul>")
    rows = report.top_ops(top)
    if rows:
        figures = columns_for("md", report, rows)
        th = ("".join(_cell("th", h) for h in ("op", "type", "output"))
              + "".join(_cell("th", c.label, right=c.right) for c in figures))
        body = "".join(
            "<tr>" + _cell("td", f"{o.subgraph}:{o.index}") + _cell("td", o.op_type)
            + _cell("td", o.name if len(o.name) <= 48 else "…" + o.name[-47:], title=o.name)
            + "".join(_cell("td", c.short_text(o, report), right=c.right) for c in figures) + "</tr>"
            for o in rows)
        parts.append(f"<p>Top {len(rows)} ops by FLOPs</p><table><thead><tr>{th}</tr></thead>"
                     f"<tbody>{body}</tbody></table>")
    parts.append("</div>")
    return "".join(parts)


VIEWS.update(repr=summary_line, dataframe=to_dataframe, html=to_html)  # the Report's methods call these
