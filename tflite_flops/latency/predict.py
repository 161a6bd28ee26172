"""The predicted time of every op and of the whole model, from a device profile (``analyze --predict``).

One pass over a Report's resolved records (:func:`add_prediction`):

1. **Where each op runs** in the profile's configuration: with XNNPACK on, an op the delegate takes
   (``OpRecord.xnnpack``, docs/placement.md) is predicted by the profile's ``xnnpack`` law of its
   key and every other op by the ``builtin`` law; with XNNPACK off, every op by the ``builtin`` law.
2. **What the delegate fuses** (:func:`fused_ops`): inside one partition XNNPACK's subgraph optimizer
   folds some standalone ops into their neighbour, and they then cost nothing. The rules follow
   ``xnn_subgraph_optimize`` in XNNPACK's ``src/subgraph.c`` (see the functions named there).
3. **The time per op** (``predicted_ms``): the law :meth:`DeviceProfile.law_for
   <tflite_flops.latency.profile.DeviceProfile.law_for>` finds for the op's features
   (:func:`~tflite_flops.latency.features.op_features`), times the op's executions per inference.
   A WHILE's own law (its loop: copies and subgraph invokes per trip) takes its trips per run
   (:func:`while_trips`); the ops of its cond and body are predicted as every other op.
   An op without any law, or whose work is not counted (no formula, opaque, a formula that raised),
   whose law has no positive coefficient on a feature it has (:func:`usable`: it would predict 0 ms), whose
   counts are past a float, or whose time is not finite or beyond OP_US_MAX (:func:`op_times`), is *not
   predicted*: counted per op type, warned once per type, and the prediction is partial (flag ``partial``).
4. **Whole-model conditions** (:mod:`tflite_flops.latency.cache`): each op's time gets the cost of its data
   that is out of cache in a whole model but not when the op runs alone (weights last touched an inference
   earlier, inputs written several ops before), when the profile has a cache curve.
5. **The whole model**: the sum over the ops, plus the profile's per-partition overhead once per
   partition run, plus its per-invoke overhead. Init-time ops are not in it.
5. **Confidence** (:func:`op_confidence`): an op is low-confidence when a stand-in law predicts it, or when
   its features lie beyond DOMAIN_FACTOR times its law's fitted domain (:func:`out_of_domain`); the
   prediction says how much of its time rests on such ops, and flags what it rests on as a whole
   (a ``--quick`` profile, stand-in laws, a profile forced onto another configuration, a profile without
   domains): ``Prediction.low_confidence_ms`` and ``flags``, each op's ``prediction_confidence`` and
   ``prediction_note`` figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from ..reader.model import Model, Subgraph
from ..report import OpRecord, Prediction, ProfileInfo, Report
from ..report.prediction import (DOMAIN_FACTOR, DOMAINS_UNKNOWN, FOREIGN_PROFILE, NO_CACHES, NO_TARGET, PARTIAL,
                                 QUICK_PROFILE, STAND_IN_LAWS, WHOLE_MODEL_FIT)
from ..ops.facts import (ABSORBS_PAD, BINARY_NODE, CLAMP, MIN_MAX_CLAMP, OUTPUT_CLAMP, RESHAPE_IN_PLACE, UNARY_NODE,
                         WHILE_LOOP, ZERO_PAD, facts_of)
from ..ops.placement import XNNPACK
from ..ops.registry import MEMORY_FACTS
from .kernels import cpu_target, law_tile, leaves_qd8_state
from .features import op_features
from .profile import (AFTER_QD8_PLACEMENTS, BUILTIN_PLACEMENT, WHOLE_MODEL_SOURCE, XNNPACK_PLACEMENT, DeviceProfile, Law, OpFeatures, elements)
from .cache import invoke_penalty_us, whole_model_penalties

OpKey = tuple[int, int]  # (subgraph, op index)

# Each op type's fusion roles are facts of its record (``OpFacts.fusion``, ops/facts.py):
# CLAMP: the XNNPACK delegate defines it as an XNNPACK clamp node (VisitReluNode in
# tflite/delegates/xnnpack/xnnpack_delegate.cc: RELU is clamp(0, +inf), RELU6 clamp(0, 6), RELU_N1_TO_1
# clamp(-1, 1); the delegate takes them in float only); MIN_MAX_CLAMP: with a constant scalar it becomes a
# clamp too (optimize_common_subgraphs_min_max_to_clamp); OUTPUT_CLAMP: an XNNPACK node with an output clamp
# of its own (has_clamp in src/subgraph.c): a clamp after one merges in; ABSORBS_PAD: a convolution a zero
# ZERO_PAD before it folds into (xnn_subgraph_fusion, "fuse Constant Pad node downstream"); RESHAPE_IN_PLACE:
# a reshape whose copy is skipped.
_NOT_COUNTED = ("unsupported", "opaque", "error")  # no known work: a law would predict its overhead only


class _Graph:
    """Producers and readers of one subgraph's tensors, and which XNNPACK partition holds each op."""

    def __init__(self, sg: Subgraph, partition: Mapping[int, int]) -> None:
        self.sg = sg
        self.partition = partition
        self.producer = {t: op.index for op in sg.operators for t in op.outputs if t >= 0}
        self.readers: dict[int, list[int]] = {}
        for op in sg.operators:
            for t in dict.fromkeys(op.inputs):  # an op reading a tensor twice is one consumer (is_repeated_input)
                if t >= 0:
                    self.readers.setdefault(t, []).append(op.index)
        self.outputs = frozenset(sg.outputs)

    def only_reader(self, tensor: int, op: int) -> bool:
        """``op`` is the one consumer of ``tensor`` in XNNPACK's count (``num_consumers == 1``): no other op
        reads it and it is not an output of the subgraph (an external output counts as one more consumer,
        xnn_subgraph_analyze_consumers_and_producers)."""
        return self.readers.get(tensor) == [op] and tensor not in self.outputs

    def same_partition(self, a: int | None, b: int) -> bool:
        return a is not None and a in self.partition and self.partition.get(a) == self.partition.get(b)


