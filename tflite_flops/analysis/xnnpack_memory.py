"""Memory with XNNPACK, LiteRT's default delegate: the graph TFLite's arena plans, and XNNPACK's own bytes.

**TFLite's arena.** ``Subgraph::ReplaceNodeSubsetsWithDelegateKernels`` (tflite/core/subgraph.cc)
rebuilds the execution plan from the node subsets of ``PartitionGraphIntoIndependentNodeSubsets``
in run order: a kept subset's ops stay as they are, a delegated one becomes one DELEGATE node whose
inputs and outputs are the subset's boundary tensors. ``ArenaPlanner::PlanAllocations``
(tflite/arena_planner.cc) then walks that plan only: a tensor internal to a partition is written by
no node of the plan and is never allocated; a DELEGATE node's outputs are planned like any node's,
as arena tensors (the kernels that would have made them persistent or prepared never ran Prepare:
an fp16/int8 DEQUANTIZE XNNPACK claims leaves its output an arena tensor when a later partition
reads it). :func:`delegated_view` builds that graph; :func:`~.memory.analyze_memory` plans it with
the same pass as the builtin configuration.

**XNNPACK's own memory** (:func:`xnnpack_bytes`), an estimate:

* the workspace: per partition, its internal values (``xnn_plan_memory`` in XNNPACK's
  ``src/memory-planner.c``: values that are neither external nor static, each with
  ``XNN_EXTRA_BYTES`` of slack, largest first at the first gap among those alive at the same time);
  the delegate shares one workspace among its runtimes (``xnn_create_runtime_v4`` with the
  delegate's ``workspace_``), so the largest partition's plan counts;
* packed weights: each taken CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV packs
  its filter and bias at init (the ``xnn_pack_*`` functions: float filters as float32, int8 ones as
  int8 with int32 bias and float per-channel scales). Weights XNNPACK unpacks itself (an fp16 or
  int8 DEQUANTIZE it claims, a DENSIFY) are packed as float32 by their reader, and the float32
  copy it unpacked them into (``static_unpacked_data_`` in xnnpack_delegate.cc) stays, unless they
  are fp16 weights that only convolutions and fully connected ops read as filters
  (``fp16_weights``: packed straight from the file; measured, such an fp16 model holds the float32
  model's bytes, an int8-weight one twice its float32 weights);
* the convolutions' indirection buffers (one pointer per output pixel and filter tap) when the
  filter is not 1x1.

Estimated, not exact: the packing's padding of the output channels to the kernel's tile and the
per-op scratch some operators ask of the workspace are not counted, nor XNNPACK's structures.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..reader.model import Operator, Subgraph
from ..units import dense_bytes, num_elements
from .memory import tensor_sizes
from .placement import SubgraphPlacement, node_subsets
from .shapes import subgraph_tensors
from .planner import align, place_buffers

XNN_EXTRA_BYTES = 128  # XNN_EXTRA_BYTES (XNNPACK include/xnnpack.h): slack after every buffer it allocates
XNN_ALIGNMENT = 64  # XNN_ALLOCATION_ALIGNMENT on x86-64 with AVX-512 builds
_POINTER = 8
_PACKED = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"})
_UNPACKED = frozenset({"DEQUANTIZE", "DENSIFY"})
_GEMM = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"})


def delegated_view(sg: Subgraph, placement: SubgraphPlacement) -> tuple[Subgraph, dict[int, int]]:
    """``sg`` as TFLite runs it once XNNPACK replaced its partitions (see the module docstring), and
    ``{op index: its index in the view}`` for the kept ops."""
    subsets = placement.subsets or node_subsets(sg, [i for i, why in placement.reasons.items() if why is None])
    ops: list[Operator] = []
    kept: dict[int, int] = {}
    for delegated, part in subsets:
        if delegated:
            ops.append(Operator(len(ops), "DELEGATE", 0, 1, part.inputs, part.outputs, (), {}))
            continue
        for i in part.ops:
            kept[i] = len(ops)
            ops.append(sg.operators[i]._replace(index=len(ops)))
    return Subgraph(sg.index, sg.name, sg.tensors, tuple(ops), sg.inputs, sg.outputs), kept


def xnnpack_bytes(sg: Subgraph, placement: SubgraphPlacement, shapes: Sequence[tuple[int, ...]],
                  sizes: Sequence[int] | None = None) -> tuple[int, int]:
    """XNNPACK's estimated ``(workspace, packed weights)`` bytes for one subgraph (module docstring);
    ``sizes``: the activations' bytes (:func:`~.memory.tensor_sizes`), if the caller has them."""
    tensors = sg.tensors
    size = sizes.__getitem__ if sizes is not None else (lambda t: dense_bytes(num_elements(shapes[t]), tensors[t].dtype))

    workspace = packed = 0
    readers: dict[int, list[Operator]] | None = None  # tensor -> the ops reading it, built at the first fp16 weight
    for part in placement.partitions:
        ops = [sg.operators[i] for i in part.ops]
        boundary = set(part.inputs) | set(part.outputs)
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for step, op in enumerate(ops):
            if op.op_type in _UNPACKED and op.inputs and tensors[op.inputs[0]].is_constant:
                out = op.outputs[0]  # unpacked at init, then packed by its reader (counted there)
                boundary.add(out)
                if tensors[op.inputs[0]].dtype == "FLOAT16" and readers is None:
                    readers = {}
                    for reader in sg.operators:
                        for t in dict.fromkeys(reader.inputs):
                            readers.setdefault(t, []).append(reader)
                if not (tensors[op.inputs[0]].dtype == "FLOAT16" and _gemm_filter_only(readers.get(out, ()), out)):
                    packed += align(size(out) + XNN_EXTRA_BYTES, XNN_ALIGNMENT)  # the unpacked copy stays
                continue
            for t in op.outputs:
                if t >= 0 and t not in boundary:
                    first.setdefault(t, step)
            for t in op.inputs:
                if t in first:
                    last[t] = step
            packed += _packed_weights(op, tensors, shapes)
        buffers = sorted(((align(size(t) + XNN_EXTRA_BYTES, XNN_ALIGNMENT), lo, last.get(t, lo))
                          for t, lo in first.items()), key=lambda b: -b[0])
        _, high = place_buffers(buffers, max(len(ops), 1))
        workspace = max(workspace, high + XNN_EXTRA_BYTES if buffers else 0)
    return workspace, packed


