"""The predicted latency (``analyze --predict``) as every text renderer shows it: summary lines, and the ops
with the longest predicted times, next to their measured times when ``--latency`` / ``--per-op`` ran.

The wording of the prediction's confidence and provenance flags (docs/predict.md, "Confidence") lives here
once: :func:`flag_lines` (a sentence per flag), :func:`flags_short` (the compact form of sweep, batch and
compare rows), :func:`range_label` ("80% range")."""

from __future__ import annotations

from typing import Any, Sequence

from ..report import OpRecord, Prediction, Report, error_pct
from ..report.columns import column
from ..report.prediction import (BUSY_SHARE, DOMAIN_FACTOR, DOMAINS_UNKNOWN, FOREIGN_PROFILE, NO_CACHES, NO_TARGET,
                                 PARTIAL, QUICK_PROFILE, STAND_IN_LAWS, WHOLE_MODEL_FIT)
from ..units import printable
from .text import clip

_FLAG_SHORT = {PARTIAL: "partial", QUICK_PROFILE: "quick profile", STAND_IN_LAWS: "stand-in laws",
               FOREIGN_PROFILE: "foreign profile (--force)",
               DOMAINS_UNKNOWN: "domains unknown", NO_TARGET: "no CPU target", NO_CACHES: "no cache sizes",
               WHOLE_MODEL_FIT: "fitted from whole models"}


def range_label(p: Any) -> str:
    """"80% range" (the profile's nominal rate), or "range" when the profile did not record it."""
    rate = p.profile.range_rate if isinstance(p, Prediction) else p
    return "range" if rate is None else f"{100 * rate:.0f}% range"


def flag_lines(p: Prediction, skip: Sequence[str] = ()) -> list[str]:
    """One sentence per provenance flag of the prediction (``Prediction.flags``) but ``skip``, in its order."""
    missing = sum(p.ops_not_predicted.values())
    text = {PARTIAL: printable(f"partial: {missing} op(s) not predicted, left out of the figures (which understate "
                               f"the time): {', '.join(f'{k} ×{v}' for k, v in p.ops_not_predicted.items())}"),
            QUICK_PROFILE: "quick profile (calibrate --quick): fitted on half the suite's shapes, expect errors "
                           "beyond its range; calibrate without --quick to rely on it",
            STAND_IN_LAWS: f"stand-in laws: {p.ops_fallback} op(s) predicted by the law of another op type, "
                           "precision or placement",
            FOREIGN_PROFILE: f"foreign profile (--force): {p.forced}",
            DOMAINS_UNKNOWN: "profile without fitted domains (an older calibration): ops beyond the shapes their "
                             "law was fitted on cannot be flagged",
            NO_TARGET: "profile without a CPU target: its laws see the default tiles, and the placement and memory "
                       "figures are this CPU's, not the device's",
            NO_CACHES: "profile without cache sizes: the cost of weights past the caches is left out (0), not known",
            WHOLE_MODEL_FIT: "profile fitted from whole-model times (calibrate --from-results): the model's time is "
                             "the device's, scaled per op class; the split between ops is the base machine's"}
    return [f"! {text.get(flag, flag)}" for flag in p.flags if flag not in skip]


def flags_short(flags: Sequence[str]) -> str:
    """Flags (``Prediction.flags``) in a few words ("quick profile; stand-in laws"), '' when none."""
    return "; ".join(_FLAG_SHORT.get(f, f) for f in flags)


def confidence_line(p: Prediction) -> str:
    """How much of the predicted time rests on low-confidence ops."""
    beyond = f"beyond {DOMAIN_FACTOR:g}x its law's fitted domain"
    if not p.low_confidence_ops:
        if DOMAINS_UNKNOWN in p.flags:
            return "confidence: no op predicted by a stand-in law (the profile has no domains to check the others)"
        return f"confidence: no op predicted by a stand-in law or {beyond}"
    return (f"low confidence: {100 * p.low_confidence_share:.0f}% of the predicted time ({p.low_confidence_ms:.3f} ms) "
            f"rests on {p.low_confidence_ops} low-confidence op(s) (a stand-in law, or {beyond})")


def confidence_short(p: Prediction | None) -> str:
    """The low-confidence share in a few words ("38% low-confidence"), '' without a prediction."""
    return "" if p is None else f"{100 * p.low_confidence_share:.0f}% low-confidence"


HEADERS = ["op", "type", "output", "predicted ms", "share", "confidence"]
MEASURED_HEADERS = ["measured ms", "error"]
_MADE = {"calibrate": "calibrated", "import": "imported from device profiles",
         "results": "fitted from whole-model times"}