def _constant_scalar_operand(model: Model, sg: Subgraph, op) -> int | None:
    """For a MAXIMUM / MINIMUM, the input that is not a constant scalar when the other one is (whose rank is
    not above the other's, optimize_common_subgraphs_min_max_to_clamp), else None."""
    if len(op.inputs) != 2 or min(op.inputs) < 0:
        return None
    a, b = (sg.tensors[t] for t in op.inputs)
    for const, other in ((b, a), (a, b)):
        if const.is_constant and const.num_elements == 1 and not other.is_constant and \
                len(const.shape) <= len(other.shape):
            return other.index
    return None


def _spatial_zero_pad(model: Model, sg: Subgraph, op) -> bool:
    """A 4-D PAD of the two spatial dims only, by constant amounts (the XNNPACK delegate pads with zero, or the
    zero point of 8-bit tensors: ``is_zero_padding`` holds)."""
    if len(op.inputs) < 2 or op.inputs[1] < 0:
        return False
    x, pads = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    if len(x.shape) != 4 or not pads.is_constant:
        return False
    values = model.constant(pads)
    if values is None or values.size != 8:
        return False
    rows = values.reshape(4, 2)
    return int(abs(rows[0]).sum()) == 0 and int(abs(rows[3]).sum()) == 0


_LUT_CHAIN = 10  # XNN_MAX_UNARY_FUSION_NODES: the longest chain folded into one lookup table
_EIGHT_BIT = ("INT8", "UINT8")


def _unary_input(sg: Subgraph, op, chain: set[int]) -> int | None:
    """The data input of ``op`` when XNNPACK sees it as a pure unary element-wise function
    (``is_pure_unary_elementwise`` in src/subgraph.c): a unary node; a binary node with a constant scalar
    operand (its other input); a binary node whose two inputs are both values of ``chain``; else None."""
    roles = facts_of(op.op_type).fusion
    if UNARY_NODE in roles and op.inputs and op.inputs[0] >= 0:
        return op.inputs[0]
    if BINARY_NODE not in roles or len(op.inputs) != 2 or min(op.inputs) < 0:
        return None
    a, b = (sg.tensors[t] for t in op.inputs)
    if b.is_constant and b.num_elements == 1 and not a.is_constant:
        return a.index
    if a.is_constant and a.num_elements == 1 and not b.is_constant:
        return b.index
    return op.inputs[0] if op.inputs[0] in chain and op.inputs[1] in chain else None


def _lookup_table_chains(sg: Subgraph, g: _Graph) -> list[list[int]]:
    """The chains of delegated ops XNNPACK folds into one 8-bit lookup table
    (``xnn_subgraph_fuse_unary_quantized_into_lut``): from a pure unary element-wise op whose input is 8-bit,
    its one consumer (in the same partition) while that is pure unary on the chain's values (x·sigmoid(x) is),
    at most 10 ops, cut back to the last op whose output is 8-bit; chains of one op are left out."""
    out: list[list[int]] = []
    taken: set[int] = set()
    for op in sg.operators:
        if op.index not in g.partition or op.index in taken:
            continue
        x = _unary_input(sg, op, set())
        if x is None or sg.tensors[x].dtype not in _EIGHT_BIT:
            continue
        chain, values = [op.index], {x, *op.inputs, *op.outputs}
        while len(chain) < _LUT_CHAIN:
            last = sg.operators[chain[-1]]
            y = last.outputs[0] if len(last.outputs) == 1 else -1
            readers = g.readers.get(y, ())
            if y < 0 or len(readers) != 1 or not g.only_reader(y, readers[0]) or \
                    not g.same_partition(readers[0], op.index):
                break
            nxt = sg.operators[readers[0]]
            if len(nxt.outputs) != 1 or _unary_input(sg, nxt, values) is None:
                break
            chain.append(nxt.index)
            values.update(t for t in (*nxt.inputs, *nxt.outputs) if t >= 0)
        while len(chain) > 1 and sg.tensors[sg.operators[chain[-1]].outputs[0]].dtype not in _EIGHT_BIT:
            chain.pop()
        if len(chain) > 1:
            out.append(chain)
            taken.update(chain)
    return out


