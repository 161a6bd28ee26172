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
from typing import Any, Mapping, Sequence

from ..completeness import latency_flag, partial_note
from ..report import STATUSES, OpRecord, Report
from ..units import grouped, human, human_bytes, human_unit, precision_unit
from .charts import area_chart, color_map, esc, hbar_chart, line_chart, scatter_chart, sequence_chart
from .memory import memory_caveat, memory_rows
from .opaque import opaque_line
from .signatures import signatures_html


_LATENCY_KEYS = ("median_ms", "mean_ms", "std_ms", "min_ms", "p90_ms", "p99_ms", "max_ms", "cv", "init_ms",
                 "first_ms")
_LATENCY_LABELS = {"median_ms": "median", "mean_ms": "mean", "std_ms": "standard deviation", "min_ms": "min",
                   "p90_ms": "p90", "p99_ms": "p99", "max_ms": "max", "cv": "coefficient of variation",
                   "init_ms": "init (load + allocate)", "first_ms": "first invoke"}
_LATENCY_INFO = ("runtime", "runtime_version", "threads", "xnnpack", "runs")

CSS = """
:root{--fg:#1f2328;--muted:#656d76;--line:#d8dee4;--bg:#f6f8fa;--card:#fff;--accent:#4c78a8;--bad:#cf222e;
--ok:#1a7f37;--warn:#9a6700}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--fg);
background:var(--bg)}
header{background:#24292f;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:20px;font-weight:600;word-break:break-all}
header .sub{color:#c9d1d9;font-size:13px;margin-top:4px}
main{max-width:1880px;margin:0 auto;padding:20px 32px 48px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:16px 0}
h2{font-size:16px;margin:0 0 12px;font-weight:600}
h3{font-size:14px;margin:16px 0 8px;font-weight:600}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:12px;margin:0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:20px;font-weight:600;margin-top:2px;font-variant-numeric:tabular-nums}
.card .x{color:var(--muted);font-size:12px;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:5px 8px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.kv td:first-child{color:var(--muted);width:190px}
.mono,td.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
td.name{min-width:120px;max-width:360px;overflow-wrap:break-word;word-break:normal}
td.note{min-width:140px;font-size:12px;color:var(--muted)}
#ops-table{font-size:12px}
#ops-table th,#ops-table td{padding:4px 5px}
#ops-table th{white-space:normal}
#ops-table td.rw{white-space:normal}
@media (max-width:1400px){main{padding:16px 16px 40px}section{padding:14px 14px}}
.kv td{overflow-wrap:anywhere}
.scroll{overflow:auto;max-height:70vh;border:1px solid #eaeef2;border-radius:6px}
.scroll th{position:sticky;top:0;z-index:1}
th.sortable{cursor:pointer;user-select:none}
th.sortable:hover{background:#eaeef2}
th.sortable[aria-sort=ascending]::after{content:" \\25B2";font-size:10px}
th.sortable[aria-sort=descending]::after{content:" \\25BC";font-size:10px}
tbody tr:hover{background:#f6f8fa}
.share{display:inline-block;height:8px;background:var(--accent);border-radius:2px;vertical-align:middle;
margin-right:6px;opacity:.75}
.badge{display:inline-block;padding:0 6px;border-radius:10px;font-size:11px;border:1px solid}
.badge.ok{color:var(--ok);border-color:#aceebb}.badge.zero{color:var(--muted);border-color:var(--line)}
.badge.unsupported{color:var(--bad);border-color:#ffcecb;background:#fff5f5}
.controls{display:flex;gap:12px;flex-wrap:wrap;align-items:center;margin-bottom:10px}
.controls input[type=search]{padding:5px 8px;border:1px solid var(--line);border-radius:6px;min-width:260px;
font:inherit}
.controls select{padding:4px 6px;border:1px solid var(--line);border-radius:6px;font:inherit;background:#fff}
.muted{color:var(--muted)}
.alert{border-left:4px solid var(--bad);background:#fff5f5;padding:8px 12px;border-radius:4px;margin:8px 0}
.warnings li{color:var(--warn)}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:16px}
svg.chart{max-width:100%;height:auto;display:block}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin-top:6px}
.legend span::before{content:"";display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;
background:var(--c);vertical-align:-1px}
.legend span.line::before{width:16px;height:2px;border-radius:0;vertical-align:3px}
.legend span.ring::before{border-radius:50%}
.pos{color:var(--bad)}.neg{color:var(--ok)}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
"""

