"""HTML renderer: one self-contained page (inline CSS, inline SVG charts, a little vanilla JS).

Nothing is loaded from the network: no CDN, no web fonts, no external scripts, so the file
works offline and can be attached to a CI run. The page is a view of the report's JSON:
the full ``Report.to_dict()`` is embedded in ``<script type="application/json" id="report-data">``.

Safety: tensor names, descriptions and every other model string are user data. Text and
attributes go through :func:`html.escape`; the embedded JSON has ``<``, ``>`` and ``&``
written as ``\\u003c``, ``\\u003e``, ``\\u0026`` so that no name can close the script
element. The script reads cells with ``textContent`` and never builds HTML from data.

Sections: model summary, totals by precision, cost by op type (chart), per-op FLOPs along
the execution order (chart), and, when the data is present, latency (with per-op latency
versus FLOPs), a sweep over input shapes, and a roofline. A sortable, filterable per-op
table closes the page. Opening the file with ``#selftest`` runs a small in-page check used by
the headless-browser test (see docs/reports.md).
"""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ...report.completeness import latency_flag, partial_note
from ...report import STATUSES, OpRecord, Report
from ...report.columns import Column, columns_for
from ...units import grouped, human, human_bytes, human_unit, precision_unit
from ..prediction import prediction_lines, prediction_rows
from ..page import page
from ..charts import area_chart, color_map, esc, hbar_chart, line_chart, scatter_chart, sequence_chart
from ..memory import ALTERNATIVES, class_guess, memory_caveat, memory_rows, memory_title
from ...report import summary
from ...report.headline import target_class
from ..placement import (delegate_name, kept_groups, partition_of, placement_source, placement_summary, taken,
                         why_kept)
from ..advice import advice_html
from ..what_if import what_if_html
from ..cards import cards_html
from ..opaque import not_counted_line, opaque_line
from ..bundle import bundle_html
from ..signatures import signatures_html
from . import register_format

if TYPE_CHECKING:  # annotations only: an analyze run does not load the sweep, nor a static one the measured records
    from ...report.measured import Roofline
    from ...studies.scaling_law import Fit
    from ...studies.sweep import SweepPoint, SweepResult


_LATENCY_KEYS = ("median_ms", "mean_ms", "std_ms", "min_ms", "p90_ms", "p99_ms", "max_ms", "cv", "init_ms",
                 "first_ms")
_LATENCY_LABELS = {"median_ms": "median", "mean_ms": "mean", "std_ms": "standard deviation", "min_ms": "min",
                   "p90_ms": "p90", "p99_ms": "p99", "max_ms": "max", "cv": "coefficient of variation",
                   "init_ms": "init (load + allocate)", "first_ms": "first invoke"}
_LATENCY_INFO = ("runtime", "runtime_version", "threads", "xnnpack", "runs")


_BREAK_AFTER = "/;_:.,-"


def breakable(text: str, run: int = 28) -> str:
    """Escaped ``text`` with ``<wbr>`` after every separator (``/ ; _ : . , -``), so that long tensor
    names wrap between their parts rather than inside a word; a run of more than ``run`` characters
    without a separator gets a break every ``run`` characters."""
    out, since = [], 0
    for ch in str(text):
        out.append(esc(ch))
        since += 1
        if ch in _BREAK_AFTER or since >= run:
            out.append("<wbr>")
            since = 0
    return "".join(out)


def shape_text(shape: Sequence[int]) -> str:
    """'1×224×224×3' ('scalar' for a rank-0 tensor)."""
    return "×".join(str(d) for d in shape) if shape else "scalar"


def _fmt_value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        if key.endswith("_ms"):
            return f"{value:.3f} ms"
        if key.endswith("_per_s"):
            return f"{human(value)}/s"
        return f"{value:.4g}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10000:
        return grouped(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def kv_table(pairs: Sequence[tuple[str, Any]]) -> str:
    """A two-column key/value table; keys and values are escaped."""
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(_fmt_value(k, v))}</td></tr>" for k, v in pairs
                   if v is not None and v != "")
    return f'<table class="kv">{rows}</table>'