def fused_ops(model: Model, ops: Sequence[OpRecord]) -> dict[OpKey, str]:
    """The ops XNNPACK fuses away inside their partition, each with what it was folded into.

    Read off XNNPACK's subgraph optimizer (``xnn_subgraph_optimize`` in ``src/subgraph.c``), on the
    ops the delegate takes (``OpRecord.xnnpack``) within one partition (one XNNPACK subgraph):

    * **A clamp merges into its producer** (``optimize_common_subgraphs_merge_clamps``): a RELU, RELU6
      or RELU_N1_TO_1 (the delegate defines them as clamps), or a MAXIMUM / MINIMUM with a constant
      scalar (``optimize_common_subgraphs_min_max_to_clamp`` makes it a clamp first), whose input is
      read by it alone (not by another op, not a subgraph output) and produced in the same partition by
      a CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED, AVERAGE_POOL_2D, MAX_POOL_2D
      (``has_clamp``) or another clamp: the producer's output range absorbs it. Binary ops (ADD, MUL)
      carry no clamp of their own, so a RELU after an ADD stays.
    * **A zero PAD folds into the convolution it feeds** (``xnn_subgraph_fusion``, "fuse Constant Pad node
      downstream into [Depthwise] Convolution 2D"): a 4-D PAD of the spatial dims only, read only by a
      CONV_2D or DEPTHWISE_CONV_2D of the same partition as its data input, with VALID padding (the
      delegate's SAME padding sets ``XNN_FLAG_TENSORFLOW_SAME_PADDING``, which the fusion refuses), and not a
      dynamic-range one: the delegate puts a convert node (the input's dynamic quantization) between them, so
      the PAD runs (measured: PAD 138 us, a hybrid 7x7 conv 251 us, the two 386 us; float32: 306 us, the conv alone).
    * **A RESHAPE runs in place** (``optimize_tensor_allocation_for_in_place_operations`` in
      ``src/runtime.c``): the delegate defines it as a static reshape, a copy node; when its input is
      produced in the partition and read by it alone, and its output is read by one op of the same
      partition only, the output shares the input's memory and the copy operator skips its run
      (``xnn_run_state_skip`` when input == output, ``src/operators/unary-elementwise-nc.c``).

    * **A chain of 8-bit element-wise ops becomes one lookup table**
      (``xnn_subgraph_fuse_unary_quantized_into_lut``, :func:`_lookup_table_chains`): an int8
      x·sigmoid(x) (LOGISTIC then MUL, EfficientNet's swish) runs as one table lookup per element. The
      chain's first op keeps its law (a pass over the same elements; LOGISTIC and TANH are tables
      already), the others cost nothing. Measured (LiteRT 2.3, 80×80×32 int8): LOGISTIC 8.5 µs, MUL 33 µs,
      LOGISTIC then MUL 8.5 µs; 41.5 µs when the sigmoid is also a model output (two consumers).

    Not modelled: the rewrites that change an op's cost rather than remove it (a transposed GEMM
    operand, ``reduce_sum(sqr)``).
    """
    by_subgraph: dict[int, dict[int, int]] = {}
    hybrid = {(o.subgraph, o.index) for o in ops if o.precision == "hybrid"}
    for o in ops:
        if o.xnnpack and o.xnnpack_partition is not None:
            by_subgraph.setdefault(o.subgraph, {})[o.index] = o.xnnpack_partition
    fused: dict[OpKey, str] = {}
    for sg_index, partition in sorted(by_subgraph.items()):
        sg = model.subgraphs[sg_index]
        g = _Graph(sg, partition)
        for chain in _lookup_table_chains(sg, g):
            for i in chain[1:]:
                fused[(sg_index, i)] = (f"8-bit element-wise chain folded into one lookup table with "
                                        f"{sg.operators[chain[0]].op_type} op {sg_index}:{chain[0]}")
        clamps: set[int] = set()  # delegated ops XNNPACK sees as clamps
        for op in sg.operators:
            if op.index not in partition:
                continue
            kind = op.op_type
            roles = facts_of(kind).fusion
            x = None
            if CLAMP in roles and op.inputs:
                x = op.inputs[0]
            elif MIN_MAX_CLAMP in roles:
                x = _constant_scalar_operand(model, sg, op)
            if x is not None and x >= 0:
                clamps.add(op.index)
                p = g.producer.get(x)
                if g.same_partition(p, op.index) and g.only_reader(x, op.index) and \
                        (OUTPUT_CLAMP in facts_of(sg.operators[p].op_type).fusion or p in clamps):
                    fused[(sg_index, op.index)] = f"clamp merged into {sg.operators[p].op_type} op {sg_index}:{p}"
                continue
            if ZERO_PAD in roles and op.outputs and len(g.readers.get(op.outputs[0], ())) == 1:
                y = op.outputs[0]
                c = g.readers[y][0]
                conv = sg.operators[c]
                if ABSORBS_PAD in facts_of(conv.op_type).fusion and g.same_partition(c, op.index) and g.only_reader(y, c) and \
                        conv.inputs and conv.inputs[0] == y and conv.options.get("padding") == "VALID" and \
                        (sg_index, c) not in hybrid and _spatial_zero_pad(model, sg, op):
                    fused[(sg_index, op.index)] = f"zero padding folded into {conv.op_type} op {sg_index}:{c}"
                continue
            if RESHAPE_IN_PLACE in roles and op.inputs and op.outputs:
                x, y = op.inputs[0], op.outputs[0]
                p = g.producer.get(x)
                readers = g.readers.get(y, ())
                if g.same_partition(p, op.index) and g.only_reader(x, op.index) and len(readers) == 1 and \
                        g.only_reader(y, readers[0]) and g.same_partition(readers[0], op.index):
                    fused[(sg_index, op.index)] = "reshape in place (the copy is skipped)"
    return fused


