"""The remaining builtins: selection and sorting, segment ops and scans, FFT and complex numbers,
random numbers, resource variables and hash tables, hashing/string ops, data movement.

Data-dependent ops (TOPK_V2, UNIQUE, NON_MAX_SUPPRESSION_V4/V5) are ESTIMATES and say so in
their note: what they cost depends on the values, not only on the shapes.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from .custom import IOU_FLOPS
from .facts import DENSIFY_WEIGHTS, VARIABLE_ASSIGN, VARIABLE_HANDLE, VARIABLE_READ, register_facts
from .placement import (CATEGORY_DTYPE, CATEGORY_DYNAMIC, CATEGORY_FED, CATEGORY_INPUTS, CATEGORY_OPTIONS,
                        CATEGORY_SHAPE, GPU, XNNPACK, DelegateOp, float_or_q8, gpu_classic_only, gpu_drift,
                        gpu_drift_only, gpu_io, gpu_version, reason, register_placement)
from .registry import (Cost, OpContext, Shape, register, register_memory, register_not_costed, register_traits,
                       register_zero, same_as_input, shape_fn, value_fn)


def _log2(n: int) -> int:
    """⌈log2 n⌉ for n ≥ 1."""
    return max(int(n) - 1, 0).bit_length()


def _scalar(ctx: OpContext, i: int) -> int | None:
    if not ctx.has_input(i) or ctx.input(i).value is None or ctx.input(i).value.size != 1:
        return None
    return int(ctx.input(i).value.reshape(-1)[0])


def _ints(ctx: OpContext, i: int, what: str) -> list[int]:
    value = ctx.input(i).value if ctx.has_input(i) else None
    if value is None:
        raise ShapeError(f"{ctx.op_type}: {what} (input {i}) is not a known constant")
    return [int(v) for v in value.reshape(-1).tolist()]


# ---------------------------------------------------------------------------------------------
# Zero arithmetic: data movement, bookkeeping, state, hashing of strings.

register_zero(["SPARSE_TO_DENSE", "ONE_HOT", "RANGE", "WHERE", "REVERSE_SEQUENCE", "MATRIX_DIAG",
               "MATRIX_SET_DIAG", "SCATTER_ND", "DYNAMIC_UPDATE_SLICE", "REAL", "IMAG", "DILATE"],
              "data movement: no arithmetic")
register_zero("DENSIFY", "decodes a sparse tensor into a dense one (a copy); for a constant input it runs "
                         "once at init", reference="TFLite kernel (densify.cc) caches its result")
register_zero(["VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"], "resource variable bookkeeping / copy")
register_zero(["HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "HASHTABLE_LOOKUP"],
              "hash table bookkeeping and lookups (no arithmetic on values)")
register_traits("DENSIFY", init_on_constant=True)  # densify.cc caches the result of a constant input
register_traits(["VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"], not_isolated="stateful (resource variables)")
register_traits(["HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE"],
                not_isolated="stateful (hash table)")
register_zero(["LSH_PROJECTION", "SKIP_GRAM"], "hashing / string processing, not arithmetic on values",
              reference="TFLite kernels lsh_projection.cc (Fingerprint64 hashes), skip_gram.cc (string n-grams)")
register_zero(["RANDOM_UNIFORM", "RANDOM_STANDARD_NORMAL", "MULTINOMIAL"],
              "random number generation is not counted as arithmetic (as onnx-tool)", reference="onnx-tool (0)")
register_not_costed("CONCAT_EMBEDDINGS", "the TFLite runtime has no kernel for this op")
register_not_costed("CUSTOM", "custom ops are costed by name (CUSTOM:<custom_code>); unknown ones are "
                              "reported as unsupported with their name")
register_not_costed("DELEGATE", "a delegate node's work is opaque (its subgraph is not in the file)")

# Memory (TFLite kernels): DYNAMIC_UPDATE_SLICE writes the update into its operand's buffer when it
# can (kTfLiteInplaceOpInput0Shared: a KV cache updated in place); RANGE of constant or
# Prepare-computed bounds is computed once at Prepare (SetTensorToPersistentRo).
register_memory("DYNAMIC_UPDATE_SLICE", inplace=(0,))
register_facts("DYNAMIC_UPDATE_SLICE", slice_update=(0, 1))  # operand, update (a KV cache and its new tokens)
register_memory("RANGE", prepare_inputs=(0, 1, 2))

shape_fn(["REVERSE_SEQUENCE", "MATRIX_SET_DIAG", "DYNAMIC_UPDATE_SLICE", "REAL", "IMAG", "DENSIFY",
          ])(same_as_input)


@shape_fn("MATRIX_DIAG")
def _matrix_diag_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    if not x:
        raise ShapeError("MATRIX_DIAG: input needs rank >= 1")
    return [x + (x[-1],)]


@shape_fn("ONE_HOT")
def _one_hot_shape(ctx: OpContext) -> list[Shape]:
    x = list(ctx.input(0).shape)
    depth = _scalar(ctx, 1)
    if depth is None:
        raise ShapeError("ONE_HOT: depth is not a known constant")
    axis = int(ctx.opt("axis", -1))
    x.insert(len(x) if axis == -1 else axis, depth)
    return [tuple(x)]


@shape_fn("RANGE")
def _range_shape(ctx: OpContext) -> list[Shape]:
    start, limit, delta = (ctx.input(i).value for i in range(3))
    if start is None or limit is None or delta is None:
        raise ShapeError("RANGE: start/limit/delta are not known constants")
    return [(range_length(*(v.reshape(-1)[0].item() for v in (start, limit, delta))),)]


def range_length(start: int | float, limit: int | float, delta: int | float) -> int:
    """Elements of RANGE(start, limit, delta), as ``np.arange`` counts them, by arithmetic: never allocated
    (a 400-byte model may ask for 10**12 of them), exact for integers of any size."""
    if delta == 0 or not all(math.isfinite(v) for v in (start, limit, delta)):
        raise ShapeError(f"RANGE: delta {delta} with start {start} and limit {limit} has no length")
    if all(isinstance(v, int) for v in (start, limit, delta)):
        return max(-((start - limit) // delta), 0)  # ceil((limit - start) / delta) in ints
    return max(math.ceil((limit - start) / delta), 0)


@value_fn("RANGE")
def _fold_range(ctx: OpContext):
    vals = [ctx.input(i).value for i in range(3)]
    if any(v is None or v.dtype.kind not in "iu" for v in vals):
        return [None]
    return [np.arange(*(int(v.reshape(-1)[0]) for v in vals), dtype=vals[0].dtype)]


@shape_fn(["SCATTER_ND"])
def _scatter_nd_shape(ctx: OpContext) -> list[Shape]:
    return [tuple(_ints(ctx, 2, "shape"))]


@shape_fn("SPARSE_TO_DENSE")
def _sparse_to_dense_shape(ctx: OpContext) -> list[Shape]:
    return [tuple(_ints(ctx, 1, "output_shape"))]


@shape_fn(["RANDOM_UNIFORM", "RANDOM_STANDARD_NORMAL"])
def _random_shape(ctx: OpContext) -> list[Shape]:
    return [tuple(_ints(ctx, 0, "shape"))]


@shape_fn("MULTINOMIAL")
def _multinomial_shape(ctx: OpContext) -> list[Shape]:
    n = _scalar(ctx, 1)
    if n is None:
        raise ShapeError("MULTINOMIAL: num_samples is not a known constant")
    return [(ctx.input(0).shape[0], n)]


# ---------------------------------------------------------------------------------------------
# Elementwise-like ops without an existing family.

# FAKE_QUANT: per element clamp to [min, max] (2 compares), subtract min, divide by the scale
# (1 mul), round, multiply back and add min: 6 ops.
@register("FAKE_QUANT", "FLOPs = 6·n(out)",
          reference="TFLite kernel fake_quant.cc (FakeQuantizeArray: clamp, shift, scale, round, rescale)")
def fake_quant(ctx: OpContext) -> Cost:
    """Quantize-dequantize round trip."""
    return Cost(0, 6 * ctx.output(0).n)


# COMPLEX_ABS: |a + bi| = sqrt(a² + b²): 2 mul + 1 add + 1 sqrt (SQRT is 1/elem) = 4.
@register("COMPLEX_ABS", "FLOPs = 4·n(out)", reference="2 mul + add + sqrt per element: 4/elem")
def complex_abs(ctx: OpContext) -> Cost:
    """Magnitude of complex numbers."""
    return Cost(0, 4 * ctx.output(0).n)


shape_fn(["FAKE_QUANT", "COMPLEX_ABS", "CUMSUM"])(same_as_input)


# CUMSUM: one add per output element (onnx-tool CumSum).
@register("CUMSUM", "FLOPs = n(out)", reference="onnx-tool CumSum (1/elem)")
def cumsum(ctx: OpContext) -> Cost:
    """Cumulative sum along one axis."""
    return Cost(0, ctx.output(0).n)


# BUCKETIZE: a binary search over the sorted boundaries per element: ⌈log2(b + 1)⌉ compares.
@register("BUCKETIZE", "FLOPs = n(in)·⌈log2(boundaries + 1)⌉",
          reference="TFLite kernel bucketize.cc (std::upper_bound: a binary search per element)")
def bucketize(ctx: OpContext) -> Cost:
    """Bucket index of each element."""
    boundaries = len(ctx.opt("boundaries", ()) or ())
    return Cost(0, ctx.input(0).n * _log2(boundaries + 1))


shape_fn("BUCKETIZE")(same_as_input)


# SEGMENT_SUM and UNSORTED_SEGMENT_SUM/PROD/MAX/MIN: one binary op per data element.
SEGMENT_OPS = ["SEGMENT_SUM", "UNSORTED_SEGMENT_SUM", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX",
               "UNSORTED_SEGMENT_MIN"]


@register(SEGMENT_OPS, "FLOPs = n(data)",
          reference="TFLite kernels segment_sum.cc, unsorted_segment.cc (1 add/mul/max/min per data element)")
def segment_reduce(ctx: OpContext) -> Cost:
    """Reduce data rows into segments."""
    return Cost(0, ctx.input(0).n)


@shape_fn(SEGMENT_OPS[1:])
def _unsorted_segment_shape(ctx: OpContext) -> list[Shape]:
    n = _scalar(ctx, 2)
    if n is None:
        raise ShapeError(f"{ctx.op_type}: num_segments is not a known constant")
    return [(n,) + ctx.input(0).shape[ctx.input(1).rank:]]


@shape_fn("SEGMENT_SUM")
def _segment_sum_shape(ctx: OpContext) -> list[Shape]:
    ids = _ints(ctx, 1, "segment_ids")
    return [((max(ids) + 1) if ids else 0,) + ctx.input(0).shape[1:]]


_SEGMENT_UFUNCS = {"UNSORTED_SEGMENT_SUM": np.add, "UNSORTED_SEGMENT_PROD": np.multiply,
                   "UNSORTED_SEGMENT_MAX": np.maximum, "UNSORTED_SEGMENT_MIN": np.minimum}


@value_fn(list(_SEGMENT_UFUNCS))
def _segments_value(ctx: OpContext) -> list[np.ndarray | None]:
    """UNSORTED_SEGMENT_* of known values (Keras' attention reshapes multiply dims with PROD)."""
    data, ids = ctx.input(0).value, ctx.input(1).value
    if data is None or ids is None:
        return [None]
    ufunc = _SEGMENT_UFUNCS[ctx.op_type]
    shape = ctx.output(0).shape
    if ufunc is np.add or ufunc is np.multiply:
        out = np.full(shape, 0 if ufunc is np.add else 1, dtype=data.dtype)
    else:  # empty segments get the lowest / highest value of the dtype
        info = np.iinfo(data.dtype) if data.dtype.kind in "iu" else np.finfo(data.dtype)
        out = np.full(shape, info.min if ufunc is np.maximum else info.max, dtype=data.dtype)
    ufunc.at(out, ids, data)
    return [out]


# RFFT2D: inputs 0 x [..., H, W] real, 1 fft_length [fft_h, fft_w]; output complex64
# [..., fft_h, fft_w/2 + 1]. FFTW's convention for a real transform of N = fft_h·fft_w points:
# 2.5·N·log2(N) flops, per 2-D transform; batches = n(in)/(H·W).
@register("RFFT2D", "FLOPs = batches · 2.5·N·log2(N), N = fft_h·fft_w",
          reference="FFTW convention for real transforms (benchFFT: 2.5·N·log2(N))")
def rfft2d(ctx: OpContext) -> Cost:
    """2-D real FFT over the last two dims."""
    x = ctx.input(0)
    if x.rank < 2:
        raise ShapeError(f"RFFT2D: input {x.shape} needs rank >= 2")
    fft = _ints(ctx, 1, "fft_length") if ctx.input(1).value is not None else list(x.shape[-2:])
    n = fft[0] * fft[1]
    batches = x.n // max(x.shape[-2] * x.shape[-1], 1)
    return Cost(0, batches * (5 * n * _log2(n)) // 2)


@shape_fn("RFFT2D")
def _rfft2d_shape(ctx: OpContext) -> list[Shape]:
    fh, fw = _ints(ctx, 1, "fft_length")
    return [ctx.input(0).shape[:-2] + (fh, fw // 2 + 1)]


# ---------------------------------------------------------------------------------------------
# Data-dependent selection (estimates).

# TOPK_V2: per row of n values a size-k heap: 1 compare per value, and ⌈log2 k⌉ more when it
# enters the heap; upper bound n(in)·(1 + ⌈log2 k⌉).
@register("TOPK_V2", "FLOPs ≤ n(in)·(1 + ⌈log2 k⌉); estimate", reference="estimate (heap selection)")
def topk(ctx: OpContext) -> Cost:
    """Top-k values and indices along the last axis."""
    k = _scalar(ctx, 1) or (ctx.output(0).shape[-1] if ctx.output(0).shape else 1)
    return Cost(0, ctx.input(0).n * (1 + _log2(k)), note="ESTIMATE: upper bound of heap selection")


@shape_fn("TOPK_V2")
def _topk_shape(ctx: OpContext) -> list[Shape]:
    k = _scalar(ctx, 1)
    if k is None:
        raise ShapeError("TOPK_V2: k is not a known constant")
    out = ctx.input(0).shape[:-1] + (k,)
    return [out, out]


# UNIQUE: one hash-map lookup per element.
@register("UNIQUE", "FLOPs ≈ n(in); estimate", reference="estimate (hash map per element)")
def unique(ctx: OpContext) -> Cost:
    """Unique values of a 1-D tensor."""
    return Cost(0, ctx.input(0).n, note="ESTIMATE: one hash lookup per element")


# NON_MAX_SUPPRESSION_V4/V5: inputs 0 boxes [N, 4], 1 scores [N], 2 max_output_size M, ...
# score threshold N compares, sort N·⌈log2 N⌉, then at most N·M IoU tests of 19 FLOPs each
# (as TFLite_Detection_PostProcess). V5's soft-NMS adds an exp per IoU test when sigma > 0.
@register(["NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5"],
          "FLOPs ≤ N + N·⌈log2 N⌉ + 19·N·M; estimate", reference="estimate (greedy NMS)")
def non_max_suppression(ctx: OpContext) -> Cost:
    """Greedy non-max suppression over N boxes, keeping at most M."""
    n = ctx.input(0).shape[0] if ctx.input(0).rank else 0
    m = _scalar(ctx, 2)
    if m is None:
        m = ctx.output(0).shape[0] if ctx.output(0).shape else n
    m = min(m, n)
    return Cost(0, n + n * _log2(n) + IOU_FLOPS * n * m,
                note=f"ESTIMATE: data-dependent; IoU tests counted as an upper bound ({n} boxes, keep {m})")


# ---- GPU delegate placement (model_builder.cc CumsumOperationParser / OneHotOperationParser /
# DensifyOperationParser, gpu_compatibility.cc CheckGpuDelegateCompatibility) -------------------------------------

_GPU_FLOATS = ("FLOAT32", "FLOAT16")


@register_placement(GPU, "CUMSUM", source="model_builder.cc CumsumOperationParser::IsSupported, gpu_compatibility.cc "
                                          "CheckCumsumGpuDelegateCompatibility")
def _gpu_cumsum(op: DelegateOp) -> str | None:
    """v1; two inputs, one output; float input and output of one type; constant int32 axis."""
    found = gpu_version(op, 1)
    if found:
        return found
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (2 and 1)")
    x, axis, y = op.input(0), op.input(1), op.outputs[0]
    if x is None or x.dtype not in _GPU_FLOATS or y.dtype != x.dtype:
        return reason(CATEGORY_DTYPE, f"input {x.dtype if x else None} and output {y.dtype} (float, one type)")
    if axis is None or axis.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"axis is {axis.dtype if axis else None} (INT32)")
    if not axis.static:
        return reason(CATEGORY_DYNAMIC, "axis is not a constant of the file")
    return None


@register_placement(GPU, "ONE_HOT", source="model_builder.cc OneHotOperationParser::IsSupported, gpu_compatibility.cc "
                                           "CheckOneHotGpuDelegateCompatibility")
def _gpu_one_hot(op: DelegateOp) -> str | None:
    """v1; four inputs, one output; int32 indices, all but the batch (rank > 3) and last dimension 1;
    axis -1 (or equal to the last index dimension, as the source compares); constant scalar float
    on/off values. ML Drift (no CheckGpuDelegateCompatibility): at least four inputs, one output, axis -1
    (or the last index dimension), indices of rank 4 with a last dimension of 1."""
    found = gpu_version(op, 1)
    if found:
        return found
    if gpu_drift(op):
        if len(op.inputs) < 4 or len(op.outputs) != 1:
            return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (4 and 1)")
        dims = op.input(0).shape if op.input(0) is not None else ()
        axis = int(op.opt("axis", -1))
        if axis != -1 and (not dims or axis != dims[-1]):
            return reason(CATEGORY_OPTIONS, f"axis {axis} (the GPU delegate wants -1)")
        if len(dims) >= 4 and dims[3] != 1:
            return reason(CATEGORY_SHAPE, f"indices {list(dims)}: dimension 3 is not 1")
        return None
    if len(op.inputs) != 4 or len(op.outputs) != 1:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (4 and 1)")
    idx, on, off = op.input(0), op.input(2), op.input(3)
    if idx is None or idx.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"indices are {idx.dtype if idx else None} (INT32)")
    axis = int(op.opt("axis", -1))
    dims = idx.shape
    if axis != -1 and (not dims or axis != dims[-1]):
        return reason(CATEGORY_OPTIONS, f"axis {axis} (the GPU delegate wants -1)")
    for i in range(len(dims) - 1):
        if len(dims) > 3 and i == 0:
            continue
        if dims[i] != 1:
            return reason(CATEGORY_SHAPE, f"indices dimension {i} is {dims[i]} (the GPU delegate wants 1)")
    for t, where in ((on, "on value"), (off, "off value")):
        if t is None or t.dtype != "FLOAT32":
            return reason(CATEGORY_DTYPE, f"{where} is {t.dtype if t else None} (FLOAT32)")
    for t, where in ((on, "on value"), (off, "off value")):
        if not t.static:
            return reason(CATEGORY_DYNAMIC, f"{where} is not a constant of the file")
        if t.rank > 1 or (t.rank == 1 and t.shape[0] > 1):
            return reason(CATEGORY_SHAPE, f"{where} has shape {list(t.shape)} (a scalar)")
    return None


@register_placement(GPU, "DENSIFY", source="model_builder.cc DensifyOperationParser::IsSupported, gpu_compatibility.cc "
                                           "CheckGpuDelegateCompatibility")
def _gpu_densify(op: DelegateOp) -> str | None:
    """Classic delegate only: v1; no runtime input (a constant sparse tensor), one output."""
    return gpu_classic_only(op) or gpu_version(op, 1) or gpu_io(op, 0, 1)


@register_placement(GPU, "DYNAMIC_UPDATE_SLICE", source="ml_drift_delegate/tflite/model_builder.cc "
                                                        "DynamicUpdateSliceOperationParser::IsSupported, "
                                                        "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_dynamic_update_slice(op: DelegateOp) -> str | None:
    """ML Drift only: three inputs, one output; operand and update of one type and rank; 1-D int32 start
    indices computed at run time."""
    found = gpu_drift_only(op)
    if found:
        return found
    if len(op.inputs) != 3 or len(op.outputs) != 1 or any(t is None for t in op.inputs):
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (3 and 1)")
    operand, update, start = op.inputs
    if operand.dtype != update.dtype:
        return reason(CATEGORY_DTYPE, f"operand {operand.dtype} and update {update.dtype} (one type)")
    if start.rank != 1 or start.dtype != "INT32":
        return reason(CATEGORY_SHAPE, f"start indices {start.dtype}{list(start.shape)} (1-D INT32)")
    if update.rank != operand.rank:
        return reason(CATEGORY_SHAPE, f"operand rank {operand.rank} and update rank {update.rank}")
    if start.static:
        return reason(CATEGORY_INPUTS, "start indices are a constant (the GPU delegate wants them computed)")
    return None


@register_placement(GPU, "TOPK_V2", source="ml_drift_delegate/tflite/model_builder.cc TopKOperationParser::IsSupported, "
                                           "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_topk(op: DelegateOp) -> str | None:
    """ML Drift only: v1; one runtime input, two outputs; a constant k of one element."""
    found = gpu_drift_only(op) or gpu_version(op, 1) or gpu_io(op, 1, 2)
    if found:
        return found
    k = op.input(1)
    if k is None or not k.static:
        return reason(CATEGORY_DYNAMIC, "k is not a constant of the file")
    if math.prod(k.shape) != 1:
        return reason(CATEGORY_SHAPE, f"k has shape {list(k.shape)} (one element)")
    return None


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitVarHandleNode / VisitReadVariableNode / VisitAssignVariableNode)
# The delegate handles variable operators by default (``support_variable_ops()``). These rules are the per-op
# checks; what spans ops is in analysis/placement.py as ``Delegate::PrepareOpsToDelegate`` does it: a READ or
# ASSIGN is taken only after a VAR_HANDLE of its resource tensor, and with the type and shape of the first
# one taken (``ResourceInfo::AddProxyValue``); a VAR_HANDLE is claimed after the pass when one of them was.

VAR_HANDLE_PENDING = reason(CATEGORY_FED, "no READ_VARIABLE or ASSIGN_VARIABLE of its variable is taken")


@register_placement(XNNPACK, "VAR_HANDLE", source="xnnpack_delegate.cc VisitVarHandleNode, PrepareOpsToDelegate")
def _xnn_var_handle(op: DelegateOp) -> str | None:
    """Refused when visited; claimed by the pass if a READ/ASSIGN of its variable is taken."""
    return VAR_HANDLE_PENDING


@register_placement(XNNPACK, "READ_VARIABLE", source="xnnpack_delegate.cc VisitReadVariableNode")
def _xnn_read_variable(op: DelegateOp) -> str | None:
    """A ranked (not scalar) float or 8-bit value."""
    y = op.outputs[0] if op.outputs else None
    if y is not None and y.rank == 0:
        return reason(CATEGORY_SHAPE, "a scalar (or unranked) variable")
    return float_or_q8(op, y, "value")


@register_placement(XNNPACK, "ASSIGN_VARIABLE", source="xnnpack_delegate.cc VisitAssignVariableNode")
def _xnn_assign_variable(op: DelegateOp) -> str | None:
    """A float or 8-bit value."""
    return float_or_q8(op, op.input(1), "value")


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
register_facts("DENSIFY", weight_unpacking=DENSIFY_WEIGHTS)
register_facts("VAR_HANDLE", resource_variable=VARIABLE_HANDLE)
register_facts("READ_VARIABLE", resource_variable=VARIABLE_READ)
register_facts("ASSIGN_VARIABLE", resource_variable=VARIABLE_ASSIGN)
