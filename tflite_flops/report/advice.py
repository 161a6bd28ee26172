"""Advice: one finding of the analysis turned into what to change, with the time at stake (pure data).

A report's ``advice`` (JSON key ``advice``, written only when there is some) lists :class:`Advice` items,
made by :mod:`tflite_flops.analysis.advice` (and, for a quantized model slower than its float twin, by
``compare``). Each item says:

* ``kind``: what was found (:data:`KINDS`);
* ``ops``: the ops concerned, as ``"subgraph:index"``;
* ``saving_ms``: the time the change would save per inference, or None when not known;
* ``saving_source``: ``"measured"`` (from ``--latency`` / ``--per-op``), ``"predicted"`` (from
  ``--predict``) or None;
* ``saving_share``: what the change is about as a share (0 to 1) of the model's figure ``share_of`` names
  (:data:`SHARE_OF`): the saving every item carries, known without a profile or a run (issue 45: "without
  ``--predict``, no item has a time or even a share of the MACs"); None only in a report of an earlier version
  and in ``compare``'s items, which always have a time;
* ``share_of``: the figure the share is of, a key of :data:`SHARE_OF`;
* ``text``: the advice as a person reads it, with the ops' ranges, counts and the saving (the time where known,
  else the share).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..units import printable

# the kinds of advice, each with what it is about
KINDS: dict[str, str] = {
    "static_shape": "ops kept off XNNPACK because their shapes are computed at run time: export with a static shape",
    "full_integer": "dynamic-range (hybrid) ops XNNPACK keeps off: quantize to full integer",
    "unsupported_op": "an op or dtype XNNPACK lacks: its nearest supported form",
    "partitions": "partitions that a static shape would merge",
    "zero_weights": "weights that are all zero: a broken quantization or a pruned layer",
    "degenerate_scale": "a quantization scale that is zero or denormal: the channel's output is lost",
    "gpu_rejected": "ops the GPU delegate rejects: they run on the CPU, with a copy at each boundary",
    "quantized_slower": "a quantized model slower than its float twin",
}
SOURCES = ("measured", "predicted")
# what an item's share is of: the model's figure the item is about (analysis/advice.py says which for each kind)
SHARE_OF: dict[str, str] = {
    "flops": "the model's FLOPs",
    "bytes_moved": "the model's bytes moved",
    "weight_bytes": "the model's weight bytes",
    "partitions": "XNNPACK's partitions",
}


@dataclass(frozen=True)
class Advice:
    """One item of advice (module docstring)."""

    kind: str
    ops: tuple[str, ...]
    saving_ms: float | None
    saving_source: str | None
    text: str
    saving_share: float | None = None
    share_of: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``kind``, ``ops``, ``saving_ms``, ``saving_source``, ``text``, ``saving_share``,
        ``share_of``."""
        return {"kind": self.kind, "ops": list(self.ops),
                "saving_ms": None if self.saving_ms is None else round(self.saving_ms, 4),
                "saving_source": self.saving_source, "text": self.text,
                "saving_share": None if self.saving_share is None else round(self.saving_share, 6),
                "share_of": self.share_of}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Advice":
        """Rebuild from :meth:`to_dict` output (a report of an earlier version has no share)."""
        return cls(str(d["kind"]), tuple(str(o) for o in d.get("ops") or ()), d.get("saving_ms"),
                   d.get("saving_source"), str(d.get("text", "")), d.get("saving_share"), d.get("share_of"))


def op_ranges(ops: "list[str] | tuple[str, ...]") -> str:
    """``"0:57–0:68, 0:70"``: consecutive op indices of one subgraph as a range, in order."""
    keys = sorted({tuple(map(int, o.split(":"))) for o in ops})
    runs: list[list[tuple[int, ...]]] = []
    for k in keys:
        if runs and runs[-1][-1][0] == k[0] and runs[-1][-1][1] + 1 == k[1]:
            runs[-1].append(k)
        else:
            runs.append([k])
    parts = [f"{r[0][0]}:{r[0][1]}" + (f"–{r[-1][0]}:{r[-1][1]}" if len(r) > 1 else "") for r in runs]
    return ", ".join(parts[:6]) + (f" … ({len(parts) - 6} more)" if len(parts) > 6 else "")


