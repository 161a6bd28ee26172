"""Matrix products: FULLY_CONNECTED (N-D input, keep_num_dims) and BATCH_MATMUL (adj, broadcast)."""

from __future__ import annotations

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC, dense_bytes, num_elements
from .facts import FULLY_CONNECTED, OUTPUT_CLAMP, PACKED_OPERAND, XnnpackFacts, register_facts
from .placement import (CATEGORY_DTYPE, CATEGORY_HYBRID, CATEGORY_INPUTS, CATEGORY_OPTIONS, CATEGORY_QUANT,
                        CATEGORY_SHAPE, CATEGORY_VERSION, XNNPACK, DelegateOp, DelegateTensor, activation, bias_type,
                        filter_and_bias, filter_type, float_or_q8, float_or_qc8, num_io, rank_in, reason,
                        register_placement, static)
from .placement import GPU, gpu_drift, gpu_runtime_inputs, gpu_version
from .registry import (Cost, KernelSetup, OpContext, Shape, Temporary, broadcast_shapes, fused_activation, join_notes,
                       register, register_temporaries, register_traits, shape_fn)
from .tflm import CLayout, TflmKernel, TflmTarget, c_struct, register_tflm


def _fc_dims(ctx: OpContext) -> tuple[int, int, int]:
    """(B, I, U): the input is flattened to [B, I] with B = n(input)/I; weights are [U, I]."""
    w = ctx.input(1)
    if w.rank != 2:
        raise ShapeError(f"FULLY_CONNECTED: weights have shape {w.shape}, expected [units, input]")
    units, depth = w.shape
    n_in = ctx.input(0).n
    if depth <= 0 or n_in % depth:
        raise ShapeError(f"FULLY_CONNECTED: input {ctx.input(0).shape} is not a multiple of weights depth {depth}")
    return n_in // depth, depth, units


register_traits(["FULLY_CONNECTED", "BATCH_MATMUL"], contraction=True)


# FULLY_CONNECTED. MACs = B·U·I with B = n(input)/I (all leading dims); FLOPs = 2·MACs +
# n(out) bias (when present) + fused activation.
@register("FULLY_CONNECTED", "MACs = B·U·I (B = n(in)/I); FLOPs = 2·MACs + bias(1/out) + act",
          reference="TF profiler MatMul (MACs exact), TFLite converter")
def fully_connected(ctx: OpContext) -> Cost:
    """Cost of a fully connected layer."""
    b, depth, units = _fc_dims(ctx)
    macs = b * depth * units
    n_out = b * units
    bias = n_out if ctx.has_input(2) else 0
    act, act_note = fused_activation(ctx, n_out)
    return Cost(macs, FLOPS_PER_MAC * macs + bias + act,
                note=join_notes("bias 1/out" if bias else "", act_note))


@shape_fn("FULLY_CONNECTED")
def _fc_shape(ctx: OpContext) -> list[Shape]:
    b, _, units = _fc_dims(ctx)
    if ctx.opt("keep_num_dims", False):
        return [ctx.input(0).shape[:-1] + (units,)]
    return [(b, units)]


def _bmm_dims(ctx: OpContext) -> tuple[Shape, int, int, int]:
    x, y = ctx.input(0).shape, ctx.input(1).shape
    if len(x) < 2 or len(y) < 2:
        raise ShapeError(f"BATCH_MATMUL: operands {x} and {y} need rank >= 2")
    m, k = (x[-1], x[-2]) if ctx.opt("adj_x", False) else (x[-2], x[-1])
    k2, p = (y[-1], y[-2]) if ctx.opt("adj_y", False) else (y[-2], y[-1])
    if k != k2:
        raise ShapeError(f"BATCH_MATMUL: inner dims differ ({x} x {y}, adj_x={ctx.opt('adj_x')}, adj_y={ctx.opt('adj_y')})")
    batch = broadcast_shapes("BATCH_MATMUL", x[:-2], y[:-2])
    return batch, m, k, p


