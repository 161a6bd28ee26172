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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..ops.placement import (CATEGORY_FED, CATEGORY_INPUTS, CATEGORY_SHAPE, XNNPACK, DelegateConfig, DelegateOp,
                             DelegateTensor, decide, reason)
from ..reader.model import Model, Subgraph

_SMALL = 64  # static int tensors up to this many elements carry their values to the rules
_GEMM_WEIGHT_READERS = frozenset({"FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D"})
_SIDE_EFFECT_OPS = frozenset({"IF", "WHILE", "CALL_ONCE"})
_VARIABLE_OPS = frozenset({"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"})


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
        if op.op_type == "VAR_HANDLE":
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
        value = dop.outputs[0] if op.op_type == "READ_VARIABLE" else dop.input(1)
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
        delegate: :data:`~tflite_flops.ops.placement.XNNPACK` (the GPU delegate registers its rules the same way).
        config: the delegate's flags.
        input_shapes: shapes of the subgraph's inputs when they were resized (tensor index -> shape).

    Returns:
        The reason per op (None when taken), and the partitions.
    """
    sg = model.subgraphs[index]
    views = _tensor_views(model, sg, input_shapes or {})
    consumers: dict[int, list[int]] = {}
    for op in sg.operators:
        for t in op.inputs:
            if t >= 0:
                consumers.setdefault(t, []).append(op.index)
    unpack: dict[int, int] = {}  # tensor unpacked at init -> the DEQUANTIZE/DENSIFY producing it
    unpack_nodes: dict[int, str | None] = {}  # op -> None, or why it is not claimed after all
    fp16_weights: set[int] = set()  # outputs of fp16 DEQUANTIZEs feeding only weights (seen as FLOAT16)
    reasons: dict[int, str | None] = {}
    variables = _Variables()

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
        if delegate == XNNPACK and kind in _VARIABLE_OPS:
            found = variables.visit(op, dop, found)
        reasons[op.index] = found
        if found is not None:
            for t in op.inputs:
                producer = unpack.get(t)
                if producer is not None and unpack_nodes.get(producer) is None:
                    unpack_nodes[producer] = reason(CATEGORY_FED, f"{kind} (op {op.index}) reads its output")
    reasons.update(unpack_nodes)
    reasons.update(variables.claimed())
    reasons = dict(sorted(reasons.items()))
    taken = [i for i, r in reasons.items() if r is None]
    partitions = partition(sg, taken) if taken else ()
    partition_of = {op: p for p, part in enumerate(partitions) for op in part.ops}
    return SubgraphPlacement(index, delegate, reasons, partitions, partition_of)


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
    # ``Subgraph::OpMightHaveSideEffect``: IF/WHILE/CALL_ONCE, or a RESOURCE tensor among its inputs or outputs
    # (a VARIANT tensor does not count).
    resource = {t.index for t in sg.tensors if t.dtype == "RESOURCE"}
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
