"""The advice pass: every finding of a report turned into what to change, with the time at stake.

One per-model pass (:func:`advise`) reads the finished report (placement, weights, prediction) and the model
(tensor dtypes and quantization scales) and returns :class:`~tflite_flops.report.advice.Advice` items, the
report's ``advice``. It reads op facts through the records (placement reasons and their categories,
:mod:`tflite_flops.ops.placement`) and holds no op type of its own. The kinds:

* ``static_shape``: with a dynamic input dim, the kept ops that compute shapes at run time (integer outputs)
  and the ops kept because an operand is computed at run time (category ``dynamic``): a static export folds
  the first to constants and lets XNNPACK take the second;
* ``partitions``: the partitions those ops cut the graph into, that a static shape would merge;
* ``full_integer``: dynamic-range (hybrid) ops XNNPACK keeps off (category ``hybrid weights``, e.g. its
  depthwise convolution): full-integer quantization puts them on XNNPACK;
* ``unsupported_op``: the other kept ops, one item per reason category, with the nearest form XNNPACK runs
  where the reason says it ("float only", "8-bit quantized only");
* ``zero_weights``: ops whose weights are all zero (``weight_density`` 0: a broken quantization);
* ``degenerate_scale``: a weight whose quantization scale is zero, negative or denormal (the first scale of a
  per-channel tensor: the reader keeps that one);
* ``gpu_rejected``: the ops the GPU delegate keeps on the CPU, by category.

``saving_ms``: with a prediction (``--predict``), the predicted time of the ops kept off, minus their
predicted time on XNNPACK (0 for an op a static shape folds away), plus the partition overheads saved:
source ``"predicted"``. Without one, with ``--per-op`` (:func:`with_measured_savings`, after the run): the
measured time of those ops now, the most the change can save: source ``"measured"``. Else None.

``saving_share``: every item's share of the model figure it is about (``share_of``), known from the file alone,
and the saving its text gives when no time is known:

* ops kept off a delegate (``static_shape``, ``full_integer``, ``unsupported_op``, ``gpu_rejected``): the larger of
  their shares of the model's FLOPs and of its bytes moved (``"flops"`` or ``"bytes_moved"``): an op runs as
  long as its arithmetic or its memory traffic takes, and the ops kept off are most often elementwise ones whose
  bytes, not FLOPs, set their time;
* ``partitions``: the boundaries a static shape removes, as a share of XNNPACK's partitions (``"partitions"``);
* ``zero_weights`` and ``degenerate_scale``: the weights concerned (the weights of rank >= 2 of the ops whose
  weights are all zero; the tensors with a bad scale), as a share of the model's weight bytes
  (``"weight_bytes"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..ops.registry import INIT_ON_CONSTANT_OPS
from ..ops.placement import (CATEGORY_DTYPE, CATEGORY_DYNAMIC, CATEGORY_HYBRID, CATEGORY_OP_TYPE, CATEGORY_OPTIONS,
                             CATEGORY_QUANT, GPU, category_of, delegate_display)
from ..reader.model import Model
from ..settings import DelegateConfig
from ..report import OpRecord, Report
from ..report import lazy
from ..report.advice import Advice, op_ranges, saving_text, share_text
from .placement import xnnpack_placer

if TYPE_CHECKING:  # the latency model is imported only when a profile is given (a prediction)
    from ..latency.profile import DeviceProfile

OpKey = tuple[int, int]
_SHAPE_DTYPES = ("INT32", "INT64")  # what a shape computation produces
_MIN_NORMAL = 2.0 ** -126  # the smallest normal float32: a scale below it is denormal
# the form XNNPACK runs, where the reason's detail names it
_HINTS = (("(float only)", "run them in float: leave them out of the integer quantization (a float fallback for "
                           "these ops) or keep the model in float"),
          ("(8-bit quantized only)", "quantize them to 8 bits (int8 or uint8)"))
_CHANGE = {CATEGORY_OP_TYPE: "XNNPACK has no kernel for these op types: use an equivalent it runs where one exists, "
                             "or move them to the graph's start or end, where they split no partition",
           CATEGORY_QUANT: "quantize per channel on the output-channel axis, zero point 0, scales positive normal "
                           "numbers: the form XNNPACK takes",
           CATEGORY_OPTIONS: "use the fused activation, padding or option XNNPACK takes (named in the reason)",
           CATEGORY_DTYPE: "give them a dtype XNNPACK takes (float32, or int8/uint8 quantized): an integer "
                           "computation on indices or shapes is better folded at export",
           CATEGORY_DYNAMIC: "make the operand the reason names a constant of the file (it is computed at run "
                             "time now)"}


def _key(o: OpRecord) -> str:
    return f"{o.subgraph}:{o.index}"


def _listing(ops: Sequence[OpRecord]) -> str:
    """``DEPTHWISE_CONV_2D ×16, ADD ×2``: the op types, most first."""
    n: dict[str, int] = {}
    for o in ops:
        n[o.op_type] = n.get(o.op_type, 0) + 1
    return ", ".join(f"{k} ×{v}" for k, v in sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))[:5])


def _what(ops: Sequence[OpRecord], verb: str = "") -> str:
    """``12 ops (0:57–0:68: SHAPE ×4, …)``, then ``verb`` ("are"/"is" for the count: ``"are kept"``)."""
    plural = len(ops) != 1
    said = f"{len(ops)} op{'s' if plural else ''} ({op_ranges([_key(o) for o in ops])}: {_listing(ops)})"
    if verb:
        first, _, rest = verb.partition(" ")
        first = {"are": "is", "have": "has"}.get(first, first) if not plural else first
        said += f" {first}{' ' + rest if rest else ''}"
    return said


def _runs(ops: Sequence[OpRecord], taken: Mapping[OpKey, bool]) -> int:
    """The runs of consecutive taken ops, per subgraph, in execution order: a count of partitions."""
    runs, last = 0, None
    for o in ops:
        on = taken.get((o.subgraph, o.index))
        if on is None:  # folded away: splits nothing
            continue
        if on and (last is None or not last[1] or last[0] != o.subgraph):
            runs += 1
        last = (o.subgraph, on)
    return runs


def _merged(ops: Sequence[OpRecord], fold: Iterable[OpRecord], take: Iterable[OpRecord]) -> int:
    """How many partitions fewer there would be with ``fold`` folded away and ``take`` taken by XNNPACK."""
    now = {(o.subgraph, o.index): bool(o.xnnpack) for o in ops}
    after = dict(now)
    for o in fold:
        after.pop((o.subgraph, o.index), None)
    for o in take:
        after[(o.subgraph, o.index)] = True
    return max(_runs(ops, now) - _runs(ops, after), 0)


@dataclass(frozen=True)
class Pricing:
    """What advice prices a change with: the prediction's profile and the context its laws saw (the profile's
    CPU target, caches and the model's loop terms: :class:`tflite_flops.latency.predict.FeatureContext`), so
    that the time at stake is the prediction's own."""

    profile: DeviceProfile
    context: Any


