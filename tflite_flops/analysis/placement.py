"""Where each op runs: a delegate's choice of ops, and the partitions TFLite cuts the graph into.

One pass per subgraph, in execution order, following what LiteRT does when it applies a delegate:

1. **Which ops the delegate takes** (XNNPACK: ``Delegate::PrepareOpsToDelegate`` in
   ``tflite/delegates/xnnpack/xnnpack_delegate.cc``). A DEQUANTIZE of fp16 or int8 weights and a
   DENSIFY of sparse weights are not visited: XNNPACK unpacks their weights at init and claims them,
   unless an op it refuses reads their output. Every other op goes to the op type's registered rule
   (:mod:`tflite_flops.ops.placement`).
2. **Partitions** (``PartitionGraphIntoIndependentNodeSubsets`` in ``tflite/graph_info.cc``, greedy,
   as ``Subgraph::PartitionGraph`` calls it): epochs of ready ops of one kind, the ops with side
   effects (control flow, resource tensors) chained in their order. Each delegated subset becomes
   one DELEGATE node; the others stay on the builtin kernels.

The delegate sees the shapes stored in the file (its tensors are not yet prepared when it is
applied), except the entry subgraph's inputs, which carry the analysed shapes (a resize before
``allocate_tensors``).

**The GPU delegate** (``GetOpsToReplace`` in ``tflite/delegates/gpu/common/model_builder.cc``, with
``FP16GraphPartitionHelper`` of ``tflite/delegates/utils.cc``) decides differently around the rules:

* A DEQUANTIZE of constant fp16 weights is never taken on its own: the ops reading its output are
  checked as if they read the fp16 constant itself (``RemapFp16InputTensors``).
* When every other op is taken, the delegate takes the whole subgraph, those DEQUANTIZEs included,
  whatever its partition limit (scenario 1 of ``GetNodesOfFirstNLargestPartitionsImpl``).
* Otherwise it previews the partitions of the ops it supports and keeps only the largest
  ``max_delegated_partitions`` of them (1 by default, ``TfLiteGpuDelegateOptionsV2Default``); the
  fp16 DEQUANTIZEs stay on the CPU and the delegated ops read the fp16 constants directly, which is
  what the final partitioning (``ReplaceNodeSubsetsWithDelegateKernels``) sees.
* It takes no dynamic tensors, so the interpreter prepares every op before applying it: the GPU
  delegate sees prepared shapes. Pass the ones known beyond the inputs in ``input_shapes``; for a
  model of static shapes the file's shapes are those.
"""

from __future__ import annotations

import heapq
from itertools import chain
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

from ..ops.facts import DEQUANTIZE_WEIGHTS, VARIABLE_HANDLE, VARIABLE_READ, facts_of, xnnpack_facts
from ..ops.placement import (CATEGORY_FED, CATEGORY_INPUTS, CATEGORY_PARTIAL, CATEGORY_PARTITION_LIMIT, CATEGORY_SHAPE,
                             GPU, XNNPACK, DelegateConfig, DelegateOp, DelegateTensor, category_of, decide, reason)
from ..reader.model import Model, Subgraph
from ..report import DelegatePlacement
from ..settings import GPU_ML_DRIFT
from ..report.columns import DELEGATE_FIELDS

_UNDECIDED = object()
_SMALL = 64  # static int tensors up to this many elements carry their values to the rules
# a subgraph's op dependencies as node_subsets reads them (_dependencies): per op, its count of inputs to
# wait for, the tensors it reads and writes, and the ops it releases
_Dependencies = tuple[list[int], list[tuple[int, ...]], list[tuple[int, ...]], list[list[int]]]


