"""The "Signatures" section shared by the table, Markdown and HTML renderers (all signatures in
one report; token figures of prefill/decode signatures; measured tokens/s and time to first token).

Cells are plain text; each renderer escapes them for its format.
"""

from __future__ import annotations

from typing import Any

from ..report import Report, error_pct
from ..units import human, human_bytes
from .prediction import confidence_short, flags_short, range_label

HEADERS = ["signature", "role", "tokens", "ops", "MACs", "FLOPs", "by precision", "params", "weights", "arena",
           "MACs/token", "FLOPs/token", "weight B/token", "KV cache", "KV len", "bytes/token", "median ms", "tokens/s",
           "memory-bound tokens/s"]
RIGHT = [False, False] + [True] * 4 + [False] + [True] * 13
# with --predict: the predicted call time and tokens/s, and with --latency too, the error against the median
PREDICTED = ["predicted ms", "predicted tokens/s"]
ERROR = ["error"]


def _predicted(report: Report) -> bool:
    return any(s.prediction is not None for s in report.signatures.values())


def _timed(report: Report) -> bool:
    return any(s.latency is not None and s.latency.median_ms is not None for s in report.signatures.values())


def signature_headers(report: Report) -> tuple[list[str], list[bool]]:
    """(headers, right-aligned) of :func:`signature_rows`: the predicted columns only when predicted."""
    if not _predicted(report):
        return HEADERS, RIGHT
    extra = PREDICTED + (ERROR if _timed(report) else [])
    return HEADERS + extra, RIGHT + [True] * len(extra)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def _prediction_cells(s, timed: bool) -> list[str]:
    p, tok = s.prediction, s.tokens
    if p is None:
        return ["-"] * (len(PREDICTED) + (len(ERROR) if timed else 0))
    cells = [f"{p.latency_ms:.3f}" + ("" if p.complete else "*"),
             f"{tok.predicted_tokens_per_s:,.1f}" if tok and tok.predicted_tokens_per_s is not None else "-"]
    if timed:
        cells.append(_pct(error_pct(p.latency_ms, s.latency.median_ms if s.latency is not None else None)))
    return cells


def signature_rows(report: Report) -> list[list[str]]:
    """One row of cells per signature (:func:`signature_headers`); '-' where a figure does not apply."""
    rows = []
    predicted, timed = _predicted(report), _timed(report)
    for key, s in report.signatures.items():
        t, tok = s.totals, s.tokens
        split = " + ".join(f"{prec} {human(v['flops'])}" for prec, v in
                           sorted(t.by_precision.items(), key=lambda kv: -kv[1]["flops"])) or "-"
        median = s.latency.median_ms if s.latency is not None else None
        rows.append([
            key, tok.role if tok else "-", str(tok.tokens) if tok else "-", str(s.operators), human(t.macs),
            human(t.flops), split, human(t.params), human_bytes(t.param_bytes),
            human_bytes(s.memory.arena_bytes) if s.memory is not None else "-",
            human(tok.macs_per_token) if tok else "-", human(tok.flops_per_token) if tok else "-",
            human_bytes(tok.weight_bytes_per_token) if tok else "-", human_bytes(tok.kv_cache_bytes) if tok else "-",
            str(tok.kv_length) if tok and tok.kv_length is not None else "-",
            human_bytes(tok.bytes_per_token) if tok else "-",
            f"{median:.3f}" if median is not None else "-",
            f"{tok.tokens_per_s:,.1f}" if tok and tok.tokens_per_s is not None else "-",
            f"{tok.roofline_tokens_per_s:,.0f}" if tok and tok.roofline_tokens_per_s is not None else "-"]
            + (_prediction_cells(s, timed) if predicted else []))
    return rows