# Sorting and filtering of every table with class "sortable-table"; #selftest runs a check.
JS = r"""
(function(){
'use strict';
function cellKey(td, num){
  if(!td) return num ? -Infinity : '';
  var v = td.getAttribute('data-v');
  if(num){ var x = parseFloat(v === null ? td.textContent : v); return isNaN(x) ? -Infinity : x; }
  return (v === null ? td.textContent : v).toLowerCase();
}
function sortTable(table, col, dir){
  var th = table.tHead.rows[0].cells[col];
  var num = th.getAttribute('data-type') === 'num';
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  rows.forEach(function(r, i){ r._i = i; });
  rows.sort(function(a, b){
    var x = cellKey(a.cells[col], num), y = cellKey(b.cells[col], num);
    if(x < y) return -dir; if(x > y) return dir; return a._i - b._i;
  });
  rows.forEach(function(r){ body.appendChild(r); });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function(c){ c.removeAttribute('aria-sort'); });
  th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
}
function onHeader(ev){
  var th = ev.currentTarget, table = th.closest('table');
  var cur = th.getAttribute('aria-sort');
  var dir = cur ? (cur === 'ascending' ? -1 : 1) : (th.getAttribute('data-type') === 'num' ? -1 : 1);
  sortTable(table, th.cellIndex, dir);
}
function applyFilter(){
  var table = document.getElementById('ops-table'); if(!table) return 0;
  var q = (document.getElementById('op-filter').value || '').toLowerCase().trim();
  var st = document.getElementById('status-filter').value;
  var ph = document.getElementById('phase-filter').value;
  var shown = 0, rows = table.tBodies[0].rows;
  for(var i = 0; i < rows.length; i++){
    var r = rows[i];
    var ok = (!q || r.getAttribute('data-search').indexOf(q) >= 0) &&
             (!st || r.getAttribute('data-status') === st) && (!ph || r.getAttribute('data-phase') === ph);
    r.style.display = ok ? '' : 'none'; if(ok) shown++;
  }
  document.getElementById('op-count').textContent = shown + ' of ' + rows.length + ' ops';
  return shown;
}
document.querySelectorAll('table.sortable-table th.sortable').forEach(function(th){
  th.addEventListener('click', onHeader);
});
['op-filter', 'status-filter', 'phase-filter'].forEach(function(id){
  var el = document.getElementById(id);
  if(el){ el.addEventListener('input', applyFilter); el.addEventListener('change', applyFilter); }
});
applyFilter();
if(location.hash === '#selftest'){
  var b = document.body, table = document.getElementById('ops-table');
  try{
    var th = table.querySelector('th[data-key=flops]');
    th.click();
    var first = null, rows = table.tBodies[0].rows;
    for(var i = 0; i < rows.length; i++){ if(rows[i].style.display !== 'none'){ first = rows[i]; break; } }
    b.setAttribute('data-selftest-first', first ? first.getAttribute('data-op') : '');
    var flops = [];
    for(var j = 0; j < Math.min(rows.length, 5); j++){ flops.push(rows[j].cells[th.cellIndex].getAttribute('data-v')); }
    b.setAttribute('data-selftest-flops', flops.join(','));
    b.setAttribute('data-selftest-sort', th.getAttribute('aria-sort'));
    var f = document.getElementById('op-filter'); f.value = 'conv';
    b.setAttribute('data-selftest-filtered', String(applyFilter()));
    f.value = ''; applyFilter();
    b.setAttribute('data-selftest-charts', String(document.querySelectorAll('svg.chart').length));
    var over = 0;
    document.querySelectorAll('.scroll').forEach(function(s){ over = Math.max(over, s.scrollWidth - s.clientWidth); });
    b.setAttribute('data-selftest-overflow', String(over));
    var heads = table.tHead.rows[0].cells, last = heads[heads.length - 1].getBoundingClientRect();
    var box = table.parentNode.getBoundingClientRect();
    b.setAttribute('data-selftest-last-column', heads[heads.length - 1].textContent + ' ' +
                   (last.width > 0 && last.right <= box.right + 1 ? 'visible' : 'cut'));
    var mid = 0, breaks = 0;  // line breaks inside names, and those between two letters or digits
    document.querySelectorAll('td.name').forEach(function(td){
      var walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT), prev = null, node;
      while((node = walk.nextNode())){
        for(var k = 0; k < node.length; k++){
          var rg = document.createRange(); rg.setStart(node, k); rg.setEnd(node, k + 1);
          var rc = rg.getClientRects()[0]; if(!rc) continue;
          var ch = node.data.charAt(k);
          if(prev && rc.top > prev.top + 2){ breaks++; if(/[A-Za-z0-9]/.test(prev.ch) && /[A-Za-z0-9]/.test(ch)) mid++; }
          prev = {top: rc.top, ch: ch};
        }
      }
    });
    b.setAttribute('data-selftest-name-breaks', String(breaks));
    b.setAttribute('data-selftest-midword', String(mid));
    b.setAttribute('data-selftest', 'pass');
  }catch(e){ b.setAttribute('data-selftest', 'fail: ' + e); }
}
})();
"""