class _Variables:
    """XNNPACK's resource variables within one subgraph (``ResourceInfo`` in ``xnnpack_delegate.cc``).

    A VAR_HANDLE binds its resource tensor to a variable (container, shared name); a READ_VARIABLE or
    ASSIGN_VARIABLE its per-op rule accepts is taken only when a VAR_HANDLE of the tensor came
    before it and its value has the type and shape of the first one taken (``AddProxyValue``).
    After the pass, the VAR_HANDLE bound last to each tensor with a taken READ/ASSIGN is claimed.
    """

    def __init__(self) -> None:
        self.global_ids: dict[tuple[str, str], int] = {}
        self.handle: dict[int, int] = {}  # resource tensor -> the VAR_HANDLE op bound to it
        self.bound: dict[int, int] = {}  # resource tensor -> global variable id
        self.proxy: dict[int, DelegateTensor] = {}  # resource tensor -> the first value taken

    def visit(self, op, dop: DelegateOp, found: str | None) -> str | None:
        role = facts_of(op.op_type).resource_variable
        if role == VARIABLE_HANDLE:
            key = (str(op.options.get("container") or ""), str(op.options.get("shared_name") or ""))
            gid = self.global_ids.setdefault(key, len(self.global_ids))
            t = op.outputs[0]
            if self.bound.get(t, gid) == gid:  # ``SetVarHandle`` keeps the first variable of a tensor
                self.bound[t] = gid
                self.handle[t] = op.index
            return found
        if found is not None:
            return found
        resource = op.inputs[0]
        value = dop.outputs[0] if role == VARIABLE_READ else dop.input(1)
        if resource not in self.handle:
            return reason(CATEGORY_INPUTS, "no VAR_HANDLE of its variable before it in this subgraph")
        first = self.proxy.setdefault(resource, value)
        if first is not value and (first.dtype != value.dtype or first.shape != value.shape):
            return reason(CATEGORY_SHAPE, f"variable first used as {first.dtype}{list(first.shape)}, "
                                          f"here {value.dtype}{list(value.shape)}")
        return None

    def claimed(self) -> dict[int, None]:
        """The VAR_HANDLE ops the delegate claims after the pass."""
        return {self.handle[t]: None for t in self.proxy}


@dataclass(frozen=True)
class Partition:
    """One DELEGATE node: the ops it replaces and the tensors crossing its boundary."""

    subgraph: int
    ops: tuple[int, ...]  # op indices in execution order
    inputs: tuple[int, ...]  # tensor indices read from outside (activations, weights)
    outputs: tuple[int, ...]  # tensor indices read after it (or subgraph outputs)


@dataclass(frozen=True)
class SubgraphPlacement:
    """A delegate's decision on one subgraph."""

    subgraph: int
    delegate: str
    reasons: Mapping[int, str | None]  # op index -> None (taken) or why the delegate keeps it off
    partitions: tuple[Partition, ...]  # in the order the runtime runs them
    partition_of: Mapping[int, int]  # op index -> position in ``partitions`` (delegated ops only)
    # every node subset of the partitioning in run order, delegated (True) or left on the CPU (False): the
    # execution plan ``ReplaceNodeSubsetsWithDelegateKernels`` builds, whose size benchmark_model logs as
    # "yielding N partitions"; empty when the delegate takes nothing (nothing is partitioned)
    subsets: tuple[tuple[bool, Partition], ...] = ()


def _tensor_views(model: Model, sg: Subgraph, input_shapes: Mapping[int, tuple[int, ...]]) -> list[DelegateTensor]:
    # The views at the file's shapes are made once per subgraph of a model (both delegates, every call)
    # and kept with it, as its hasher is; the shapes given replace those that differ.
    cache = model.__dict__.get("_delegate_views")
    if cache is None:
        cache = {}
        object.__setattr__(model, "_delegate_views", cache)  # a cache, not state: Model stays frozen
    stored = cache.get(sg.index)
    if stored is None or len(stored) != len(sg.tensors):
        stored = []
        for t in sg.tensors:
            static = t.is_constant and not t.is_variable
            value = None
            if static and t.dtype in ("INT32", "INT64") and t.num_elements <= _SMALL and t.sparsity is None:
                value = model.constant(t)
            stored.append(DelegateTensor(t.index, t.dtype, t.shape, static, False, t.quantization,
                                         t.sparsity is not None, value))
        cache[sg.index] = stored
    views = list(stored)
    for index, shape in input_shapes.items():
        if 0 <= index < len(views) and views[index].shape != shape:
            views[index] = views[index]._replace(shape=shape)
    return views


