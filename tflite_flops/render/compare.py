"""Renderers of a :class:`~tflite_flops.report.compare.Comparison`: table, json, csv, md, html.

They only read the comparison; the format table is :data:`COMPARE_RENDERERS` (extensions from
:data:`tflite_flops.render.formats.FORMATS`).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from ..ops.placement import delegate_display
from ..report.compare import Comparison, MetricDelta, OpPair, ratio
from ..report.completeness import latency_flag, partial_note
from ..report import OpRecord
from ..report.columns import OP_COLUMNS, reason, taken
from ..units import human, human_bytes
from .advice import TITLE, advice_html, advice_lines
from .what_if import HEADERS as WHAT_IF_HEADERS, RIGHT as WHAT_IF_RIGHT, what_if_html, what_if_rows
from .charts import esc, paired_hbar_chart
from .formats import RendererTable
from .formats.csv import safe_cell
from .formats.html import breakable
from .page import page
from .formats.markdown import md_table, md_text
from .prediction import confidence_line, flag_lines
from .text import clip, text_table


# ---- formatting helpers -------------------------------------------------------------------------


def fmt_value(m: MetricDelta, v: int | float | None) -> str:
    """A value of metric ``m`` for people."""
    if v is None:
        return "-"
    if m.kind == "bytes":
        return human_bytes(v)
    if m.kind == "ms":
        return f"{v:.3f} ms"
    return human(v)  # counts and rates: the label carries the unit ("FLOP/s")


def fmt_delta(m: MetricDelta) -> str:
    """B − A with a sign."""
    d = m.delta
    if d is None:
        return "-"
    if d == 0:
        return "0"
    sign = "+" if d > 0 else "-"
    return sign + fmt_value(m, abs(d))


def fmt_ratio(r: float | None) -> str:
    """'0.25×' (or '-' when undefined)."""
    return "-" if r is None else (f"{r:.3f}×" if r < 100 else f"{r:.0f}×")


def _pct(a: int | float, b: int | float) -> str:
    if not a:
        return "new" if b else "-"
    change = ratio(100 * (b - a), a)
    return "-" if change is None else f"{change:+.1f}%"


def _op_ref(o: OpRecord | None) -> str:
    return "" if o is None else f"{o.subgraph}:{o.index}"


def _interesting(c: Comparison, limit: int) -> list[OpPair]:
    """Pairs that changed type or cost, or are unmatched, biggest FLOPs change first."""
    def change(p: OpPair) -> int:
        return abs((p.b.flops if p.b else 0) - (p.a.flops if p.a else 0))

    pairs = [p for p in c.ops if p.match != "same" or p.a.flops != p.b.flops or p.a.macs != p.b.macs]
    return sorted(pairs, key=lambda p: -change(p))[:limit]


# ---- renderers ----------------------------------------------------------------------------------


def render_compare_table(c: Comparison, top: int = 20) -> str:
    """Side-by-side text for the terminal."""
    out = [f"A: {c.label_a}", f"B: {c.label_b}", "", "Totals per inference"]
    rows = [[m.label, fmt_value(m, m.a), fmt_value(m, m.b), fmt_delta(m), fmt_ratio(m.ratio)] for m in c.totals]
    out += ["  " + s for s in text_table(["", "A", "B", "Δ (B−A)", "B/A"], rows, [False, True, True, True, True])]
    rows = [[t.op_type, str(t.count_a), str(t.count_b), human(t.macs_a), human(t.macs_b), human(t.flops_a),
             human(t.flops_b), _pct(t.flops_a, t.flops_b)] for t in c.by_type]
    out += ["", "By op type (per inference)"]
    out += ["  " + s for s in text_table(["op type", "n A", "n B", "MACs A", "MACs B", "FLOPs A", "FLOPs B", "Δ FLOPs"],
                                     rows, [False] + [True] * 7)]
    out += [f"  ! {side}: {note}" for side, note in side_notes(c)]  # what the numbers above do not include
    counts = c.match_counts()
    out += ["", f"Ops matched by type and position: {counts['same']} same type, {counts['changed']} changed type, "
                f"{counts['only_a']} only in A, {counts['only_b']} only in B"]
    moved = placement_change_lines(c)
    if moved:
        out += ["", "Where the ops run: changes"] + ["  " + line for line in moved]
    diff = _interesting(c, top)
    if diff:
        rows = [[p.match, _op_ref(p.a), _op_ref(p.b), (p.a or p.b).op_type if p.match != "changed"
                 else f"{p.a.op_type}→{p.b.op_type}", clip((p.b or p.a).name, 36),
                 human(p.a.flops) if p.a else "-", human(p.b.flops) if p.b else "-",
                 _pct(p.a.flops, p.b.flops) if p.a and p.b else ""] for p in diff]
        out.append(f"  largest differences (up to {top}):")
        out += ["  " + s for s in text_table(["match", "A op", "B op", "type", "output", "FLOPs A", "FLOPs B", "Δ"], rows,
                                         [False] * 5 + [True] * 3)]
    if c.advice:
        out += ["", TITLE] + ["  " + line for line in advice_lines(c.advice)]
    if c.what_if is not None:
        out += ["", WHAT_IF_TITLE] + ["  " + s for s in text_table(["", *WHAT_IF_HEADERS], _what_if_cells(c),
                                                                  [False, *WHAT_IF_RIGHT])]
    return "\n".join(out) + "\n"


WHAT_IF_TITLE = "A's what-if in B's precision beside B (both predicted)"
WHAT_IF_LABELS = ("A, what-if", "B, as converted")


def _what_if_cells(c: Comparison) -> list[list[str]]:
    """Two rows: A predicted as converted (the what-if), and B's own prediction."""
    return [[label, *row] for label, row in zip(WHAT_IF_LABELS, what_if_rows(c.what_if or ()))]


