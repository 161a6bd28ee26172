"""Where an op's data is when it runs inside a whole model: reuse distances against the machine's caches.

The laws are fitted on single-op models timed back to back: between two ``invoke()`` runs only the op
itself runs, so its weights, inputs and outputs are as warm as their own size lets them be. Inside a
whole model, an op's weights were last touched one whole inference earlier, and its input was written
by its producer, with the ops in between touching their own data. This module estimates that
difference and prices it with the costs per byte and per op that calibration measures (docs/predict.md,
"Whole-model conditions"). It is pure arithmetic: it runs nothing.

**Reuse distance** (the bytes touched between two uses of a datum, LRU's stack distance): a datum is
served from the first cache level whose capacity is at least its reuse distance, and from memory when
none is. With one op run back to back every datum's distance is the op's own footprint (its
weights, inputs and outputs). In a whole model (:func:`model_distances`):

* an op's weights: the bytes the model touches per inference (all its weights, and its activations'
  distinct bytes: the largest activation memory alive at once, as the arena reuses its memory);
* an input written by another op of the same subgraph: the tensor's bytes plus what the ops that ran
  in between touched (their weights and outputs);
* an input of the subgraph (the model's input, a loop variable): the bytes touched per inference;
* an output: as when the op runs alone (the op writes it afresh either way);
* never less than the op's own footprint (the op touches all of it while it runs);
* in a loop body (ops run several times per inference), "per inference" is per trip: the bytes the
  body's ops touch.

**The penalty** of an op (:func:`penalty_us`) is, for each datum, its bytes times the profile's cost per
byte at its reuse distance in the model less the cost at its distance alone, plus a cost per op at the
distance of the op's own state (its weights' distance) less that alone (``DeviceProfile.cache_curve``:
microseconds per byte and per op by reuse distance). A whole model pays once more the curve's per-invoke cost
at a whole inference's distance (:func:`invoke_penalty_us`): the state every invoke touches once. Calibration measures that curve on suite points timed "cold"
(an eviction buffer read between the timed runs, its size from the machine's caches: :func:`evictions`)
against the same points timed warm in the same run (:func:`tflite_flops.latency.fit.fit_cache_curve`).
A curve rather than a step per cache level because the measured one is not a step: on the machine
calibrated for docs/predict.md, data behind 2× the L2 costs nothing more, data behind half the L3
already does (the L3 of a shared machine is not all one core's), data behind 2× the L3 most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..units import DTYPE_BITS

OpKey = tuple[int, int]  # (subgraph, op index)
# The measured cost of data by reuse distance: (reuse distance in bytes, microseconds per byte, microseconds per
# op, microseconds per invoke) more than when the data and state are in the nearest caches, increasing distances;
# 0 below the first point, linear in between, flat past the last (``DeviceProfile.cache_curve``, fitted by
# ``latency.fit.fit_cache_curve``). The per-op part is an op's own state (the runtime's operator object, its
# indirection buffers), which in a whole model sits as far as its weights; the per-invoke part the state every
# invoke touches once (the interpreter's, the delegate's, their code), as far as the model's whole inference.
CacheCurve = tuple[tuple[int, float, float, float], ...]


def evictions(caches: Mapping[str, int]) -> tuple[int, ...]:
    """The eviction buffers calibration reads between cold runs, from the machine's cache sizes
    (``{"L1d": bytes, "L2": ..., "L3": ...}``): twice the L2 (the op's data then comes from the L3), half the
    L3 (a whole model's working set that the L3 should hold), twice the L3 (from memory); increasing, distinct."""
    l2, l3 = int(caches.get("L2", 0) or 0), int(caches.get("L3", 0) or 0)
    sizes = [2 * l2] if l2 else []
    if l3:
        sizes += [l3 // 2, 2 * l3]
    return tuple(sorted({s for s in sizes if s > 0}))


def cost_at(curve: CacheCurve, distance: int) -> tuple[float, float, float]:
    """(microseconds per byte, per op, per invoke) at reuse distance ``distance`` on ``curve`` (see CacheCurve)."""
    x0, y0 = 0, (0.0, 0.0, 0.0)
    for x, *y in curve:
        if distance <= x:
            t = (distance - x0) / (x - x0) if x > x0 else 1.0
            return tuple(a + (b - a) * t for a, b in zip(y0, y))  # type: ignore[return-value]
        x0, y0 = x, tuple(y)
    return y0  # type: ignore[return-value]


def with_stream_costs(curve: CacheCurve, points: Sequence[tuple[int, float]]) -> CacheCurve:
    """``curve`` with the costs per byte the streaming chains measured (``(distance, us per byte)``,
    ``latency.fit.stream_costs``): a point at each of their distances (its per-op and per-invoke costs the
    curve's there), the higher cost per byte where both have one, then non-decreasing in distance (data
    further away never costs less)."""
    if not points:
        return curve
    by_distance = {d: [b, k, i] for d, b, k, i in curve}
    for d, b in points:
        if d in by_distance:
            by_distance[d][0] = max(by_distance[d][0], b)
        else:
            _, k, i = cost_at(curve, d)
            by_distance[d] = [b, k, i]
    out: list[tuple[int, float, float, float]] = []
    for d in sorted(by_distance):
        b, k, i = by_distance[d]
        if out:
            b, k, i = max(b, out[-1][1]), max(k, out[-1][2]), max(i, out[-1][3])
        out.append((d, b, k, i))
    return tuple(out)


def cost_per_byte(curve: CacheCurve, distance: int) -> float:
    """Microseconds per byte of a datum at ``distance`` on ``curve``."""
    return cost_at(curve, distance)[0]


@dataclass(frozen=True)
class OpData:
    """The data one run of an op touches, in bytes: its weights, and its activation inputs and outputs by tensor."""

    key: OpKey
    weights: int
    inputs: tuple[tuple[int, int], ...]  # (tensor index, bytes) of its inputs that are not constant
    outputs: tuple[tuple[int, int], ...]  # (tensor index, bytes)
    runs: int = 1  # executions per inference
    precision: str = ""  # the op's precision (its record's): which of a profile's cache curves prices it

    @property
    def footprint(self) -> int:
        """Every byte one run touches: its reuse distance when it runs back to back alone."""
        return self.weights + sum(b for _, b in self.inputs) + sum(b for _, b in self.outputs)


def _bytes(shape: Sequence[int], dtype: str) -> int:
    n = 1
    for dim in shape:
        n *= max(int(dim), 0)
    return n * DTYPE_BITS.get(dtype.upper(), 32) // 8


def _folded_tensors(model: Any, ops: Sequence[Any]) -> set[tuple[int, int]]:
    """(subgraph, tensor) of the outputs of the ops run once at preparation (phase "init": a DEQUANTIZE of
    float16 weights): constants from then on, held at their own dtype (XNNPACK packs float16 weights as float32
    where it computes in float32)."""
    out = set()
    for o in ops:
        if o.phase == "init" and 0 <= o.subgraph < len(model.subgraphs):
            sg = model.subgraphs[o.subgraph]
            if 0 <= o.index < len(sg.operators):
                out.update((o.subgraph, t) for t in sg.operators[o.index].outputs if t >= 0)
    return out


def op_data(model: Any, ops: Sequence[Any]) -> list[OpData]:
    """The :class:`OpData` of every per-inference op of ``ops`` (resolved records), in each subgraph's order.
    Tensor sizes are those the records resolved (their ``inputs`` and ``outputs`` shapes), at each tensor's dtype.
    Weights are an op's constant inputs and those computed at preparation (:func:`_folded_tensors`)."""
    folded = _folded_tensors(model, ops)
    out = []
    for o in ops:
        if o.phase != "inference" or not 0 <= o.subgraph < len(model.subgraphs):
            continue
        sg = model.subgraphs[o.subgraph]
        if not 0 <= o.index < len(sg.operators):
            continue
        op = sg.operators[o.index]
        ins = [t for t in op.inputs if t >= 0]
        outs = [t for t in op.outputs if t >= 0]
        weights, inputs = 0, []
        for t, shape in zip(ins, o.inputs or ()):
            tensor = sg.tensors[t]
            size = _bytes(shape, tensor.dtype)
            if tensor.is_constant or (o.subgraph, t) in folded:
                weights += size
            else:
                inputs.append((t, size))
        outputs = [(t, _bytes(shape, sg.tensors[t].dtype)) for t, shape in zip(outs, o.outputs or ())]
        out.append(OpData((o.subgraph, o.index), weights, tuple(inputs), tuple(outputs), max(int(o.executions), 1),
                          str(getattr(o, "precision", "") or "")))
    return out


def per_inference_bytes(data: Sequence[OpData], live_peak: int | None = None) -> int:
    """The bytes a model touches per inference: its weights (each op's once) and its activations' distinct
    bytes, ``live_peak`` (the most activation bytes alive at once: the arena reuses its memory) when known,
    else every output's bytes."""
    weights = sum(d.weights for d in data)
    acts = sum(b for d in data for _, b in d.outputs)
    return weights + (min(acts, live_peak) if live_peak else acts)


def _by_subgraph(data: Sequence[OpData], total: int) -> list[tuple[list[OpData], int]]:
    """Each subgraph's ops in order, with the bytes touched between two runs of one of them: ``total`` (an
    inference), or in a loop body (ops run several times per inference) the body's own bytes (a trip)."""
    groups: dict[int, list[OpData]] = {}
    for d in data:
        groups.setdefault(d.key[0], []).append(d)
    out = []
    for ops in groups.values():
        ops = sorted(ops, key=lambda d: d.key[1])
        here = total
        if any(d.runs > 1 for d in ops):
            here = min(total, sum(d.weights + sum(b for _, b in d.outputs) for d in ops))
        out.append((ops, here))
    return out


def state_distances(data: Sequence[OpData], total: int) -> dict[OpKey, int]:
    """The reuse distance of each op's own state in a whole model: as far as its weights (an inference, or a
    trip of its loop), never less than its footprint."""
    return {d.key: max(here, d.footprint) for ops, here in _by_subgraph(data, total) for d in ops}


def model_distances(data: Sequence[OpData], total: int) -> dict[OpKey, list[tuple[int, int]]]:
    """(bytes, reuse distance) of every datum of every op in a whole model (see the module docstring);
    ``total``: the bytes touched per inference (:func:`per_inference_bytes`)."""
    out: dict[OpKey, list[tuple[int, int]]] = {}
    for ops, total_here in _by_subgraph(data, total):
        written: dict[int, int] = {}  # tensor -> position of its producer in ``ops``
        touched = [0]  # prefix sums of the bytes each op touches besides its inputs (weights, outputs)
        for d in ops:
            touched.append(touched[-1] + d.weights + sum(b for _, b in d.outputs))
        for pos, d in enumerate(ops):
            own = d.footprint
            items = [(d.weights, max(total_here, own))] if d.weights else []
            for t, size in d.inputs:
                p = written.get(t)
                dist = total_here if p is None else size + touched[pos] - touched[p + 1]
                items.append((size, max(min(dist, total_here), own)))
            items += [(size, own) for _, size in d.outputs]
            out[d.key] = [(s, dist) for s, dist in items if s > 0]
            for t, _ in d.outputs:
                written[t] = pos
    return out


def penalty_us(data: OpData, in_model: Sequence[tuple[int, int]], curve: CacheCurve, state: int = 0) -> float:
    """The microseconds one run of an op costs more in a whole model than alone: each datum's bytes times the
    curve's cost per byte at its distance in the model less the cost at its distance alone, plus the curve's
    per-op cost at ``state`` (the distance of the op's own state in the model) less that alone (never below 0)."""
    per_byte, per_op, _ = cost_at(curve, data.footprint)
    out = sum(size * max(cost_per_byte(curve, d) - per_byte, 0.0) for size, d in in_model)
    return out + max(cost_at(curve, state)[1] - per_op, 0.0)


def invoke_penalty_us(model: Any, ops: Sequence[Any], curve: CacheCurve) -> float:
    """The microseconds an invoke of a whole model costs more than a single-op model's: the curve's per-invoke
    cost at the bytes the model touches per inference less that at the smallest op's footprint."""
    if not any(i > 0 for *_, i in curve):
        return 0.0
    data = op_data(model, ops)
    if not data:
        return 0.0
    live = [int(o.live_bytes) for o in ops if getattr(o, "live_bytes", None)]
    total = per_inference_bytes(data, max(live) if live else None)
    return max(cost_at(curve, total)[2] - cost_at(curve, min(d.footprint for d in data))[2], 0.0)


def whole_model_penalties(model: Any, ops: Sequence[Any], curve: CacheCurve,
                          by_precision: Mapping[str, CacheCurve] | None = None) -> dict[OpKey, float]:
    """The penalty in microseconds per run of every per-inference op of ``ops`` in ``model``, priced by the curve of
    its precision in ``by_precision`` when there is one, else by ``curve`` (empty when there is no curve)."""
    by_precision = by_precision or {}
    if not any(b > 0 or k > 0 for c in (curve, *by_precision.values()) for _, b, k, _ in c):
        return {}
    data = op_data(model, ops)
    live = [int(o.live_bytes) for o in ops if getattr(o, "live_bytes", None)]
    total = per_inference_bytes(data, max(live) if live else None)
    where, state = model_distances(data, total), state_distances(data, total)
    return {d.key: penalty_us(d, where[d.key], by_precision.get(d.precision, curve), state[d.key]) for d in data}