def _unpacked_at_init(unpacking: str, src: DelegateTensor, dst: DelegateTensor) -> bool:
    """``PrepareOpsToDelegate``'s test for a DEQUANTIZE of fp16/int8 weights (static, or themselves
    unpacked) or a DENSIFY of static sparse weights: XNNPACK unpacks them at init."""
    if unpacking == DEQUANTIZE_WEIGHTS:
        return (not src.sparse and (src.static or src.quasi_static) and dst.dtype == "FLOAT32"
                and (src.dtype == "FLOAT16" or (src.dtype == "INT8" and src.quantization is not None)))
    return src.static and src.sparse and src.dtype in ("FLOAT16", "INT8", "FLOAT32") and dst.dtype == src.dtype


class _Alike:
    """One delegate's decisions within one placement call, shared by the ops it sees alike.

    A rule is a pure function of its :class:`DelegateOp`: the op type, version and options, and each
    tensor as the delegate sees it, where only a tensor's index tells it apart from another of the same
    type, shape, quantization, constness, values and neighbours (a rule compares indices, never reads
    one: one tensor read as both inputs). Two ops alike in all of that, tensors read twice in the same
    slots included, get the same decision, so it is made once: a model of 100,000 identical ops calls
    its rule once, not 100,000 times (a real model's repeated blocks, a few times). A tensor's class
    is the content of its view, interned; the views replaced during the pass (an unpacked weight) get
    theirs again with :meth:`update`.
    """

    __slots__ = ("classes", "of", "options", "found")

    def __init__(self, views: Sequence[DelegateTensor | None]) -> None:
        self.classes: dict[object, int] = {}
        self.options: dict[int, object] = {}  # id of an options mapping (the ops keep it alive) -> its class
        self.found: dict[object, str | None] = {}  # an op's class -> the decision
        self.of = [self._class(v) for v in views]  # per tensor index (-1: the last, an omitted tensor)

    def _class(self, v: DelegateTensor | None) -> int:
        if v is None:
            content: object = None
        elif v.value is None and v.quantization is None:
            content = v[1:]  # all but the index
        else:  # a small constant's values by their bytes, a quantization's numbers exactly (-0.0 is not 0.0 to a reason)
            value, q = v.value, v.quantization
            content = (v[1:5], None if q is None else tuple(map(_exact, (q.kind, q.axis, q.num_scales, q.scale,
                                                                        q.zero_point, q.uniform_scales))),
                       v[6], None if value is None else (value.dtype.str, value.shape, value.tobytes()), v[8:])
        return self.classes.setdefault(content, len(self.classes))

    def update(self, index: int, view: DelegateTensor) -> None:
        """The view of tensor ``index`` was replaced by ``view``."""
        self.of[index] = self._class(view)

    def key(self, op_type: str, version: int, options: Mapping[str, object], inputs: tuple[int, ...],
            outputs: tuple[int, ...]) -> object:
        """The class of an op reading ``inputs`` and writing ``outputs`` (tensor indices as its DelegateOp
        holds them: -1 for an omitted one)."""
        opt = self.options.get(id(options))
        if opt is None:
            try:
                content: object = tuple([(k, _exact(v)) for k, v in options.items()])
                hash(content)
            except TypeError:  # an unhashable option value (a list): this mapping is a class of its own
                content = ("id", id(options))
            opt = self.options[id(options)] = self.classes.setdefault(("options", content), len(self.classes))
        of = self.of
        tensors = inputs + outputs
        shape = tuple([of[t] for t in tensors])
        if len(set(tensors)) != len(tensors):  # a tensor in two slots: which slots, as a rule comparing indices sees
            shape = (shape, tuple([tensors.index(t) for t in tensors]))
        return op_type, version, opt, len(inputs), shape


