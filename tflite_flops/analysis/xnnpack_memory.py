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
  ``src/memory-planner.c``: values that are neither external nor static, each rounded up to 64 bytes,
  largest first at the first gap among those alive at the same time, the target's ``workspace_slack`` after them),
  with the buffers some operators ask of it while they run (:func:`_op_workspace`: a computed
  BATCH_MATMUL operand packed, the reshaped input of a FULLY_CONNECTED, quantized inputs of
  dynamically quantized ops, int8 sums); the delegate shares one workspace among its runtimes
  (``xnn_create_runtime_v4`` with the delegate's ``workspace_``), so the largest plan counts;
* packed weights: each taken CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV packs
  its filter and bias at init (the ``xnn_pack_*`` functions: float filters as float32, int8 ones as
  int8 with int32 bias and float per-channel scales), the output channels padded to the kernels'
  tile, an int8 convolution's input channels to 8 per tap. A convolution is packed for the kernel that runs it
  (``ops.facts.runs_dwconv``): a grouped one once per group, each group's channels tiled, as is a depthwise
  one of more than 25 taps (the GEMM once per group); a CONV_2D of groups of one channel within 25 taps as a
  depthwise filter, with the depthwise indirection (measured to the byte on the suite's grouped points).
  Weights XNNPACK unpacks itself (an fp16 or
  int8 DEQUANTIZE it claims, a DENSIFY) are packed as float32 by their reader, and the float32
  copy it unpacked them into (``static_unpacked_data_`` in xnnpack_delegate.cc) stays, unless they
  are fp16 weights that only convolutions and fully connected ops read as filters
  (``fp16_weights``: packed straight from the file; measured, such an fp16 model holds the float32
  model's bytes, an int8-weight one twice its float32 weights);
* the buffers operators allocate when the runtime is reshaped for the input shapes (only in the
  subgraphs that run, see below), :func:`_reshape_bytes`: the indirection buffers of convolutions
  (one pointer per filter tap and output pixel, the pixels rounded up to the GEMM kernel's rows),
  depthwise convolutions and max pooling (one pointer per tap of the first output pixel of a row,
  then per new column of taps), transposed convolutions (per tap and output pixel), bilinear
  resizing (four pointers and two weights per output pixel), average pooling (:func:`_average_pool_bytes`),
  and the accumulators of reductions that keep the last axis;
* XNNPACK's and the delegate's structures (:func:`_structure_bytes`): per partition, the runtime
  descriptor with one ``xnn_operator_data`` per node and one ``xnn_runtime_value`` per value, and
  the delegate's own subgraph object and tensor maps; per node, its operator object and the
  compute contexts it sets up (a size per op type, its record's ``XnnpackFacts.operator_bytes``); once, the delegate,
  its CPU backend context and, above one thread, its threadpool and the threads' TLS blocks.

These sizes are a CPU target's data (:class:`~tflite_flops.targets.CpuTarget`, ``Settings.target``): the
microkernels XNNPACK picks on that CPU (GEMM rows and tiles per datatype, the input channels' depth),
the allocation alignment and slack, and the structure sizes. Those of ``x86-avx512`` were read off
ai-edge-litert 2.3.0 on x86-64 with AVX-512, with an allocation tracer that attributes every ``malloc``
to its call stack (``tests/malloc_trace.c``, which the tests use as the reference); the other targets'
name their sources (``tflite_flops targets``, docs/memory.md).

LiteRT applies XNNPACK to every subgraph of the model when the interpreter is built, whichever
signature runs: every subgraph's packed weights and structures are held (a model whose signatures
share their weights holds them packed once per signature), while the workspace and the reshape-time
buffers exist only for the subgraphs that run.

Checked against the tracer (``tests/test_runtime_memory.py``): the packed weights and the
reshape-time buffers are exact on the calibration suite's one-op models (but for two strided depthwise
convolutions, a few pointers), the workspace on 223 of its 247 models; the structures follow the
delegate's usual node and value counts, not every special case (a fully connected op's reshape node,
ops XNNPACK fuses). The whole figure is within 10% on all 247, and 0.99 to 1.06 on the samples.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..ops.facts import (AVERAGE_POOL_BUFFERS, BILINEAR_WEIGHTS, BINARY_NODE, CONV, COPY_OPERATOR_BYTES, DELEGATE_NODE, DEPTHWISE,
                         DEPTHWISE_INDIRECTION, FULLY_CONNECTED, GEMM_INDIRECTION, INT8_ACCUMULATORS, PACKED_OPERAND,
                         PER_INPUT, POOL_INDIRECTION, REDUCTION_ACCUMULATORS, TRANSPOSED_CONV, TRANSPOSED_INDIRECTION,
                         XNNPACK_OPERATOR_DEFAULT, conv_groups, facts_of, runs_dwconv, xnnpack_facts)
from ..ops.placement import XNNPACK
from ..reader.model import Operator, Subgraph
from ..settings import DelegateConfig
from ..targets import CpuTarget, get as get_target
from ..units import dense_bytes, num_elements
from .memory import tensor_sizes
from .placement import SubgraphPlacement, node_subsets, place_subgraph
from .shapes import subgraph_tensors
from .planner import align, place_buffers

# The target's constants (tflite_flops/targets/): the slack after the float32 copy of weights XNNPACK unpacks
# (``unpacked_slack``), after the workspace's last value (``workspace_slack``), XNN_ALLOCATION_ALIGNMENT
# (``alignment``); the structures (``runtime_bytes``: struct xnn_runtime, per partition; ``opdata_bytes``:
# struct xnn_operator_data, per node; ``value_bytes``: struct xnn_runtime_value, per value;
# ``partition_bytes``: the delegate's Subgraph object, its hash tables and the DELEGATE node's arrays;
# ``partition_tensor_bytes``: per tensor a partition defines, the delegate's map entry and bucket;
# ``delegate_bytes``: once, TfLiteXNNPackDelegate, its CpuBackendContext and ruy context, the workspace
# descriptor; above one thread, the pthreadpool, per thread, per extra thread); the GEMM kernels' rows
# (the indirection's tile), output-channel tiles and depth per datatype.
_COPY = COPY_OPERATOR_BYTES  # a copy operator (reshape, one per concatenated input or split output), with its context
# Per node, the xnn_operator and the compute contexts its create function allocates: each op type's
# ``XnnpackFacts.operator_bytes`` (ops/facts.py), else XNNPACK_OPERATOR_DEFAULT; its packed weights
# (``weights``), reshape-time buffers (``reshape_buffers``), workspace (``workspace``), copies per input or
# output (``copies_per``) and int8 lookup table (``lookup_table_bytes``) are facts of its record too.
_REDUCE_SLACK = 16


def delegated_view(sg: Subgraph, placement: SubgraphPlacement) -> tuple[Subgraph, dict[int, int]]:
    """``sg`` as TFLite runs it once XNNPACK replaced its partitions (see the module docstring), and
    ``{op index: its index in the view}`` for the kept ops."""
    subsets = placement.subsets or node_subsets(sg, [i for i, why in placement.reasons.items() if why is None])
    ops: list[Operator] = []
    kept: dict[int, int] = {}
    for delegated, part in subsets:
        if delegated:
            ops.append(Operator(len(ops), DELEGATE_NODE, 0, 1, part.inputs, part.outputs, (), {}))
            continue
        for i in part.ops:
            kept[i] = len(ops)
            ops.append(sg.operators[i]._replace(index=len(ops)))
    return Subgraph(sg.index, sg.name, sg.tensors, tuple(ops), sg.inputs, sg.outputs), kept


def xnnpack_bytes(sg: Subgraph, placement: SubgraphPlacement, shapes: Sequence[tuple[int, ...]],
                  sizes: Sequence[int] | None = None, prepared: bool = True,
                  target: CpuTarget | None = None) -> tuple[int, int, int]:
    """XNNPACK's estimated ``(workspace, packed weights, structures)`` bytes for one subgraph (module
    docstring); ``sizes``: the activations' bytes (:func:`~.memory.tensor_sizes`), if the caller has
    them; ``prepared``: whether the subgraph runs (its workspace and reshape-time buffers exist);
    ``target``: the CPU target whose constants are used (None: this CPU's)."""
    cpu = target if target is not None else get_target(None)
    tensors = sg.tensors
    size = sizes.__getitem__ if sizes is not None else (lambda t: dense_bytes(num_elements(shapes[t]), tensors[t].dtype))

    workspace = packed = structures = 0
    readers: dict[int, list[Operator]] | None = None  # tensor -> the ops reading it, built at the first fp16 weight
    for part in placement.partitions:
        ops = [sg.operators[i] for i in part.ops]
        boundary = set(part.inputs) | set(part.outputs)
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        scratch: list[tuple[int, int, int]] = []  # (bytes, step, step): buffers alive while one op runs
        unpacked: set[int] = set()  # weights unpacked at init: not values of the XNNPACK subgraph
        for step, op in enumerate(ops):
            if facts_of(op.op_type).weight_unpacking and op.inputs and tensors[op.inputs[0]].is_constant:
                out = op.outputs[0]  # unpacked at init, then packed by its reader (counted there)
                boundary.add(out)
                unpacked.add(op.inputs[0])
                if tensors[op.inputs[0]].dtype == "FLOAT16" and readers is None:
                    readers = {}
                    for reader in sg.operators:
                        for t in dict.fromkeys(reader.inputs):
                            readers.setdefault(t, []).append(reader)
                if not (tensors[op.inputs[0]].dtype == "FLOAT16" and cpu.fp16_packed_from_file
                        and _gemm_filter_only(readers.get(out, ()), out)):
                    packed += align(size(out) + cpu.unpacked_slack, cpu.alignment)  # the unpacked copy stays
                continue
            for t in op.outputs:
                if t >= 0 and t not in boundary:
                    first.setdefault(t, step)
            for t in op.inputs:
                if t in first:
                    last[t] = step
            packed += _packed_weights(op, tensors, shapes, cpu)
            if prepared:
                structures += _reshape_bytes(op, tensors, shapes, cpu)
                own = _op_workspace(op, tensors, shapes, cpu)
                if own:
                    scratch.append((align(own, cpu.alignment), step, step))
                if _clamp_node(op) and op.outputs and op.outputs[0] in boundary:
                    # the binary node's output before the clamp: inside the partition the clamp runs in place
                    # (its output is that value's memory); before an output of the partition it has its own
                    scratch.append((align(size(op.outputs[0]), cpu.alignment), step, step))
        structures += _structure_bytes(ops, tensors, unpacked, set(part.inputs) | set(part.outputs), cpu)
        if prepared:
            buffers = sorted([*((align(size(v), cpu.alignment), lo, last.get(v, lo))
                                for v, lo in first.items()), *scratch], key=lambda b: -b[0])
            _, high = place_buffers(buffers, max(len(ops), 1))
            workspace = max(workspace, high + cpu.workspace_slack if buffers else 0)
    return workspace, packed, structures


def _op_workspace(op: Operator, tensors, shapes, cpu: CpuTarget) -> int:
    """The bytes one op asks of the workspace while it runs: a BATCH_MATMUL whose second operand is
    computed packs it there (per batch, the columns rounded up to the kernel's tile, the target's
    ``float_operand_tile`` or ``int8_operand_tile``, by the rows plus a bias row, or int8 rows plus 8 bytes of sums and scale); a FULLY_CONNECTED
    that does not keep its dims reads a copy of its input the delegate reshapes to 2-D; an op with
    float inputs and int8 weights keeps 8 bytes of quantization parameters a row there, and a
    convolution with more than one tap its quantized input (a byte an element); an int8 reduction
    sum or mean accumulates in int32."""
    facts = xnnpack_facts(op.op_type)
    role = facts.weights
    x = _data_input(op)
    own = 0
    if role == FULLY_CONNECTED and not op.options.get("keep_num_dims") and x >= 0:
        own += dense_bytes(num_elements(shapes[x]), tensors[x].dtype)
    if _hybrid(op, tensors):  # the quantization parameters of each row; a convolution with taps copies its input
        rows = num_elements(shapes[x][:-1]) if role == FULLY_CONNECTED else shapes[x][0]
        quantized = 0 if role == FULLY_CONNECTED or _pointwise(op, tensors) else num_elements(shapes[x])
        own += align(quantized + 8 * rows, cpu.alignment)
    if facts.workspace == INT8_ACCUMULATORS and x >= 0 and tensors[x].dtype in ("INT8", "UINT8") and op.outputs:
        own += 4 * num_elements(shapes[op.outputs[0]])
    if own:
        return own
    if facts.workspace != PACKED_OPERAND or len(op.inputs) < 2 or tensors[op.inputs[1]].is_constant:
        return 0
    b = shapes[op.inputs[1]]
    if len(b) < 2:
        return 0
    k, n = (b[-1], b[-2]) if op.options.get("adj_y") else (b[-2], b[-1])
    batches = num_elements(b[:-2])
    if tensors[op.inputs[1]].dtype == "FLOAT32":
        return batches * _tiled(n, cpu.float_operand_tile) * (k + 1) * 4
    return batches * _tiled(n, cpu.int8_operand_tile) * (k + 8)


def _data_input(op: Operator) -> int:
    """The tensor of an op's activations: its input 0, a transposed convolution's input 2 (-1: none)."""
    at = 2 if xnnpack_facts(op.op_type).weights == TRANSPOSED_CONV else 0
    return op.inputs[at] if len(op.inputs) > at else -1


def _hybrid(op: Operator, tensors) -> bool:
    """A convolution, transposed convolution or fully connected op with float activations and int8 weights
    (dynamically quantized: a convolution quantizes its input at run time with a convert node of its own)."""
    facts, x = xnnpack_facts(op.op_type), _data_input(op)
    return ((facts.gemm or facts.weights == TRANSPOSED_CONV) and len(op.inputs) > 1 and op.inputs[1] >= 0 and x >= 0
            and tensors[x].dtype == "FLOAT32" and tensors[op.inputs[1]].dtype in ("INT8", "INT4"))


def _structure_bytes(ops: Sequence[Operator], tensors, unpacked: set[int], boundary: set[int], cpu: CpuTarget) -> int:
    """One partition's structures (module docstring): the runtime descriptor, its node and value
    records, the delegate's subgraph object and tensor maps, and every node's operator.

    Values, read off the tracer (chains of 1 to 8 ops, and the samples' partitions): one per tensor
    at the partition's boundary (``boundary``), two per tensor inside it and per static operand, and a
    FULLY_CONNECTED that does not keep its dims adds 1 (2 with int8 activations, 3 with int8 weights and
    float activations), a convolution with int8 weights and float activations 2 (and, with more than
    one tap, a convert node: fully connected and pointwise ops compute such weights without one)."""
    defined: set[int] = set()
    nodes = values = operators = 0
    for op in ops:
        facts = xnnpack_facts(op.op_type)
        role = facts.weights
        if op.inputs and op.inputs[0] in unpacked and facts_of(op.op_type).weight_unpacking:
            continue  # unpacked at init: no node
        nodes += 1
        for position, t in enumerate((*op.inputs, *op.outputs)):
            if t < 0 or t in unpacked:
                continue
            w = tensors[t]
            # static int32 parameters (shapes, axes, permutations, paddings) are read at definition, not values
            if w.is_constant and w.dtype in ("INT32", "INT64") and not (role and position >= 2):
                continue
            defined.add(t)
        if facts.copies_per:
            operators += _COPY * max(len(op.inputs) if facts.copies_per == PER_INPUT else len(op.outputs), 1)
        else:
            operators += _operator_bytes(facts)
            if facts.weights or facts.workspace == PACKED_OPERAND:
                operators += cpu.gemm_operator_extra
        if facts.lookup_table_bytes and tensors[op.inputs[0]].dtype in ("INT8", "UINT8"):
            operators += facts.lookup_table_bytes
        if facts.pointwise_as and _pointwise(op, tensors):  # run as (a fully connected) operator
            operators += _operator_bytes(xnnpack_facts(facts.pointwise_as)) - _operator_bytes(facts)
        if _clamp_node(op):  # the fused activation: a clamp node, its operator, the value between the two
            nodes, values, operators = nodes + 1, values + 1, operators + XNNPACK_OPERATOR_DEFAULT.value
        hybrid = _hybrid(op, tensors)
        if role == FULLY_CONNECTED and not op.options.get("keep_num_dims"):
            nodes, operators = nodes + 1, operators + _COPY  # the output reshaped to 2-D
            values += 3 if hybrid else 2 if tensors[op.inputs[0]].dtype in ("INT8", "UINT8") else 1
        elif hybrid and role == CONV:
            values += 2
        if hybrid and role == CONV and not _pointwise(op, tensors):
            nodes, operators = nodes + 1, operators + _COPY  # the input quantized at run time (a convert node)
    outside = sum(1 for t in defined if t in boundary and not tensors[t].is_constant)
    values += outside + 2 * (len(defined) - outside)
    return (cpu.runtime_bytes + cpu.opdata_bytes * nodes + cpu.value_bytes * values + operators
            + cpu.partition_bytes + cpu.partition_tensor_bytes * len(defined))


def _clamp_node(op: Operator) -> bool:
    """A binary element-wise op with a fused activation: the delegate defines the activation as a clamp node of
    its own after it (a binary node has no output clamp), with the binary node's output as a value between them
    (traced: [1,128,256] ADD, SUB, MUL, DIV with RELU, float32 and int8, alone: the output's bytes more workspace
    and 1,092 bytes more structures than without it; inside a partition the clamp runs in place: ic_resnet8's
    three ADDs with RELU, the structures alone)."""
    return BINARY_NODE in facts_of(op.op_type).fusion and op.options.get("fused_activation_function") not in (None, "NONE")


def _operator_bytes(facts) -> int:
    """A node's operator and compute contexts: its op type's ``operator_bytes``, else the named default."""
    return facts.operator_bytes if facts.operator_bytes is not None else XNNPACK_OPERATOR_DEFAULT.value


def _pointwise(op: Operator, tensors) -> bool:
    """A 1x1 CONV_2D of stride 1 without dilation: XNNPACK runs it as a fully connected operator."""
    shape = tensors[op.inputs[1]].shape
    o = op.options
    return (len(shape) == 4 and shape[1] == shape[2] == 1 and o.get("stride_h", 1) == o.get("stride_w", 1) == 1
            and o.get("dilation_h_factor", 1) == o.get("dilation_w_factor", 1) == 1)


def _reshape_bytes(op: Operator, tensors, shapes, cpu: CpuTarget) -> int:
    """The buffers an operator allocates when the runtime is reshaped (module docstring): indirection
    buffers, the bilinear resize's weights, the reductions' accumulators."""
    kind = xnnpack_facts(op.op_type).reshape_buffers
    if not kind or not op.outputs or op.outputs[0] < 0:
        return 0
    out = shapes[op.outputs[0]]
    groups = _groups(op, tensors, shapes)
    if groups is not None and kind in (GEMM_INDIRECTION, DEPTHWISE_INDIRECTION):  # the kernel that runs it
        kind = DEPTHWISE_INDIRECTION if runs_dwconv(groups, _hybrid(op, tensors)) else GEMM_INDIRECTION
    if kind in (GEMM_INDIRECTION, DEPTHWISE_INDIRECTION, POOL_INDIRECTION) and len(out) == 4:
        if kind == POOL_INDIRECTION:
            kh, kw = op.options.get("filter_height", 1), op.options.get("filter_width", 1)
        else:
            filt = shapes[op.inputs[1]] if len(op.inputs) > 1 and op.inputs[1] >= 0 else ()
            if len(filt) != 4:
                return 0
            kh, kw = filt[1], filt[2]
        taps = kh * kw
        if kind == GEMM_INDIRECTION:
            if taps == 1 and _pointwise(op, tensors):
                return 0  # a fully connected operator: no indirection
            x = tensors[op.inputs[0]].dtype
            per_group = groups[2] if groups is not None else out[3]  # a grouped one's kernel: by a group's channels
            rows = (cpu.hybrid_rows if _hybrid(op, tensors) else cpu.int8_rows if x in ("INT8", "UINT8")
                    else _float_conv_kernel(per_group, cpu)[0])
            pixels = out[0] * out[1] * out[2]
            return cpu.pointer_bytes * taps * _tiled(pixels, rows)
        if taps == 1 and kind == POOL_INDIRECTION:
            return 0
        dilated = op.options.get("dilation_w_factor", 1) != 1 or op.options.get("dilation_h_factor", 1) != 1
        step_w = kw if dilated else op.options.get("stride_w", 1)
        step_h = taps + (out[2] - 1) * step_w * kh  # pointers per output row: the first pixel's taps, then new columns
        slack = taps - 1 if kind == POOL_INDIRECTION else 0  # a window less one after the last row
        return cpu.pointer_bytes * (out[0] * out[1] * step_h + slack)
    if kind == AVERAGE_POOL_BUFFERS and len(out) == 4 and op.inputs and len(shapes[op.inputs[0]]) == 4:
        return _average_pool_bytes(op, shapes[op.inputs[0]], out, cpu.pointer_bytes)
    if kind == TRANSPOSED_INDIRECTION and len(out) == 4 and len(op.inputs) > 1 and len(shapes[op.inputs[1]]) == 4:
        filt = shapes[op.inputs[1]]
        return cpu.pointer_bytes * num_elements(out[:3]) * filt[1] * filt[2]
    if kind == BILINEAR_WEIGHTS and len(out) == 4:
        weights = 4 if tensors[op.outputs[0]].dtype == "FLOAT32" else 2
        return num_elements(out[:3]) * (4 * cpu.pointer_bytes + 2 * weights)
    if kind == REDUCTION_ACCUMULATORS and op.inputs and shapes[op.inputs[0]] and out and shapes[op.inputs[0]][-1] == out[-1]:
        return dense_bytes(num_elements(out), tensors[op.outputs[0]].dtype) + _REDUCE_SLACK
    return 0


def _gemm_filter_only(readers: Sequence[Operator], t: int) -> bool:
    """Whether every reader of ``t`` takes it as the filter of a CONV_2D, DEPTHWISE_CONV_2D or
    FULLY_CONNECTED: XNNPACK then packs fp16 weights straight from the file (``fp16_weights``)."""
    return all(xnnpack_facts(op.op_type).gemm and op.inputs[0] != t for op in readers)


def _average_pool_bytes(op: Operator, x: tuple[int, ...], out: tuple[int, ...], pointer: int = 8) -> int:
    """An average pooling's reshape-time buffers: an accumulator per channel; the indirection of one output
    row (the window's taps, then each new column of taps, plus a window less one of slack) for each
    distinct row pattern (the interior rows, and each row reaching into the top or bottom padding); with
    padding, a multiplier per output pixel. Read off the tracer on 11 float pools, then exact on 7 others
    (strided, rectangular, batched, 5x5; ``test_average_pooling_buffers_are_litert_s``)."""
    kh, kw = op.options.get("filter_height", 1), op.options.get("filter_width", 1)
    sh, sw = op.options.get("stride_h", 1), op.options.get("stride_w", 1)
    taps = kh * kw
    step = taps + (out[2] - 1) * sw * kh
    pad = max((out[1] - 1) * sh + kh - x[1], 0) if op.options.get("padding") == "SAME" else 0
    top, bottom = pad // 2, pad - pad // 2
    rows = min(1 + -(-top // sh) + -(-bottom // sh), out[1])  # the interior rows, and each row reaching into padding
    multipliers = 4 * out[1] * out[2] if pad or (op.options.get("padding") == "SAME" and
                                                   (out[2] - 1) * sw + kw > x[2]) else 0
    return 4 * out[3] + _REDUCE_SLACK + pointer * (rows * step + taps - 1) + multipliers


def _packed_weights(op: Operator, tensors, shapes, cpu: CpuTarget) -> int:
    """The bytes an op packs at init (module docstring), read off the tracer (to the byte on the
    calibration suite's convolutions, depthwise, transposed and fully connected ops on x86-avx512): per
    output channel, rounded up to the kernel's tile (the target's), its filter and what it keeps per channel.

    * float32 and fp16 filters: float32 weights and bias, channels to the kernel's tile (a convolution's
      ``float_tile``, or ``float_nr2_tile`` below it; a fully connected op's by :meth:`CpuTarget.float_fc_tile`;
      ``float_depthwise_tile``; a transposed convolution has a bias per sub-kernel);
    * int8 filters with int8 inputs: int8 weights (a convolution with taps pads its input channels to
      ``int8_kr`` per tap), an int32 bias and a float scale (per sub-kernel for a transposed
      convolution), channels to ``int8_tile``; a depthwise convolution tiles its channels by ``int8_depthwise_tile``;
    * int8 filters with float inputs (dynamically quantized): 12 bytes per channel (bias, scale, sums; each
      sub-kernel's, for a transposed convolution), channels to ``hybrid_tile`` (input channels per tap to
      ``hybrid_kr``), a fully connected or pointwise convolution tiling its channels by ``hybrid_gemm_tile``;
    * a depthwise filter of fewer taps than the smallest depthwise kernel's (``depthwise_min_taps``) as that many.

    The buffer's size is rounded up to the target's ``alignment``."""
    role = xnnpack_facts(op.op_type).weights
    if not role or len(op.inputs) < 2 or op.inputs[1] < 0:
        return 0
    filt = op.inputs[1]
    w = tensors[filt]
    if not w.is_constant and w.dtype != "FLOAT32":
        return 0
    shape = shapes[filt]
    if not shape:
        return 0
    out_channels = shape[0] if role != DEPTHWISE else shape[-1]
    per_channel = num_elements(shape) // max(out_channels, 1)  # filter elements per output channel
    sets, groups = 1, _groups(op, tensors, shapes)  # sets: packed once per group when run by the GEMM per group
    if groups is not None:
        dwconv = runs_dwconv(groups, _hybrid(op, tensors))
        if dwconv and role == CONV:  # groups of one channel: packed as a depthwise filter of ``groups`` channels
            role, out_channels, per_channel = DEPTHWISE, groups[0], groups[3]
        elif not dwconv and (role == DEPTHWISE or groups[0] > 1):  # the GEMM once per group
            role, sets, out_channels, per_channel = CONV, groups[0], groups[2], groups[1] * groups[3]
    if role == DEPTHWISE:  # a filter of fewer taps than the smallest depthwise kernel's is padded to its taps (a 1x1
        per_channel = max(per_channel, cpu.depthwise_min_taps)  # one: 128x128x8 float32 256 bytes, int8 384)
    tile = cpu.float_depthwise_tile if role == DEPTHWISE else cpu.float_fc_tile(out_channels) if (
        role == FULLY_CONNECTED or (role == CONV and _pointwise(op, tensors))) else _float_conv_kernel(out_channels, cpu)[1]
    biases = 1
    if role == TRANSPOSED_CONV and len(shape) == 4:
        stride = (op.options.get("stride_h", 1), op.options.get("stride_w", 1))
        biases = min(stride[0], shape[1]) * min(stride[1], shape[2])  # one sub-kernel per output phase
    if w.dtype not in ("INT8", "UINT8", "INT4"):  # float32 and fp16 filters are packed as float32
        return align(sets * _tiled(out_channels, tile) * (per_channel + biases) * 4, cpu.alignment)
    hybrid = _hybrid(op, tensors)
    if role in (CONV, TRANSPOSED_CONV) and len(shape) == 4 and not _pointwise(op, tensors):
        per_in = groups[1] if groups is not None else shape[3]
        per_channel = shape[1] * shape[2] * _tiled(per_in, cpu.hybrid_kr if hybrid else cpu.int8_kr)
    if hybrid:
        per_channel += 12 * biases  # each sub-kernel's, for a transposed convolution
        tile = cpu.hybrid_gemm_tile if role == FULLY_CONNECTED or _pointwise(op, tensors) else cpu.hybrid_tile
    elif role == DEPTHWISE:
        per_channel, tile = per_channel + 8, cpu.int8_depthwise_tile
    else:
        per_channel, tile = per_channel + 8 * biases, cpu.int8_tile  # an int32 bias, a float scale (each sub-kernel's)
    return align(sets * _tiled(out_channels, tile) * per_channel, cpu.alignment)  # the buffer's size, aligned


def _groups(op: Operator, tensors, shapes) -> tuple[int, int, int, int] | None:
    """A convolution's groups (``ops.facts.conv_groups``: groups, channels in and out per group, taps) from its
    input and filter shapes; None for other ops. XNNPACK's kernel follows them (``ops.facts.runs_dwconv``): a
    grouped convolution is run by the GEMM once per group, a depthwise one of more than 25 taps too, and one of
    groups of one channel within 25 taps by the depthwise kernel (docs/notes/predict-grouped-conv.md)."""
    if len(op.inputs) < 2 or op.inputs[0] < 0 or op.inputs[1] < 0:
        return None
    return conv_groups(xnnpack_facts(op.op_type).weights, shapes[op.inputs[0]], shapes[op.inputs[1]])


def _float_conv_kernel(channels: int, cpu: CpuTarget) -> tuple[int, int]:
    """``(mr, nr)`` of the f32 kernel of a convolution (or transposed one) of ``channels`` output channels:
    the IGEMM kernel's, or the ``nr2`` one's when the channels are fewer than its tile (XNNPACK's
    ``select_gemm_config``, convolution-nhwc.c; deconvolution-nhwc.c alike)."""
    if channels < cpu.float_tile:
        return cpu.float_nr2_rows, cpu.float_nr2_tile
    return cpu.float_rows, cpu.float_tile


def _tiled(n: int, tile: int) -> int:
    return -(-n // tile) * tile


def xnnpack_memory(model, states: Mapping[int, object], placed: Mapping[int, SubgraphPlacement],
                   reached: Sequence[int], threads: int = 1, target: CpuTarget | None = None,
                   config: DelegateConfig = DelegateConfig()
                   ) -> tuple[dict[int, tuple[Subgraph, dict[int, int]]], tuple[int, int, int]]:
    """The views of the reached subgraphs XNNPACK takes ops of, and its estimated bytes
    ``(workspace, packed weights, structures)``: the largest workspace of the reached subgraphs, the
    packed weights and structures of every subgraph (LiteRT applies XNNPACK to all of them) with the
    reached ones' reshape-time buffers and the delegate's own (its threadpool above one thread), with
    ``target``'s constants (None: this CPU's); a subgraph the walk did not place is placed with the delegate's
    flags ``config`` (the settings')."""
    cpu = target if target is not None else get_target(None)
    views: dict[int, tuple[Subgraph, dict[int, int]]] = {}
    workspace = packed = structures = 0
    for index, sg in enumerate(model.subgraphs):
        state = states.get(index) if index in reached else None
        placement = placed.get(index)  # an unreached subgraph's too: placed at the file's shapes, as below
        if placement is None:
            placement = place_subgraph(model, index, XNNPACK, config)
        if not placement.partitions:
            continue
        if state is None:
            ws, pw, st = xnnpack_bytes(sg, placement, [v.shape for v in sg.tensors], prepared=False, target=cpu)
        else:
            views[index] = delegated_view(sg, placement)
            walked = subgraph_tensors(sg, state)  # type: ignore[arg-type]
            sizes = tensor_sizes(sg, state.shapes, walked.constant, walked.numel, walked.stored)  # type: ignore[attr-defined]
            ws, pw, st = xnnpack_bytes(sg, placement, state.shapes, sizes, target=cpu)  # type: ignore[attr-defined]
        workspace, packed, structures = max(workspace, ws), packed + pw, structures + st
    # the delegate exists once LiteRT applied it, whether or not it took an op
    pool = (cpu.threadpool_bytes + cpu.thread_bytes * threads + cpu.thread_tls_bytes * (threads - 1)
            if threads > 1 else 0)
    return views, (workspace, packed, structures + cpu.delegate_bytes + pool)