@dataclass(frozen=True)
class FeatureContext:
    """How the laws see the ops of one model on one machine, built once (:func:`feature_context`) and used by
    calibration, prediction and advice alike: the machine's CPU target (its kernels' tiles and depths, the
    share of the L3 a law sees; None: unknown, the laws' defaults) and caches (empty: unknown, the cache terms
    are then 0 and the prediction says so), and the model's loop terms (each WHILE's trips, its re-preparation
    under the delegate's flags, its pass-through variables; the ops with a fused activation)."""

    cpu: Any
    tile: int
    caches: Mapping[str, int]
    trips: Mapping[OpKey, int]
    loops: Mapping[OpKey, tuple[int, int]]
    passed: Mapping[OpKey, int]
    activated: frozenset[OpKey]

    def features(self, o: OpRecord, placement: str) -> OpFeatures:
        """The features of ``o`` placed on ``placement`` (:func:`~tflite_flops.latency.features.op_features`)."""
        key = (o.subgraph, o.index)
        return op_features(o, placement, self.trips.get(key, 0), self.loops.get(key, (0, 0)), self.tile,
                           self.passed.get(key, 0), key in self.activated, self.caches, self.cpu)


# The XNNPACK placement of a subgraph (its ``subsets``, in run order), as the analysis places it with the settings'
# delegate flags (:func:`tflite_flops.analysis.placement.xnnpack_placer`): the prediction sits below the analysis and
# is handed the placement, never places a graph itself.
Placer = Callable[[int], Any]


def feature_context(model: Model, ops: Sequence[OpRecord], target: str | None, caches: Mapping[str, int] | None,
                    xnnpack: bool, place: Placer | None = None) -> FeatureContext:
    """The :class:`FeatureContext` of ``model`` (its ``ops``, analysed) on a machine of CPU target ``target``
    (a profile's ``machine.target``) and ``caches``, XNNPACK on or off, with the analysis's ``place``ment of the
    loop bodies (needed when XNNPACK is on and a loop re-prepares its body: :func:`loop_reprepare`)."""
    return FeatureContext(cpu_target(target), law_tile(target), dict(caches or {}), while_trips(model, ops),
                          loop_reprepare(model, ops, xnnpack, place), while_passthrough(model, ops),
                          frozenset(fused_activations(model, ops)))


def profile_context(model: Model, ops: Sequence[OpRecord], profile: DeviceProfile,
                    place: Placer | None = None) -> FeatureContext:
    """The context a prediction with ``profile`` sees (its machine's target, caches and XNNPACK setting)."""
    m = profile.machine
    return feature_context(model, ops, m.target, m.caches, m.xnnpack, place)


def while_trips(model: Model, ops: Sequence[OpRecord]) -> dict[OpKey, int]:
    """The trips per run of every WHILE: the executions of its body's ops over its own (the walk counts the
    body ``trips`` times per run of the WHILE, ``analysis/walk.py``), 0 when its body has no op or did not
    run. A body several WHILEs share gets the sum of their trips (the walk adds their executions up)."""
    runs: dict[int, int] = {}
    for o in ops:
        if o.phase == "inference":
            runs.setdefault(o.subgraph, o.executions)
    return {(o.subgraph, o.index): runs.get(body, 0) // max(o.executions, 1) if body is not None else 0
            for o, body in _whiles(model, ops)}


def _whiles(model: Model, ops: Sequence[OpRecord]) -> list[tuple[OpRecord, int | None]]:
    """Each WHILE run per inference, with its body's subgraph index (None: none, or out of range)."""
    out = []
    for o in ops:
        if facts_of(o.op_type).control_flow != WHILE_LOOP or o.phase != "inference":
            continue
        body = model.subgraphs[o.subgraph].operators[o.index].subgraph_refs.get("body_subgraph_index")
        out.append((o, body if body is not None and 0 <= body < len(model.subgraphs) else None))
    return out


def fused_activations(model: Model, ops: Sequence[OpRecord]) -> set[OpKey]:
    """The ops whose options fuse an activation (``fused_activation_function`` other than NONE)."""
    out = set()
    for o in ops:
        if 0 <= o.subgraph < len(model.subgraphs) and 0 <= o.index < len(model.subgraphs[o.subgraph].operators):
            act = model.subgraphs[o.subgraph].operators[o.index].options.get("fused_activation_function")
            if act not in (None, "NONE"):
                out.add((o.subgraph, o.index))
    return out


def while_passthrough(model: Model, ops: Sequence[OpRecord]) -> dict[OpKey, int]:
    """Per WHILE, the elements of its loop variables that its body passes through unchanged (the body's output
    is its input tensor: a Keras RNN's input sequence); WHILEs without any are left out. LiteRT does not copy
    those between trips: a 64-trip loop with a pass-through variable of 1, 8192 or 262144 elements took 13.5,
    13.5 and 14.1 us (docs/notes/predict-hybrid-rnn.md)."""
    out: dict[OpKey, int] = {}
    for o, body in _whiles(model, ops):
        if body is None:
            continue
        sg = model.subgraphs[body]
        shapes = getattr(o, "inputs", ()) or ()
        passed = sum(elements(shapes[j]) for j, (x, y) in enumerate(zip(sg.inputs, sg.outputs))
                     if x == y and j < len(shapes))
        if passed:
            out[(o.subgraph, o.index)] = passed
    return out