def _exact(x: object) -> object:
    """``x`` as a class's content tells it apart: by its type too (1, 1.0 and True are equal, and a reason may
    write them differently) and a float by its bits (-0.0 equals 0.0; a NaN is not equal to itself)."""
    kind = type(x)
    if kind is float:
        return float, x.hex()
    return (tuple, tuple(map(_exact, x))) if kind is tuple else (kind, x)


def xnnpack_placer(model: Model, config: DelegateConfig = DelegateConfig()) -> Callable[[int], SubgraphPlacement]:
    """``subgraph index -> its XNNPACK placement`` with the delegate's flags ``config`` (the settings'): what the
    prediction is handed to see which ops of a loop's body XNNPACK re-prepares (``latency.predict.Placer``)."""
    return lambda index: place_subgraph(model, index, XNNPACK, config)


def place_subgraph(model: Model, index: int, delegate: str = XNNPACK, config: DelegateConfig = DelegateConfig(),
                   input_shapes: Mapping[int, tuple[int, ...]] | None = None) -> SubgraphPlacement:
    """What ``delegate`` takes of subgraph ``index`` and the partitions it forms.

    Args:
        model: the parsed model.
        index: the subgraph.
        delegate: :data:`~tflite_flops.ops.placement.XNNPACK` or :data:`~tflite_flops.ops.placement.GPU`.
        config: the delegate's flags.
        input_shapes: shapes of the subgraph's inputs when they were resized (tensor index -> shape).

    Returns:
        The reason per op (None when taken), and the partitions.
    """
    sg = model.subgraphs[index]
    tensors = _tensor_views(model, sg, input_shapes or {})
    graph = _model_dependencies(model, index)
    if delegate == GPU:
        return _place_gpu(sg, tensors, config, graph)
    views: list[DelegateTensor | None] = list(tensors)
    views.append(None)  # index -1: an omitted optional tensor
    unpack: dict[int, int] = {}  # tensor unpacked at init -> the DEQUANTIZE/DENSIFY producing it
    unpack_nodes: dict[int, str | None] = {}  # op -> None, or why it is not claimed after all
    reasons: dict[int, str | None] = {}
    consumers: dict[int, list[int]] | None = None  # built when an fp16 DEQUANTIZE asks
    variables = _Variables()
    alike = _Alike(views)

    for op in sg.operators:
        kind = op.op_type
        facts = facts_of(kind)
        unpacking = facts.weight_unpacking
        if unpacking and len(op.inputs) == 1 and len(op.outputs) == 1 and delegate == XNNPACK:
            src, dst = views[op.inputs[0]], views[op.outputs[0]]
            if src is not None and dst is not None and _unpacked_at_init(unpacking, src, dst):
                fp16_weights = False
                if unpacking == DEQUANTIZE_WEIGHTS and src.dtype == "FLOAT16":
                    if consumers is None:
                        consumers = {}
                        for other in sg.operators:
                            for t in set(other.inputs):
                                consumers.setdefault(t, []).append(other.index)
                    fp16_weights = all(xnnpack_facts(sg.operators[c].op_type).gemm
                                       and sg.operators[c].inputs[0] != dst.index for c in consumers.get(dst.index, ()))
                views[dst.index] = dst._replace(quasi_static=True, fp16_weights=fp16_weights)
                alike.update(dst.index, views[dst.index])
                unpack[dst.index] = op.index
                unpack_nodes[op.index] = None
                continue
        if delegate == XNNPACK and facts.resource_variable:  # the pass' variables decide too: no sharing
            dop = DelegateOp(kind, op.version, op.options, tuple([views[t] for t in op.inputs]),
                             tuple([views[t] for t in op.outputs]), config)  # type: ignore[arg-type]
            found = variables.visit(op, dop, decide(delegate, dop))
        else:
            key = alike.key(kind, op.version, op.options, op.inputs, op.outputs)
            found = alike.found.get(key, _UNDECIDED)
            if found is _UNDECIDED:
                dop = DelegateOp(kind, op.version, op.options, tuple([views[t] for t in op.inputs]),
                                 tuple([views[t] for t in op.outputs]), config)  # type: ignore[arg-type]
                found = alike.found[key] = decide(delegate, dop)
        reasons[op.index] = found
        if found is not None and unpack:
            for t in op.inputs:
                producer = unpack.get(t)
                if producer is not None and unpack_nodes.get(producer) is None:
                    unpack_nodes[producer] = reason(CATEGORY_FED, f"{kind} (op {op.index}) reads its output")
    reasons.update(unpack_nodes)
    reasons.update(variables.claimed())
    reasons = dict(sorted(reasons.items()))
    taken = [i for i, r in reasons.items() if r is None]
    subsets = node_subsets(sg, taken, graph) if taken else ()
    partitions = tuple(part for delegated, part in subsets if delegated)
    partition_of = {op: p for p, part in enumerate(partitions) for op in part.ops}
    return SubgraphPlacement(index, delegate, reasons, partitions, partition_of, subsets)


