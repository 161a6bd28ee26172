"""Renderers of a sweep (:class:`tflite_flops.studies.sweep.SweepResult`, also a KV-length sweep):
table, json, csv, html. The format table is :data:`SWEEP_RENDERERS` (extensions from
:data:`tflite_flops.render.formats.FORMATS`).
"""

from __future__ import annotations

import csv
import io
from typing import Any, Sequence

from ..report import LatencyStats, Throughput, error_pct
from ..report.columns import total_columns
from ..report.prediction import FLAGS
from ..studies.sweep import SweepPoint, SweepResult
from ..units import grouped, human, human_unit, precision_unit
from .formats import RendererTable
from .formats.html import render_sweep_html
from .prediction import flags_short, range_label
from .text import text_table


def _shape_text(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape) if shape else "()"


def sweep_json(result: SweepResult) -> str:
    """The sweep's JSON form (:meth:`SweepResult.to_dict`)."""
    return result.to_json() + "\n"


def sweep_html(result: SweepResult) -> str:
    """A page for the sweep alone: charts, the points and the scaling laws."""
    return render_sweep_html(result, title=f"tflite_flops sweep of {result.model}")


def _precisions(result: SweepResult) -> list[str]:
    return sorted({k for p in result.points for k in p.totals.flops_by_precision})