def _summary(report: Report) -> str:
    m = report.model
    pairs = [("file", os.path.basename(m.path) if m.path else "(bytes)"), ("size", human_bytes(m.size_bytes)),
             ("sha256", m.sha256), ("subgraphs", m.subgraphs), ("operators", m.operators),
             ("description", m.description), ("signatures", ", ".join(m.signatures))]
    s = report.settings or {}
    if s.get("input_shapes"):
        pairs.append(("input shapes given", ", ".join(f"{k or '(single)'}={shape_text(v)}"
                                                     for k, v in s["input_shapes"].items())))
    if s.get("batch") is not None:
        pairs.append(("batch", s["batch"]))
    elif s.get("assumed_batch") is not None:
        pairs.append(("batch", f"{s['assumed_batch']} (assumed: dynamic batch, per sample)"))
    io_rows = "".join(
        f'<tr><td>{kind}</td><td class="name">{breakable(t.name)}</td><td>{esc(t.dtype)}</td>'
        f'<td class="mono">{esc(shape_text(t.shape))}</td>'
        f'<td class="mono">{esc(shape_text(t.shape_signature) if t.shape_signature else "")}</td></tr>'
        for kind, ts in (("input", report.inputs), ("output", report.outputs)) for t in ts)
    return (f'<section id="summary"><h2>Model</h2><div class="grid2"><div>{kv_table(pairs)}</div>'
            f'<div><table><thead><tr><th></th><th>tensor</th><th>dtype</th><th>shape</th><th>signature</th></tr>'
            f'</thead><tbody>{io_rows}</tbody></table></div></div></section>')


def _precision(report: Report) -> str:
    t = report.totals
    total = t.flops or 1
    rows = []
    for prec, v in sorted(t.by_precision.items(), key=lambda kv: -kv[1]["flops"]):
        pct = 100 * v["flops"] / total
        rows.append(f'<tr><td>{esc(prec)}</td><td>{esc(precision_unit(prec))}</td><td class="n" data-v="{v["macs"]}">'
                    f'{esc(human(v["macs"]))}</td><td class="n" data-v="{v["flops"]}">{esc(human(v["flops"]))}</td>'
                    f'<td class="n">{esc(grouped(v["flops"]))}</td><td class="n">{v.get("ops", 0)}</td>'
                    f'<td><span class="share" style="width:{pct * 1.6:.1f}px"></span>{pct:.1f}%</td></tr>')
    it = report.init_totals
    init = (f'<p class="muted">Init-time work (once, not per inference): {esc(human(it.flops))} FLOPs, '
            f'{esc(human_bytes(it.bytes_written))} written.</p>' if it.flops or it.bytes_written else "")
    return (f'<section id="precision"><h2>Totals by precision</h2><table><thead><tr><th>precision</th><th>unit</th>'
            f'<th class="n">MACs</th><th class="n">FLOPs / OPs</th><th class="n">exact</th><th class="n">ops</th>'
            f'<th>share</th></tr></thead><tbody>{"".join(rows)}</tbody></table>{init}</section>')


HTML_OP_ROWS = 10_000  # ops drawn or listed per table, strip or chart: a browser handles this many; real models have fewer


def _first_ops(n: int, verb: str) -> str:
    """The note under a table, strip or chart that shows only the first HTML_OP_ROWS of its ``n`` ops."""
    if n <= HTML_OP_ROWS:
        return ""
    return (f'<p class="muted">The first {HTML_OP_ROWS:,} of {n:,} ops are {verb}; every op is in the report data '
            'embedded in this page, and in the JSON and CSV outputs.</p>')


def _charts(report: Report, colors: Mapping[str, str]) -> str:
    total = report.totals.flops or 1
    items = [(k, v.flops, colors.get(k, "#999"),
              f"{k}: {v.count} op(s), {human(v.macs)} MACs, {human(v.flops)} FLOPs ({100 * v.flops / total:.1f}%)")
             for k, v in report.by_op_type.items() if v.flops > 0][:24]
    by_type = hbar_chart(items, title="FLOPs by op type")
    ops = [o for o in report.ops if o.phase == "inference"]
    drawn = _first_ops(len(ops), "drawn")
    ops = ops[:HTML_OP_ROWS]
    seq = sequence_chart(
        [(o.flops, colors.get(o.op_type, "#999"),
          f"#{i} {o.subgraph}:{o.index} {o.op_type} {o.name}\n{human(o.flops)} FLOPs, {human(o.macs)} MACs")
         for i, o in enumerate(ops)], title="FLOPs per op along the execution order", y_label="FLOPs")
    legend = "".join(f'<span style="--c:{esc(c)}">{esc(k)}</span>' for k, c in colors.items()
                     if k in report.by_op_type)
    parts = ['<section id="charts"><h2>Where the FLOPs are</h2>']
    if by_type:
        parts.append(f'<h3>Cost by op type</h3>{by_type}')
    if seq:
        parts.append(f'<h3>Per-op FLOPs along the execution order</h3>{seq}<div class="legend">{legend}</div>{drawn}')
    if not by_type and not seq:
        parts.append('<p class="muted">No per-inference arithmetic was counted.</p>')
    parts.append("</section>")
    return "".join(parts)


ALT = ' class="alt"'  # the row that opens the other configurations