def script_json(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (no ``<``, ``>``, ``&`` left)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(title: str, subtitle: str, body: str, data: Any = None) -> str:
    """The shared page shell: head with inline CSS, header, body sections, embedded data, inline JS."""
    data_block = (f'<script type="application/json" id="report-data">{script_json(_finite(data))}</script>\n'
                  if data is not None else "")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'; img-src data:\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<header><h1>{esc(title)}</h1><div class=\"sub\">{subtitle}</div></header>\n<main>\n{body}\n"
            "<footer>Generated by tflite_flops. Self-contained: no network resources are loaded.</footer>\n"
            f"</main>\n{data_block}<script>{JS}</script>\n</body>\n</html>\n")


def _finite(value: Any) -> Any:
    """Replace NaN/inf (not valid JSON) with None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


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


def card(label: str, value: str, extra: str = "") -> str:
    """One summary card (arguments are plain text; escaped here)."""
    return (f'<div class="card"><div class="k">{esc(label)}</div><div class="v">{esc(value)}</div>'
            f'<div class="x">{esc(extra)}</div></div>')


def shape_text(shape: Sequence[int]) -> str:
    """'1×224×224×3' ('scalar' for a rank-0 tensor)."""
    return "×".join(str(d) for d in shape) if shape else "scalar"


def _fmt_ms(v: float) -> str:
    return f"{v:.3g} ms" if v < 1 else f"{v:.1f} ms"


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
    io_rows = "".join(
        f'<tr><td>{kind}</td><td class="name">{breakable(t.name)}</td><td>{esc(t.dtype)}</td>'
        f'<td class="mono">{esc(shape_text(t.shape))}</td>'
        f'<td class="mono">{esc(shape_text(t.shape_signature) if t.shape_signature else "")}</td></tr>'
        for kind, ts in (("input", report.inputs), ("output", report.outputs)) for t in ts)
    return (f'<section id="summary"><h2>Model</h2><div class="grid2"><div>{kv_table(pairs)}</div>'
            f'<div><table><thead><tr><th></th><th>tensor</th><th>dtype</th><th>shape</th><th>signature</th></tr>'
            f'</thead><tbody>{io_rows}</tbody></table></div></div></section>')


def _cards(report: Report) -> str:
    t = report.totals
    cards = [card("MACs", human(t.macs), grouped(t.macs)), card("FLOPs", human(t.flops), grouped(t.flops)),
             card("Params", human(t.params), f"{grouped(t.params)} · {human_bytes(t.param_bytes)}"),
             card("Bytes read", human_bytes(t.bytes_read), grouped(t.bytes_read)),
             card("Bytes written", human_bytes(t.bytes_written), grouped(t.bytes_written))]
    lat = report.latency or {}
    if lat.get("median_ms") is not None:
        cards.append(card("Latency (median)", _fmt_ms(lat["median_ms"]),
                          f"p90 {lat.get('p90_ms', float('nan')):.3f} ms · {lat.get('threads', '?')} thread(s)"))
    tp = report.throughput or {}
    if tp.get("flops_per_s") is not None:
        cards.append(card("Throughput", f"{human_unit(tp['flops_per_s'], 'FLOP/s')}",
                          f"{tp.get('inferences_per_s', 0):.1f} inferences/s"))
    n_unsup = sum(report.unsupported.values())
    cards.append(card("Ops not counted", str(n_unsup), "every op has a formula" if not n_unsup else
                      f"{len(report.unsupported)} type(s)"))
    return f'<section id="totals" style="background:none;border:none;padding:0"><div class="cards">{"".join(cards)}' \
           f'</div></section>'


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


def _charts(report: Report, colors: Mapping[str, str]) -> str:
    total = report.totals.flops or 1
    items = [(k, v.flops, colors.get(k, "#999"),
              f"{k}: {v.count} op(s), {human(v.macs)} MACs, {human(v.flops)} FLOPs ({100 * v.flops / total:.1f}%)")
             for k, v in report.by_op_type.items() if v.flops > 0][:24]
    by_type = hbar_chart(items, title="FLOPs by op type")
    ops = [o for o in report.ops if o.phase == "inference"]
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
        parts.append(f'<h3>Per-op FLOPs along the execution order</h3>{seq}<div class="legend">{legend}</div>')
    if not by_type and not seq:
        parts.append('<p class="muted">No per-inference arithmetic was counted.</p>')
    parts.append("</section>")
    return "".join(parts)


def _memory(report: Report) -> str:
    """The memory figures and, per subgraph arena, the live bytes along the op sequence with the peak marked."""
    mem = report.memory
    if mem is None:
        return ""
    rows = "".join(f'<tr><td>{esc(label)}</td><td class="n">{esc(value)}</td><td class="n">{esc(exact)}</td></tr>'
                   for label, value, exact in memory_rows(mem))
    parts = [f'<section id="memory"><h2>Memory at run time</h2><table><thead><tr><th></th><th class="n">value</th>'
             f'<th class="n">exact</th></tr></thead><tbody>{rows}</tbody></table>'
             f'<p class="muted">{esc(memory_caveat(mem))}.</p>']
    for sub in mem.subgraphs[:6]:
        ops = sorted((o for o in report.ops if o.subgraph == sub.subgraph and o.live_bytes is not None),
                     key=lambda o: o.index)
        if not ops:
            continue
        values = [(o.live_bytes or 0, f"#{o.index} {o.op_type} {o.name}\n{human_bytes(o.live_bytes or 0)} live")
                  for o in ops]
        peak = max(range(len(values)), key=lambda i: values[i][0])
        title = f"Live activation bytes, subgraph {sub.subgraph}" + (f" ({sub.name})" if sub.name else "")
        parts.append(f'<h3>{esc(title)}: arena {esc(human_bytes(sub.arena_bytes))}</h3>'
                     + area_chart(values, title=title, y_label="live bytes", peak=peak, fmt=human_bytes))
    parts.append("</section>")
    return "".join(parts)


_THROUGHPUT_LABELS = {"flops_per_s": ("FLOP/s (all)", "FLOP/s"), "macs_per_s": ("MAC/s", "MAC/s"),
                      "inferences_per_s": ("inferences/s", ""), "float_flops_per_s": ("float FLOP/s", "FLOP/s"),
                      "int_ops_per_s": ("integer OP/s", "OP/s")}


def _rate(key: str, value: float) -> str:
    if key == "inferences_per_s":
        return f"{value:.1f}"
    return human_unit(value, _THROUGHPUT_LABELS.get(key, (key, '/s'))[1])


def _latency(report: Report, colors: Mapping[str, str]) -> str:
    lat = report.latency
    if not lat:
        return ""
    stats = [(_LATENCY_LABELS[k], f"{lat[k]:.3f}" if k == "cv" else f"{lat[k]:.3f} ms") for k in _LATENCY_KEYS
             if isinstance(lat.get(k), (int, float))]
    info = [(k, lat.get(k)) for k in _LATENCY_INFO if lat.get(k) is not None]
    info += [(k, v) for k, v in lat.items() if k not in _LATENCY_KEYS and k not in _LATENCY_INFO
             and k != "roofline" and not k.startswith("per_op") and not isinstance(v, (dict, list))]
    tp = report.throughput or {}
    tput = [(_THROUGHPUT_LABELS.get(k, (k, ""))[0], _rate(k, v)) for k, v in tp.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)]
    flag = latency_flag(lat)
    parts = ['<section id="latency"><h2>Latency</h2>'
             + (f'<div class="alert" id="latency-flag"><b>Inconsistent shapes:</b> {esc(flag)}</div>' if flag else "")
             + '<div class="grid2">',
             f'<div><h3>Timed runs</h3>{kv_table(stats)}</div><div><h3>Setup</h3>{kv_table(info)}',
             f'<h3>Throughput</h3>{kv_table(tput)}</div></div>' if tput else '</div></div>']
    timed = [o for o in report.ops if o.latency_ms is not None and o.latency_ms > 0]
    if timed:
        pts = [(float(o.flops), float(o.latency_ms), colors.get(o.op_type, "#999"),
                f"{o.subgraph}:{o.index} {o.op_type} {o.name}\n{human(o.flops)} FLOPs, {o.latency_ms:.4f} ms"
                + (f", {human_unit(o.flops / (o.latency_ms / 1e3), 'FLOP/s')}" if o.flops else ""))
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
            f'{esc(human_unit(o.flops / (o.latency_ms / 1e3), "FLOP/s") if o.flops else "-")}</td></tr>' for o in top)
        parts.append('<h3>Slowest ops</h3><table><thead><tr><th>op</th><th>type</th><th>output</th><th class="n">ms'
                     '</th><th class="n">FLOPs</th><th class="n">achieved</th></tr></thead>'
                     f'<tbody>{rows}</tbody></table>')
    parts.append("</section>")
    return "".join(parts)


# ---- sweep -------------------------------------------------------------------------------------


def _legend(entries: Sequence[tuple[str, str, str]]) -> str:
    """A legend under a chart: one swatch per distinct (label, colour, shape); shape "ring", "line" or ""."""
    seen = dict.fromkeys(entries)
    if not seen:
        return ""
    return '<div class="legend">' + "".join(
        f'<span class="{esc(shape)}" style="--c:{esc(color)}">{esc(label)}</span>' for label, color, shape in seen
    ) + "</div>"


def _get(d: Mapping[str, Any], *paths: str) -> Any:
    """First non-None value among dotted ``paths`` ("latency.median_ms")."""
    for path in paths:
        cur: Any = d
        for part in path.split("."):
            cur = cur.get(part) if isinstance(cur, Mapping) else None
            if cur is None:
                break
        if cur is not None:
            return cur
    return None


def sweep_label(point: Mapping[str, Any], i: int) -> str:
    """A short label of one sweep point: its label, input shapes or batch."""
    label = _get(point, "label", "name", "shape")
    if label is not None:
        return label if isinstance(label, str) else shape_text(label)
    shapes = _get(point, "input_shapes", "inputs")
    if isinstance(shapes, Mapping) and shapes:
        vals = [shape_text(v) if isinstance(v, (list, tuple)) else str(v) for v in shapes.values()]
        return vals[0] if len(vals) == 1 else "; ".join(f"{k}={v}" for k, v in zip(shapes, vals))
    if isinstance(shapes, (list, tuple)) and shapes:
        first = shapes[0]
        if isinstance(first, Mapping):
            return "; ".join(shape_text(s.get("shape", ())) for s in shapes)
        return shape_text(shapes) if isinstance(first, int) else "; ".join(shape_text(s) for s in shapes)
    if _get(point, "batch") is not None:
        return f"batch {_get(point, 'batch')}"
    return f"#{i}"


def _point_size(point: Mapping[str, Any]) -> tuple[float, float]:
    """Sort key of a sweep point: elements over all its inputs (else its batch), then its FLOPs."""
    shapes = _get(point, "input_shapes", "inputs")
    values = list(shapes.values()) if isinstance(shapes, Mapping) else list(shapes or [])
    if values and all(isinstance(v, (list, tuple)) for v in values):
        size = float(sum(math.prod(int(d) for d in v) for v in values))
    elif values and all(isinstance(v, int) for v in values):
        size = float(math.prod(values))
    else:
        size = float(_get(point, "batch") or 0)
    flops = _get(point, "totals.flops", "flops")
    return size, float(flops) if isinstance(flops, (int, float)) else 0.0


def sweep_rows(sweep: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Normalised sweep points: label, macs, flops, median_ms, flops_per_s (None when absent)."""
    rows = []
    for i, p in enumerate(sweep.get("points") or []):
        if not isinstance(p, Mapping):
            continue
        flops = _get(p, "totals.flops", "flops")
        median = _get(p, "latency.median_ms", "median_ms", "latency_ms")
        fps = _get(p, "throughput.flops_per_s", "flops_per_s")
        if fps is None and flops and median:
            fps = flops / (median / 1e3)
        rows.append({"label": sweep_label(p, i), "macs": _get(p, "totals.macs", "macs"), "flops": flops,
                     "median_ms": median, "flops_per_s": fps,
                     "error": _get(p, "error") or (f"latency skipped: {_get(p, 'latency.skipped')}"
                                                   if _get(p, "latency.skipped") else None)})
    return rows