def loop_reprepare(model: Model, ops: Sequence[OpRecord], xnnpack: bool,
                   place: Placer | None = None) -> dict[OpKey, tuple[int, int]]:
    """Per WHILE whose body has ops with outputs that change shape every trip: (1, the delegated ops LiteRT
    re-prepares every trip); WHILEs without such ops are left out.

    Such an op (one whose kernel sizes its output at Eval, :data:`~tflite_flops.ops.registry.MEMORY_FACTS`'
    ``dynamic_unless``, with an input it needs not constant, and an output whose declared shape has unknown
    dims: a SLICE taking the first ``i`` rows) makes the loop run ``Eval_dynamic`` (its loop variables are
    copied and the body re-allocated every trip), and the body's ``InvokeImpl`` re-prepares every node that
    runs after it (``PrepareOpsAndTensors``): a DELEGATE node's Prepare reshapes its XNNPACK runtime, op by op.
    Measured with callgrind on the LSTM sample: that re-preparation is half its first loop's instructions.

    ``place``: the analysis's XNNPACK placement of a body (:data:`Placer`), needed when ``xnnpack`` is on.

    Raises:
        ValueError: XNNPACK is on, a loop re-prepares its body, and no ``place`` was given.
    """
    out: dict[OpKey, tuple[int, int]] = {}
    for o, body in _whiles(model, ops):
        if body is None:
            continue
        sg = model.subgraphs[body]
        growing = _growing_ops(sg)
        if not growing:
            continue
        reshaped = 0
        if xnnpack:
            if place is None:
                raise ValueError("loop_reprepare: the XNNPACK placement of the loop bodies is needed (place=)")
            placement = place(body)  # the analysis's, with the settings' delegate flags
            subsets = placement.subsets or ()
            after = False
            for delegated, part in subsets:
                if delegated and after:
                    reshaped += len(part.ops)
                after = after or (not delegated and any(i in growing for i in part.ops))
        out[(o.subgraph, o.index)] = (1, reshaped)
    return out


def _growing_ops(sg: Subgraph) -> set[int]:
    """The ops of ``sg`` whose outputs may change shape at every run (see :func:`loop_reprepare`)."""
    tensors = sg.tensors
    found = set()
    for op in sg.operators:
        facts = MEMORY_FACTS.get(op.op_type)
        if facts is None or facts.dynamic_unless is None:
            continue
        needed = [op.inputs[p] for p in facts.dynamic_unless if p < len(op.inputs) and op.inputs[p] >= 0]
        if all(tensors[t].is_constant for t in needed):
            continue
        if any(o >= 0 and -1 in (tensors[o].shape_signature or ()) for o in op.outputs):
            found.add(op.index)
    return found


# DOMAIN_FACTOR (report/prediction.py): beyond it, an op is predicted by extrapolation.
FEATURE_LABELS = {"macs": "MACs", "flops": "FLOPs", "bytes": "bytes", "in": "input elements",
                  "out": "output elements", "params": "weights", "taps": "taps", "tiled_macs": "tiled MACs",
                  "gemm_macs": "MACs the GEMM computes", "narrow_macs": "MACs of the narrow GEMM kernel",
                  "tile_taps": "GEMM tap iterations",
                  "rows": "broadcast rows", "act_out": "elements through a fused activation",
                  "trips": "trips", "copied": "copied elements", "growing_trips": "growing trips",
                  "reshaped": "re-prepared ops"}
# an op's prediction_confidence: "unknown" for an op with its own law in a profile without domains (said once,
# by the prediction's DOMAINS_UNKNOWN flag, not per op)
HIGH, LOW, UNKNOWN = "high", "low", "unknown"


def _times(ratio: float) -> str:
    """"4.1x"; "over 1,000,000x" for a ratio past that (a domain end near 0: never "infx")."""
    return f"{ratio:.1f}x" if ratio < 1e6 else "over 1,000,000x"


def out_of_domain(law: Law, features: OpFeatures, factor: float = DOMAIN_FACTOR) -> str | None:
    """Why ``features`` lie outside ``law``'s fitted domain (the feature furthest out, e.g. "MACs 4.1x above
    the largest fitted"), or None when every feature is within ``factor`` of it (or the law has no domain)."""
    worst: tuple[float, str] | None = None
    for name, (lo, hi) in law.domain.items():
        v = float(features.values.get(name, 0.0))
        label = FEATURE_LABELS.get(name, name)
        if v > hi * factor:
            ratio = v / hi if hi > 0 else float("inf")
            why = f"{label} {_times(ratio)} above the largest fitted" if hi > 0 else f"{label} {v:g}, none fitted"
        elif lo > 0 and v < lo / factor:
            ratio = lo / v if v > 0 else float("inf")
            why = f"{label} {_times(ratio)} below the smallest fitted" if v > 0 else \
                f"{label} 0, the smallest fitted {lo:g}"
        else:
            continue
        if worst is None or ratio > worst[0]:
            worst = (ratio, why)
    return None if worst is None else worst[1]


