"""The "Bundle" section shared by the table, Markdown and HTML renderers: a LiteRT-LM bundle's
format version, sections (with ``--all-sections``, every model section's totals), metadata,
tokenizer, LLM metadata, and the LiteRT-LM engine's measurement or why there is none.

Cells and lines are plain text; each renderer escapes them for its format.
"""

from __future__ import annotations

from ..report import Report
from ..units import grouped, human, human_bytes

HEADERS = ["#", "section", "model type", "backend", "size", "ops", "MACs", "FLOPs", "params", "weights"]
RIGHT = [True, False, False, False, True, True, True, True, True, True]


def section_rows(report: Report) -> list[list[str]]:
    """One row per section of the bundle (``HEADERS``); '-' where a figure does not apply."""
    b = report.bundle
    if b is None:
        return []
    rows = []
    for s in b.sections:
        t = s.totals
        mark = " *" if s.analysed else ""
        figures = ([str(s.operators), human(t.macs), human(t.flops), human(t.params), human_bytes(t.param_bytes)]
                   if t is not None else ["-"] * 5)
        rows.append([str(s.index), s.kind + mark, (s.model_type or "-").removeprefix("tf_lite_"),
                     s.backend_constraint or "-", human_bytes(s.size_bytes), *figures])
    return rows


def bundle_lines(report: Report) -> list[str]:
    """Sentences about the bundle: what was analysed, tokenizer, LLM metadata, metadata, engine."""
    b = report.bundle
    if b is None:
        return []
    chosen = b.analysed
    lines = [f"LiteRT-LM bundle, format {b.version}, {human_bytes(b.size_bytes)} ({grouped(b.size_bytes)} bytes), "
             f"{len(b.sections)} section(s); analysed: section {chosen.index} "
             f"({(chosen.model_type or chosen.kind).removeprefix('tf_lite_')}, {human_bytes(chosen.size_bytes)}), "
             "marked *"]
    if b.external_weight_bytes:
        lines.append(f"weights externalised into TFLiteWeights section(s): {human_bytes(b.external_weight_bytes)} "
                     f"({grouped(b.external_weight_bytes)} bytes)")
    lines.append(f"tokenizer: {b.tokenizer or 'none'}")
    if b.llm is not None:
        llm = b.llm
        parts = [f"model type {llm.model_type or '-'}"]
        if llm.max_num_tokens is not None:
            parts.append(f"max {llm.max_num_tokens} tokens")
        if llm.start_token:
            parts.append(f"start token {llm.start_token}")
        if llm.stop_tokens:
            parts.append("stop tokens " + ", ".join(llm.stop_tokens))
        if llm.has_prompt_template:
            parts.append("prompt template")
        lines.append("LLM metadata: " + "; ".join(parts))
    else:
        lines.append("LLM metadata: none")
    for s in b.sections:
        if s.error:
            lines.append(f"section {s.index} not analysed: {s.error}")
    if b.system_metadata:
        lines.append("metadata: " + ", ".join(f"{k}={v}" for k, v in b.system_metadata.items()))
    e = b.engine
    if e is not None:
        if e.ran:
            decode = (f"decode {e.decode_tokens} tokens at {e.decode_tokens_per_s:,.1f} tokens/s, time to first token "
                      f"{1000 * e.time_to_first_token_s:.3f} ms" if e.decode_tokens_per_s is not None and
                      e.time_to_first_token_s is not None else "no decode")
            lines.append(f"LiteRT-LM engine ({e.backend}{', litert-lm-api ' + e.version if e.version else ''}): "
                         f"prefill {e.prefill_tokens} tokens at {e.prefill_tokens_per_s:,.1f} tokens/s, {decode}, "
                         f"init {1000 * (e.init_s or 0):.1f} ms (its own tokenizer, sampler and KV cache; the "
                         "signature figures below are the signature runner's)")
            if e.reason:
                lines.append(f"LiteRT-LM engine: {e.reason}")
        else:
            lines.append(f"LiteRT-LM engine did not run: {e.reason} (the signature runner's figures stand alone)")
    return lines


def bundle_html(report: Report) -> str:
    """The HTML section (empty when the report is not of a bundle)."""
    if report.bundle is None:
        return ""
    from .charts import esc

    num = ' class="n"'
    th = "".join(f"<th{num if r else ''}>{esc(h)}</th>" for h, r in zip(HEADERS, RIGHT))
    body = "".join("<tr>" + "".join(f"<td{num if r else ''}>{esc(c)}</td>" for c, r in zip(row, RIGHT))
                   + "</tr>" for row in section_rows(report))
    notes = "".join(f'<p class="muted">{esc(line)}</p>' for line in bundle_lines(report))
    return (f'<section id="bundle"><h2>LiteRT-LM bundle</h2><div class="scroll"><table>'
            f'<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>{notes}</section>')
