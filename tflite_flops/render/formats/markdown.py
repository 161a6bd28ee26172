"""Markdown renderer (``--format md``): a compact summary for pull-request comments.

Totals (by precision), the by-op-type table and the top ops, as GitHub-flavoured Markdown.
Model strings (tensor names, descriptions) are user data: ``|`` is escaped so that a name
cannot break a table, and ``<``, ``>``, ``&`` become HTML entities because GitHub renders
inline HTML in Markdown.
"""

from __future__ import annotations

import os
from typing import Sequence

from ...report import summary
from ...report.completeness import latency_flag, partial_note
from ...report import Report
from ...report.columns import columns_for
from ...units import grouped, human, human_bytes, human_unit, precision_unit
from ..memory import class_guess, memory_caveat, memory_rows, memory_title, rss_line
from ...report.headline import target_class
from ..advice import TITLE as ADVICE_TITLE, advice_lines
from ..what_if import HEADERS as WHAT_IF_HEADERS, RIGHT as WHAT_IF_RIGHT, TITLE as WHAT_IF_TITLE, what_if_rows
from ..placement import delegate_name, kept_groups
from ..prediction import prediction_lines, prediction_rows
from ..opaque import not_counted_line, opaque_line
from ..text import clip, steadiness
from ..bundle import HEADERS as BUNDLE_HEADERS, RIGHT as BUNDLE_RIGHT, bundle_lines, section_rows
from ..signatures import signature_headers, signature_lines, signature_rows
from .table import file_hash_text
from . import register_format


def _or(value: object, default: object) -> object:
    """``value``, or ``default`` when it was not measured (None)."""
    return default if value is None else value


def md_text(text: object) -> str:
    """Escape a model-derived string for a Markdown table cell or line."""
    s = str(text)
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\\", "\\\\"), ("|", "\\|"), ("`", "\\`"),
                 ("*", "\\*"), ("_", "\\_"), ("[", "\\["), ("]", "\\]")):
        s = s.replace(a, b)
    return " ".join(s.split())  # no newlines inside a cell


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    """A GitHub table; cells must already be escaped."""
    align = ["---:" if r else ":---" for r in right]
    return ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"] + \
           ["| " + " | ".join(r) + " |" for r in rows]


def _indented(label: str) -> str:
    """A memory row's label with its leading spaces as no-break spaces, which a Markdown table cell keeps."""
    text = label.lstrip(" ")
    return "&nbsp;" * (len(label) - len(text)) + md_text(text)


def _shape(shape: Sequence[int]) -> str:
    return "×".join(str(d) for d in shape) if shape else "scalar"