def op_confidence(profile: DeviceProfile, law: Law, features: OpFeatures) -> str | None:
    """Why an op's prediction has low confidence ("stand-in: group conv", "MACs 4.1x above the largest fitted"),
    or None when its own law predicts it within the law's domain."""
    how = profile.fallback(features)
    if how is not None:
        return f"stand-in: {how}"
    return out_of_domain(law, features)


def _us_to_ms(us: float) -> float:
    return us / 1000.0


# An op's predicted time per inference beyond which it is not predicted (~11.6 days): every input of a law is
# bounded (profile.PROFILE_SCHEMA), but a model's counts are not, and a law far past its fitted domain gives
# nonsense; below it, a sum over any model's ops stays finite. No NaN or infinity reaches a report.
OP_US_MAX = 1e12
_RUNS_MAX = 10**15  # partition runs per inference counted toward the overhead (loops of loops: past it, not predicted)


def usable(law: Law, features: OpFeatures) -> bool:
    """Whether ``law`` can predict ``features``: it has a positive coefficient on a feature the op has (a law of no
    term, of zeros, or of names this version does not compute would predict 0 ms for every op)."""
    return any(c > 0 and name in features.values for name, c in law.coefficients.items())


def op_times(law: Law, features: OpFeatures, extra: float, runs: int) -> tuple[float, float, float, float] | None:
    """(predicted, low, high, cache penalty) in microseconds per run, the cache penalty ``extra`` added to each end;
    None when a figure is not finite or the op's time per inference (``runs`` runs) is beyond OP_US_MAX."""
    try:
        t, lo, hi = (v + extra for v in law.range_us(features))
        if not all(math.isfinite(v) and v >= 0 for v in (t, lo, hi, extra)):
            return None
        worst = max(t, lo, hi) * runs  # a float times an int: OverflowError past a float, never inf unnoticed
    except (ArithmeticError, ValueError):
        return None
    return (t, lo, hi, extra) if worst <= OP_US_MAX else None


@dataclass(frozen=True)
class OpPredictions:
    """The pass's result: the per-op times and what the whole-model figure is made of (ms per inference)."""

    predicted_ms: Mapping[OpKey, float]  # every per-inference op with a prediction (fused ones at 0.0)
    ops_ms: float  # their sum
    low_ms: float  # the sum of their low ends
    high_ms: float  # the sum of their high ends
    overhead_ms: float  # per-invoke + per-partition overheads
    partitions: int  # partition runs per inference
    fused: int
    fallback_ops: int
    not_predicted: Mapping[str, int] = field(default_factory=dict)  # op type -> count
    why: Mapping[str, str] = field(default_factory=dict)  # op type -> why it has no prediction
    fallback: Mapping[str, str] = field(default_factory=dict)  # op type -> how its stand-in law was found
    low_confidence: Mapping[OpKey, str] = field(default_factory=dict)  # op -> why its prediction is low-confidence
    low_confidence_ms: float = 0.0  # the predicted time of those ops
    cache_ms: float = 0.0  # the whole-model cache penalty (latency/cache.py): in ops_ms, and in overhead_ms per invoke