# BATCH_MATMUL. MACs = Π(broadcast batch dims)·M·P·K = n(out)·K; FLOPs = 2·MACs.
@register("BATCH_MATMUL", "MACs = Π(batch)·M·P·K; FLOPs = 2·MACs",
          reference="TF profiler BatchMatMulV2/V3, PyTorch bmm")
def batch_matmul(ctx: OpContext) -> Cost:
    """Cost of a batched matrix product with broadcast batch dims."""
    batch, m, k, p = _bmm_dims(ctx)
    macs = num_elements(batch) * m * p * k
    return Cost(macs, FLOPS_PER_MAC * macs)


@shape_fn("BATCH_MATMUL")
def _bmm_shape(ctx: OpContext) -> list[Shape]:
    batch, m, _, p = _bmm_dims(ctx)
    return [batch + (m, p)]


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitFullyConnectedNode / VisitBatchMatMulNode) ----------------------

@register_placement(XNNPACK, "FULLY_CONNECTED", source="xnnpack_delegate.cc VisitNode, VisitFullyConnectedNode")
def _xnn_fully_connected(op: DelegateOp) -> str | None:
    """Float, int8/uint8, dynamic-range (float input, int8/int4/int2 weights) or int8 with int4/int2 weights,
    default weights format, static weights (unless the dynamic fully-connected flag is set)."""
    if op.version == 8:
        return reason(CATEGORY_VERSION, "version 8 (sparse weights)")
    if op.opt("weights_format", "DEFAULT") != "DEFAULT":
        return reason(CATEGORY_OPTIONS, f"weights format {op.opt('weights_format')}")
    found = num_io(op, (2, 3)) or float_or_q8(op, op.input(0), "input")
    if found:
        return found
    x, w, y = op.input(0), op.input(1), op.outputs[0]
    if w is None:
        return reason(CATEGORY_INPUTS, "no weights")
    found = rank_in(w, "weights", 2)
    if not found and not (op.config.dynamic_fully_connected and w.dtype == "FLOAT32"):
        found = filter_type(op, w, "weights", 0) or static(w, "weights")
    if found:
        return found
    b = op.input(2)
    if b is not None:
        if not (op.config.dynamic_fully_connected and b.dtype == "FLOAT32"):
            n = 1
            for d in b.shape:
                n *= d
            if n != w.shape[0]:
                return reason(CATEGORY_SHAPE, f"bias of {n} elements for {w.shape[0]} outputs")
            found = bias_type(op, b) or static(b, "bias")
        found = found or filter_and_bias(w, b)
        if found:
            return found
    found = float_or_q8(op, y, "output")
    if found:
        return found
    int_weights = w.dtype in ("INT8", "INT4", "INT2")
    hybrid = op.config.dynamically_quantized and x.dtype in ("FLOAT32", "FLOAT16") and int_weights
    srq = x.dtype == "INT8" and int_weights
    if x.dtype != y.dtype:
        return reason(CATEGORY_DTYPE, f"input {x.dtype} and output {y.dtype}")
    if x.dtype != w.dtype and not (hybrid or srq):
        return reason(CATEGORY_HYBRID if x.dtype in ("FLOAT32", "FLOAT16") else CATEGORY_DTYPE,
                      f"input {x.dtype} with {w.dtype} weights")
    q = w.quantization
    if not hybrid and w.dtype == "INT8" and q is not None and q.zero_point not in (0, None):
        return reason(CATEGORY_QUANT, f"weights zero point {q.zero_point} (XNNPACK wants 0)")
    if w.dtype == "INT4" and w.shape[1] % 2:
        return reason(CATEGORY_SHAPE, f"int4 weights with an odd input size {w.shape[1]}")
    if w.dtype == "INT2" and w.shape[1] % 4:
        return reason(CATEGORY_SHAPE, f"int2 weights with input size {w.shape[1]} not a multiple of 4")
    return activation(op)