def signature_lines(report: Report) -> list[str]:
    """Sentences under the table: the shared weights, time to first token, the token rates."""
    if not report.signatures:
        return []
    t = report.totals
    lines = [f"{len(report.signatures)} signature(s); weights over all signatures, each shared weight once: "
             f"{human(t.params)} params ({human_bytes(t.param_bytes)})"]
    for key, s in report.signatures.items():
        tok = s.tokens
        if tok is None:
            continue
        bound = ""
        if tok.roofline_tokens_per_s is not None:
            bound = (f"; memory-bound limit {tok.roofline_tokens_per_s:,.0f} tokens/s "
                     f"({human_bytes(tok.bytes_per_token)} per token at the measured bandwidth)")
        if tok.tokens_per_s is None:
            if bound:
                lines.append(f"{tok.role} '{key}'{bound[1:]}")
        elif tok.role == "prefill" and tok.time_to_first_token_ms is not None:
            lines.append(f"prefill '{key}' ({tok.tokens} tokens): {tok.tokens_per_s:,.1f} tokens/s, time to first "
                         f"token {tok.time_to_first_token_ms:.3f} ms{bound}{_split(tok)}")
        elif tok.role == "decode":
            per = "" if tok.latency_ms is None else f" ({tok.latency_ms:.3f} ms per token)"  # (a saved report)
            lines.append(f"decode '{key}': {tok.tokens_per_s:,.1f} tokens/s{per}{bound}{_split(tok)}")
    return lines + [line for key, s in report.signatures.items() for line in _prediction_line(key, s)]


def _prediction_line(key: str, s) -> list[str]:
    """The predicted counterpart of a prefill / decode line (or the call time of another signature), with
    the range, a partial prediction said, and the error against the measured median when timed."""
    p, tok = s.prediction, s.tokens
    if p is None:
        return []
    span = f"({range_label(p)} {p.low_ms:.3f} – {p.high_ms:.3f} ms)"
    if (tok is not None and tok.predicted_tokens_per_s is not None and tok.role == "prefill"
            and tok.predicted_time_to_first_token_ms is not None):
        line = (f"predicted prefill '{key}' ({tok.tokens} tokens): {tok.predicted_tokens_per_s:,.1f} tokens/s, "
                f"time to first token {tok.predicted_time_to_first_token_ms:.3f} ms {span}")
    elif tok is not None and tok.predicted_tokens_per_s is not None:
        line = (f"predicted {tok.role} '{key}': {tok.predicted_tokens_per_s:,.1f} tokens/s "
                f"({p.latency_ms:.3f} ms per token, {range_label(p)} {p.low_ms:.3f} – {p.high_ms:.3f} ms)")
    else:
        line = f"predicted '{key}': {p.latency_ms:.3f} ms per call {span}"
    median = s.latency.median_ms if s.latency is not None else None
    if median is not None:
        line += f"; measured {median:.3f} ms: prediction {_pct(error_pct(p.latency_ms, median))}"
    if not p.complete:
        line += f"; PARTIAL: {sum(p.ops_not_predicted.values())} op(s) not predicted, left out"
    if p.low_confidence_ops:
        line += f"; {confidence_short(p)}"
    if p.flags:
        line += f"; ! {flags_short(p.flags)}"
    return [line]


def signatures_html(report: Report) -> str:
    """The HTML section (empty when the report has no signature summaries)."""
    if not report.signatures:
        return ""
    from .charts import esc

    num = ' class="n"'
    headers, right = signature_headers(report)
    th = "".join(f"<th{num if r else ''}>{esc(h)}</th>" for h, r in zip(headers, right))
    body = "".join("<tr>" + "".join(f"<td{num if r else ''}>{esc(c)}</td>" for c, r in zip(row, right))
                   + "</tr>" for row in signature_rows(report))
    notes = "".join(f'<p class="muted">{esc(line)}</p>' for line in signature_lines(report))
    return (f'<section id="signatures"><h2>Signatures (per call)</h2><div class="scroll"><table>'
            f'<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>{notes}</section>')


def _split(tok: Any) -> str:
    """A measured call split into the model's own time and the signature runner's copies ('' when not measured)."""
    if tok.model_latency_ms is None or tok.model_tokens_per_s is None or tok.latency_ms is None:
        return ""
    copies = max(tok.latency_ms - tok.model_latency_ms, 0.0)
    return (f"; the model alone {tok.model_tokens_per_s:,.1f} tokens/s ({tok.model_latency_ms:.3f} ms a call), "
            f"the runner's copies of the inputs and outputs {copies:.3f} ms")
