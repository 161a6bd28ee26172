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

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from ..ops.placement import (CATEGORY_FED, CATEGORY_PARTIAL, CATEGORY_PARTITION_LIMIT, GPU, XNNPACK, DelegateConfig,
                              DelegateOp, DelegateTensor, decide, reason)
from ..reader.model import Model, Subgraph

_SMALL = 64  # static int tensors up to this many elements carry their values to the rules
_GEMM_WEIGHT_READERS = frozenset({"FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D"})
_SIDE_EFFECT_OPS = frozenset({"IF", "WHILE", "CALL_ONCE"})


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


def _tensor_views(model: Model, sg: Subgraph, input_shapes: Mapping[int, tuple[int, ...]]) -> list[DelegateTensor]:
    views = []
    for t in sg.tensors:
        static = t.is_constant and not t.is_variable
        value = None
        if static and t.dtype in ("INT32", "INT64") and t.num_elements <= _SMALL and t.sparsity is None:
            value = model.constant(t)
        views.append(DelegateTensor(t.index, t.dtype, input_shapes.get(t.index, t.shape), static, False,
                                    t.quantization, t.sparsity is not None, value))
    return views


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
    views = _tensor_views(model, sg, input_shapes or {})
    if delegate == GPU:
        return _place_gpu(sg, views, config)
    consumers: dict[int, list[int]] = {}
    for op in sg.operators:
        for t in op.inputs:
            if t >= 0:
                consumers.setdefault(t, []).append(op.index)
    unpack: dict[int, int] = {}  # tensor unpacked at init -> the DEQUANTIZE/DENSIFY producing it
    unpack_nodes: dict[int, str | None] = {}  # op -> None, or why it is not claimed after all
    fp16_weights: set[int] = set()  # outputs of fp16 DEQUANTIZEs feeding only weights (seen as FLOAT16)
    reasons: dict[int, str | None] = {}

    def view(t: int) -> DelegateTensor | None:
        if t < 0:
            return None
        v = views[t]
        if t in unpack:
            v = v._replace(quasi_static=True, fp16_weights=t in fp16_weights)
        return v

    for op in sg.operators:
        kind = op.op_type
        if kind in ("DEQUANTIZE", "DENSIFY") and len(op.inputs) == 1 and len(op.outputs) == 1 and delegate == XNNPACK:
            src, dst = views[op.inputs[0]], views[op.outputs[0]]
            if kind == "DEQUANTIZE":
                fits = (not src.sparse and (src.static or src.index in unpack) and dst.dtype == "FLOAT32"
                        and (src.dtype == "FLOAT16" or (src.dtype == "INT8" and src.quantization is not None)))
            else:
                fits = src.static and src.sparse and src.dtype in ("FLOAT16", "INT8", "FLOAT32") and dst.dtype == src.dtype
            if fits:
                if kind == "DEQUANTIZE" and src.dtype == "FLOAT16" and all(
                        sg.operators[c].op_type in _GEMM_WEIGHT_READERS and sg.operators[c].inputs[0] != dst.index
                        for c in consumers.get(dst.index, ())):
                    fp16_weights.add(dst.index)
                unpack[dst.index] = op.index
                unpack_nodes[op.index] = None
                continue
        dop = DelegateOp(kind, op.version, op.options, tuple(view(t) for t in op.inputs),
                         tuple(view(t) if t >= 0 else views[0] for t in op.outputs), config)
        found = decide(delegate, dop)
        reasons[op.index] = found
        if found is not None:
            for t in op.inputs:
                producer = unpack.get(t)
                if producer is not None and unpack_nodes.get(producer) is None:
                    unpack_nodes[producer] = reason(CATEGORY_FED, f"{kind} (op {op.index}) reads its output")
    reasons.update(unpack_nodes)
    reasons = dict(sorted(reasons.items()))
    taken = [i for i, r in reasons.items() if r is None]
    partitions = partition(sg, taken) if taken else ()
    partition_of = {op: p for p, part in enumerate(partitions) for op in part.ops}
    return SubgraphPlacement(index, delegate, reasons, partitions, partition_of)


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
    return [v._replace(producer=producer.get(v.index), readers=tuple(readers.get(v.index, ()))) for v in views]


