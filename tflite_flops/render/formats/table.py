"""Terminal table: model summary, totals by precision, by-op-type summary, top ops, uncounted ops."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from ...files import SUMMARY_HASH_MAX_BYTES
from ...report import summary
from ...report.completeness import latency_flag, partial_note
from ...report import Report
from ...report.columns import columns_for
from ...units import grouped, human, human_bytes, human_unit, precision_unit
from ..memory import class_guess, memory_caveat, memory_rows, memory_title, rss_line
from ...report.headline import target_class
from ..advice import TITLE as ADVICE_TITLE, advice_lines
from ..placement import placement_lines
from ..what_if import HEADERS as WHAT_IF_HEADERS, RIGHT as WHAT_IF_RIGHT, TITLE as WHAT_IF_TITLE, what_if_rows
from ..prediction import prediction_lines, prediction_rows
from ..opaque import not_counted_line, opaque_line
from ..text import clip, steadiness, text_table
from ..bundle import HEADERS as BUNDLE_HEADERS, RIGHT as BUNDLE_RIGHT, bundle_lines, section_rows
from ..signatures import signature_headers, signature_lines, signature_rows
from . import register_format

if TYPE_CHECKING:
    from ...report.measured import LatencyStats





def file_hash_text(size_bytes: int, sha256_of: Any, width: int) -> str:
    """``sha256 <first width hex digits>`` for a file the summaries hash, else why it is not shown.

    ``sha256_of`` is the ModelInfo (its ``sha256`` is read only when shown).
    """
    if size_bytes > SUMMARY_HASH_MAX_BYTES:
        return "sha256 not computed for a large file (in --format json / html)"
    return f"sha256 {sha256_of.sha256[:width]}"


def _latency_lines(report: Report, lat: LatencyStats) -> list[str]:
    """The measured latency: its setup, statistics, throughput, memory and flags, or why it was skipped."""
    out: list[str] = []
    if lat.skipped:
        out += ["", f"Latency skipped: {lat.skipped}"]
    if lat.median_ms is not None or lat.mean_ms is not None:  # a device's log may give the mean alone
        setup = [f"{lat.runtime} {lat.runtime_version or ''}".strip()]
        if lat.threads is not None:
            setup.append(f"{lat.threads} thread(s)")
        if lat.xnnpack is not None:
            setup.append(f"XNNPACK {'on' if lat.xnnpack else 'off'}")
        setup.append(f"{lat.runs} runs")
        out += ["", f"Latency ({', '.join(setup)})"]
        out.append("  " + "  ".join(f"{k.replace('_ms', '')} {getattr(lat, k):.3f} ms" for k in
                                     ("median_ms", "mean_ms", "p90_ms", "p99_ms", "min_ms")
                                     if getattr(lat, k) is not None))
        steady = steadiness(lat)
        if steady:
            out.append(f"  {steady}")
        tp = report.throughput
        if tp is not None and tp.to_dict():
            out.append(f"  {human_unit(tp.flops_per_s, 'FLOP/s')} · {human_unit(tp.macs_per_s, 'MAC/s')} · "
                       f"{tp.inferences_per_s or 0:.1f} inferences/s")
        rss = rss_line(lat, report.memory)
        if rss:
            out.append(f"  {rss}")
        flag = latency_flag(lat)
        if flag:
            out.append(f"  ! {flag}")
    if lat.per_op_skipped:
        out.append(f"  Per-op latency skipped: {lat.per_op_skipped}")
    return out


def _shape(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


FOLD_TENSORS_OVER = 8  # a model with more inputs (or outputs) than this has its alike ones folded into one line
FOLD_AT_LEAST = 3  # tensors of one dtype and shape folded together (a KV cache: two per layer)


def tensor_lines(tensors: Sequence[Any]) -> list[str]:
    """One ``name: DTYPE [shape]`` line per tensor; past :data:`FOLD_TENSORS_OVER` tensors, those of one dtype
    and shape (at least :data:`FOLD_AT_LEAST`) share one line, ``first, second … last (N): DTYPE [shape]``,
    at the place of the first (an LLM's KV-cache inputs: 48 lines become one; the JSON lists every one)."""
    def what(ts: Any) -> str:
        sig = f" (signature {_shape(ts.shape_signature)})" if ts.shape_signature and ts.shape_signature != ts.shape else ""
        return f"{ts.dtype} {_shape(ts.shape)}{sig}"

    if len(tensors) <= FOLD_TENSORS_OVER:
        return [f"{ts.name}: {what(ts)}" for ts in tensors]
    groups: dict[str, list[str]] = {}
    for ts in tensors:
        groups.setdefault(what(ts), []).append(ts.name)
    lines = []
    for kind, names in groups.items():
        if len(names) < FOLD_AT_LEAST:
            lines += [f"{n}: {kind}" for n in names]
        else:
            shown = ", ".join(names[:2]) + (f" … {names[-1]}" if len(names) > 2 else "")
            lines.append(f"{shown} ({len(names)}): {kind}")
    return lines


@register_format("table", (".txt",), order=10)
def render_table(report: Report, top: int = 10) -> str:
    """A human-readable summary for the terminal."""
    m, t = report.model, report.totals
    name = os.path.basename(m.path) if m.path else "<bytes>"
    out = [f"{report.tool['name']} {report.tool['version']} — {name}",
           f"  size {human_bytes(m.size_bytes)} · {m.subgraphs} subgraph(s) · {m.operators} op(s) · "
           f"{file_hash_text(m.size_bytes, m, 12)}…"]
    if m.description:
        out.append(f"  description: {m.description}")
    for label, tensors in (("input ", report.inputs), ("output", report.outputs)):
        out += [f"  {label} {line}" for line in tensor_lines(tensors)]

    out += ["", "Totals per inference"]
    rows = [["MACs", human(t.macs), grouped(t.macs)]]
    if t.effective_macs and t.effective_macs != t.macs:
        rows.append(["  effective (non-zero weights)", human(t.effective_macs), grouped(t.effective_macs)])
    rows.append(["FLOPs (all)", human(t.flops), grouped(t.flops)])
    for prec, v in sorted(t.by_precision.items(), key=lambda kv: -kv[1]["flops"]):
        rows.append([f"  {prec} {precision_unit(prec)}", human(v["flops"]), grouped(v["flops"])])
    rows += [["Params", human(t.params), f"{grouped(t.params)} ({human_bytes(t.param_bytes)})"],
             ["Bytes read", human_bytes(t.bytes_read), grouped(t.bytes_read)],
             ["Bytes written", human_bytes(t.bytes_written), grouped(t.bytes_written)]]
    out += ["  " + line for line in text_table(["", "value", "exact"], rows, [False, True, True])]
    partial = partial_note(report)
    if partial:
        out.append(f"  ! {partial.upper()[:14]}{partial[14:]}")
    it = report.init_totals
    if it.flops or it.bytes_written:
        out.append(f"  init-time (once, not per inference): {human(it.flops)} FLOPs, "
                   f"{human_bytes(it.bytes_written)} written")

    if report.memory is not None:
        target = target_class(report)[0]
        out += ["", memory_title(report)] + [f"  {line}" for line in (class_guess(report),) if line]
        out += ["  " + line for line in text_table(["", "value", "exact"], memory_rows(report.memory, target),
                                               [False, True, False])]
        out.append(f"  ({memory_caveat(report.memory, target)})")

    where = placement_lines(report)
    if where:
        out += ["", "Where it runs"] + ["  " + line for line in where]
    if report.advice:
        out += ["", ADVICE_TITLE] + ["  " + line for line in advice_lines(report.advice, summary.model_ms(report))]
    if report.what_if:
        out += ["", WHAT_IF_TITLE] + ["  " + line for line in text_table(WHAT_IF_HEADERS, what_if_rows(report.what_if),
                                                                         WHAT_IF_RIGHT)]

    if report.by_op_type:
        out += ["", "By op type (per inference)"]
        total = t.flops or 1
        rows = [[k, str(v.count), "+".join(v.by_precision) or "-", human(v.macs), human(v.flops),
                 f"{100 * v.flops / total:.1f}%"] for k, v in report.by_op_type.items()]
        out += ["  " + line for line in text_table(["op type", "count", "precision", "MACs", "FLOPs", "share"], rows,
                                               [False, True, False, True, True, True])]

    if report.bundle is not None:
        out += ["", "LiteRT-LM bundle"]
        out += ["  " + line for line in text_table(BUNDLE_HEADERS, section_rows(report), BUNDLE_RIGHT)]
        out += [f"  {line}" for line in bundle_lines(report)]

    if report.signatures:
        out += ["", "Signatures (per call)"]
        sig_headers, sig_right = signature_headers(report)
        out += ["  " + line for line in text_table(sig_headers, signature_rows(report), sig_right)]
        out += [f"  {line}" for line in signature_lines(report)]

    tops = [o for o in report.top_ops(top) if o.flops]
    if tops:
        out += ["", f"Top {len(tops)} ops by FLOPs"]
        columns = columns_for("table", report, tops)
        rows = [[f"{o.subgraph}:{o.index}", o.op_type, clip(o.name, 40), _shape(o.outputs[0]) if o.outputs else "",
                 o.precision] + [c.short_text(o, report) for c in columns] for o in tops]
        out += ["  " + line for line in text_table(["op", "type", "output", "shape", "prec"] + [c.label for c in columns],
                                               rows, [False] * 5 + [c.right for c in columns])]

    lat = report.latency  # None: not timed
    if lat is not None:
        out += _latency_lines(report, lat)

    if report.prediction is not None:
        out += ["", "Predicted latency"] + [f"  {line}" for line in prediction_lines(report)]
        headers, rows, right = prediction_rows(report, top)
        if rows:
            out += ["  slowest predicted:"] + ["    " + line for line in text_table(headers, rows, right)]

    timed = [o for o in report.ops if o.latency_ms]
    if timed and lat is not None:  # per-op times come with the whole model's
        if lat.source:
            out += ["", f"Per-op latency from {lat.source}: sum {lat.per_op_sum_ms or 0:.3f} ms over "
                        f"{len(timed)} joined op(s) ({lat.profile_rows or 0} profile rows)"]
        else:
            out += ["", f"Per-op latency (each op isolated): sum {lat.per_op_sum_ms or 0:.3f} ms over "
                        f"{len(timed)} op(s) vs whole model {lat.median_ms or 0:.3f} ms"]
        if lat.per_op_note:
            out.append(f"  ({lat.per_op_note})")
        for title, ranked in (("slowest", sorted(timed, key=lambda o: -(o.latency_ms or 0))),
                              ("least efficient (FLOPs per ms)",
                               sorted([o for o in timed if o.flops], key=lambda o: o.achieved_flops_per_s))):
            rows = [[f"{o.subgraph}:{o.index}", o.op_type, clip(o.name, 36), f"{o.latency_ms:.4f}",
                     human(o.flops), human_unit(o.achieved_flops_per_s, 'FLOP/s')] for o in ranked[:5]]
            if rows:
                out += [f"  {title}:"] + ["    " + line for line in text_table(
                    ["op", "type", "output", "ms", "FLOPs", "achieved"], rows, [False, False, False, True, True, True])]

    if report.roofline is not None:
        rl = report.roofline
        out += ["", f"Roofline ({rl.runtime}, {rl.threads} thread(s)): peak "
                    f"{human_unit(rl.peak_flops_per_s, 'FLOP/s')}, {human_bytes(int(rl.peak_bytes_per_s))}/s, "
                    f"ridge at {rl.ridge_intensity:.2f} FLOP/byte"]
        ranked = sorted(rl.ops, key=lambda r: -(r.roof_flops_per_s if r.achieved_flops_per_s is None
                                                else r.achieved_flops_per_s))[:top]
        n_all, n_shown = len(rl.ops), len(ranked)
        header = f"  {rl.counts.compute} compute-bound op(s), {rl.counts.memory} memory-bound, of {n_all}"
        if n_shown < n_all:  # say what the shorter table holds, so that its rows add up
            header += (f"; the {n_shown} fastest below ({sum(r.bound == 'compute' for r in ranked)} compute, "
                       f"{sum(r.bound == 'memory' for r in ranked)} memory)")
        out.append(header)
        rows = [[f"{r.subgraph}:{r.index}", r.op_type, f"{r.intensity:.2f}", r.bound,
                 f"{human_unit(r.roof_flops_per_s, 'FLOP/s')}",
                 "-" if r.achieved_flops_per_s is None else f"{human_unit(r.achieved_flops_per_s, 'FLOP/s')}",
                 "-" if r.fraction_of_roof is None else
                 f"{100 * r.fraction_of_roof:.1f}%{'*' if r.above_roof else ''}"] for r in ranked]
        out += ["  " + line for line in text_table(["op", "type", "FLOP/B", "bound", "roof", "achieved", "of roof"],
                                               rows, [False, False, True, False, True, True, True])]
        if rl.above_roof:
            out.append(f"  * {rl.above_roof} op(s) {rl.above_roof_note or 'above 100% of roof'}")

    not_counted = not_counted_line(report)
    if not_counted:
        out += ["", f"Not counted: {not_counted}"]
    opaque = opaque_line(report)
    if opaque:
        out += ["", f"Opaque: {opaque}"]
    if report.warnings:
        out += ["", "Warnings"] + [f"  ! {w}" for w in report.warnings]
    if report.notes:
        out += ["", "Notes"] + [f"  {n}" for n in report.notes]
    return "\n".join(out) + "\n"