def _on_xnnpack_ms(o: OpRecord, pricing: Pricing) -> float | None:
    """The op's predicted time were XNNPACK to run it (ms per inference), None without a law."""
    from ..latency.profile import XNNPACK_PLACEMENT

    features = pricing.context.features(o, XNNPACK_PLACEMENT)
    law = pricing.profile.law_for(features)
    if law is None:
        return None
    return law.range_us(features)[0] * max(o.executions, 1) / 1000.0


def _predicted_saving(fold: Sequence[OpRecord], take: Sequence[OpRecord], merged: int,
                      pricing: Pricing | None) -> float | None:
    """Predicted: the kept ops' time, less their time on XNNPACK (``take``; 0 for ``fold``), plus the overheads."""
    if pricing is None or not pricing.profile.machine.xnnpack:
        return None
    total = 0.0
    for o in (*fold, *take):
        if o.predicted_ms is None:
            return None
        total += o.predicted_ms
    for o in take:
        on = _on_xnnpack_ms(o, pricing)
        if on is None:
            return None
        total -= on
    return total + merged * pricing.profile.partition_overhead_us / 1000.0


Share = tuple[float | None, str | None]  # (saving_share, share_of)


def _item(kind: str, ops: Sequence[OpRecord], text: str, saving: float | None, share: Share) -> Advice:
    """One item; its text ends with the saving: the time where predicted, else the share."""
    source = None if saving is None else "predicted"
    said = saving_text(saving, source) or share_text(*share)
    return Advice(kind, tuple(_key(o) for o in ops), saving, source, text + (f" ({said})" if said else ""), *share)