def placement_change_lines(c: Comparison, limit: int = 12) -> list[str]:
    """The ops a delegate takes on one side only, grouped by delegate, direction and op type with B's (or A's) reason."""
    out = []
    for key in dict.fromkeys(ch.delegate for ch in c.placement):
        d = c.a.delegation.get(key)
        name = delegate_display(key, None if d is None else d.rules)
        for lost in (True, False):
            changes = [ch for ch in c.placement if ch.delegate == key and ch.lost == lost]
            if not changes:
                continue
            groups: dict[tuple[str, str], list[str]] = {}
            for ch in changes:
                side = ch.b if lost else ch.a
                why = reason(side, key) or ""
                groups.setdefault((side.op_type, why), []).append(_op_ref(ch.b if lost else ch.a))
            verb = f"taken by {name} in A, kept off in B" if lost else f"kept off {name} in A, taken in B"
            out.append(f"{len(changes)} op(s) {verb}:")
            for (op_type, why), refs in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:limit]:
                where = ", ".join(refs[:4]) + (" …" if len(refs) > 4 else "")
                out.append(f"  {op_type} ×{len(refs)} ({where})" + (f": {why}" if why else ""))
    return out


def side_notes(c: Comparison) -> list[tuple[str, str]]:
    """``(side, sentence)`` for the partial totals, skipped or inconsistent latency of A, then of B."""
    notes = []
    for side, report in (("A", c.a), ("B", c.b)):
        skipped = report.latency.skipped if report.latency is not None else None
        notes += [(side, n) for n in (partial_note(report), f"latency skipped: {skipped}" if skipped else None,
                                      latency_flag(report.latency)) if n]
        p = report.prediction
        if p is not None:  # what the prediction rests on (docs/predict.md, "Confidence")
            notes += [(side, line.lstrip("! ")) for line in
                      ([confidence_line(p)] if p.low_confidence_ops else []) + flag_lines(p)]
    return notes


def render_compare_json(c: Comparison) -> str:
    """The comparison as indented JSON."""
    return json.dumps(c.to_dict(), indent=2, ensure_ascii=False) + "\n"