_SUITE = {"full": "full suite", "quick": "quick suite", "import": "imported pack", "results": "whole models",
          "": "suite not recorded"}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def prediction_lines(report: Report) -> list[str]:
    """What the prediction is, what it is made of, which profile it stands for, and how it compares with
    the measured median when the model was timed."""
    p = report.prediction
    if p is None:
        return []
    pr = p.profile
    missing = sum(p.ops_not_predicted.values())
    partial = "" if p.complete else f", PARTIAL: {missing} op(s) not predicted"
    out = [f"predicted {p.latency_ms:.3f} ms per inference ({range_label(p)} {p.low_ms:.3f} – {p.high_ms:.3f} ms)"
           + partial,
           f"ops {p.ops_ms:.3f} ms + overheads {p.overhead_ms:.3f} ms (per invoke, and {p.partitions} "
           f"partition run(s)); {p.ops_predicted} op(s) predicted, {p.ops_fused} fused into a neighbour, "
           f"{p.ops_fallback} by a stand-in law",
           printable(f"profile: {pr.cpu} ({pr.cores} cores), {pr.runtime} {pr.runtime_version}, {pr.threads} "
                     f"thread(s), XNNPACK {'on' if pr.xnnpack else 'off'}; {_MADE.get(pr.source, 'made')} "
                     f"{pr.created}".rstrip() + f" ({_SUITE.get(pr.suite, pr.suite)})"),
           confidence_line(p), *flag_lines(p, skip=(PARTIAL,))]  # the PARTIAL line below says more
    lat = report.latency
    if lat is not None and lat.median_ms is not None:
        out.append(f"measured median {lat.median_ms:.3f} ms: prediction {_pct(error_pct(p.latency_ms, lat.median_ms))}")
    if not p.complete:
        listing = ", ".join(f"{k} ×{v}" for k, v in p.ops_not_predicted.items())
        share = missing / (missing + p.ops_predicted) if missing + p.ops_predicted else 1.0
        out.append(printable(f"PARTIAL: {missing} of {missing + p.ops_predicted} op(s) ({100 * share:.0f}%) not "
                             f"predicted, left out of the figures (which understate the time): {listing}"))
    out.extend(drift_lines(p))
    return out


def drift_lines(p: Any) -> list[str]:
    """The cache part of a prediction (a :class:`~tflite_flops.report.Prediction`) and its drift check, a line
    each (none when they do not apply)."""
    out = []
    if p.cache_ms:
        out.append(f"of which {p.cache_ms:.3f} ms is the whole model's cache cost (weights, inputs and op state "
                   "last touched long before)")
    d = p.drift
    if d:
        if d.get("applied") and all(d.get(k) is not None for k in ("factor", "reference_ms_then", "reference_ms_now")):
            out.append(f"drift: ×{d['factor']:.3f} applied (reference {d['reference_ms_then']:.3f} ms at "
                       f"calibration, {d['reference_ms_now']:.3f} ms now)")
        else:
            out.append(printable(f"drift: not applied ({d.get('why', '')})"))
        if d.get("cpu_share") is not None and d["cpu_share"] < BUSY_SHARE:
            out.append(f"drift: this process had {d['cpu_share']:.0%} of the CPU while timing the reference: other "
                       "processes compete for the cores, and a model longer than a scheduler slice will measure "
                       "slower than predicted")
    return out


def _ranked(report: Report, top: int) -> list[OpRecord]:
    ops = [o for o in report.ops if o.predicted_ms]
    return sorted(ops, key=lambda o: -(o.predicted_ms or 0.0))[:top]


def has_measured_ops(report: Report) -> bool:
    """Whether any op with a prediction was also timed (``--per-op``, or an imported op profile)."""
    return any(o.predicted_ms is not None and o.latency_ms is not None for o in report.ops)


def prediction_rows(report: Report, top: int = 10, width: int = 36) -> tuple[list[str], list[list[str]], list[bool]]:
    """(headers, rows, right-aligned) of the ``top`` ops by predicted time; with measured per-op times, the
    measured time and the prediction's error too. Cells are plain text (escape them for Markdown / HTML)."""
    if report.prediction is None:
        return [], [], []
    measured = has_measured_ops(report)
    whole = report.prediction.latency_ms or 1.0
    rows = []
    for o in _ranked(report, top):
        row = [f"{o.subgraph}:{o.index}", o.op_type, clip(o.name, width), f"{o.predicted_ms:.4f}",
               f"{100 * (o.predicted_ms or 0.0) / whole:.1f}%", _confidence_cell(o, report, width)]
        if measured:
            row += ["-" if o.latency_ms is None else f"{o.latency_ms:.4f}", _pct(error_pct(o.predicted_ms, o.latency_ms))]
        rows.append(row)
    headers = HEADERS + (MEASURED_HEADERS if measured else [])
    return headers, rows, [False, False, False, True, True, False] + [True] * (len(headers) - 6)


def _confidence_cell(o: OpRecord, report: Report, width: int) -> str:
    """"high", or "low: why" (the declared columns' values), clipped to ``width``."""
    level = column("prediction_confidence").cell_text(o, report) or "-"
    note = column("prediction_note").cell_text(o, report)
    return clip(f"{level}: {note}" if note else level, width)