@register_placement(XNNPACK, "BATCH_MATMUL", source="xnnpack_delegate.cc VisitBatchMatMulNode")
def _xnn_batch_matmul(op: DelegateOp) -> str | None:
    """Float, or uint8/int8 activations times int8 (per channel on the contracted-out dim), or float times int8."""
    a, b, y = op.input(0), op.input(1), op.outputs[0]
    if b is None:
        return reason(CATEGORY_INPUTS, "one input")
    found = float_or_q8(op, a, "input A") or float_or_qc8(op, b, "input B", b.rank - 2 if op.opt("adj_y") else b.rank - 1)
    if found:
        return found
    hybrid = a.dtype == "FLOAT32" and b.dtype == "INT8"
    if b.dtype == "INT8" and not hybrid and b.quantization is not None and b.quantization.zero_point not in (0, None):
        return reason(CATEGORY_QUANT, f"input B zero point {b.quantization.zero_point} (XNNPACK wants 0)")
    found = float_or_q8(op, y, "output")
    if found:
        return found
    if _xnn_datatype(a) != _xnn_datatype(b) and not hybrid:
        return reason(CATEGORY_DTYPE, f"inputs {a.dtype} and {b.dtype}")
    if a.rank < 2 or b.rank < 2:
        return reason(CATEGORY_SHAPE, f"input ranks {a.rank} and {b.rank} (XNNPACK wants at least 2)")
    return None


def _xnn_datatype(t: DelegateTensor) -> str:
    """``GetXNNPackDatatype``: int8 per channel is a datatype of its own (qcint8), apart from per-tensor qint8."""
    q = t.quantization
    if t.dtype == "INT8" and q is not None and q.num_scales > 1:
        return "QCINT8"
    return t.dtype


# ---- GPU delegate placement (model_builder.cc FullyConnectedOperationParser / BatchedMatMulOperationParser,
# gpu_compatibility.cc CheckGpuDelegateCompatibility) ----------------------------------------------------------

@register_placement(GPU, "FULLY_CONNECTED", source="model_builder.cc FullyConnectedOperationParser::IsSupported, "
                                                   "gpu_compatibility.cc CheckGpuDelegateCompatibility; "
                                                   "ml_drift_delegate/tflite/model_builder.cc "
                                                   "FullyConnectedOperationParser::IsSupported")
def _gpu_fully_connected(op: DelegateOp) -> str | None:
    """Up to v9 (ML Drift v14); default weights format; at most two runtime inputs, a runtime input 0; with
    keep_num_dims, input and output of one rank. Hybrid and fp16 weights pass (constants are not
    type-checked)."""
    found = gpu_version(op, 9, 14)
    if found:
        return found
    if not op.inputs:
        return reason(CATEGORY_INPUTS, "no input")
    fmt = op.opt("weights_format", "DEFAULT")
    if fmt not in ("DEFAULT", 0):
        return reason(CATEGORY_OPTIONS, f"weights format {fmt}")
    if gpu_runtime_inputs(op) > 2:
        return reason(CATEGORY_INPUTS, f"{gpu_runtime_inputs(op)} runtime inputs (the GPU delegate takes 2 at most)")
    x = op.input(0)
    if x is not None and x.static:
        return reason(CATEGORY_INPUTS, "input 1 is a constant (the GPU delegate wants it computed)")
    if op.opt("keep_num_dims", False):
        if not op.outputs:
            return reason(CATEGORY_INPUTS, "no output")
        if x is not None and x.rank != op.outputs[0].rank:
            return reason(CATEGORY_OPTIONS, f"keep_num_dims with input rank {x.rank} and output rank "
                                            f"{op.outputs[0].rank}")
    return None


@register_placement(GPU, "BATCH_MATMUL", source="model_builder.cc BatchedMatMulOperationParser::IsSupported, "
                                                "gpu_compatibility.cc CheckGpuDelegateCompatibility; "
                                                "ml_drift_delegate/tflite/model_builder.cc "
                                                "BatchedMatMulOperationParser::IsSupported")