def _memory(report: Report) -> str:
    """The memory figures (led by the model's runtime, as every format) and, per subgraph arena, the live bytes
    along the op sequence with the peak marked, labelled with the configuration they are of."""
    mem = report.memory
    if mem is None:
        return ""
    target = target_class(report)[0]
    rows = "".join(f'<tr{ALT if label == ALTERNATIVES else ""}><td>{esc(label)}</td>'
                   f'<td class="n">{esc(value)}</td><td class="n">{esc(exact)}</td></tr>'
                   for label, value, exact in memory_rows(mem, target))
    guess = class_guess(report)
    parts = [f'<section id="memory"><h2>{esc(memory_title(report))}</h2>'
             + (f'<p class="guess" id="class-guess">{esc(guess)}</p>' if guess else "")
             + '<table><thead><tr><th></th><th class="n">value'
             f'</th><th class="n">exact</th></tr></thead><tbody>{rows}</tbody></table>'
             f'<p class="muted">{esc(memory_caveat(mem, target))}.</p>']
    config = (f"LiteRT, XNNPACK off, {mem.runtime.threads} thread{'s' if mem.runtime.threads != 1 else ''}"
              if mem.runtime is not None else "TFLite's planner, tensors only")
    for sub in mem.subgraphs[:6]:
        ops = sorted((o for o in report.ops if o.subgraph == sub.subgraph and o.live_bytes is not None),
                     key=lambda o: o.index)
        if not ops:
            continue
        step = -(-len(ops) // HTML_OP_ROWS)  # ops per point: 1 unless a subgraph has more ops than the table shows
        if step > 1:
            ops = [max(ops[i:i + step], key=lambda o: (o.live_bytes or 0) + (o.temporaries_bytes or 0))
                   for i in range(0, len(ops), step)]
        temporaries = [o.temporaries_bytes or 0 for o in ops]
        values = [(o.live_bytes or 0, f"#{o.index} {o.op_type} {o.name}\n{human_bytes(o.live_bytes or 0)} live"
                   + (f" + {human_bytes(t)} kernel temporaries" if t else ""))
                  for o, t in zip(ops, temporaries)]
        peak = max(range(len(values)), key=lambda i: values[i][0] + temporaries[i])
        top = values[peak][0] + temporaries[peak]
        title = f"Live activation bytes, subgraph {sub.subgraph}" + (f" ({sub.name})" if sub.name else "")
        legend = ('<div class="legend">blue: tensors alive; orange, stacked: the kernel temporaries LiteRT plans '
                  'in the same arena while the op runs</div>' if any(temporaries) else "")
        whole = (f"; with the kernel temporaries, the arena ({config}): {human_bytes(mem.runtime.arena_bytes)}"
                 if mem.runtime is not None and len(mem.subgraphs) == 1 else "")
        parts.append(f'<h3>{esc(title)} ({esc(config)}): peak {esc(human_bytes(top))}</h3>'
                     f'<p class="muted">{esc(f"tensors-only arena {human_bytes(sub.arena_bytes)}{whole}; with XNNPACK on, the arena holds only the partition boundaries and the kept ops")}</p>'
                     + area_chart(values, title=title, y_label="live bytes", peak=peak, fmt=human_bytes,
                                  stacked=temporaries) + legend
                     + (f'<p class="muted">Each point is the highest of {step} consecutive ops.</p>' if step > 1 else ""))
    parts.append("</section>")
    return "".join(parts)


_PARTITION_SHADES = ("#2da44e", "#1a7f37")  # delegated ops, alternating per partition so the boundaries show
_KEPT = "#cf222e"


def _placement(report: Report) -> str:
    """Per delegate: the summary, the op sequence of each subgraph coloured by placement (partition
    boundaries as alternating shades and a gap), and the kept ops grouped by reason."""
    if not report.delegation:
        return ""
    parts = ['<section id="placement"><h2>Where it runs</h2>']
    for key, d in report.delegation.items():
        source = placement_source(d, key)
        parts.append(f'<h3>{esc(delegate_name(key, d))} <span class="muted">({esc(source)})</span></h3>'
                     f'<p>{esc(placement_summary(report, key))}</p>')
        by_sg: dict[int, list[OpRecord]] = {}
        for o in report.ops:
            if taken(o, key) is not None:
                by_sg.setdefault(o.subgraph, []).append(o)
        for sg, ops in sorted(by_sg.items())[:6]:
            cells, last = [], None
            for o in sorted(ops, key=lambda o: o.index)[:HTML_OP_ROWS]:
                part = partition_of(o, key)
                why = why_kept(o, key)
                colour = _KEPT if why is not None else _PARTITION_SHADES[(part or 0) % 2]
                edge = " edge" if part != last else ""
                last = part
                label = f"#{o.index} {o.op_type}: " + (f"kept ({why})" if why else f"partition {part}")
                cells.append(f'<span class="op{edge}" style="background:{colour}" title="{esc(label)}"></span>')
            parts.append(f'<div class="muted">subgraph {sg}</div><div class="strip" data-delegate="{esc(key)}">'
                         f'{"".join(cells)}</div>{_first_ops(len(ops), "drawn")}')
        rows = []
        for category, items in kept_groups(report, key):
            for op_type, detail, ops in items:
                at = ", ".join(f"{o.subgraph}:{o.index}" for o in ops[:8]) + (" …" if len(ops) > 8 else "")
                rows.append(f"<tr><td>{esc(category)}</td><td>{esc(op_type)}</td><td class=\"n\">{len(ops)}</td>"
                            f'<td class="mono">{esc(at)}</td><td>{esc(detail)}</td></tr>')
        if rows:
            parts.append(_kept_table(rows[:KEPT_ROWS_MAX]))
    parts.append(_legend([("delegated (a shade per partition)", _PARTITION_SHADES[0], ""),
                          ("kept off the delegate", _KEPT, "")]))
    parts.append("</section>")
    return "".join(parts)


KEPT_ROWS = 8  # the kept ops' rows shown at first, per delegate; the others open under them (a page of 150 ops was
KEPT_ROWS_MAX = 60  # 2,500 px of GPU reasons)


def _kept_table(rows: Sequence[str]) -> str:
    """The kept ops by reason: the first :data:`KEPT_ROWS` rows, the others in a ``<details>`` under them."""
    head = ('<colgroup><col style="width:13%"><col style="width:14%"><col style="width:5%"><col style="width:20%">'
            '<col></colgroup><thead><tr><th>kept because</th><th>type</th><th class="n">ops</th><th>ops</th>'
            '<th>detail</th></tr></thead>')
    out = f'<table class="kept">{head}<tbody>{"".join(rows[:KEPT_ROWS])}</tbody></table>'
    rest = rows[KEPT_ROWS:]
    if rest:
        out += (f'<details class="kept-more"><summary>{len(rest)} more row{"s" if len(rest) != 1 else ""} of kept '
                f'ops</summary><table class="kept">{head.replace("<thead>", "<thead hidden>")}<tbody>{"".join(rest)}'
                '</tbody></table></details>')
    return out


_THROUGHPUT_LABELS = {"flops_per_s": ("FLOP/s (all)", "FLOP/s"), "macs_per_s": ("MAC/s", "MAC/s"),
                      "inferences_per_s": ("inferences/s", ""), "float_flops_per_s": ("float FLOP/s", "FLOP/s"),
                      "int_ops_per_s": ("integer OP/s", "OP/s")}


def _rate(key: str, value: float) -> str:
    if key == "inferences_per_s":
        return f"{value:.1f}"
    return human_unit(value, _THROUGHPUT_LABELS.get(key, (key, '/s'))[1])


def _latency(report: Report, colors: Mapping[str, str]) -> str:
    if report.latency is None:
        return ""
    lat = report.latency.to_dict()  # the setup table lists every measured field, as the JSON
    stats = [(_LATENCY_LABELS[k], f"{lat[k]:.3f}" if k == "cv" else f"{lat[k]:.3f} ms") for k in _LATENCY_KEYS
             if isinstance(lat.get(k), (int, float))]
    info = [(k, lat.get(k)) for k in _LATENCY_INFO if lat.get(k) is not None]
    info += [(k, v) for k, v in lat.items() if k not in _LATENCY_KEYS and k not in _LATENCY_INFO
             and k != "roofline" and not k.startswith("per_op") and not isinstance(v, (dict, list))]
    tp = report.throughput.to_dict() if report.throughput is not None else {}
    tput = [(_THROUGHPUT_LABELS.get(k, (k, ""))[0], _rate(k, v)) for k, v in tp.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)]
    flag = latency_flag(report.latency)
    parts = ['<section id="latency"><h2>Latency</h2>'
             + (f'<div class="alert" id="latency-flag"><b>Inconsistent shapes:</b> {esc(flag)}</div>' if flag else "")
             + '<div class="grid2">',
             f'<div><h3>Timed runs</h3>{kv_table(stats)}</div><div><h3>Setup</h3>{kv_table(info)}',
             f'<h3>Throughput</h3>{kv_table(tput)}</div></div>' if tput else '</div></div>']
    timed = [o for o in report.ops if o.latency_ms is not None and o.latency_ms > 0]
    if timed:
        pts = [(float(o.flops), float(o.latency_ms), colors.get(o.op_type, "#999"),
                f"{o.subgraph}:{o.index} {o.op_type} {o.name}\n{human(o.flops)} FLOPs, {o.latency_ms:.4f} ms"
                + (f", {human_unit(o.achieved_flops_per_s, 'FLOP/s')}" if o.flops else ""))
               for o in timed]
        chart = scatter_chart(pts, title="Per-op latency versus FLOPs", x_label="FLOPs (log)",
                              y_label="latency, ms (log)", y_fmt=lambda v: f"{v:g}")
        chart += _legend([(o.op_type, colors.get(o.op_type, "#999"), "ring") for o in timed if o.flops > 0])
        summed = sum(o.latency_ms for o in timed)
        whole = lat.get("median_ms")
        note = (f"Sum of {len(timed)} per-op times: {summed:.3f} ms" +
                (f" against a whole-model median of {whole:.3f} ms" if whole else "") + ".")
        parts.append(f'<h3>Per-op latency versus FLOPs</h3>{chart}<p class="muted">{esc(note)} Ops measured in '
                     'isolation lose cross-op fusion and cache reuse, so the sum differs from the whole.</p>')
        top = sorted(timed, key=lambda o: -o.latency_ms)[:10]
        rows = "".join(
            f'<tr><td class="mono">{o.subgraph}:{o.index}</td><td>{esc(o.op_type)}</td><td class="name">{breakable(o.name)}'
            f'</td><td class="n">{o.latency_ms:.4f}</td><td class="n">{esc(human(o.flops))}</td><td class="n">'
            f'{esc(human_unit(o.achieved_flops_per_s, "FLOP/s") if o.flops else "-")}</td></tr>' for o in top)
        parts.append('<h3>Slowest ops</h3><table><thead><tr><th>op</th><th>type</th><th>output</th><th class="n">ms'
                     '</th><th class="n">FLOPs</th><th class="n">achieved</th></tr></thead>'
                     f'<tbody>{rows}</tbody></table>')
    parts.append("</section>")
    return "".join(parts)


