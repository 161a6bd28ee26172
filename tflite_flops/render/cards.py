"""The HTML report's header cards: the answers first, then the details (issue 45: "the page hides the answers").

The first row holds what a reader came for, each a declared summary figure (:mod:`tflite_flops.report.summary`,
read through :func:`~tflite_flops.report.summary.value`, so that a card reads the number every other output
reads): the memory headline (led, for an MCU model, by TFLite Micro's arena), the model's time (measured, else
predicted; a card that says how to get one when neither), the MACs, XNNPACK's partitions with the ops it keeps
off, and the change that saves the most (the first line of "What to change"). The second, smaller row holds the
other totals. Every string is escaped here; nothing is computed but the layout.
"""

from __future__ import annotations

from ..report import Report, summary
from ..report.headline import MCU, target_class
from ..units import grouped, human, human_bytes, human_unit
from .advice import ranked, saving_parts
from .charts import esc
from .text import steadiness

ADVICE_CARD = "What to change first"
_ADVICE_CHARS = 150  # the top item's text on its card: the rest is in the advice section (and the card's title)


def card(label: str, value: str, extra: str = "", css: str = "") -> str:
    """One summary card (arguments are plain text; escaped here)."""
    return (f'<div class="card{" " + css if css else ""}"><div class="k">{esc(label)}</div><div class="v">'
            f'{esc(value)}</div><div class="x">{esc(extra)}</div></div>')


def _figure(key: str, report: Report, extra: str = "") -> str:
    """The card of the declared figure ``key`` (its label and text), '' when the report has none."""
    f = summary.BY_KEY[key]
    v = summary.value(report, key)
    return "" if v is None else card(f.label, f.text(v), extra)


def _ms(v: float) -> str:
    return f"{v:.3g} ms" if v < 1 else f"{v:.1f} ms"


def _memory_cards(report: Report) -> list[str]:
    out = []
    if target_class(report)[0] == MCU:  # the runtime the memory section leads with
        arena = summary.value(report, "tflm_arena_size_bytes")
        if arena is not None:
            out.append(_figure("tflm_arena_size_bytes", report, f"{grouped(int(arena))} · give MicroInterpreter this"))
    memory = summary.value(report, "runtime_total_bytes")
    if memory is not None:
        out.append(card(summary.MEMORY.label, summary.MEMORY.text(memory),
                        f"{summary.MEMORY.exact(memory)} · arena + XNNPACK + weights mapped"))
    return out


def _time_card(report: Report) -> list[str]:
    """The measured time (the median, or a device log's mean), else the predicted one, else how to get either."""
    lat, p = report.latency, report.prediction
    if lat is not None and lat.median_ms is not None:
        p90 = "?" if lat.p90_ms is None else f"{lat.p90_ms:.3f}"
        steady = steadiness(lat)
        return [card(summary.BY_KEY["latency_median_ms"].label, _ms(lat.median_ms),
                     f"p90 {p90} ms · {'?' if lat.threads is None else lat.threads} thread(s)"
                     + (f" · {steady}" if steady else "") + (" · NOISY" if lat.noisy else ""))]
    if lat is not None and lat.mean_ms is not None:  # a device's log that gives the mean alone
        return [card("Measured latency (mean)", _ms(lat.mean_ms), lat.runtime or "")]
    if p is not None and p.latency_ms is not None:
        return [_figure("predicted_ms", report, f"range {p.low_ms:.3f}-{p.high_ms:.3f} ms"
                        + ("" if p.complete else " · partial"))]
    return ['<div class="card muted-card"><div class="k">Latency</div><div class="v">not timed</div><div class="x">'
            '<code>--latency</code> times it here, <code>--predict PROFILE</code> on a device</div></div>']


def _advice_card(report: Report) -> list[str]:
    """The change that saves the most, with its saving; a card that says there is none otherwise."""
    shown, folded = ranked(report.advice, summary.model_ms(report))
    if not shown:
        said = (f"{len(folded)} small change{'s' if len(folded) != 1 else ''}, each under 1%: see What to change"
                if folded else "the analysis found no op kept off a delegate and no broken weight")
        return [card(ADVICE_CARD, "nothing to change" if not folded else "little to gain", said, "wide muted-card")]
    top = shown[0]
    value, what = saving_parts(top)
    text = top.text if len(top.text) <= _ADVICE_CHARS else top.text[:_ADVICE_CHARS - 1].rstrip() + "…"
    more = f" · {len(shown) - 1 + len(folded)} more" if len(shown) + len(folded) > 1 else ""
    return [f'<a class="card wide advice-card" href="#advice" title="{esc(top.text)}"><div class="k">'
            f'{esc(ADVICE_CARD)}{esc(more)}</div><div class="v">{esc(value or "?")} <span class="u">{esc(what)}'
            f'</span></div><div class="x">[{esc(top.kind)}] {esc(text)}</div></a>']


def _placement_card(report: Report) -> list[str]:
    parts = summary.value(report, "xnnpack_partitions")
    if parts is None:
        return []
    kept = summary.value(report, "xnnpack_kept_ops") or 0
    f = summary.BY_KEY["xnnpack_kept_ops"]
    return [card(summary.BY_KEY["xnnpack_partitions"].label, str(parts), f"{f.label}: {kept}")]


def _detail_cards(report: Report) -> list[str]:
    t = report.totals
    out = [card("FLOPs", human(t.flops), grouped(t.flops)),
           card("Params", human(t.params), f"{grouped(t.params)} · {human_bytes(t.param_bytes)}"),
           card("Bytes read", human_bytes(t.bytes_read), grouped(t.bytes_read)),
           card("Bytes written", human_bytes(t.bytes_written), grouped(t.bytes_written))]
    measured = report.latency is not None and (report.latency.median_ms is not None or report.latency.mean_ms
                                               is not None)
    p = report.prediction
    if measured and p is not None and p.latency_ms is not None:  # the time card holds the measured one
        out.append(_figure("predicted_ms", report, f"range {p.low_ms:.3f}-{p.high_ms:.3f} ms"))
    tp = report.throughput
    if tp is not None and tp.flops_per_s is not None:
        out.append(card("Throughput", f"{human_unit(tp.flops_per_s, 'FLOP/s')}",
                        f"{tp.inferences_per_s or 0:.1f} inferences/s"))
    n_unsup = sum(report.unsupported.values())
    out.append(card("Ops not counted", str(n_unsup), "every op has a formula" if not n_unsup else
                    f"{len(report.unsupported)} type(s)"))
    return out


def cards_html(report: Report) -> str:
    """The cards section: a row of answers (memory, time, MACs, partitions, the top change), a row of details."""
    answers = (_memory_cards(report) + _time_card(report) + [_figure("macs", report, grouped(report.totals.macs))]
               + _placement_card(report) + _advice_card(report))
    return (f'<section id="totals" class="cards-section"><div class="cards answers">{"".join(answers)}</div>'
            f'<div class="cards details">{"".join(_detail_cards(report))}</div></section>')