@register_format("md", (".md", ".markdown"), order=40)
def render_markdown(report: Report, top: int = 10) -> str:
    """Totals, by-op-type table and top ops as Markdown."""
    m, t = report.model, report.totals
    name = os.path.basename(m.path) if m.path else "model bytes"
    out = [f"### {report.tool['name']} report: {md_text(name)}", ""]
    out.append(f"{human_bytes(m.size_bytes)} · {m.subgraphs} subgraph(s) · {m.operators} op(s) · "
               f"{file_hash_text(m.size_bytes, m, 12)} · {report.tool['name']} {md_text(report.tool['version'])}")
    ios = [f"input **{md_text(ts.name)}** {md_text(ts.dtype)} {_shape(ts.shape)}" for ts in report.inputs]
    ios += [f"output **{md_text(ts.name)}** {md_text(ts.dtype)} {_shape(ts.shape)}" for ts in report.outputs]
    if ios:
        out += [""] + [f"- {line}" for line in ios]

    rows = [["MACs", human(t.macs), grouped(t.macs)], ["FLOPs (all)", human(t.flops), grouped(t.flops)]]
    for prec, v in sorted(t.by_precision.items(), key=lambda kv: -kv[1]["flops"]):
        rows.append([f"&nbsp;&nbsp;{md_text(prec)} {precision_unit(prec)}", human(v["flops"]), grouped(v["flops"])])
    rows += [["Params", human(t.params), f"{grouped(t.params)} ({human_bytes(t.param_bytes)})"],
             ["Bytes read", human_bytes(t.bytes_read), grouped(t.bytes_read)],
             ["Bytes written", human_bytes(t.bytes_written), grouped(t.bytes_written)]]
    from ...report.measured import LatencyStats, Throughput  # loaded here: a static run's table never needs them

    lat = report.latency or LatencyStats()
    if lat.median_ms is not None:
        steady = steadiness(lat)
        rows.append(["Latency (median)", f"{lat.median_ms:.3f} ms",
                     f"p90 {_or(lat.p90_ms, float('nan')):.3f} ms · {md_text(_or(lat.runtime, ''))}, "
                     f"{_or(lat.threads, '?')} thread(s)" + (f" · {steady}" if steady else "")])
    elif lat.mean_ms is not None:  # a device's log that gives the mean alone
        rows.append(["Latency (mean)", f"{lat.mean_ms:.3f} ms", md_text(_or(lat.runtime, ""))])
    if lat.median_ms is not None:
        tp = report.throughput or Throughput()
        if tp.flops_per_s is not None:
            rows.append(["Throughput", f"{human_unit(tp.flops_per_s, 'FLOP/s')}",
                         f"{_or(tp.inferences_per_s, 0):.1f} inferences/s"])
    out += ["", "**Totals per inference**", ""] + md_table(["", "value", "exact"], rows, [False, True, True])
    for note in (partial_note(report), rss_line(report.latency, report.memory), latency_flag(report.latency),
                 lat.skipped and f"latency skipped: {lat.skipped}"):
        if note:
            out += ["", f"> **{md_text(note[:1].upper() + note[1:])}**"]

    if report.memory is not None:
        target = target_class(report)[0]
        # a cell's leading spaces are dropped by Markdown: each level of a part's indent is two no-break spaces
        rows = [[_indented(label), value, exact] for label, value, exact in memory_rows(report.memory, target)]
        guess = class_guess(report)
        out += ["", f"**{md_text(memory_title(report))}**", ""] + ([f"_{md_text(guess)}_", ""] if guess else [])
        out += md_table(["", "value", "exact"], rows, [False, True, False])
        out += ["", f"_{md_text(memory_caveat(report.memory, target))}_"]

    if report.prediction is not None:
        out += ["", "**Predicted latency**", ""] + [f"- {md_text(line)}" for line in prediction_lines(report)]
        headers, rows, right = prediction_rows(report, top, width=48)
        if rows:
            out += [""] + md_table(headers, [[md_text(c) for c in r] for r in rows], right)

    if report.delegation:
        rows = []
        for key, d in report.delegation.items():
            parts = []
            groups = kept_groups(report, key)
            for cat, items in groups[:3]:
                per_type: dict[str, int] = {}  # one count per op type, whatever the details
                for op_type, _, ops in items:
                    per_type[op_type] = per_type.get(op_type, 0) + len(ops)
                shown = list(per_type.items())
                parts.append(f"{cat}: " + ", ".join(f"{name} ×{n}" for name, n in shown[:4])
                             + (f", {len(shown) - 4} more op type(s)" if len(shown) > 4 else ""))
            if len(groups) > 3:  # never silently: the reasons left out are counted (the table and HTML list all)
                rest = sum(len(ops) for _, items in groups[3:] for _, _, ops in items)
                parts.append(f"{len(groups) - 3} more reason(s) ({rest} op(s)): see the JSON or the HTML page")
            kept = "; ".join(parts)
            rows.append([delegate_name(key, d) + (" (device)" if d.source == "device" else ""), str(d.delegated_ops),
                         str(d.kept_ops), str(d.partitions), "-" if d.subsets is None else str(d.subsets),
                         md_text(kept or "-")])
        out += ["", "**Where it runs**", ""] + md_table(["delegate", "delegated", "kept", "partitions",
                                                         "node subsets", "kept, by reason"],
                                                        rows, [False, True, True, True, True, False])
        out += ["", "Node subsets: the delegated partitions and the runs of ops left on the CPU between them, what "
                    "benchmark_model logs as \"yielding N partitions\"."]

    if report.advice:
        out += ["", f"**{ADVICE_TITLE}**", ""] + [f"- {md_text(line)}" for line in
                                                        advice_lines(report.advice, summary.model_ms(report))]
    if report.what_if:
        out += ["", f"**{WHAT_IF_TITLE}**", ""] + md_table(
            WHAT_IF_HEADERS, [[md_text(c) for c in row] for row in what_if_rows(report.what_if)], WHAT_IF_RIGHT)

    if report.by_op_type:
        total = t.flops or 1
        rows = [[md_text(k), str(v.count), human(v.macs), human(v.flops), f"{100 * v.flops / total:.1f}%"]
                for k, v in report.by_op_type.items()]
        out += ["", "**By op type**", ""] + md_table(["op type", "count", "MACs", "FLOPs", "share"], rows,
                                                      [False, True, True, True, True])

    if report.bundle is not None:
        rows = [[md_text(c) for c in row] for row in section_rows(report)]
        out += ["", "**LiteRT-LM bundle**", ""] + md_table(BUNDLE_HEADERS, rows, BUNDLE_RIGHT)
        out += [""] + [f"- {md_text(line)}" for line in bundle_lines(report)]

    if report.signatures:
        sig_headers, sig_right = signature_headers(report)
        rows = [[md_text(c) for c in row] for row in signature_rows(report)]
        out += ["", "**Signatures (per call)**", ""] + md_table(sig_headers, rows, sig_right)
        out += [""] + [f"- {md_text(line)}" for line in signature_lines(report)]

    tops = [o for o in report.top_ops(top) if o.flops]
    if tops:
        columns = columns_for("md", report, tops)
        rows = [[f"{o.subgraph}:{o.index}", md_text(o.op_type), md_text(clip(o.name, 48)),
                 _shape(o.outputs[0]) if o.outputs else "", md_text(o.precision)]
                + [c.short_text(o, report) if c.right else md_text(c.short_text(o, report)) for c in columns]
                for o in tops]
        headers = ["op", "type", "output", "shape", "prec"] + [c.label for c in columns]
        out += ["", f"**Top {len(tops)} ops by FLOPs**", ""] + md_table(
            headers, rows, [False] * 5 + [c.right for c in columns])

    not_counted = not_counted_line(report, md_text)
    if not_counted:
        out += ["", f"> **Not counted:** {not_counted}"]
    opaque = opaque_line(report)
    if opaque:
        out += ["", f"> **Opaque:** {md_text(opaque)}"]
    if report.warnings:
        out += ["", "<details><summary>Warnings</summary>", ""] + [f"- {md_text(w)}" for w in report.warnings] + \
               ["", "</details>"]
    for note in report.notes:
        out += ["", f"*Note:* {md_text(note)}"]
    return "\n".join(out) + "\n"