def sweep_csv(result: SweepResult) -> str:
    """One row per point: its input shapes, every total, latency and throughput (raw numbers)."""
    precisions = _precisions(result)
    inputs = list(result.points[0].input_shapes) if result.points else []
    figures = [c.total_name for c in total_columns("sweep")]  # the declared per-op columns' totals
    cols = (["point", *[f"shape:{n}" for n in inputs], "macs", "flops", *[f"flops:{p}" for p in precisions],
             "params", "param_bytes", "activation_bytes", "bytes_read", "arena_bytes", "peak_live_bytes",
             "tflm_arena_bytes", "tflm_arena_size_bytes", "runtime_total_bytes", "builtin_total_bytes",
             *figures, "shapes_resolved", "median_ms", "p90_ms", "spread", "cpu_share", "noisy",
             "flops_per_s", "inferences_per_s", "tokens_per_s"])
    predicted = _predicted(result)
    if predicted:  # the columns only when predicted: the other sweeps stay as they were
        cols += ["predicted_ms", "predicted_low_ms", "predicted_high_ms", "predicted_low_confidence_share",
                 "predicted_flags"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for i, p in enumerate(result.points):
        t = p.totals
        w.writerow([i + 1, *[_shape_text(p.input_shapes.get(n, ())) for n in inputs], t.macs, t.flops,
                    *[t.flops_by_precision.get(pr, 0) for pr in precisions], t.params, t.param_bytes,
                    t.activation_bytes, t.bytes_read,
                    *[_cell(t, k) for k in ("arena_bytes", "peak_live_bytes", "tflm_arena_bytes", "tflm_arena_size_bytes",
                                            "runtime_total_bytes", "builtin_total_bytes")],
                    *["" if t.figures.get(k) is None else t.figures[k] for k in figures],
                    p.shapes_resolved,
                    *[_cell(p.latency, k) for k in ("median_ms", "p90_ms", "spread", "cpu_share", "noisy")],
                    *[_cell(p.throughput, k) for k in ("flops_per_s", "inferences_per_s", "tokens_per_s")],
                    *([*(_cell(p.prediction, k) for k in ("latency_ms", "low_ms", "high_ms", "low_confidence_share")),
                       "" if p.prediction is None else ";".join(p.prediction.flags)] if predicted else [])])
    return buf.getvalue()


def _predicted(result: SweepResult) -> bool:
    return any(p.prediction is not None for p in result.points)


def _prediction_cells(p: SweepPoint, timed: bool) -> list[str]:
    """The predicted ms (a '*' when partial), the share of it on low-confidence ops, and with a timed point,
    its error against the median."""
    if p.prediction is None:
        return ["-", "-"] + (["-"] if timed else [])
    cell = f"{p.prediction.latency_ms:.3f}" + ("" if p.prediction.complete else "*")
    low = f"{100 * p.prediction.low_confidence_share:.0f}%"
    if not timed:
        return [cell, low]
    error = error_pct(p.prediction.latency_ms, p.latency.median_ms if p.latency is not None else None)
    return [cell, low, "-" if error is None else f"{error:+.1f}%"]


def _prediction_footer(result: SweepResult) -> list[str]:
    """What the "low conf." column is, the range's rate, and the predictions' provenance flags (those of any
    point, in their order)."""
    preds = [p.prediction for p in result.points if p.prediction is not None]
    if not preds:
        return []
    flags = flags_short([f for f in FLAGS if any(f in q.flags for q in preds)])
    return ([f"low conf.: the share of the predicted time on low-confidence ops; CSV and JSON give the "
             f"{range_label(preds[0])}"] + ([f"! prediction flags: {flags}"] if flags else []))


def _cell(record: Any, name: str) -> Any:
    """A CSV cell: the record's field, '' when there is no record or the field is not set."""
    value = getattr(record, name, None)
    return "" if value is None else value


def _latency_cells(p: SweepPoint) -> tuple[str, str]:
    lat, tp = p.latency or LatencyStats(), p.throughput or Throughput()
    if lat.median_ms is None:
        return ("skipped" if lat.skipped else "-"), "-"
    return f"{lat.median_ms:.3f}{' NOISY' if lat.noisy else ''}", f"{human_unit(tp.flops_per_s, 'FLOP/s')}"


def _tokens_cell(p: SweepPoint) -> str:
    value = p.throughput.tokens_per_s if p.throughput is not None else None
    return "-" if value is None else f"{value:,.1f}"


def _target_label(result: SweepResult) -> str:
    """`` (target NAME)``: the CPU target of the points' XNNPACK figures, or "" (a result without one)."""
    names = dict.fromkeys(p.totals.memory_target for p in result.points if p.totals.memory_target)
    return f" (target {', '.join(names)})" if names else ""


def sweep_table(result: SweepResult) -> str:
    """The points as a text table, then the scaling laws with how well each was checked."""
    precisions = _precisions(result)
    inputs = list(result.points[0].input_shapes) if result.points else []
    head = ["#", *inputs, "MACs", "FLOPs", *[f"{precision_unit(p)} {p}"
                                          for p in precisions], "params", "act. bytes", "arena",
            f"memory{_target_label(result)}", "TFLM arena"]
    timed = any(p.latency is not None and p.latency.median_ms is not None for p in result.points)
    tokens = any(p.throughput is not None and p.throughput.tokens_per_s is not None for p in result.points)  # kv
    if timed:
        head += ["median ms", "FLOP/s"] + (["tokens/s"] if tokens else [])
    predicted = _predicted(result)
    if predicted:
        head += ["predicted ms", "low conf."] + (["error"] if timed else [])
    rows = []
    for i, p in enumerate(result.points):
        t = p.totals
        rows.append([str(i + 1), *[_shape_text(p.input_shapes.get(n, ())) for n in inputs], grouped(t.macs),
                     grouped(t.flops), *[grouped(t.flops_by_precision.get(pr, 0)) for pr in precisions],
                     grouped(t.params), grouped(t.activation_bytes),
                     grouped(t.arena_bytes) if t.arena_bytes is not None else "-",
                     grouped(t.runtime_total_bytes) if t.runtime_total_bytes is not None else "-",
                     grouped(t.tflm_arena_size_bytes) if t.tflm_arena_size_bytes is not None else "-"]
                    + ([_latency_cells(p)[0], _latency_cells(p)[1]] if timed else [])
                    + ([_tokens_cell(p)] if timed and tokens else [])
                    + (_prediction_cells(p, timed) if predicted else [])
                    + ([] if p.shapes_resolved else ["(placeholder dims)"]))
    lines = [f"sweep of {result.model}: {len(result.points)} point(s)", ""]
    lines += text_table(head, rows, [c > len(inputs) for c in range(len(head))], rule=False)
    lines += _prediction_footer(result)
    lines.append("")
    fit = result.fit
    if fit is None:
        lines.append("scaling law: needs at least two points")
        return "\n".join(lines) + "\n"
    if not fit.variables:
        lines.append("scaling law: no input dim varies between the points")
    else:
        where = ", ".join(f"{v.name} = " + " = ".join(f"{n}[{a}]" for n, a in v.dims) for v in fit.variables)
        lines.append(f"scaling law over {', '.join(v.name for v in fit.variables)} ({where}):")
    n = len(result.points)
    for law in fit.laws.values():
        if law.exact and law.verified:
            check = f"exact on all {n} points"
        elif law.exact:
            check = f"exact, but {n} points for {len(law.terms)} coefficients: add points to verify"
        else:
            check = f"least squares, not exact: largest residual {human(round(float(law.max_residual)))}"
        constant = len(law.terms) <= 1 and not any(p for t in law.terms for p in t[0])
        extra = (f"   ({law.formula_human.split(' = ', 1)[-1]})"
                 if law.formula_human != law.formula and not constant else "")
        lines.append(f"  {law.formula}{extra}   [{check}]")
    for note in fit.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines) + "\n"


# format -> (renderer, extensions); the same table serves --format and -o FILE of ``sweep``.
SWEEP_RENDERERS: RendererTable[SweepResult] = RendererTable("a sweep", {
    "table": sweep_table,
    "json": sweep_json,
    "csv": sweep_csv,
    "html": sweep_html,
})


def sweep_format_for_path(path: str) -> str:
    """The sweep format an output file's extension selects."""
    return SWEEP_RENDERERS.for_path(path)


def render_sweep(result: SweepResult, fmt: str = "table") -> str:
    """Render a sweep (or a KV-length sweep) in ``fmt``.

    Raises:
        OutputFormatError: ``fmt`` is not a sweep format.
    """
    return SWEEP_RENDERERS.render(result, fmt)