CSV_COLUMNS = ["section", "key", "metric", "a", "b", "delta", "ratio"]


def render_compare_csv(c: Comparison) -> str:
    """Long-format CSV: one row per (section, key, metric) with raw numbers."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)

    def row(section: str, key: str, metric: str, a: Any, b: Any) -> None:
        delta = b - a if a is not None and b is not None else ""
        quotient = ratio(b, a)
        w.writerow([section, safe_cell(key), metric, "" if a is None else a, "" if b is None else b, delta,
                    "" if quotient is None else quotient])

    for m in c.totals:
        row("totals", m.key, m.key, m.a, m.b)
    if c.a.prediction is not None or c.b.prediction is not None:  # what each prediction rests on (text: no delta)
        w.writerow(["prediction", "flags", "flags", *(";".join(r.prediction.flags) if r.prediction else ""
                                                      for r in (c.a, c.b)), "", ""])
    for t in c.by_type:
        row("op_type", t.op_type, "count", t.count_a, t.count_b)
        row("op_type", t.op_type, "macs", t.macs_a, t.macs_b)
        row("op_type", t.op_type, "flops", t.flops_a, t.flops_b)
    figures = [col for col in OP_COLUMNS if "compare" in col.outputs]
    for p in c.ops:
        key = f"{p.match} {_op_ref(p.a) or '-'} {_op_ref(p.b) or '-'} {(p.a or p.b).op_type}"
        for col in figures:  # the declared per-op columns compare shows, where either side has a value
            va = col.read(p.a, c.a) if p.a else None
            vb = col.read(p.b, c.b) if p.b else None
            if va is not None or vb is not None:
                row("op", key, col.name, va, vb)
    for ch in c.placement:
        row("placement", f"{_op_ref(ch.a)} {_op_ref(ch.b)} {ch.b.op_type}", ch.delegate, taken(ch.a, ch.delegate),
            taken(ch.b, ch.delegate))
    return buf.getvalue()


def render_compare_md(c: Comparison, top: int = 15) -> str:
    """Markdown for a pull-request comment."""
    out = [f"### tflite_flops compare: {md_text(c.label_a)} → {md_text(c.label_b)}", ""]
    rows = [[md_text(m.label.strip()) if not m.label.startswith("  ") else "&nbsp;&nbsp;" + md_text(m.label.strip()),
             fmt_value(m, m.a), fmt_value(m, m.b), fmt_delta(m), fmt_ratio(m.ratio)] for m in c.totals]
    out += md_table(["", "A", "B", "Δ (B−A)", "B/A"], rows, [False, True, True, True, True])
    rows = [[md_text(t.op_type), f"{t.count_a} → {t.count_b}", human(t.macs_a), human(t.macs_b), human(t.flops_a),
             human(t.flops_b), _pct(t.flops_a, t.flops_b)] for t in c.by_type]
    out += ["", "**By op type**", ""] + md_table(["op type", "count", "MACs A", "MACs B", "FLOPs A", "FLOPs B", "Δ"],
                                                 rows, [False] + [True] * 6)
    out += [f"  ! {side}: {note}" for side, note in side_notes(c)]  # what the numbers above do not include
    counts = c.match_counts()
    out += ["", f"Ops matched by type and position: {counts['same']} same type, {counts['changed']} changed, "
                f"{counts['only_a']} only in A, {counts['only_b']} only in B."]
    moved = placement_change_lines(c)
    if moved:
        out += ["", "**Where the ops run: changes**", ""] + [
            f"{'  ' if line.startswith('  ') else ''}- {md_text(line.strip())}" for line in moved]
    if c.advice:
        out += ["", f"**{TITLE}**", ""] + [f"- {md_text(line)}" for line in advice_lines(c.advice)]
    if c.what_if is not None:
        out += ["", f"**{WHAT_IF_TITLE}**", ""] + md_table(["", *WHAT_IF_HEADERS],
                                                            [[md_text(x) for x in r] for r in _what_if_cells(c)],
                                                            [False, *WHAT_IF_RIGHT])
    diff = _interesting(c, top)
    if diff:
        rows = [[p.match, _op_ref(p.a) or "-", _op_ref(p.b) or "-",
                 md_text((p.a or p.b).op_type if p.match != "changed" else f"{p.a.op_type} → {p.b.op_type}"),
                 md_text(clip((p.b or p.a).name, 40)), human(p.a.flops) if p.a else "-",
                 human(p.b.flops) if p.b else "-"] for p in diff]
        out += ["", "<details><summary>Largest op differences</summary>", ""] + md_table(
            ["match", "A", "B", "type", "output", "FLOPs A", "FLOPs B"], rows, [False] * 5 + [True] * 2) + \
            ["", "</details>"]
    return "\n".join(out) + "\n"


CARD_KEYS = ("macs", "flops", "params", "model_size", "latency.median_ms")  # the headline cards (and changed partitions)


def _placement_html(c: Comparison) -> str:
    """The "Where the ops run: changes" section, as the terminal and Markdown show it ('' when nothing moved)."""
    moved = placement_change_lines(c)
    if not moved:
        return ""
    items, group = [], []
    for line in moved + [""]:
        if not line.startswith("  ") and group:  # a heading line closes the previous group
            items[-1] += "<ul>" + "".join(f"<li>{esc(g.strip())}</li>" for g in group) + "</ul></li>"
            group = []
        if line.startswith("  "):
            group.append(line)
        elif line:
            items.append(f"<li>{esc(line)}")
    return f'<section id="placement-changes"><h2>Where the ops run: changes</h2><ul>{"".join(items)}</ul></section>'


def render_compare_html(c: Comparison) -> str:
    """A self-contained HTML page: cards, totals, a paired chart by op type, matched ops."""
    cards = []
    for m in c.totals:
        if m.key in CARD_KEYS or (m.key.endswith(".partitions") and m.delta):  # a partition count that changed
            cls = "" if not m.delta else (' class="pos"' if m.delta > 0 else ' class="neg"')
            cards.append(f'<div class="card"><div class="k">{esc(m.label)}</div><div class="v">{esc(fmt_value(m, m.b))}'
                         f'</div><div class="x">A {esc(fmt_value(m, m.a))} · <span{cls}>{esc(fmt_delta(m))} '
                         f'({esc(fmt_ratio(m.ratio))})</span></div></div>')
    totals = "".join(
        f'<tr><td>{esc(m.label.strip())}</td><td class="n">{esc(fmt_value(m, m.a))}</td>'
        f'<td class="n">{esc(fmt_value(m, m.b))}</td><td class="n">{esc(fmt_delta(m))}</td>'
        f'<td class="n">{esc(fmt_ratio(m.ratio))}</td></tr>' for m in c.totals)
    chart = paired_hbar_chart([(t.op_type, t.flops_a, t.flops_b) for t in c.by_type if t.flops_a or t.flops_b][:20],
                              title="FLOPs by op type, A versus B", names=(c.label_a, c.label_b))
    types = "".join(
        f'<tr><td>{esc(t.op_type)}</td><td class="n" data-v="{t.count_a}">{t.count_a}</td>'
        f'<td class="n" data-v="{t.count_b}">{t.count_b}</td>'
        f'<td class="n" data-v="{t.macs_a}">{esc(human(t.macs_a))}</td>'
        f'<td class="n" data-v="{t.macs_b}">{esc(human(t.macs_b))}</td><td class="n" data-v="{t.flops_a}">'
        f'{esc(human(t.flops_a))}</td><td class="n" data-v="{t.flops_b}">{esc(human(t.flops_b))}</td>'
        f'<td class="n" data-v="{t.flops_b - t.flops_a}">{esc(_pct(t.flops_a, t.flops_b))}</td></tr>'
        for t in c.by_type)

    def th(cols: Sequence[tuple[str, str]]) -> str:
        return "".join(f'<th class="sortable{" n" if t == "num" else ""}" data-type="{t}">{esc(h)}</th>'
                       for h, t in cols)

    op_rows = []
    for i, p in enumerate(c.ops):
        o = p.b or p.a
        kind = o.op_type if p.match != "changed" else f"{p.a.op_type} → {p.b.op_type}"
        fa, fb = (p.a.flops if p.a else None), (p.b.flops if p.b else None)
        op_rows.append(
            f'<tr data-op="{i}"><td class="n" data-v="{i}">{i}</td><td>{esc(p.match)}</td>'
            f'<td class="mono">{esc(_op_ref(p.a))}</td><td class="mono">{esc(_op_ref(p.b))}</td><td>{esc(kind)}</td>'
            f'<td class="name">{breakable(o.name)}</td>'
            f'<td class="n" data-v="{"" if fa is None else fa}">{esc(human(fa))}</td>'
            f'<td class="n" data-v="{"" if fb is None else fb}">{esc(human(fb))}</td>'
            f'<td class="n" data-v="{(fb or 0) - (fa or 0)}">'
            f'{esc(_pct(fa, fb) if fa is not None and fb is not None else "")}</td></tr>')
    notes = "".join(f'<div class="alert"><b>{side}:</b> {esc(note)}</div>' for side, note in side_notes(c))
    counts = c.match_counts()
    type_heads = th([("op type", "text"), ("count A", "num"), ("count B", "num"), ("MACs A", "num"),
                     ("MACs B", "num"), ("FLOPs A", "num"), ("FLOPs B", "num"), ("Δ FLOPs", "num")])
    op_heads = th([("#", "num"), ("match", "text"), ("A op", "text"), ("B op", "text"), ("type", "text"),
                   ("output (B, else A)", "text"), ("FLOPs A", "num"), ("FLOPs B", "num"), ("Δ", "num")])
    body = (f'<section style="background:none;border:none;padding:0"><div class="cards">{"".join(cards)}</div>'
            '</section>'
            f'<section><h2>Totals per inference</h2><table><thead><tr><th></th><th class="n">A: {esc(c.label_a)}</th>'
            f'<th class="n">B: {esc(c.label_b)}</th><th class="n">Δ (B−A)</th><th class="n">B/A</th></tr></thead>'
            f'<tbody>{totals}</tbody></table>{notes}</section>'
            f'<section><h2>By op type</h2>{chart}<table class="sortable-table"><thead><tr>'
            f'{type_heads}'
            f'</tr></thead><tbody>{types}</tbody></table></section>'
            f'{_placement_html(c)}{advice_html(c.advice)}'
            f'{what_if_html(c.what_if or (), WHAT_IF_LABELS, WHAT_IF_TITLE)}'
            f'<section><h2>Ops matched by type and position</h2><p class="muted">{counts["same"]} same type, '
            f'{counts["changed"]} changed type, {counts["only_a"]} only in A, {counts["only_b"]} only in B. '
            f'Click a header to sort.</p><div class="scroll"><table class="sortable-table"><thead><tr>'
            f'{op_heads}'
            f'</tr></thead><tbody>{"".join(op_rows)}</tbody></table></div></section>')
    return page(f"{c.label_a} vs {c.label_b} — tflite_flops compare", esc(f"A = {c.label_a} · B = {c.label_b}"),
                body, c.to_dict())


# format -> (renderer, extensions); the same table serves --format and -o FILE.
COMPARE_RENDERERS: RendererTable[Comparison] = RendererTable("compare", {
    "table": render_compare_table,
    "json": render_compare_json,
    "csv": render_compare_csv,
    "md": render_compare_md,
    "html": render_compare_html,
})


def compare_format_for_path(path: str) -> str:
    """The compare format an output file's extension selects."""
    return COMPARE_RENDERERS.for_path(path)


def render_comparison(c: Comparison, fmt: str) -> str:
    """Render a comparison in ``fmt``."""
    return COMPARE_RENDERERS.render(c, fmt)