def _opt(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def _fit_html(fit: Any) -> str:
    """The fitted scaling laws (``{"variables", "laws", "notes"}``), or any other fit as key/value rows."""
    if not isinstance(fit, Mapping) or not fit:
        return ""
    laws = fit.get("laws")
    if not isinstance(laws, Mapping):
        return f"<h3>Fit</h3>{kv_table(list(fit.items()))}"
    rows = []
    for metric, law in laws.items():
        if not isinstance(law, Mapping):
            continue
        quality = "exact, verified" if law.get("verified") else "exact" if law.get("exact") else \
            f"least squares, max residual {law.get('max_residual')}"
        rows.append(f'<tr><td>{esc(metric)}</td><td class="mono">{esc(law.get("formula_human") or law.get("formula"))}'
                    f'</td><td class="muted">{esc(quality)}</td></tr>')
    variables = fit.get("variables") or {}
    var_text = "; ".join(f"{k} = {', '.join(str(x) for x in v.get('values', []))}" for k, v in variables.items()
                         if isinstance(v, Mapping))
    notes = "".join(f"<li>{esc(n)}</li>" for n in fit.get("notes") or [])
    return (f'<h3>Scaling laws</h3><table><tbody>{"".join(rows)}</tbody></table>'
            + (f'<p class="muted">Swept: {esc(var_text)}</p>' if var_text else "")
            + (f'<ul class="muted">{notes}</ul>' if notes else ""))


def sweep_section(sweep: Mapping[str, Any] | None) -> str:
    """Charts and a table for a shape sweep ``{"points": [...], "fit": {...}}``; '' when absent."""
    if not sweep or not sweep.get("points"):
        return ""
    rows = sweep_rows(sweep)
    # left to right by input size, whatever order the points were given in (lines must not zigzag)
    sizes = [_point_size(p) for p in sweep.get("points") or [] if isinstance(p, Mapping)]
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
    fit_html = _fit_html(sweep.get("fit"))
    return (f'<section id="sweep"><h2>Sweep over input shapes</h2><div class="grid2">{"".join(charts)}</div>'
            f'<table><thead><tr><th>shape</th><th class="n">MACs</th><th class="n">FLOPs</th><th class="n">median ms'
            f'</th><th class="n">GFLOP/s</th><th></th></tr></thead><tbody>{body}</tbody></table>{fit_html}</section>')


# ---- roofline ----------------------------------------------------------------------------------


def roofline_section(report: Report | None, roofline: Mapping[str, Any] | None,
                     colors: Mapping[str, str] | None = None) -> str:
    """The roofline chart: ops by arithmetic intensity and achieved FLOP/s under the measured roofs."""
    if not roofline:
        return ""
    peak = _get(roofline, "peak_flops_per_s", "compute.flops_per_s", "peak_compute_flops_per_s")
    bw = _get(roofline, "peak_bytes_per_s", "bandwidth_bytes_per_s", "memory.bytes_per_s",
              "peak_bandwidth_bytes_per_s")
    if not peak or not bw:
        return ""
    colors = colors or {}
    pts: list[tuple[float, float, str, str]] = []
    keys: list[tuple[str, str, str]] = []  # legend entries, in the order the points come
    placed = 0
    for o in roofline.get("ops") or []:
        if not isinstance(o, Mapping):
            continue
        x = _get(o, "intensity", "arithmetic_intensity")
        y = _get(o, "achieved_flops_per_s", "flops_per_s")
        kind = str(_get(o, "op_type") or "")
        ref = f"{o.get('subgraph', '')}:{o.get('index', '')} {kind}"
        if x and y:
            pts.append((float(x), float(y), colors.get(kind, "#4c78a8"),
                        f"{ref}: {_get(o, 'bound') or ''}-bound, {human_unit(y, 'FLOP/s')} achieved"))
            keys.append((kind, colors.get(kind, "#4c78a8"), "ring"))
        elif x and _get(o, "roof_flops_per_s"):
            placed += 1
            pts.append((float(x), float(_get(o, "roof_flops_per_s")), "#b8bcc4",
                        f"{ref}: {_get(o, 'bound') or ''}-bound (not timed: drawn on its roof)"))
    if not pts and report is not None:
        for o in report.ops:
            moved = o.bytes_read + o.bytes_written
            if o.latency_ms and o.flops and moved:
                pts.append((o.flops / moved, o.flops / (o.latency_ms / 1e3), colors.get(o.op_type, "#4c78a8"),
                            f"{o.subgraph}:{o.index} {o.op_type} {o.name}"))
                keys.append((o.op_type, colors.get(o.op_type, "#4c78a8"), "ring"))
        med = (report.latency or {}).get("median_ms")
        moved = report.totals.bytes_read + report.totals.bytes_written
        if not pts and med and report.totals.flops and moved:
            pts.append((report.totals.flops / moved, report.totals.flops / (med / 1e3), "#e45756", "whole model"))
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
    counts = roofline.get("counts") if isinstance(roofline.get("counts"), Mapping) else {}
    info = kv_table([("peak compute", f"{human_unit(peak, 'FLOP/s')}"), ("memory bandwidth", f"{human_unit(bw, 'B/s')}"),
                     ("ridge point", f"{ridge:.2f} FLOPs/byte"),
                     ("compute-bound ops", counts.get("compute")), ("memory-bound ops", counts.get("memory")),
                     ("compute probe", roofline.get("compute_probe")),
                     ("bandwidth probe", roofline.get("bandwidth_probe")),
                     ("not timed", f"{placed} op(s), drawn grey on their roof" if placed else None),
                     ("above the roof", f"{roofline.get('above_roof')} op(s): {roofline.get('above_roof_note', '')}"
                      if roofline.get("above_roof") else None)])
    return (f'<section id="roofline"><h2>Roofline</h2><div class="grid2"><div>{chart}</div><div>{info}'
            '<p class="muted">Ops left of the ridge point are memory-bound, ops right of it compute-bound; '
            'the gap between a point and the roof is the headroom.</p></div></div></section>')


# ---- op table ----------------------------------------------------------------------------------


def _op_row(i: int, o: OpRecord, total: int, has_lat: bool) -> str:
    share = 100 * o.flops / total if total and o.phase == "inference" else 0.0
    out_shape = shape_text(o.outputs[0]) if o.outputs else ""
    search = f"{o.op_type} {o.name} {o.subgraph}:{o.index} {o.precision}".lower()
    note = "; ".join(x for x in (o.formula, o.note) if x)
    cells = [f'<td class="n" data-v="{i}">{i}</td>', f'<td class="mono" data-v="{o.subgraph * 1_000_000 + o.index}">'
             f'{o.subgraph}:{o.index}</td>', f"<td>{breakable(o.op_type)}</td>", f'<td class="name">{breakable(o.name)}</td>',
             f'<td class="mono">{esc(out_shape)}</td>', f"<td>{esc(o.precision)}</td>",
             f'<td class="n" data-v="{o.macs}">{esc(human(o.macs))}</td>',
             f'<td class="n" data-v="{o.flops}" title="{esc(grouped(o.flops))}">{esc(human(o.flops))}</td>',
             f'<td class="n" data-v="{share:.6f}"><span class="share" style="width:{min(share, 100) * 0.6:.1f}px">'
             f'</span>{share:.1f}%</td>',
             f'<td class="n rw" data-v="{o.bytes_read + o.bytes_written}">'
             f'{esc(human_bytes(o.bytes_read)).replace(" ", "&nbsp;")}&nbsp;/ '
             f'{esc(human_bytes(o.bytes_written)).replace(" ", "&nbsp;")}</td>',
             f'<td class="n" data-v="{o.params}">{esc(human(o.params))}</td>']
    if has_lat:
        lat = o.latency_ms
        fps = o.flops / (lat / 1e3) if lat and o.flops else None
        cells.append(f'<td class="n" data-v="{"" if lat is None else lat}">{"-" if lat is None else f"{lat:.4f}"}</td>')
        cells.append(f'<td class="n" data-v="{"" if fps is None else fps}">'
                     f'{"-" if fps is None else esc(human(fps))}</td>')
    cells.append(f'<td><span class="badge {esc(o.status)}">{esc(o.status)}</span></td>')
    cells.append(f"<td>{esc(o.phase)}{'' if o.executions in (0, 1) else f' ×{o.executions}'}</td>")
    cells.append(f'<td class="note">{esc(note)}</td>')
    return (f'<tr data-op="{o.subgraph}:{o.index}" data-status="{esc(o.status)}" data-phase="{esc(o.phase)}" '
            f'data-search="{esc(search)}">{"".join(cells)}</tr>')


def _op_table(report: Report) -> str:
    has_lat = any(o.latency_ms is not None for o in report.ops)
    heads = [("#", "num", "order"), ("op", "num", "op"), ("type", "text", "type"), ("output tensor", "text", "name"),
             ("shape", "text", "shape"), ("precision", "text", "precision"), ("MACs", "num", "macs"),
             ("FLOPs", "num", "flops"), ("share", "num", "share"), ("read / written", "num", "bytes"),
             ("params", "num", "params")]
    if has_lat:
        heads += [("ms", "num", "latency"), ("FLOP/s", "num", "flops_per_s")]
    heads += [("status", "text", "status"), ("phase", "text", "phase"), ("formula / note", "text", "note")]
    th = "".join(f'<th class="sortable{" n" if t == "num" else ""}" data-type="{t}" data-key="{k}">{esc(h)}</th>'
                 for h, t, k in heads)
    rows = "".join(_op_row(i, o, report.totals.flops, has_lat) for i, o in enumerate(report.ops))
    statuses = "".join(f'<option value="{s}">{s}</option>' for s in STATUSES)
    phases = "".join(f'<option value="{p}">{p}</option>' for p in ("inference", "init", "not_executed"))
    return ('<section id="ops"><h2>Per-op table</h2><div class="controls">'
            '<input type="search" id="op-filter" placeholder="filter by type, name, precision…" aria-label="filter">'
            f'<select id="status-filter" aria-label="status"><option value="">any status</option>{statuses}</select>'
            f'<select id="phase-filter" aria-label="phase"><option value="">any phase</option>{phases}</select>'
            '<span id="op-count" class="muted"></span><span class="muted">· click a header to sort</span></div>'
            f'<div class="scroll"><table id="ops-table" class="sortable-table"><thead><tr>{th}</tr></thead>'
            f'<tbody>{rows}</tbody></table></div></section>')


def _notes(report: Report) -> str:
    parts = []
    partial = partial_note(report)
    if partial:
        parts.append(f'<div class="alert" id="partial-totals"><b>Partial totals:</b> {esc(partial[16:])}.</div>')
    skipped = (report.latency or {}).get("skipped")
    if skipped:
        parts.append(f'<div class="alert" id="latency-skipped"><b>Latency skipped:</b> {esc(skipped)}</div>')
    if report.unsupported:
        n = sum(report.unsupported.values())
        listing = ", ".join(f"{k} ×{v}" for k, v in sorted(report.unsupported.items()))
        parts.append(f'<div class="alert"><b>Not counted:</b> {n} op(s) of {len(report.unsupported)} type(s): '
                     f'{esc(listing)}. Totals are a lower bound.</div>')
    opaque = opaque_line(report)
    if opaque:
        parts.append(f'<div class="alert"><b>Opaque:</b> {esc(opaque)}.</div>')
    if report.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in report.warnings)
        parts.append(f'<h3>Warnings</h3><ul class="warnings">{items}</ul>')
    return f'<section id="notes"><h2>Notes</h2>{"".join(parts)}</section>' if parts else ""