def _neighbours(sg: Subgraph, views: list[DelegateTensor]) -> list[DelegateTensor]:
    """The views with each tensor's producer and readers (``GetTensorInfo`` in model_builder.cc counts
    a reader once per input slot naming the tensor)."""
    producer: dict[int, str] = {}
    readers: dict[int, list[tuple[str, str]]] = {}
    for op in sg.operators:
        first = views[op.outputs[0]].dtype if op.outputs and op.outputs[0] >= 0 else ""
        for t in op.inputs:
            if t >= 0:
                readers.setdefault(t, []).append((op.op_type, first))
        for t in op.outputs:
            if t >= 0:
                producer[t] = op.op_type
    if DelegateTensor._fields[-2:] != ("producer", "readers"):
        return [v._replace(producer=producer.get(v.index), readers=tuple(readers.get(v.index, ()))) for v in views]
    new, none = tuple.__new__, ()  # what _replace makes, without its keyword machinery per tensor
    return [new(DelegateTensor, (*v[:-2], producer.get(v.index), tuple(readers.get(v.index, none)))) for v in views]


def _place_gpu(sg: Subgraph, views: list[DelegateTensor], config: DelegateConfig, graph: _Dependencies
               ) -> SubgraphPlacement:
    """The GPU delegate's choice on one subgraph: ``GetOpsToReplace`` (model_builder.cc) with
    ``FP16GraphPartitionHelper`` (tflite/delegates/utils.cc); ``graph``: :func:`_dependencies` of ``sg``."""
    views = _neighbours(sg, views)
    fp16_source: dict[int, int] = {}  # output of a constant-fp16 DEQUANTIZE -> its fp16 constant
    fp16_nodes: list[int] = []
    reasons: dict[int, str | None] = {}
    alike = _Alike([*views, None])
    # an omitted input is None to the rule, -1 to the key (an index below -1, which the reader refuses, too); an
    # omitted output is tensor 0's view to the rule (then an op's outputs are read through max(t, 0))
    odd_inputs = min(chain.from_iterable(op.inputs for op in sg.operators), default=0) < -1
    odd_outputs = min(chain.from_iterable(op.outputs for op in sg.operators), default=0) < 0
    for op in sg.operators:
        if facts_of(op.op_type).weight_unpacking == DEQUANTIZE_WEIGHTS and op.inputs and op.inputs[0] >= 0:
            src = views[op.inputs[0]]
            if src.dtype == "FLOAT16" and src.static:  # FP16GraphPartitionHelper::IsNodeSupported
                for t in op.outputs[:1]:
                    fp16_source[t] = src.index
                fp16_nodes.append(op.index)
                continue
        ins = op.inputs
        if fp16_source or odd_inputs:
            ins = tuple([-1 if t < 0 else fp16_source.get(t, t) for t in ins])
        outs = tuple([max(t, 0) for t in op.outputs]) if odd_outputs else op.outputs
        key = alike.key(op.op_type, op.version, op.options, ins, outs)
        found = alike.found.get(key, _UNDECIDED)
        if found is _UNDECIDED:
            dop = DelegateOp(op.op_type, op.version, op.options, tuple([None if t < 0 else views[t] for t in ins]),
                             tuple([views[t] for t in outs]), config)
            found = alike.found[key] = decide(GPU, dop)
        reasons[op.index] = found
    supported = [i for i, r in reasons.items() if r is None]
    n_ops = len(sg.operators)
    reuse: tuple[tuple[bool, Partition], ...] | None = None  # the final subsets, when they are the preview's
    if n_ops and len(supported) + len(fp16_nodes) == n_ops:
        # Scenario 1, full delegation: every node, the fp16 DEQUANTIZEs too, whatever the partition limit.
        for i in fp16_nodes:
            reasons[i] = None
        chosen = list(range(n_ops))
    else:
        # Scenario 2: the largest max_delegated_partitions partitions of the supported ops (std::sort by size,
        # descending; ties are kept in run order here, std::sort does not promise one), the fp16 DEQUANTIZEs
        # on the CPU.
        # Delegate::Delegate (classic); ML Drift's delegates pass the literal 1 to GetOpsToReplace
        limit = 1 if config.gpu_delegate == GPU_ML_DRIFT else max(config.gpu_max_partitions, 1)
        preview_subsets = node_subsets(sg, supported, graph) if supported else ()
        preview = tuple(part for taken, part in preview_subsets if taken)
        ranked = sorted(range(len(preview)), key=lambda p: -len(preview[p].ops))
        kept = set(ranked[:limit])
        chosen = sorted(op for p in kept for op in preview[p].ops)
        if not fp16_source and len(kept) == len(preview):
            reuse = preview_subsets  # every previewed partition kept: the same ops of the same graph, partitioned again
        for p in ranked[limit:]:
            for op in preview[p].ops:
                reasons[op] = reason(CATEGORY_PARTITION_LIMIT,
                                     f"supported, but in a GPU partition of {len(preview[p].ops)} ops outside the "
                                     f"largest {limit} (max_delegated_partitions = {limit})")
        for i in fp16_nodes:
            reasons[i] = reason(CATEGORY_PARTIAL, "DEQUANTIZE of fp16 weights: the GPU delegate reads the fp16 "
                                                  "constant itself and leaves this op on the CPU unless it takes "
                                                  "every op of the subgraph")
    reasons = dict(sorted(reasons.items()))
    if reuse is None:
        remapped = _remap_fp16(sg, fp16_source, set(chosen))  # the graph itself when no fp16 input is remapped
        subsets = node_subsets(remapped, chosen, graph if remapped is sg else None) if chosen else ()
    else:
        subsets = reuse
    partitions = tuple(part for taken, part in subsets if taken)
    partition_of = {op: p for p, part in enumerate(partitions) for op in part.ops}
    return SubgraphPlacement(sg.index, GPU, reasons, partitions, partition_of, subsets)