def _fraction(part: int, whole: int) -> float | None:
    """``part / whole`` at most 1, rounded as the JSON writes it (a report read back equals the one written)."""
    return None if whole <= 0 else round(min(part / whole, 1.0), 6)


def _op_share(report: Report, ops: Sequence[OpRecord]) -> Share:
    """The larger of ``ops``' shares of the model's FLOPs and bytes moved (per inference; module docstring)."""
    t = report.totals
    flops = _fraction(sum(o.flops for o in ops), t.flops)
    moved = _fraction(sum(o.bytes_moved for o in ops), t.bytes_read + t.bytes_written)
    if moved is not None and (flops is None or moved > flops):
        return moved, "bytes_moved"
    return (flops, "flops") if flops is not None else (None, None)


def _weight_share(report: Report, model: Model, tensors: Iterable[tuple[int, int]]) -> Share:
    """The bytes stored of the distinct (subgraph, tensor) ``tensors``, as a share of the model's weight bytes."""
    stored = sum(model.subgraphs[sg].tensors[t].data_size for sg, t in set(tensors))
    share = _fraction(stored, report.totals.param_bytes)
    return (share, "weight_bytes") if share is not None else (None, None)


def _output_dtypes(model: Model, o: OpRecord) -> list[str]:
    sg = model.subgraphs[o.subgraph]
    op = sg.operators[o.index]
    return [sg.tensors[t].dtype for t in op.outputs if t >= 0]


def _xnnpack_items(report: Report, model: Model, pricing: Pricing | None) -> list[Advice]:
    """static_shape, partitions, full_integer and unsupported_op."""
    ops = [o for o in report.ops if o.phase == "inference" and o.xnnpack is not None]
    kept = [o for o in ops if o.xnnpack is False]
    if not kept:
        return []
    dynamic_dims = [t.name for t in report.inputs if t.shape_signature and any(d < 0 for d in t.shape_signature)]
    fold, take = [], []
    if dynamic_dims:
        for o in kept:
            dtypes = _output_dtypes(model, o)
            if dtypes and all(d in _SHAPE_DTYPES for d in dtypes):
                fold.append(o)  # a shape computed at run time: a constant in a static export
            elif category_of(o.xnnpack_reason or "") == CATEGORY_DYNAMIC:
                take.append(o)  # kept for an operand computed at run time
    out = []
    partitions = report.delegation["xnnpack"].partitions if "xnnpack" in report.delegation else 0
    if fold or take:
        shape_ops = fold + take
        merged = _merged(ops, fold, take)
        saving = _predicted_saving(fold, take, 0, pricing)
        after = max(partitions - merged, 1)
        text = (f"{_what(sorted(shape_ops, key=lambda o: (o.subgraph, o.index)), 'are kept')} off XNNPACK because "
                f"their shapes are computed at run time (dynamic input dims: {', '.join(dynamic_dims)}): export with "
                f"a static batch and shape (a fixed input signature), which folds {len(fold)} of them to constants"
                + (f" and lets XNNPACK take the other {len(take)}" if take else ""))
        out.append(_item("static_shape", shape_ops, text, saving, _op_share(report, shape_ops)))
        if merged:
            overhead = _predicted_saving((), (), merged, pricing)
            out.append(_item("partitions", shape_ops,
                             f"these run-time shape ops cut the graph into {partitions} XNNPACK partitions; with a static "
                             f"shape they would be {after} ({merged} boundar{'ies' if merged != 1 else 'y'} fewer, each a "
                             "copy in and out of the delegate)", overhead,
                             (_fraction(merged, partitions), "partitions") if partitions else (None, None)))
    done = {id(o) for o in fold + take}
    rest = [o for o in kept if id(o) not in done]
    hybrid = [o for o in rest if category_of(o.xnnpack_reason or "") == CATEGORY_HYBRID]
    if hybrid:
        merged = _merged(ops, (), hybrid)
        text = (f"{_what(hybrid, 'are')} dynamic-range (float activations, int8 weights) and XNNPACK keeps them off "
                f"({hybrid[0].xnnpack_reason}), cutting the graph into {partitions} partitions: quantize to full "
                "integer (int8 activations, with a representative dataset), or keep these ops' weights in float")
        out.append(_item("full_integer", hybrid, text, _predicted_saving((), hybrid, merged, pricing),
                         _op_share(report, hybrid)))
    groups: dict[str, list[OpRecord]] = {}
    done |= {id(h) for h in hybrid}
    for o in rest:
        if id(o) not in done:
            groups.setdefault(category_of(o.xnnpack_reason or ""), []).append(o)
    for category, group in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        details = list(dict.fromkeys((o.xnnpack_reason or "").partition(": ")[2] for o in group))
        change = next((c for hint, c in _HINTS if any(hint in d for d in details)), None) or _CHANGE.get(
            category, "change what the reason names to a form XNNPACK takes")
        merged = _merged(ops, (), group)
        text = (f"{_what(group, 'are kept')} off XNNPACK ({category}: {'; '.join(details[:3])}"
                f"{' …' if len(details) > 3 else ''})" + (f", {merged} partition boundar{'ies' if merged != 1 else 'y'} "
                                                          "with them" if merged else "") + f": {change}")
        out.append(_item("unsupported_op", group, text, _predicted_saving((), group, merged, pricing),
                         _op_share(report, group)))
    return out