def predict_ops(ops: Sequence[OpRecord], profile: DeviceProfile, fused: Mapping[OpKey, str],
                context: FeatureContext | None = None, penalties: Mapping[OpKey, float] | None = None,
                invoke_penalty: float = 0.0) -> OpPredictions:
    """The predicted time of every per-inference op (ms per inference) and the whole-model figures;
    ``context``: how the laws see the ops (:func:`profile_context`: the calibrated CPU's kernels, the model's loop
    terms; None: the profile's machine and ops outside any loop); ``penalties``: the microseconds per run each op's data costs out of cache in the whole model
    (:func:`tflite_flops.latency.cache.whole_model_penalties`), added to its law's time and to both ends of its
    range; ``invoke_penalty``: the microseconds the invoke's own state costs out of cache
    (:func:`tflite_flops.latency.cache.invoke_penalty_us`), added to the overheads."""
    if context is None:
        m = profile.machine
        context = FeatureContext(cpu_target(m.target), law_tile(m.target), dict(m.caches or {}), {}, {}, {}, frozenset())
    penalties = penalties or {}
    cache_us = invoke_penalty
    xnnpack_on = profile.machine.xnnpack
    cpu = context.cpu  # the calibrated CPU's kernels
    predicted: dict[OpKey, float] = {}
    total = low = high = 0.0
    not_predicted: dict[str, int] = {}
    why: dict[str, str] = {}
    fallback: dict[str, str] = {}
    fallback_ops = fused_count = 0
    low_confidence: dict[OpKey, str] = {}
    low_confidence_us = 0.0
    partition_runs: dict[tuple[int, int], int] = {}
    # per subgraph: the kernels run last left the state of XNNPACK's qd8 (hybrid) GEMM kernel behind: a qd8 fully
    # connected op or pointwise convolution ran (kernels.leaves_qd8_state; not a qd8 convolution of more taps), then
    # only kernels that pay for that state (those with a law after qd8) and keep it (a float32 ADD after
    # the qd8 op clears it: a MAX_POOL_2D then costs what it costs alone; after the qd8 op and a MAX_POOL_2D, a
    # RESIZE_BILINEAR still pays 3.2x; docs/notes/predict-atrous-audio.md)
    after_qd8: dict[int, bool] = {}
    for o in ops:
        if o.phase != "inference":
            continue
        key = (o.subgraph, o.index)
        delegated = bool(xnnpack_on and o.xnnpack)
        placement = XNNPACK_PLACEMENT if delegated else BUILTIN_PLACEMENT
        if not (delegated and key in fused):  # a fused op (a clamp) runs inside the kernel it is folded into
            paying = after_qd8.get(o.subgraph, False) and profile.law(
                OpFeatures(o.op_type, o.precision, AFTER_QD8_PLACEMENTS[placement])) is not None
            if after_qd8.get(o.subgraph) and (paying or not delegated):
                placement = AFTER_QD8_PLACEMENTS[placement]
            after_qd8[o.subgraph] = (delegated and leaves_qd8_state(o, cpu)) or paying
        if delegated and o.xnnpack_partition is not None:
            slot = (o.subgraph, o.xnnpack_partition)
            partition_runs[slot] = max(partition_runs.get(slot, 0), o.executions)
        if delegated and key in fused:
            predicted[key] = 0.0
            fused_count += 1
            continue
        if o.status in _NOT_COUNTED:
            not_predicted[o.op_type] = not_predicted.get(o.op_type, 0) + 1
            why.setdefault(o.op_type, f"its work is not counted ({o.status})")
            continue
        try:
            features = context.features(o, placement)
        except ArithmeticError:  # counts past a float (a crafted model's 1e373 elements)
            not_predicted[o.op_type] = not_predicted.get(o.op_type, 0) + 1
            why.setdefault(o.op_type, "its counts are past a float: too large for a time law")
            continue
        law = profile.law_for(features)
        if law is None:
            not_predicted[o.op_type] = not_predicted.get(o.op_type, 0) + 1
            why.setdefault(o.op_type, f"the profile has no law for it at {features.precision} on {features.placement}, "
                                      "nor a stand-in: group, other precision, generic law")
            continue
        if not usable(law, features):
            not_predicted[o.op_type] = not_predicted.get(o.op_type, 0) + 1
            why.setdefault(o.op_type, f"its law ({law.family}, {law.precision}, {law.placement}) has no positive "
                                      "coefficient on a feature this version knows: it would predict 0 ms")
            continue
        runs = max(o.executions, 1)
        times = op_times(law, features, penalties.get(key, 0.0), runs)
        if times is None:
            not_predicted[o.op_type] = not_predicted.get(o.op_type, 0) + 1
            why.setdefault(o.op_type, f"its predicted time is beyond {OP_US_MAX / 1e6:,.0f} s per inference (its law "
                                      "extrapolated far past the shapes it was fitted on)")
            continue
        how = profile.fallback(features)
        if how is not None:
            fallback_ops += 1
            fallback.setdefault(o.op_type, how)
        t, lo, hi, extra = times
        cache_us += extra * runs
        predicted[key] = _us_to_ms(t * runs)
        doubt = op_confidence(profile, law, features)
        if doubt is not None:
            low_confidence[key] = doubt
            low_confidence_us += t * runs
        # The whole model's range is the sum of the ops' ranges: each op's low and high are quantiles of
        # its law's log residuals, and summing quantiles gives the quantiles of the sum when the ops' errors
        # move together (comonotonic variables: their quantiles add). That is the case to plan for: the
        # ops of one model on one machine share its cache and frequency state, and a law that is off for
        # one shape is off the same way for the model's other ops of that family. Treating the errors as
        # independent would shrink the range by ~1/sqrt(ops) and claim a precision the laws do not have.
        total += t * runs
        low += lo * runs
        high += hi * runs
    # Each delegate partition is one DELEGATE node: its overhead is paid every time it runs (once per
    # invoke, or once per trip of the loop body holding it). The overheads carry no residuals of their own.
    runs_of_partitions = sum(partition_runs.values())
    overhead_us = profile.invoke_overhead_us + profile.partition_overhead_us * min(runs_of_partitions, _RUNS_MAX) \
        + invoke_penalty
    if runs_of_partitions > _RUNS_MAX or overhead_us > OP_US_MAX:  # loops of loops run a partition past counting
        not_predicted["(partition overhead)"] = 1
        why["(partition overhead)"] = (f"{runs_of_partitions:,} partition runs per inference: their overhead is past "
                                       f"{OP_US_MAX / 1e6:,.0f} s")
        overhead_us = profile.invoke_overhead_us + invoke_penalty
    return OpPredictions(predicted, _us_to_ms(total), _us_to_ms(low), _us_to_ms(high), _us_to_ms(overhead_us),
                         runs_of_partitions, fused_count, fallback_ops, dict(sorted(not_predicted.items())), why,
                         fallback, low_confidence, _us_to_ms(low_confidence_us), _us_to_ms(cache_us))