def _remap_fp16(sg: Subgraph, fp16_source: Mapping[int, int], chosen: set[int]) -> Subgraph:
    """The subgraph with the chosen ops' inputs read from a constant-fp16 DEQUANTIZE pointed at the fp16
    constant (``RemapFp16InputTensors(ops_to_replace)``, before ``ReplaceNodeSubsetsWithDelegateKernels``)."""
    if not fp16_source:
        return sg
    ops = tuple(op._replace(inputs=tuple(fp16_source.get(t, t) for t in op.inputs)) if op.index in chosen else op
                for op in sg.operators)
    return replace(sg, operators=ops)


def partition(sg: Subgraph, delegated: Sequence[int], graph: "_Dependencies | None" = None
              ) -> tuple[Partition, ...]:
    """The delegated subsets of ``PartitionGraphIntoIndependentNodeSubsets`` (greedy), in run order
    (``graph``: as :func:`node_subsets` takes it)."""
    return tuple(part for taken, part in node_subsets(sg, delegated, graph) if taken)


def _dependencies(sg: Subgraph) -> _Dependencies:
    """What :func:`node_subsets` needs of the graph whatever the delegated ops, per op: its count of inputs
    computed by an op (distinct tensors) plus control edges, the tensors it reads and writes (omitted ones
    left out), and the ops it releases (the readers of its outputs, then the next op with side effects:
    a control edge from each op with side effects to the next one)."""
    ops = sg.operators
    producer = {t: op.index for op in ops for t in op.outputs if t >= 0}
    consumers: dict[int, list[int]] = {}
    waiting = [0] * len(ops)  # inputs not yet computed (distinct tensors) + control edges not yet released
    for op in ops:
        for t in set(op.inputs):
            if t >= 0 and t in producer:
                consumers.setdefault(t, []).append(op.index)
                waiting[op.index] += 1
    # ``Subgraph::OpMightHaveSideEffect``: IF/WHILE/CALL_ONCE, or a RESOURCE tensor among its inputs or outputs
    # (a VARIANT tensor does not count).
    resource = {t.index for t in sg.tensors if t.dtype == "RESOURCE"}
    successor: dict[int, int] = {}
    last = -1
    for op in ops:
        if facts_of(op.op_type).side_effects or (resource and not resource.isdisjoint((*op.inputs, *op.outputs))):
            if last >= 0:
                successor[last] = op.index
                waiting[op.index] += 1
            last = op.index
    reads = [tuple(t for t in op.inputs if t >= 0) for op in ops]
    writes = [tuple(t for t in op.outputs if t >= 0) for op in ops]
    released = [[c for t in writes[i] for c in consumers.get(t, ())] for i in range(len(ops))]
    for i, after in successor.items():
        released[i].append(after)
    return waiting, reads, writes, released