def two_digits(v: float) -> str:
    """``v`` (> 0, finite) with two significant digits and never an exponent, as a person writes it: ``0.0073``,
    ``0.39``, ``9.1``, ``13``, ``120``, ``1,200``."""
    digits = 1 - math.floor(math.log10(v))
    text = f"{round(v, digits):,.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def saving_text(saving_ms: float | None, source: str | None) -> str:
    """The time at stake as a person writes it (issue 45: "~-0.000386 ms", "~9.13e-06 ms"): two significant digits
    and never an exponent ("~0.39 ms predicted", "~9.1 ms", "~120 ms"), "< 0.001 ms" below that, "no time saved"
    for a change that saves nothing; ``""`` when not known."""
    if saving_ms is None or source is None:
        return ""
    if saving_ms <= 0:
        return f"no time saved ({source})"
    if saving_ms < 0.001:
        return f"< 0.001 ms {source}"
    return f"~{two_digits(saving_ms)} ms {source}"


def percent_text(share: float) -> str:
    """A share (0 to 1) as a person writes a percentage: two significant digits, never an exponent ("27%", "2.5%",
    "0.33%"), "< 0.01%" below that, "0%" for none, "> 99%" for almost all."""
    pct = 100 * share
    if pct <= 0:
        return "0%"
    if pct < 0.01:
        return "< 0.01%"
    text = f"{two_digits(pct)}%"
    return "> 99%" if text == "100%" and share < 1 else text


def share_text(share: float | None, share_of: str | None) -> str:
    """The share at stake as a person writes it ("6.9% of the model's bytes moved"); ``""`` when not known."""
    if share is None or share_of is None:
        return ""
    return f"{percent_text(share)} of {SHARE_OF.get(share_of, printable(str(share_of)))}"  # (a newer version's key)


_INTEGER = ("int8", "uint8", "int16", "int4")


def _quantized(report: Any) -> bool:
    """Most of the model's arithmetic is integer or hybrid (a quantized model)."""
    by = report.totals.by_precision
    total = sum(v.get("flops", 0) for v in by.values()) or 1
    quantized = sum(v.get("flops", 0) for p, v in by.items() if p.startswith(_INTEGER) or p == "hybrid")
    return quantized * 2 > total


def _time(report: Any) -> tuple[float | None, str | None]:
    """The report's latency: measured (median) when it has one, else predicted."""
    if report.latency is not None and report.latency.median_ms is not None:
        return report.latency.median_ms, "measured"
    if report.prediction is not None and report.prediction.complete:
        return report.prediction.latency_ms, "predicted"
    return None, None


def quantized_slower(a: Any, b: Any, label_a: str, label_b: str, lost_a: Sequence[Any],
                     lost_b: Sequence[Any]) -> Advice | None:
    """Advice when one of two reports is a quantized model slower than the other, its float twin (``compare``).

    ``lost_a`` / ``lost_b``: the ops of A / B that XNNPACK keeps off while it takes their twins on the other
    side; the quantized side's say what to change. None when neither is a quantized model slower than a float one, or the
    times are not both measured (or both predicted).
    """
    (ta, sa), (tb, sb) = _time(a), _time(b)
    if ta is None or tb is None or sa != sb:
        return None
    if _quantized(b) and not _quantized(a) and tb > ta:
        tq, tf, lq, lf, lost = tb, ta, label_b, label_a, lost_b
    elif _quantized(a) and not _quantized(b) and ta > tb:
        tq, tf, lq, lf, lost = ta, tb, label_a, label_b, lost_a
    else:
        return None
    refs = tuple(f"{o.subgraph}:{o.index}" for o in lost)
    kinds: dict[str, int] = {}
    for o in lost:
        kinds[o.op_type] = kinds.get(o.op_type, 0) + 1
    why = ""
    if lost:
        listing = ", ".join(f"{k} ×{n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:4])
        reasons = sorted({(o.xnnpack_reason or "").partition(": ")[0] for o in lost} - {""})
        why = (f"; {len(lost)} of its ops ({op_ranges(refs)}: {listing}) are kept off XNNPACK while their float "
               f"twins run on it{' (' + '; '.join(reasons) + ')' if reasons else ''}: keep those ops in float "
               "(a float fallback or a mixed-precision export), or pick the op XNNPACK runs quantized")
    text = (f"{lq} (quantized) is {tq / tf:.1f}× slower than its float twin {lf}: {tq:.3f} ms against {tf:.3f} ms "
            f"{sa} ({saving_text(tq - tf, sa)} at stake){why}; until then the float model is the faster choice")
    return Advice("quantized_slower", refs, tq - tf, sa, text)