def profile_info(profile: DeviceProfile) -> ProfileInfo:
    """What a report says of the profile it was predicted with."""
    m = profile.machine
    return ProfileInfo(cpu=m.cpu, cores=m.cores, runtime=m.runtime, runtime_version=m.runtime_version,
                       threads=m.threads, xnnpack=m.xnnpack, system=m.system, created=profile.created,
                       source=profile.source, laws=len(profile.laws), suite=profile.suite,
                       range_rate=profile.range_rate)


def prediction_flags(profile: DeviceProfile, p: OpPredictions, forced: str | None) -> tuple[str, ...]:
    """What a prediction rests on as a whole (``report.prediction.FLAGS``, in that order)."""
    m = profile.machine
    return tuple(flag for flag, on in ((PARTIAL, bool(p.not_predicted)), (QUICK_PROFILE, profile.suite == "quick"),
                                       (STAND_IN_LAWS, p.fallback_ops > 0),
                                       (FOREIGN_PROFILE, bool(forced)), (DOMAINS_UNKNOWN, not profile.domains_known),
                                       (NO_TARGET, cpu_target(m.target) is None), (NO_CACHES, not m.caches),
                                       (WHOLE_MODEL_FIT, profile.source == WHOLE_MODEL_SOURCE))
                 if on)


def _confidence_figures(o: OpRecord, p: OpPredictions, domains: bool) -> dict[str, str | None]:
    """The op's ``prediction_confidence`` ("high", "low", "unknown"; None without a prediction) and
    ``prediction_note`` (why low)."""
    key = (o.subgraph, o.index)
    if key not in p.predicted_ms:
        return {"prediction_confidence": None, "prediction_note": None}
    note = p.low_confidence.get(key)
    level = LOW if note is not None else HIGH if domains else UNKNOWN
    return {"prediction_confidence": level, "prediction_note": note}


def add_prediction(report: Report, model: Model, profile: DeviceProfile, forced: str | None = None,
                   place: Placer | None = None) -> Report:
    """``report`` with every per-inference op's ``predicted_ms``, the whole model's ``prediction``, a warning per
    op type without a prediction and a note on the ops a fallback law predicted.

    Args:
        report: the static report of ``model`` (its records carry the XNNPACK placement).
        model: the parsed model (its graph tells which ops the delegate fuses).
        profile: the device profile, already checked against the configuration (or forced).
        forced: the refusal ``--force`` overrode, kept in ``prediction.forced``.
        place: the analysis's XNNPACK placement of a subgraph (:data:`Placer`), for the loops' re-preparation.
    """
    fused = fused_ops(model, report.ops) if profile.machine.xnnpack else {}
    warnings = list(report.warnings)
    try:
        penalties = whole_model_penalties(model, report.ops, profile.cache_curve, profile.cache_curves)
        invoke_penalty = invoke_penalty_us(model, report.ops, profile.cache_curve)
        if not (math.isfinite(invoke_penalty) and 0 <= invoke_penalty <= OP_US_MAX):
            raise OverflowError(invoke_penalty)
    except ArithmeticError:  # tensors past a float's bytes (crafted): the laws predict without the cache costs
        penalties, invoke_penalty = {}, 0.0
        warnings.append("prediction: the whole model's cache costs are left out (its tensors' bytes are past a float)")
    p = predict_ops(report.ops, profile, fused, profile_context(model, report.ops, profile, place), penalties,
                    invoke_penalty)
    ops = tuple(replace(o, predicted_ms=p.predicted_ms.get((o.subgraph, o.index)),
                        figures={**o.figures, **_confidence_figures(o, p, profile.domains_known)}) for o in report.ops)
    latency_ms = p.ops_ms + p.overhead_ms
    prediction = Prediction(
        latency_ms=p.ops_ms + p.overhead_ms, low_ms=p.low_ms + p.overhead_ms, high_ms=p.high_ms + p.overhead_ms,
        profile=profile_info(profile), ops_not_predicted=dict(p.not_predicted), complete=not p.not_predicted,
        placement=XNNPACK_PLACEMENT if profile.machine.xnnpack else BUILTIN_PLACEMENT,
        ops_predicted=len(p.predicted_ms), ops_fused=p.fused, ops_fallback=p.fallback_ops, partitions=p.partitions,
        ops_ms=p.ops_ms, overhead_ms=p.overhead_ms, forced=forced, low_confidence_ms=p.low_confidence_ms,
        low_confidence_ops=len(p.low_confidence),
        low_confidence_share=p.low_confidence_ms / latency_ms if latency_ms > 0 else 0.0,
        flags=prediction_flags(profile, p, forced),
        cache_ms=p.cache_ms if profile.cache_curve or profile.cache_curves else None,
        drift=profile.drift.to_dict() if profile.drift is not None else None)
    for op_type, n in p.not_predicted.items():  # once per op type, never a silent 0
        warnings.append(f"prediction partial: {op_type} ×{n} not predicted ({p.why[op_type]})")
    if forced:
        warnings.append(f"prediction forced (--force): {forced}")
    notes = list(report.notes)
    if p.fallback:
        listing = ", ".join(f"{k} ({v})" for k, v in sorted(p.fallback.items()))
        notes.append(f"prediction: {p.fallback_ops} op(s) predicted by a stand-in law: {listing}")
    return replace(report, ops=ops, prediction=prediction, warnings=tuple(warnings), notes=tuple(notes))