def _stored_weights(model: Model, ops: Sequence[OpRecord]) -> list[tuple[int, int]]:
    """(subgraph, tensor) of the weights of ``ops`` as the weight density counts them (their inputs of rank >= 2
    stored in the file, or made at init from one: a DEQUANTIZE's or DENSIFY's constant input)."""
    out = []
    for o in ops:
        sg = model.subgraphs[o.subgraph]
        made: dict[int, int] | None = None
        for t in sg.operators[o.index].inputs:
            if t < 0 or len(sg.tensors[t].shape) < 2:
                continue
            if not sg.tensors[t].is_constant:
                if made is None:
                    made = {out_t: op.inputs[0] for op in sg.operators if op.op_type in INIT_ON_CONSTANT_OPS
                            and op.inputs and op.inputs[0] >= 0 for out_t in op.outputs}
                t = made.get(t, -1)
            if t >= 0 and sg.tensors[t].is_constant:
                out.append((o.subgraph, t))
    return out


def _weight_items(report: Report, model: Model) -> list[Advice]:
    """zero_weights and degenerate_scale."""
    out = []
    zero = [o for o in report.ops if o.phase == "inference" and o.weight_density == 0.0]
    if zero:
        share = _weight_share(report, model, _stored_weights(model, zero))
        out.append(Advice("zero_weights", tuple(_key(o) for o in zero), None, None,
                          f"{_what(zero, 'have')} every weight at zero: their outputs are their biases alone, whatever "
                          "the input; a broken quantization (scales too small for the weights) or a layer pruned to "
                          f"nothing: quantize again from the float weights, or remove the layers ({share_text(*share)})",
                          *share))
    bad: list[tuple[OpRecord, float, int]] = []
    quantized: dict[int, bool] = {}  # subgraph -> whether any of its tensors has a scale (else no op of it is bad)
    for o in report.ops:
        if o.phase != "inference":
            continue
        sg = model.subgraphs[o.subgraph]
        scaled = quantized.get(o.subgraph)
        if scaled is None:
            scaled = quantized[o.subgraph] = any(
                t.quantization is not None and t.quantization.scale is not None for t in sg.tensors)
        if not scaled:
            continue
        for t in sg.operators[o.index].inputs:
            if t < 0:
                continue
            tensor = sg.tensors[t]
            q = tensor.quantization  # (whether the tensor is a constant is asked only of a bad scale)
            if (q is not None and q.scale is not None and not (math.isfinite(q.scale) and q.scale >= _MIN_NORMAL)
                    and tensor.is_constant):
                bad.append((o, q.scale, t))
                break
    if bad:
        ops = [o for o, _, _ in bad]
        scales = ", ".join(sorted({f"{s:g}" for _, s, _ in bad})[:3])
        share = _weight_share(report, model, ((o.subgraph, t) for o, _, t in bad))
        out.append(Advice("degenerate_scale", tuple(_key(o) for o in ops), None, None,
                          f"{_what(ops, 'have')} a weight quantized with a scale that is zero, negative or denormal "
                          f"({scales}): the channel's values are lost (and XNNPACK refuses the op): quantize again "
                          f"with positive normal scales (a calibration that sees the weights' range) "
                          f"({share_text(*share)})", *share))
    return out