def render_html(report: Report, *, sweep: Mapping[str, Any] | None = None,
                roofline: Mapping[str, Any] | None = None) -> str:
    """The full HTML report of one model.

    Args:
        report: the analysis (with latency/throughput and per-op ``latency_ms`` when measured).
        sweep: optional ``{"points": [...], "fit": {...}}`` from a shape sweep; adds the sweep section.
        roofline: optional measured roofs (``peak_flops_per_s``, ``peak_bytes_per_s``, optional ``ops``);
            read from ``report.roofline`` when not given.

    Returns:
        One self-contained HTML document.
    """
    sweep = sweep if sweep is not None else (report.settings or {}).get("sweep")
    if roofline is None:
        roofline = (getattr(report, "roofline", None) or (report.latency or {}).get("roofline")
                    or (report.settings or {}).get("roofline"))
    colors = color_map(list(report.by_op_type))
    m = report.model
    name = os.path.basename(m.path) if m.path else "model bytes"
    subtitle = esc(f"{report.tool.get('name', 'tflite_flops')} {report.tool.get('version', '')} · "
                   f"{human_bytes(m.size_bytes)} · {m.subgraphs} subgraph(s) · {m.operators} op(s) · "
                   f"sha256 {m.sha256[:16]}…")
    body = "\n".join(s for s in (_cards(report), _notes(report), _summary(report), _precision(report), signatures_html(report),
                                 _charts(report, colors), _memory(report), _latency(report, colors), sweep_section(sweep),
                                 roofline_section(report, roofline, colors), _op_table(report)) if s)
    data = report.to_dict()
    if sweep:
        data["sweep"] = sweep
    return page(f"{name} — tflite_flops report", subtitle, body, data)


def render_sweep_html(sweep: Mapping[str, Any], title: str = "tflite_flops sweep") -> str:
    """A page for a shape sweep alone (``{"points": [...], "fit": {...}}``)."""
    body = sweep_section(sweep) or '<section><p class="muted">The sweep has no points.</p></section>'
    return page(title, esc(f"{len(sweep.get('points') or [])} point(s)"), body, dict(sweep))