def _model_dependencies(model: Model, index: int) -> _Dependencies:
    """:func:`_dependencies` of the model's subgraph ``index``, made once per model (both delegates, the GPU
    delegate's preview and final partitions) and kept with it, as its tensor views are."""
    cache = model.__dict__.get("_delegate_graphs")
    if cache is None:
        cache = {}
        object.__setattr__(model, "_delegate_graphs", cache)  # a cache, not state: Model stays frozen
    found = cache.get(index)
    if found is None:
        found = cache[index] = _dependencies(model.subgraphs[index])
    return found


def node_subsets(sg: Subgraph, delegated: Sequence[int], graph: "_Dependencies | None" = None
                 ) -> tuple[tuple[bool, Partition], ...]:
    """Every subset of ``PartitionGraphIntoIndependentNodeSubsets`` (greedy), delegated (True) or not,
    in run order: the execution plan ``ReplaceNodeSubsetsWithDelegateKernels`` builds from them.

    Epoch after epoch, the first ready op (lowest index) sets the epoch's kind (delegated or not),
    and every op of that kind whose inputs become ready joins it, until none can: TFLite finds
    this fixed point by rescanning the ops in order; here a ready count per op reaches it in one
    pass over the edges. Ops with side effects (control flow, resource tensors) keep their order
    through control edges. ``graph``: :func:`_dependencies` of ``sg``, when the caller has them.
    """
    ops = sg.operators
    n = len(ops)
    kind = [False] * n
    for i in delegated:
        kind[i] = True
    waits, reads, writes, releases = _dependencies(sg) if graph is None else graph
    waiting = list(waits)
    ready = [i for i in range(n) if not waiting[i]]
    heapq.heapify(ready)
    epoch_of_tensor: dict[int, int] = {}
    source_of = epoch_of_tensor.get
    subsets: list[tuple[bool, list[int], set[int], set[int]]] = []  # (kind, ops, inputs, outputs)
    while ready:
        epoch = len(subsets)
        this = kind[ready[0]]
        current = (this, [], set(), set())
        subsets.append(current)
        members, crossing = current[1], current[2]
        later = []
        queue = []
        while ready:  # split the ready ops: this epoch's kind now, the other kind later
            i = heapq.heappop(ready)
            (queue if kind[i] == this else later).append(i)
        while queue:
            i = queue.pop()
            members.append(i)
            for t in reads[i]:
                source = source_of(t, -2)
                if source != epoch:
                    crossing.add(t)
                    if source >= 0:
                        subsets[source][3].add(t)
            for t in writes[i]:
                epoch_of_tensor[t] = epoch
            for c in releases[i]:
                waiting[c] -= 1
                if not waiting[c]:
                    (queue if kind[c] == this else later).append(c)
        ready = later
        heapq.heapify(ready)
    for t in sg.outputs:
        if t in epoch_of_tensor:
            subsets[epoch_of_tensor[t]][3].add(t)
    return tuple((s[0], Partition(sg.index, tuple(sorted(s[1])), tuple(sorted(s[2])), tuple(sorted(s[3]))))
                 for s in subsets)