def _gpu_items(report: Report) -> list[Advice]:
    """gpu_rejected: the GPU delegate's kept ops by category."""
    d = report.delegation.get("gpu")
    kept = [o for o in report.ops if o.phase == "inference" and o.gpu is False]
    if d is None or not kept:
        return []
    by: dict[str, int] = {}
    for o in kept:
        c = category_of(o.gpu_reason or "")
        by[c] = by.get(c, 0) + 1
    cats = ", ".join(f"{c} ×{n}" for c, n in sorted(by.items(), key=lambda kv: -kv[1]))
    return [_item("gpu_rejected", kept,
                  f"{delegate_display(GPU, d.rules)} keeps {_what(kept)} on the CPU ({cats}), in {d.partitions} GPU "
                  f"partition{'s' if d.partitions != 1 else ''}: each boundary copies tensors between GPU and CPU; "
                  "change the dtypes and shapes the reasons name, or run on XNNPACK (placement predicted from the "
                  "delegate's rules, never checked on a phone's GPU)", None, _op_share(report, kept))]


def advise(report: Report, model: Model, profile: DeviceProfile | None = None,
           config: DelegateConfig = DelegateConfig()) -> tuple[Advice, ...]:
    """The advice of one report of ``model`` (``profile``: the device profile of its prediction, if any; ``config``:
    the delegate's flags the report was placed and predicted with)."""
    pricing = None
    if profile is not None:
        from ..latency.predict import profile_context  # the prediction's own context: one definition

        pricing = Pricing(profile, profile_context(model, report.ops, profile, xnnpack_placer(model, config)))
    return tuple(_xnnpack_items(report, model, pricing) + _weight_items(report, model) + _gpu_items(report))


def add_advice(report: Report, model: Model, profile: DeviceProfile | None = None,
               config: DelegateConfig = DelegateConfig()) -> Report:
    """``report`` with its ``advice``, computed when ``report.advice`` is first read (:mod:`tflite_flops.report.lazy`:
    the table, a plain ``analyze()`` call, never pay for it)."""
    return lazy.replace(report, advice=lazy.Deferred(lambda: advise(report, model, profile, config)))


_TIMED_KINDS = ("static_shape", "full_integer", "unsupported_op")


def with_measured_savings(report: Report) -> Report:
    """After a ``--per-op`` run: the items without a predicted saving get the measured time of their ops (the
    most the change saves: those ops' time now), source ``"measured"``."""
    if not report.advice:
        return report
    timed = {_key(o): o.latency_ms for o in report.ops}
    items: list[Any] = []
    for a in report.advice:
        times = [timed.get(k) for k in a.ops]
        if a.saving_ms is None and a.kind in _TIMED_KINDS and times and all(t is not None for t in times):
            ms = float(sum(times))  # type: ignore[arg-type]
            share = f" ({share_text(a.saving_share, a.share_of)})"  # the saving said without a time: the time now
            text = a.text[:-len(share)] if a.saving_share is not None and a.text.endswith(share) else a.text
            a = replace(a, saving_ms=ms, saving_source="measured",
                        text=f"{text} (up to {saving_text(ms, 'measured')}: their time now)")
        items.append(a)
    return replace(report, advice=tuple(items))