def _prediction(report: Report) -> str:
    if report.prediction is None:
        return ""
    lines = prediction_lines(report)
    items = "".join(f"<li>{esc(line)}</li>" for line in lines if not line.startswith("! "))
    flags = "".join(f'<div class="alert prediction-flag">{esc(line[2:])}</div>' for line in lines if line.startswith("! "))
    headers, rows, right = prediction_rows(report, 10)
    num = {True: ' class="n"', False: ""}
    th = "".join(f"<th{num[r]}>{esc(h)}</th>" for h, r in zip(headers, right))
    body = "".join("<tr>" + "".join(f"<td{num[r]}>{esc(c)}</td>" for c, r in zip(row, right)) + "</tr>"
                   for row in rows)
    table = f'<h3>Slowest predicted ops</h3><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>' if rows else ""
    return f'<section id="prediction"><h2>Predicted latency</h2><ul>{items}</ul>{flags}{table}</section>'


# ---- sweep -------------------------------------------------------------------------------------


def _legend(entries: Sequence[tuple[str, str, str]]) -> str:
    """A legend under a chart: one swatch per distinct (label, colour, shape); shape "ring", "line" or ""."""
    seen = dict.fromkeys(entries)
    if not seen:
        return ""
    return '<div class="legend">' + "".join(
        f'<span class="{esc(shape)}" style="--c:{esc(color)}">{esc(label)}</span>' for label, color, shape in seen
    ) + "</div>"