def _gpu_batch_matmul(op: DelegateOp) -> str | None:
    """Two inputs and one output (any version). ML Drift: two runtime inputs, or a runtime first input and
    a constant second one of rank 2 to 4 (the classic delegate's parser converts a constant second input
    only when 2-D, after the partitions are fixed: not modelled)."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (the GPU delegate "
                                       f"wants 2 and 1)")
    if not gpu_drift(op):
        return None
    runtime = gpu_runtime_inputs(op)
    a, b = op.inputs
    if runtime == 1:
        if b is None or not b.static:
            return reason(CATEGORY_INPUTS, "input 1 is a constant and input 2 computed (the GPU delegate wants "
                                           "the constant second)")
        if not 2 <= b.rank <= 4:
            return reason(CATEGORY_SHAPE, f"constant second input of rank {b.rank} (the GPU delegate takes 2 to 4)")
    elif runtime != 2:
        return reason(CATEGORY_INPUTS, f"{runtime} runtime inputs (the GPU delegate wants 1 or 2)")
    return None


# ---- kernel temporaries (LiteRT's builtin kernels, XNNPACK off) ------------------------------------

_HYBRID_WEIGHTS = frozenset({"INT8", "UINT8", "INT4", "INT2"})


# FULLY_CONNECTED: temporaries only for hybrid (float32 input, int8/uint8/int4/int2 weights): the
# quantized input (int8, the input's elements), scaling factors and input offsets (4 B per batch row
# B), int32 accumulators (U × B), persistent int32 row sums (U), and for sparse weights a persistent
# uint8 ledger. Constant int4 weights (per channel or blockwise alike) with an even input size I ≥
# 32 and U ≥ 4 units take the optimized 4-bit kernel instead (PrepareImpl4Bit): its buffers are
# padded to its tiles, B rows to a multiple of the packed rows (the largest power of two ≤ B, at
# most 4), I to 32 and U to 4, and it keeps no row sums (its filter is packed on the heap).
_FC4_FILTER_WIDTH, _FC4_FILTER_DEPTH = 4, 32  # optimized_4bit::FilterWidth, FilterDepth (fully_connected_4bit.h)
_FC4_MAX_ROWS = 4  # optimized_4bit::GetMaxSupportedRows() of the SSE and NEON builds (the reference one: 1)


@register_temporaries("FULLY_CONNECTED", hybrid_only=(0, 1))
def _fc_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's FULLY_CONNECTED temporaries (hybrid only)."""
    x, w = ctx.input(0), ctx.input(1)
    if not (x.dtype == "FLOAT32" and w.dtype in _HYBRID_WEIGHTS):
        return ()
    b, depth, units = _fc_dims(ctx)
    if (w.dtype == "INT4" and w.is_constant and b and depth % 2 == 0 and units >= _FC4_FILTER_WIDTH
            and depth >= _FC4_FILTER_DEPTH):
        source = "tflite/kernels/fully_connected.cc PrepareImpl4Bit"
        packed = next(r for r in (4, 2, 1) if r <= _FC4_MAX_ROWS and b >= r)
        rows = -(-b // packed) * packed
        cols = -(-depth // _FC4_FILTER_DEPTH) * _FC4_FILTER_DEPTH
        width = -(-units // _FC4_FILTER_WIDTH) * _FC4_FILTER_WIDTH
        return (Temporary("input_quantized", rows * cols, False, source),
                Temporary("scaling_factors", 4 * rows, False, source),
                Temporary("accum_scratch", 4 * rows * width, False, source),
                Temporary("input_offsets", 4 * rows, False, source))
    source = "tflite/kernels/fully_connected.cc PrepareImpl"
    return (Temporary("input_quantized", x.n, False, source), Temporary("scaling_factors", 4 * b, False, source),
            Temporary("accum_scratch", 4 * units * b, False, source),
            Temporary("input_offsets", 4 * b, False, source), Temporary("row_sums", 4 * units, True, source))


# BATCH_MATMUL: the LHS transposed (its shape with the last two dims swapped, its dtype) and the RHS
# transposed (persistent when the RHS is constant). Hybrid (float32 LHS, int8 RHS) adds the
# quantized LHS (int8, its elements), scaling factors and input offsets (4 B per row: Π(LHS batch)·M),
# int32 accumulators (P × M) and persistent int32 row sums (Π(RHS batch)·P).
@register_temporaries("BATCH_MATMUL")
def _bmm_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's BATCH_MATMUL temporaries."""
    x, y = ctx.input(0), ctx.input(1)
    source = "tflite/kernels/batch_matmul.cc InitializeTemporaries"
    out = [Temporary("lhs_transposed", x.nbytes, False, source),
           Temporary("rhs_transposed", y.nbytes, y.is_constant, source)]
    if x.dtype == "FLOAT32" and y.dtype == "INT8":
        m = x.shape[-1] if ctx.opt("adj_x", False) else x.shape[-2]
        p = y.shape[-2] if ctx.opt("adj_y", False) else y.shape[-1]
        rows = num_elements(x.shape[:-2]) * m
        out += [Temporary("input_quantized", x.n, False, source), Temporary("scaling_factors", 4 * rows, False, source),
                Temporary("accum_scratch", 4 * p * m, False, source), Temporary("input_offsets", 4 * rows, False, source),
                Temporary("row_sums", 4 * num_elements(y.shape[:-2]) * p, True, source)]
    return tuple(out)


# TensorFlow Lite Micro, fully_connected.cc FullyConnectedInit: OpDataFullyConnected (fully_connected.h:
# eight int32 multipliers, shifts, activation range, zero points, the input-quantized index; the
# filter buffer index, two per-channel pointers, is_per_channel [, 2 compression indices]);
# fully_connected_common.cc CalculateOpDataFullyConnected allocates the per-channel multipliers and shifts
# (one int32 per scale) when an integer filter has more than one scale; int4 filters request a scratch
# buffer to unpack them. TfLiteFullyConnectedParams: activation, weights format, two bools, bias type; the
# Python package's newer build parses 32 bytes aligned 8 on x86-64 (ParseFullyConnected's allocation,
# read from its machine code): a pointer and an int more (into an options vector), 16 + 8 + 4 -> 32.
def tflm_op_data_fully_connected(t: TflmTarget) -> CLayout:
    """OpDataFullyConnected (micro/kernels/fully_connected.h), as described above."""
    return c_struct(t, "iiiiiiii", "i", "pp", "b", compression="ii")


@register_tflm("FULLY_CONNECTED")
def _tflm_fully_connected(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """TFLM's reference FULLY_CONNECTED."""
    op_data = tflm_op_data_fully_connected(target)
    w = ctx.input(1)
    prepare = (4 * scales, 4 * scales) if scales > 1 and ctx.input(0).dtype in ("INT8", "INT16") else ()
    return TflmKernel(c_struct(target, "iibbi", package="pi"), op_data.size, prepare,
                      (w.n,) if w.dtype == "INT4" else (),
                      "micro/kernels/fully_connected.cc FullyConnectedInit, FullyConnectedPrepare")


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
register_facts("FULLY_CONNECTED", law_group="matmul", fusion=(OUTPUT_CLAMP,),
               xnnpack=XnnpackFacts(operator_bytes=1_896, weights=FULLY_CONNECTED))
register_facts("BATCH_MATMUL", law_group="matmul",
               xnnpack=XnnpackFacts(operator_bytes=1_760, workspace=PACKED_OPERAND))

# What the converter writes (the what-if of another precision): int8 weights per output channel (in a dynamic-
# range model too: the converter of TensorFlow 2.21 writes 1000 scales for MobileNetV2's [1000, 1280] weights),
# an int32 bias in a full-integer model; op_version.cc's versions of the per-channel hybrid kernel (12, which the
# GPU delegate refuses) and of the int8 kernel.
register_facts("FULLY_CONNECTED", quantized_weights=((1, 0),), quantized_bias=2, hybrid_version=12, int8_version=4)