def _gemm_filter_only(readers: Sequence[Operator], t: int) -> bool:
    """Whether every reader of ``t`` takes it as the filter of a CONV_2D, DEPTHWISE_CONV_2D or
    FULLY_CONNECTED: XNNPACK then packs fp16 weights straight from the file (``fp16_weights``)."""
    return all(op.op_type in _GEMM and op.inputs[0] != t for op in readers)


def _packed_weights(op: Operator, tensors, shapes) -> int:
    """The bytes an op packs at init: filter, bias (and per-channel scales for int8), plus its
    indirection buffer (estimates, see the module docstring)."""
    if op.op_type not in _PACKED or len(op.inputs) < 2 or op.inputs[1] < 0:
        return 0
    filt = op.inputs[1]
    w = tensors[filt]
    if not w.is_constant and w.dtype != "FLOAT32":
        return 0
    shape = shapes[filt]
    out_channels = shape[0] if op.op_type != "DEPTHWISE_CONV_2D" else shape[-1]
    elements = num_elements(shape)
    if w.dtype in ("INT8", "UINT8", "INT4"):
        nbytes = elements + out_channels * 4 + out_channels * 4  # int8 filter, int32/float bias, float scales
    else:  # float32 and fp16 filters are packed as float32 with a float32 bias
        nbytes = (elements + out_channels) * 4
    pointers = 0
    if op.op_type in ("CONV_2D", "DEPTHWISE_CONV_2D") and len(shape) == 4 and shape[1] * shape[2] > 1 and op.outputs:
        out = shapes[op.outputs[0]]
        pointers = num_elements(out[:3]) * shape[1] * shape[2] * _POINTER
    return align(nbytes + XNN_EXTRA_BYTES, XNN_ALIGNMENT) + pointers


def xnnpack_memory(model, states: Mapping[int, object], placed: Mapping[int, SubgraphPlacement],
                   reached: Sequence[int]) -> tuple[dict[int, tuple[Subgraph, dict[int, int]]], int]:
    """The views of the reached subgraphs XNNPACK takes ops of, and its estimated bytes (workspace plus packed weights)."""
    views: dict[int, tuple[Subgraph, dict[int, int]]] = {}
    workspace = packed = 0
    for index in reached:
        placement = placed.get(index)
        if placement is None or not placement.partitions:
            continue
        sg = model.subgraphs[index]
        views[index] = delegated_view(sg, placement)
        state = states[index]
        walked = subgraph_tensors(sg, state)  # type: ignore[arg-type]
        sizes = tensor_sizes(sg, state.shapes, walked.constant, walked.numel, walked.stored)  # type: ignore[attr-defined]
        ws, pw = xnnpack_bytes(sg, placement, state.shapes, sizes)  # type: ignore[attr-defined]
        workspace, packed = max(workspace, ws), packed + pw
    return views, workspace + packed