def sweep_label(point: SweepPoint) -> str:
    """A short label of one sweep point: its input shape, or ``name=shape; ...`` for several inputs."""
    shapes = point.input_shapes
    vals = [shape_text(v) for v in shapes.values()]
    if not vals:
        return point.spec.label
    return vals[0] if len(vals) == 1 else "; ".join(f"{k}={v}" for k, v in zip(shapes, vals))


def _point_size(point: SweepPoint) -> tuple[float, float]:
    """Sort key of a sweep point: elements over all its inputs, then its FLOPs."""
    return float(sum(math.prod(int(d) for d in v) for v in point.input_shapes.values())), float(point.totals.flops)


def sweep_rows(sweep: SweepResult) -> list[dict[str, Any]]:
    """One row per point: label, macs, flops, median_ms, flops_per_s (None when not measured), error."""
    from ...report.measured import LatencyStats

    rows = []
    for p in sweep.points:
        lat = p.latency or LatencyStats()
        rows.append({"label": sweep_label(p), "macs": p.totals.macs, "flops": p.totals.flops, "median_ms": lat.median_ms,
                     "flops_per_s": p.achieved_flops_per_s, "error": f"latency skipped: {lat.skipped}" if lat.skipped else None})
    return rows


def _opt(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def _fit_html(fit: Fit | None) -> str:
    """The fitted scaling laws, the swept variables and the fit's notes."""
    if fit is None:
        return ""
    rows = []
    for metric, law in fit.laws.items():
        quality = "exact, verified" if law.verified else "exact" if law.exact else \
            f"least squares, max residual {law.max_residual}"
        rows.append(f'<tr><td>{esc(metric)}</td><td class="mono">{esc(law.formula_human or law.formula)}'
                    f'</td><td class="muted">{esc(quality)}</td></tr>')
    var_text = "; ".join(f"{v.name} = {', '.join(str(x) for x in v.values)}" for v in fit.variables)
    notes = "".join(f"<li>{esc(n)}</li>" for n in fit.notes)
    return (f'<h3>Scaling laws</h3><table><tbody>{"".join(rows)}</tbody></table>'
            + (f'<p class="muted">Swept: {esc(var_text)}</p>' if var_text else "")
            + (f'<ul class="muted">{notes}</ul>' if notes else ""))


def sweep_section(sweep: SweepResult | None) -> str:
    """Charts and a table for a shape sweep (its points and scaling laws); '' when absent."""
    if sweep is None or not sweep.points:
        return ""
    rows = sweep_rows(sweep)
    # left to right by input size, whatever order the points were given in (lines must not zigzag)
    sizes = [_point_size(p) for p in sweep.points]
    rows = [r for _, _, r in sorted(zip(sizes, range(len(rows)), rows), key=lambda t: (t[0], t[1]))]
    cats = [r["label"] for r in rows]
    charts = []
    flops_chart = line_chart(cats, [("FLOPs", [r["flops"] for r in rows], "#4c78a8"),
                                    ("MACs", [r["macs"] for r in rows], "#f58518")],
                             title="FLOPs versus input shape", y_label="count")
    if flops_chart:
        charts.append(f"<div><h3>FLOPs and MACs</h3>{flops_chart}</div>")
    if any(r["median_ms"] is not None for r in rows):
        charts.append("<div><h3>Latency (median)</h3>" + line_chart(
            cats, [("median ms", [r["median_ms"] for r in rows], "#e45756")], title="Latency versus input shape",
            y_label="ms", fmt=lambda v: f"{v:g}") + "</div>")
        charts.append("<div><h3>Achieved GFLOP/s</h3>" + line_chart(
            cats, [("GFLOP/s", [None if r["flops_per_s"] is None else r["flops_per_s"] / 1e9 for r in rows],
                    "#54a24b")], title="Achieved GFLOP/s versus input shape", y_label="GFLOP/s",
            fmt=lambda v: f"{v:g}") + "</div>")
    body = "".join(
        f'<tr><td class="mono">{esc(r["label"])}</td><td class="n">{esc(human(r["macs"]))}</td>'
        f'<td class="n">{esc(human(r["flops"]))}</td>'
        f'<td class="n">{_opt(r["median_ms"], "{:.3f}")}</td>'
        f'<td class="n">{_opt(None if r["flops_per_s"] is None else r["flops_per_s"] / 1e9, "{:.2f}")}</td>'
        f'<td>{esc(r["error"] or "")}</td></tr>' for r in rows)
    fit_html = _fit_html(sweep.fit)
    return (f'<section id="sweep"><h2>Sweep over input shapes</h2><div class="grid2">{"".join(charts)}</div>'
            f'<table><thead><tr><th>shape</th><th class="n">MACs</th><th class="n">FLOPs</th><th class="n">median ms'
            f'</th><th class="n">GFLOP/s</th><th></th></tr></thead><tbody>{body}</tbody></table>{fit_html}</section>')


# ---- roofline ----------------------------------------------------------------------------------


def roofline_section(report: Report | None, roofline: Roofline | None,
                     colors: Mapping[str, str] | None = None) -> str:
    """The roofline chart: ops by arithmetic intensity and achieved FLOP/s under the measured roofs."""
    if roofline is None:
        return ""
    peak, bw = roofline.peak_flops_per_s, roofline.peak_bytes_per_s
    if not peak or not bw:
        return ""
    colors = colors or {}
    pts: list[tuple[float, float, str, str]] = []
    keys: list[tuple[str, str, str]] = []  # legend entries, in the order the points come
    placed = 0
    for o in roofline.ops:
        x, y, kind = o.intensity, o.achieved_flops_per_s, o.op_type
        ref = f"{o.subgraph}:{o.index} {kind}"
        if x and y:
            pts.append((float(x), float(y), colors.get(kind, "#4c78a8"),
                        f"{ref}: {o.bound}-bound, {human_unit(y, 'FLOP/s')} achieved"))
            keys.append((kind, colors.get(kind, "#4c78a8"), "ring"))
        elif x and o.roof_flops_per_s:
            placed += 1
            pts.append((float(x), float(o.roof_flops_per_s), "#b8bcc4",
                        f"{ref}: {o.bound}-bound (not timed: drawn on its roof)"))
    if not pts and report is not None:
        for o in report.ops:
            if o.latency_ms and o.flops and o.bytes_moved:
                pts.append((o.intensity, o.achieved_flops_per_s, colors.get(o.op_type, "#4c78a8"),
                            f"{o.subgraph}:{o.index} {o.op_type} {o.name}"))
                keys.append((o.op_type, colors.get(o.op_type, "#4c78a8"), "ring"))
        achieved = report.throughput.flops_per_s if report.throughput is not None else None
        moved = report.totals.bytes_read + report.totals.bytes_written
        if not pts and achieved and report.totals.flops and moved:
            pts.append((report.totals.flops / moved, achieved, "#e45756", "whole model"))
            keys.append(("whole model", "#e45756", "ring"))
    ridge = peak / bw
    xs = [p[0] for p in pts] or [ridge]
    lo, hi = min(min(xs), ridge) / 4, max(max(xs), ridge) * 4
    roof = [(lo, bw * lo), (ridge, peak), (hi, peak)]
    chart = scatter_chart(pts or [(ridge, peak, "#fff", "ridge")], title="Roofline", x_label="arithmetic intensity, "
                          "FLOPs per byte (log)", y_label="achieved FLOP/s (log)",
                          x_fmt=lambda v: f"{v:g}", lines=[(roof, "#24292f", "roofline")])
    chart += _legend([("roofline (measured peaks)", "#24292f", "line")] + keys
                     + ([("not timed: on its roof", "#b8bcc4", "ring")] if placed else []))
    info = kv_table([("peak compute", f"{human_unit(peak, 'FLOP/s')}"), ("memory bandwidth", f"{human_unit(bw, 'B/s')}"),
                     ("ridge point", f"{ridge:.2f} FLOPs/byte"),
                     ("compute-bound ops", roofline.counts.compute), ("memory-bound ops", roofline.counts.memory),
                     ("compute probe", roofline.compute_probe),
                     ("bandwidth probe", roofline.bandwidth_probe),
                     ("not timed", f"{placed} op(s), drawn grey on their roof" if placed else None),
                     ("above the roof", f"{roofline.above_roof} op(s): {roofline.above_roof_note or ''}"
                      if roofline.above_roof else None)])
    return (f'<section id="roofline"><h2>Roofline</h2><div class="grid2"><div>{chart}</div><div>{info}'
            '<p class="muted">Ops left of the ridge point are memory-bound, ops right of it compute-bound; '
            'the gap between a point and the roof is the headroom.</p></div></div></section>')


# ---- op table ----------------------------------------------------------------------------------

def _op_row(i: int, o: OpRecord, report: Report, columns: Sequence[Column]) -> str:
    out_shape = shape_text(o.outputs[0]) if o.outputs else ""
    search = f"{o.op_type} {o.name} {o.subgraph}:{o.index} {o.precision}".lower()
    note = "; ".join(x for x in (o.formula, o.note) if x)
    cells = [f'<td class="n" data-v="{i}">{i}</td>', f'<td class="mono" data-v="{o.subgraph * 1_000_000 + o.index}">'
             f'{o.subgraph}:{o.index}</td>', f"<td>{breakable(o.op_type)}</td>", f'<td class="name">{breakable(o.name)}</td>',
             f'<td class="mono">{esc(out_shape)}</td>', f"<td>{esc(o.precision)}</td>"]
    cells += [_figure_cell(c, o, report) for c in columns]
    cells.append(f'<td><span class="badge {esc(o.status)}">{esc(o.status)}</span></td>')
    cells.append(f"<td>{esc(o.phase)}{'' if o.executions in (0, 1) else f' ×{o.executions}'}</td>")
    cells.append(f'<td class="note">{esc(note)}</td>')
    return (f'<tr data-op="{o.subgraph}:{o.index}" data-status="{esc(o.status)}" data-phase="{esc(o.phase)}" '
            f'data-search="{esc(search)}">{"".join(cells)}</tr>')


def _figure_cell(c: Column, o: OpRecord, report: Report) -> str:
    """One declared column's cell: the raw value to sort by, the text to read (a bar for a share)."""
    value = c.read(o, report)
    text = esc(c.cell_text(o, report)).replace("\u00a0", "&nbsp;")
    if c.unit == "share":
        return (f'<td class="n" data-v="{value:.6f}"><span class="share" style="width:{min(value, 100) * 0.6:.1f}px">'
                f'</span>{text}</td>')
    css = " ".join(x for x in ("n" if c.right else "", c.css) if x)
    css = f' class="{css}"' if css else ""
    title = "" if c.title is None or value is None else f' title="{esc(c.title(value))}"'
    return f'<td{css} data-v="{"" if value is None else value}"{title}>{text}</td>'


OPS_SHOWN = 20  # the per-op table's rows shown at first (the top ops by RANK_KEYS); a button shows every op
# what the table is sorted by at first, the first column it has: the measured time, the predicted time, the FLOPs
RANK_KEYS = (("latency", "measured time"), ("predicted", "predicted time"), ("flops", "FLOPs"))


def _op_table(report: Report) -> str:
    columns = columns_for("html", report)
    heads = [("#", "num", "order"), ("op", "num", "op"), ("type", "text", "type"), ("output tensor", "text", "name"),
             ("shape", "text", "shape"), ("precision", "text", "precision")]
    heads += [(c.label, "num" if c.right else "text", c.sort_key) for c in columns]
    heads += [("status", "text", "status"), ("phase", "text", "phase"), ("formula / note", "text", "note")]
    th = "".join(f'<th class="sortable{" n" if t == "num" else ""}" data-type="{t}" data-key="{k}">{esc(h)}</th>'
                 for h, t, k in heads)
    shown = report.ops[:HTML_OP_ROWS]
    rows = "".join(_op_row(i, o, report, columns) for i, o in enumerate(shown))
    more = _first_ops(len(report.ops), "listed")
    statuses = "".join(f'<option value="{s}">{s}</option>' for s in STATUSES)
    phases = "".join(f'<option value="{p}">{p}</option>' for p in ("inference", "init", "not_executed"))
    keys = {c.sort_key for c in columns}
    rank, by = next(((k, by) for k, by in RANK_KEYS if k in keys), ("flops", "FLOPs"))
    collapse = len(shown) > OPS_SHOWN  # the script shows the top ops by `rank` first, and a button for the others
    button = (f'<button type="button" id="show-all" class="show-all" data-all="show all {len(shown):,} ops" '
              f'data-top="show the top {OPS_SHOWN} only">show all {len(shown):,} ops</button>' if collapse else "")
    return ('<section id="ops"><h2>Per-op table</h2><div class="controls">'
            '<input type="search" id="op-filter" placeholder="filter by type, name, precision…" aria-label="filter">'
            f'<select id="status-filter" aria-label="status"><option value="">any status</option>{statuses}</select>'
            f'<select id="phase-filter" aria-label="phase"><option value="">any phase</option>{phases}</select>'
            f'<span id="op-count" class="muted" data-by="{esc(by)}"></span>{button}'
            '<span class="muted">· click a header to sort</span></div>'
            f'<div class="scroll"><table id="ops-table" class="sortable-table" data-rank-key="{rank}"'
            f'{f" data-limit={OPS_SHOWN}" if collapse else ""}><thead><tr>{th}</tr></thead>'
            f'<tbody>{rows}</tbody></table></div>{more}</section>')


def _notes(report: Report) -> str:
    parts = []
    partial = partial_note(report)
    if partial:
        parts.append(f'<div class="alert" id="partial-totals"><b>Partial totals:</b> {esc(partial[16:])}.</div>')
    skipped = report.latency.skipped if report.latency is not None else None
    if skipped:
        parts.append(f'<div class="alert" id="latency-skipped"><b>Latency skipped:</b> {esc(skipped)}</div>')
    not_counted = not_counted_line(report)
    if not_counted:
        parts.append(f'<div class="alert"><b>Not counted:</b> {esc(not_counted)}. Totals are a lower bound.</div>')
    opaque = opaque_line(report)
    if opaque:
        parts.append(f'<div class="alert"><b>Opaque:</b> {esc(opaque)}.</div>')
    if report.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in report.warnings)
        parts.append(f'<h3>Warnings</h3><ul class="warnings">{items}</ul>')
    if report.notes:
        items = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
        parts.append(f'<ul class="info-notes">{items}</ul>')
    return f'<section id="notes"><h2>Notes</h2>{"".join(parts)}</section>' if parts else ""