def place_model(model: Model, shapes: Mapping[int, Mapping[int, tuple[int, ...]]], delegate: str,
                config: DelegateConfig = DelegateConfig()) -> dict[int, SubgraphPlacement]:
    """:func:`place_subgraph` over the subgraphs ``shapes`` names, each with the shapes known beyond the file's."""
    return {i: place_subgraph(model, i, delegate, config, known) for i, known in shapes.items()}


def delegate_shapes(delegate: str, model: Model, states: Mapping[int, object], subgraphs: Sequence[int],
                    entry: int) -> dict[int, dict[int, tuple[int, ...]]]:
    """The shapes each delegate sees, per subgraph: XNNPACK is applied before the tensors are prepared (the
    entry's inputs carry the analysed shapes, the rest the file's); the GPU delegate after every op was
    prepared (every analysed shape that was resolved)."""
    out: dict[int, dict[int, tuple[int, ...]]] = {}
    for i in subgraphs:
        state = states.get(i)
        if state is None:
            out[i] = {}
        elif delegate == GPU:
            out[i] = {t: tuple(s) for t, (s, ok) in enumerate(zip(state.shapes, state.resolved)) if ok}  # type: ignore[attr-defined]
        else:
            out[i] = {t: tuple(state.shapes[t]) for t in model.subgraphs[i].inputs} if i == entry else {}  # type: ignore[attr-defined]
    return out


def placement_figures(placed: Mapping[int, SubgraphPlacement], keys: Sequence[tuple[int, int]], prefix: str,
                      rules: str | None = None) -> tuple[dict[str, dict[tuple[int, int], object]], DelegatePlacement]:
    """The per-op fields ``<prefix>``, ``<prefix>_reason``, ``<prefix>_partition`` of the ops ``keys``, and the summary
    (``rules``: the GPU's model the placement followed, ``DelegateConfig.gpu_delegate``)."""
    taken: dict[tuple[int, int], object] = {}
    why: dict[tuple[int, int], object] = {}
    where: dict[tuple[int, int], object] = {}
    by_reason: dict[str, int] = {}
    for key in keys:
        p = placed.get(key[0])
        if p is None:
            continue
        r = p.reasons.get(key[1])
        taken[key], why[key], where[key] = r is None, r, p.partition_of.get(key[1])
        if r is not None:
            category = category_of(r)
            by_reason[category] = by_reason.get(category, 0) + 1
    delegated = sum(1 for v in taken.values() if v)
    summary = DelegatePlacement(
        delegated_ops=delegated, kept_ops=len(taken) - delegated,
        partitions=sum(len(p.partitions) for p in placed.values()),
        kept_by_reason=dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
        partitions_by_subgraph={str(i): len(p.partitions) for i, p in sorted(placed.items())},
        subsets=sum(len(p.subsets) for p in placed.values()),
        subsets_by_subgraph={str(i): len(p.subsets) for i, p in sorted(placed.items())}, rules=rules)
    fields = DELEGATE_FIELDS[prefix]  # the delegate's per-op figures, as declared
    return {fields.taken: taken, fields.reason: why, fields.partition: where}, summary