def _place_gpu(sg: Subgraph, views: list[DelegateTensor], config: DelegateConfig) -> SubgraphPlacement:
    """The GPU delegate's choice on one subgraph: ``GetOpsToReplace`` (model_builder.cc) with
    ``FP16GraphPartitionHelper`` (tflite/delegates/utils.cc)."""
    views = _neighbours(sg, views)
    fp16_source: dict[int, int] = {}  # output of a constant-fp16 DEQUANTIZE -> its fp16 constant
    fp16_nodes: list[int] = []
    reasons: dict[int, str | None] = {}
    for op in sg.operators:
        if op.op_type == "DEQUANTIZE" and op.inputs and op.inputs[0] >= 0:
            src = views[op.inputs[0]]
            if src.dtype == "FLOAT16" and src.static:  # FP16GraphPartitionHelper::IsNodeSupported
                for t in op.outputs[:1]:
                    fp16_source[t] = src.index
                fp16_nodes.append(op.index)
                continue
        inputs = tuple(None if t < 0 else views[fp16_source.get(t, t)] for t in op.inputs)
        dop = DelegateOp(op.op_type, op.version, op.options, inputs,
                         tuple(views[t] if t >= 0 else views[0] for t in op.outputs), config)
        reasons[op.index] = decide(GPU, dop)
    supported = [i for i, r in reasons.items() if r is None]
    n_ops = len(sg.operators)
    if n_ops and len(supported) + len(fp16_nodes) == n_ops:
        # Scenario 1, full delegation: every node, the fp16 DEQUANTIZEs too, whatever the partition limit.
        for i in fp16_nodes:
            reasons[i] = None
        chosen = list(range(n_ops))
    else:
        # Scenario 2: the largest max_delegated_partitions partitions of the supported ops (std::sort by size,
        # descending; ties are kept in run order here, std::sort does not promise one), the fp16 DEQUANTIZEs
        # on the CPU.
        limit = config.gpu_max_partitions if config.gpu_max_partitions > 0 else 1  # Delegate::Delegate
        preview = partition(sg, supported) if supported else ()
        ranked = sorted(range(len(preview)), key=lambda p: -len(preview[p].ops))
        kept = set(ranked[:limit])
        chosen = sorted(op for p in kept for op in preview[p].ops)
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
    partitions = partition(_remap_fp16(sg, fp16_source, set(chosen)), chosen) if chosen else ()
    partition_of = {op: p for p, part in enumerate(partitions) for op in part.ops}
    return SubgraphPlacement(sg.index, GPU, reasons, partitions, partition_of)


def _remap_fp16(sg: Subgraph, fp16_source: Mapping[int, int], chosen: set[int]) -> Subgraph:
    """The subgraph with the chosen ops' inputs read from a constant-fp16 DEQUANTIZE pointed at the fp16
    constant (``RemapFp16InputTensors(ops_to_replace)``, before ``ReplaceNodeSubsetsWithDelegateKernels``)."""
    if not fp16_source:
        return sg
    ops = tuple(op._replace(inputs=tuple(fp16_source.get(t, t) for t in op.inputs)) if op.index in chosen else op
                for op in sg.operators)
    return replace(sg, operators=ops)


def partition(sg: Subgraph, delegated: Sequence[int]) -> tuple[Partition, ...]:
    """The delegated subsets of ``PartitionGraphIntoIndependentNodeSubsets`` (greedy), in run order.

    Epoch after epoch, every op whose inputs are ready joins the epoch if it is of the epoch's kind
    (the first ready op sets the kind), scanning the ops in order until nothing more joins. Ops with
    side effects (control flow, resource tensors) keep their order through control edges.
    """
    ops = sg.operators
    n = len(ops)
    kind = [False] * n
    for i in delegated:
        kind[i] = True
    ready_at: dict[int, int] = {}  # tensor -> epoch that produced it; absent: ready from the start
    produced = {t for op in ops for t in op.outputs if t >= 0}
    resource = {t.index for t in sg.tensors if t.dtype in ("RESOURCE", "VARIANT")}
    successor: dict[int, int] = {}
    incoming = [0] * n
    last = -1
    for op in ops:
        if op.op_type in _SIDE_EFFECT_OPS or any(t in resource for t in (*op.inputs, *op.outputs)):
            if last >= 0:
                successor[last] = op.index
                incoming[op.index] += 1
            last = op.index
    epoch_of = [-1] * n
    subsets: list[tuple[bool | None, list[int], list[int], list[int]]] = []  # (kind, ops, inputs, outputs)
    pending = list(range(n))
    while pending:
        current: list = [None, [], [], []]
        subsets.append(current)  # type: ignore[arg-type]
        epoch = len(subsets) - 1
        progress = True
        while progress:
            progress = False
            rest = []
            for i in pending:
                op = ops[i]
                if incoming[i] or any(t >= 0 and t in produced and t not in ready_at for t in op.inputs):
                    rest.append(i)
                    continue
                if current[0] is None:
                    current[0] = kind[i]
                if current[0] != kind[i]:
                    rest.append(i)
                    continue
                epoch_of[i] = epoch
                current[1].append(i)
                for t in op.outputs:
                    if t >= 0:
                        ready_at[t] = epoch
                for t in op.inputs:
                    if t < 0:
                        continue
                    source = ready_at.get(t, -2) if t in produced else -2
                    if source != epoch:
                        current[2].append(t)
                        if source >= 0:
                            subsets[source][3].append(t)
                if i in successor:
                    incoming[successor[i]] -= 1
                progress = True
            pending = rest
        if not current[1]:
            subsets.pop()
            break
    for t in sg.outputs:
        if t in ready_at:
            subsets[ready_at[t]][3].append(t)
    return tuple(Partition(sg.index, tuple(sorted(s[1])), tuple(sorted(set(s[2]))), tuple(sorted(set(s[3]))))
                 for s in subsets if s[0])