@register_format("html", (".html", ".htm"), order=50)
def render_html(report: Report, *, sweep: SweepResult | None = None,
                roofline: Roofline | None = None) -> str:
    """The full HTML report of one model.

    Args:
        report: the analysis (with latency/throughput and per-op ``latency_ms`` when measured).
        sweep: optional shape sweep (:func:`tflite_flops.studies.sweep`); adds the sweep section.
        roofline: optional measured roofs and ops (:class:`~tflite_flops.report.Roofline`);
            ``report.roofline`` when not given.

    Returns:
        One self-contained HTML document.
    """
    if roofline is None:
        roofline = report.roofline
    colors = color_map(list(report.by_op_type))
    m = report.model
    name = os.path.basename(m.path) if m.path else "model bytes"
    subtitle = esc(f"{report.tool.get('name', 'tflite_flops')} {report.tool.get('version', '')} · "
                   f"{human_bytes(m.size_bytes)} · {m.subgraphs} subgraph(s) · {m.operators} op(s) · "
                   f"sha256 {m.sha256[:16]}…")
    body = "\n".join(s for s in (cards_html(report), _notes(report), _summary(report), _precision(report), bundle_html(report),
                                 signatures_html(report), _charts(report, colors), _placement(report),
                                 advice_html(report.advice, summary.model_ms(report)), what_if_html(report.what_if),
                                 _memory(report),
                                 _latency(report, colors), _prediction(report), sweep_section(sweep),
                                 roofline_section(report, roofline, colors), _op_table(report)) if s)
    data = report.json_head()
    if sweep is not None:
        data["sweep"] = sweep.to_dict()
    return page(f"{name} — tflite_flops report", subtitle, body, data, report.op_dicts())


def render_sweep_html(sweep: SweepResult, title: str = "tflite_flops sweep") -> str:
    """A page for a shape sweep alone."""
    body = sweep_section(sweep) or '<section><p class="muted">The sweep has no points.</p></section>'
    return page(title, esc(f"{len(sweep.points)} point(s)"), body, sweep.to_dict())
