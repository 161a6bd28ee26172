"""Compare two reports: totals, by-op-type deltas and ops matched by type and position.

Typical pairs: a float model against its int8 conversion, or a model before and after a
change. Ops are matched with :class:`difflib.SequenceMatcher` over the op-type sequences of
the per-inference ops: runs of equal types pair up one to one ("same"); a replaced run pairs
ops by position ("changed"); the rest is "only_a" / "only_b" (an int8 model's QUANTIZE at the
input, for example). Deltas are B − A; ratios are B / A.

The renderers (table, json, csv, md, html) are in :mod:`tflite_flops.render.compare`.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Any, Sequence

from ..ops.placement import DELEGATES, delegate_display
from . import OpRecord, Report
from .advice import Advice, quantized_slower
from .what_if import WhatIf
from . import summary
from .headline import runtime_total
from .columns import ALWAYS, OP_COLUMNS, reason, taken, total_columns
from .columns import totals as column_totals

MATCHES = ("same", "changed", "only_a", "only_b")


@dataclass(frozen=True)
class MetricDelta:
    """One total in A and B."""

    key: str
    label: str
    a: int | float | None
    b: int | float | None
    kind: str = "count"  # count | bytes | ms | rate

    @property
    def delta(self) -> int | float | None:
        """B − A (None when either side is missing)."""
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def ratio(self) -> float | None:
        """B / A (None when A is 0 or missing, or the ratio is past a float's range)."""
        return ratio(self.b, self.a)


def ratio(b: int | float | None, a: int | float | None) -> float | None:
    """``b / a``; None when ``a`` is 0 or either is missing, or the quotient is past a float's range (counts are ints
    of any size: 10**373 / 3 is no float)."""
    if not a or b is None:
        return None
    try:
        return b / a
    except OverflowError:
        return None


@dataclass(frozen=True)
class TypeDelta:
    """One op type in A and B (per-inference ops)."""

    op_type: str
    count_a: int
    count_b: int
    macs_a: int
    macs_b: int
    flops_a: int
    flops_b: int


@dataclass(frozen=True)
class OpPair:
    """Two matched ops, or an op present on one side only."""

    match: str  # same | changed | only_a | only_b
    a: OpRecord | None
    b: OpRecord | None


@dataclass(frozen=True)
class PlacementChange:
    """A matched op that one delegate takes on one side and keeps off on the other."""

    delegate: str  # "xnnpack" | "gpu"
    a: OpRecord
    b: OpRecord

    @property
    def lost(self) -> bool:
        """Taken in A, kept off in B (e.g. the ops a float model loses from XNNPACK when quantized)."""
        return bool(taken(self.a, self.delegate)) and not taken(self.b, self.delegate)


@dataclass(frozen=True)
class Comparison:
    """Everything ``compare`` shows."""

    label_a: str
    label_b: str
    a: Report
    b: Report
    totals: tuple[MetricDelta, ...]
    by_type: tuple[TypeDelta, ...]
    ops: tuple[OpPair, ...]
    placement: tuple[PlacementChange, ...] = ()
    advice: tuple[Advice, ...] = ()  # a quantized model slower than its float twin (report/advice.py)
    # B a conversion of float A: (A's what-if row in B's precision, B's own row), studies/what_if.py
    what_if: tuple[WhatIf, WhatIf] | None = None

    def match_counts(self) -> dict[str, int]:
        """How many pairs of each kind."""
        return {m: sum(1 for p in self.ops if p.match == m) for m in MATCHES}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (counts stay ints)."""
        def op(o: OpRecord | None, report: Report) -> dict[str, Any] | None:
            if o is None:
                return None
            out = {"subgraph": o.subgraph, "index": o.index, "op_type": o.op_type, "name": o.name,
                   "outputs": [list(s) for s in o.outputs], "precision": o.precision}
            for c in figures:  # the declared per-op columns compare shows; a predicted one only when predicted
                value = c.read(o, report)
                if value is not None or c.outputs["compare"] is ALWAYS:
                    out[c.name] = value
            return out

        figures = [c for c in OP_COLUMNS if "compare" in c.outputs]

        def side(label: str, r: Report) -> dict[str, Any]:
            side_out = {"label": label, "path": r.model.path, "sha256": r.model.sha256}
            if r.prediction is not None:  # what the prediction rests on (docs/predict.md, "Confidence")
                side_out["prediction_flags"] = list(r.prediction.flags)
            return side_out

        out = {
            "a": side(self.label_a, self.a),
            "b": side(self.label_b, self.b),
            "totals": {m.key: {"a": m.a, "b": m.b, "delta": m.delta, "ratio": m.ratio} for m in self.totals},
            "by_op_type": {t.op_type: {"count": [t.count_a, t.count_b], "macs": [t.macs_a, t.macs_b],
                                       "flops": [t.flops_a, t.flops_b], "flops_delta": t.flops_b - t.flops_a}
                           for t in self.by_type},
            "matches": self.match_counts(),
            "ops": [{"match": p.match, "a": op(p.a, self.a), "b": op(p.b, self.b)} for p in self.ops],
            "placement_changes": [{"delegate": c.delegate, "change": "lost" if c.lost else "gained",
                                   "a": op(c.a, self.a), "b": op(c.b, self.b), "a_reason": reason(c.a, c.delegate),
                                   "b_reason": reason(c.b, c.delegate)} for c in self.placement],
        }
        if self.advice:  # only when there is some: the comparisons without any are unchanged
            out["advice"] = [a.to_dict() for a in self.advice]
        if self.what_if is not None:  # only when B is a conversion of A the what-if predicts
            out["what_if"] = {"a_predicted": self.what_if[0].to_dict(), "b": self.what_if[1].to_dict()}
        return out


def _label(report: Report, fallback: str) -> str:
    return os.path.basename(report.model.path) if report.model.path else fallback


def _inference(report: Report) -> list[OpRecord]:
    return [o for o in report.ops if o.phase == "inference"]


def _totals(a: Report, b: Report) -> list[MetricDelta]:
    ta, tb = a.totals, b.totals
    rows = [MetricDelta("macs", "MACs", ta.macs, tb.macs), MetricDelta("flops", "FLOPs (all)", ta.flops, tb.flops)]
    precs = list(dict.fromkeys([*ta.by_precision, *tb.by_precision]))
    precs.sort(key=lambda p: -max(ta.by_precision.get(p, {}).get("flops", 0),
                                  tb.by_precision.get(p, {}).get("flops", 0)))
    for p in precs:
        rows.append(MetricDelta(f"flops.{p}", f"  {p} FLOPs/OPs", ta.by_precision.get(p, {}).get("flops", 0),
                                tb.by_precision.get(p, {}).get("flops", 0)))
    rows += [MetricDelta("params", "Params", ta.params, tb.params),
             MetricDelta("param_bytes", "Param bytes", ta.param_bytes, tb.param_bytes, "bytes"),
             MetricDelta("bytes_read", "Bytes read", ta.bytes_read, tb.bytes_read, "bytes"),
             MetricDelta("bytes_written", "Bytes written", ta.bytes_written, tb.bytes_written, "bytes"),
             MetricDelta("model_size", "Model file size", a.model.size_bytes, b.model.size_bytes, "bytes"),
             *_memory_rows(a, b), *_delegation_rows(a, b),
             *_figure_rows(a, b),
             MetricDelta("ops", "Ops per inference", len(_inference(a)), len(_inference(b))),
             MetricDelta("unsupported", "Ops not counted", sum(a.unsupported.values()), sum(b.unsupported.values()))]
    if ta.opaque_ops or tb.opaque_ops:  # their work is unknown, not 0: the totals above leave it out
        rows.append(MetricDelta("opaque_ops", "Ops compiled for an accelerator", ta.opaque_ops, tb.opaque_ops))
    for key, label in (("median_ms", summary.BY_KEY["latency_median_ms"].label), ("p90_ms", "Latency p90"),
                       ("min_ms", "Latency min")):
        va, vb = getattr(a.latency, key, None), getattr(b.latency, key, None)  # None: not measured
        if va is not None or vb is not None:
            rows.append(MetricDelta(f"latency.{key}", label, va, vb, "ms"))
    pa, pb = (None if r.prediction is None else r.prediction.latency_ms for r in (a, b))
    if pa is not None or pb is not None:  # analyze --predict (or a predicted JSON report)
        rows.append(_declared("predicted_ms", a, b))
        la, lb = (None if r.prediction is None else r.prediction.low_confidence_ms for r in (a, b))
        rows.append(MetricDelta("prediction.low_confidence_ms", "  on low-confidence ops", la, lb, "ms"))
    for key, label in (("flops_per_s", "FLOP/s"), ("inferences_per_s", "Inferences/s")):
        va, vb = getattr(a.throughput, key, None), getattr(b.throughput, key, None)
        if va is not None or vb is not None:
            rows.append(MetricDelta(f"throughput.{key}", label, va, vb, "rate"))
    return rows


def _declared(key: str, a: Report, b: Report) -> MetricDelta:
    """The row of a declared summary figure (report/summary.py): its JSON path, its label, its unit."""
    f = summary.BY_KEY[key]
    return MetricDelta(f.json_path, f.label, f.read(a), f.read(b), "count" if f.unit == "count" else f.unit)


def _memory_rows(a: Report, b: Report) -> list[MetricDelta]:
    """The memory figures side by side (only when both reports have them)."""
    ma, mb = a.memory, b.memory
    if ma is None or mb is None:
        return []
    rows = []
    da, db = runtime_total(ma), runtime_total(mb)
    if da is not None and db is not None:  # what LiteRT's default configuration uses: the reports' memory headline
        rows.append(_declared("runtime_total_bytes", a, b))
    ra, rb = ma.runtime, mb.runtime
    if ra is not None and rb is not None:  # as LiteRT allocates it (a report of an older version has none)
        rows += [MetricDelta(f"memory.runtime.{key}", label, getattr(ra, key), getattr(rb, key), "bytes")
                 for key, label in (("arena_bytes", "Arena (LiteRT, with temporaries)"),
                                    ("persistent_arena_bytes", "Persistent arena (LiteRT)"),
                                    ("total_bytes", summary.BY_KEY["builtin_total_bytes"].label))]
    rows += [MetricDelta(f"memory.{key}", label, getattr(ma, key), getattr(mb, key), "bytes")
             for key, label in (("arena_bytes", summary.BY_KEY["arena_bytes"].label),
                                ("peak_live_bytes", "Peak live activations"),
                                ("persistent_arena_bytes", "Persistent arena"))]
    if ma.tflm_arena_size_bytes is not None and mb.tflm_arena_size_bytes is not None:  # (older reports have none)
        rows += [MetricDelta(f"memory.{key}", label, getattr(ma, key), getattr(mb, key), "bytes")
                 for key, label in (("tflm_arena_size_bytes", summary.BY_KEY["tflm_arena_size_bytes"].label),
                                    ("tflm_head_bytes", "TFLite Micro head"), ("tflm_tail_bytes", "TFLite Micro tail"))]
    xa, xb = ma.runtime_xnnpack, mb.runtime_xnnpack
    if xa is not None and xb is not None:  # with XNNPACK (LiteRT's default); reports before it have none
        targets = dict.fromkeys(t for t in (ma.target, mb.target) if t)  # the CPU target(s) the figures are for
        on = f", target {' vs '.join(targets)}" if targets else ""
        rows += [MetricDelta(f"memory.runtime_xnnpack.{key}", label, getattr(xa, key), getattr(xb, key), "bytes")
                 for key, label in (("arena_bytes", "Arena (LiteRT with XNNPACK)"),
                                    ("delegate_bytes", f"XNNPACK own (estimate{on})"),
                                    ("total_bytes", "LiteRT with XNNPACK, weights aside"))]
    return rows + [MetricDelta(f"memory.{key}", label, getattr(ma, key), getattr(mb, key), "bytes")
                   for key, label in (("tflm_arena_bytes", "Arena (TFLite Micro, tensors only)"),
                                      ("weights_bytes", "Weights bytes"))]


def _figure_rows(a: Report, b: Report) -> list[MetricDelta]:
    """The per-model figure of each declared per-op column with a total that compare shows."""
    ta, tb = column_totals(a, "compare"), column_totals(b, "compare")
    return [MetricDelta(c.total_name, f"{c.label} ({c.total})", ta[c.total_name], tb[c.total_name],
                        {"bytes": "bytes", "ms": "ms", "rate": "rate"}.get(c.unit, "count"))
            for c in total_columns("compare")]


def _delegation_rows(a: Report, b: Report) -> list[MetricDelta]:
    """Per delegate both reports placed: ops delegated, ops kept off, partitions, node subsets (benchmark_model's
    "partitions": delegated and CPU subsets; the row only when either side knows it)."""
    rows = []
    for key in a.delegation:
        da, db = a.delegation[key], b.delegation.get(key)
        if db is None:
            continue
        name = delegate_display(key, da.rules, short=True)
        if db.rules != da.rules:  # two GPU models: the rows say both
            name = f"{name} / {delegate_display(key, db.rules, short=True)}"
        fields = [("delegated_ops", "ops delegated"), ("kept_ops", "ops kept off"), ("partitions", "partitions")]
        if da.subsets is not None or db.subsets is not None:
            fields.append(("subsets", "node subsets"))
        rows += [MetricDelta(f"delegation.{key}.{field}", f"{name} {label}", getattr(da, field), getattr(db, field))
                 for field, label in fields]
    return rows


def placement_changes(pairs: Sequence[OpPair], delegates: Sequence[str]) -> list[PlacementChange]:
    """The matched ops whose placement differs between A and B, per delegate."""
    out = []
    for key in delegates:
        for p in pairs:
            if p.a is None or p.b is None:
                continue
            ta, tb = taken(p.a, key), taken(p.b, key)
            if ta is not None and tb is not None and ta != tb:
                out.append(PlacementChange(key, p.a, p.b))
    return out


def _by_type(a: Report, b: Report) -> list[TypeDelta]:
    keys = list(dict.fromkeys([*a.by_op_type, *b.by_op_type]))
    rows = []
    for k in keys:
        x, y = a.by_op_type.get(k), b.by_op_type.get(k)
        rows.append(TypeDelta(k, x.count if x else 0, y.count if y else 0, x.macs if x else 0, y.macs if y else 0,
                              x.flops if x else 0, y.flops if y else 0))
    rows.sort(key=lambda t: (-max(t.flops_a, t.flops_b), t.op_type))
    return rows


MATCH_CELLS = 250_000  # a middle of at most this many (op of A, op of B) cells is matched whole
MATCH_WINDOW = 100  # a larger middle is matched in aligned windows of about this many ops


def match_ops(a: Sequence[OpRecord], b: Sequence[OpRecord]) -> list[OpPair]:
    """Pair ops by type and position (SequenceMatcher over op types), in near-linear time.

    The common prefix and suffix of the two op-type sequences pair up first (a model against itself, or
    against a copy with a few ops changed, costs one pass). The middle is matched by SequenceMatcher,
    whose worst case is quadratic: whole when it has at most :data:`MATCH_CELLS` cells, else in aligned
    windows of about :data:`MATCH_WINDOW` ops on each side, so that 20,000 ops against 20,000 different
    ones take seconds, not minutes.
    """
    ta, tb = [o.op_type for o in a], [o.op_type for o in b]
    head = 0
    while head < min(len(ta), len(tb)) and ta[head] == tb[head]:
        head += 1
    tail = 0
    while tail < min(len(ta), len(tb)) - head and ta[-1 - tail] == tb[-1 - tail]:
        tail += 1
    pairs = [OpPair("same", a[i], b[i]) for i in range(head)]
    ea, eb = len(ta) - tail, len(tb) - tail
    na, nb = ea - head, eb - head
    windows = 1 if na * nb <= MATCH_CELLS else -(-max(na, nb) // MATCH_WINDOW)
    for w in range(windows):
        a0, a1 = head + na * w // windows, head + na * (w + 1) // windows
        b0, b1 = head + nb * w // windows, head + nb * (w + 1) // windows
        sm = difflib.SequenceMatcher(None, ta[a0:a1], tb[b0:b1], autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            i1, i2, j1, j2 = i1 + a0, i2 + a0, j1 + b0, j2 + b0
            if tag == "equal":
                pairs += [OpPair("same", a[i], b[j]) for i, j in zip(range(i1, i2), range(j1, j2))]
                continue
            n = min(i2 - i1, j2 - j1) if tag == "replace" else 0
            pairs += [OpPair("changed", a[i1 + k], b[j1 + k]) for k in range(n)]
            pairs += [OpPair("only_a", a[i], None) for i in range(i1 + n, i2)]
            pairs += [OpPair("only_b", None, b[j]) for j in range(j1 + n, j2)]
    pairs += [OpPair("same", a[ea + k], b[eb + k]) for k in range(tail)]
    return pairs


def compare_reports(a: Report, b: Report, label_a: str | None = None, label_b: str | None = None,
                    what_if: tuple[WhatIf, WhatIf] | None = None) -> Comparison:
    """Compare report ``b`` against report ``a``; ``what_if``: A's what-if row in B's precision and B's own."""
    la, lb = label_a or _label(a, "A"), label_b or _label(b, "B")
    if la == lb:
        la, lb = f"A: {la}", f"B: {lb}"
    pairs = tuple(match_ops(_inference(a), _inference(b)))
    delegates = [k for k in a.delegation if k in b.delegation and k in DELEGATES]  # the ones predicted per op
    moved = tuple(placement_changes(pairs, delegates))
    lost_b = [ch.b for ch in moved if ch.delegate == "xnnpack" and ch.lost]  # kept off XNNPACK in B only
    lost_a = [ch.a for ch in moved if ch.delegate == "xnnpack" and not ch.lost]  # kept off XNNPACK in A only
    slower = quantized_slower(a, b, la, lb, lost_a, lost_b)
    return Comparison(la, lb, a, b, tuple(_totals(a, b)), tuple(_by_type(a, b)), pairs, moved,
                      () if slower is None else (slower,), what_if)
