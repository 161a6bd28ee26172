"""Reductions: MEAN, SUM, REDUCE_PROD/MAX/MIN/ANY/ALL, ARG_MAX/ARG_MIN.

A reduction of n(in) elements into n(out) results needs n(in) − n(out) binary operations.
MEAN adds one divide per output: n(in) − n(out) + n(out) = n(in) (TF profiler: Mean = n(in)).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..units import dense_bytes
from .facts import INT8_ACCUMULATORS, REDUCTION_ACCUMULATORS, XnnpackFacts, register_facts
from .placement import (CATEGORY_DTYPE, CATEGORY_SHAPE, XNN_MAX_TENSOR_DIMS, XNNPACK, DelegateOp, float_or_q8, ints,
                        num_io, reason, register_placement, static)
from .placement import CATEGORY_INPUTS, GPU, gpu_axes, gpu_drift_only, gpu_io, reason
from .registry import (Cost, KernelSetup, OpContext, Shape, Temporary, register, register_temporaries, shape_fn,
                       value_fn)
from .tflm import TflmKernel, TflmTarget, c_struct, fixed, register_tflm

REDUCERS = ["SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY", "REDUCE_ALL"]


# MEAN: FLOPs = n(in) (accumulate n(in) − n(out), divide n(out)).
@register("MEAN", "FLOPs = n(in)", reference="TF profiler Mean")
def mean(ctx: OpContext) -> Cost:
    """Mean over axes."""
    return Cost(0, ctx.input(0).n)


# SUM and the other reducers: FLOPs = n(in) − n(out).
@register(REDUCERS, "FLOPs = n(in) − n(out)", reference="TF profiler Sum")
def reduce_op(ctx: OpContext) -> Cost:
    """Sum/prod/max/min/any/all over axes."""
    return Cost(0, max(ctx.input(0).n - ctx.output(0).n, 0))


# ARG_MAX / ARG_MIN: n(in) − n(out) compares.
@register(["ARG_MAX", "ARG_MIN"], "FLOPs = n(in) − n(out)", reference="TF profiler ArgMax/ArgMin")
def arg_reduce(ctx: OpContext) -> Cost:
    """Index of the max/min along one axis."""
    return Cost(0, max(ctx.input(0).n - ctx.output(0).n, 0))


def _axes(ctx: OpContext, rank: int) -> list[int]:
    axis = ctx.input(1).value
    if axis is None:
        raise ShapeError(f"{ctx.op_type}: axis is not a known constant")
    out = []
    for a in axis.reshape(-1).tolist():
        a = int(a)
        if not -rank <= a < rank:
            raise ShapeError(f"{ctx.op_type}: axis {a} out of range for rank {rank}")
        out.append(a % rank)
    return out


@shape_fn(["MEAN", *REDUCERS])
def _reduce_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    axes = set(_axes(ctx, len(x)))
    if ctx.opt("keep_dims", False):
        return [tuple(1 if i in axes else d for i, d in enumerate(x))]
    return [tuple(d for i, d in enumerate(x) if i not in axes)]


@shape_fn(["ARG_MAX", "ARG_MIN"])
def _arg_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    (axis,) = _axes(ctx, len(x))[:1] or [0]
    return [tuple(d for i, d in enumerate(x) if i != axis)]


_FOLD_REDUCE = {"SUM": np.sum, "REDUCE_PROD": np.prod, "REDUCE_MAX": np.max, "REDUCE_MIN": np.min,
                "REDUCE_ANY": np.any, "REDUCE_ALL": np.all, "MEAN": np.mean}


@value_fn(list(_FOLD_REDUCE))
def _fold_reduce(ctx: OpContext):
    x = ctx.input(0).value
    if x is None:
        return [None]
    axes = tuple(_axes(ctx, x.ndim))
    out = _FOLD_REDUCE[ctx.op_type](x, axis=axes, keepdims=bool(ctx.opt("keep_dims", False)))
    if ctx.op_type == "MEAN" and x.dtype.kind in "iu":
        out = np.trunc(out)
    return [np.asarray(out).astype(x.dtype)]


@value_fn(["ARG_MAX", "ARG_MIN"])
def _fold_arg(ctx: OpContext):
    x = ctx.input(0).value
    if x is None:
        return [None]
    (axis,) = _axes(ctx, x.ndim)[:1] or [0]
    out = (np.argmax if ctx.op_type == "ARG_MAX" else np.argmin)(x, axis=axis)
    return [out.astype(np.int64 if ctx.opt("output_type") == "INT64" else np.int32)]


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitNode and VisitReduceNode) -----------------------------------------

@register_placement(XNNPACK, ["MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"], source="xnnpack_delegate.cc VisitReduceNode")
def _xnn_reduce(op: DelegateOp) -> str | None:
    """Float or 8-bit reductions over static int32 axes."""
    found = num_io(op, 2) or float_or_q8(op, op.input(0), "input")
    if found:
        return found
    x, axes = op.input(0), op.input(1)
    if axes is None or axes.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"axes are {axes.dtype if axes else 'missing'}")
    if axes.rank > 1:
        return reason(CATEGORY_SHAPE, f"axes tensor has rank {axes.rank}")
    found = static(axes, "axes", quasi=False)
    if found:
        return found
    n = 1
    for d in axes.shape:
        n *= d
    values = ints(axes)
    if n <= 0 or (n == 1 and x.rank == 0 and values == [0]):
        return reason(CATEGORY_SHAPE, "no axis to reduce")
    if n > XNN_MAX_TENSOR_DIMS:
        return reason(CATEGORY_SHAPE, f"{n} axes")
    return float_or_q8(op, op.outputs[0], "output")


# ---- GPU delegate placement (model_builder.cc MeanOperationParser / ReduceOperationParser,
# gpu_compatibility.cc CheckGpuDelegateCompatibility) ----------------------------------------------------------

@register_placement(GPU, ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"),
                    source="model_builder.cc MeanOperationParser / ReduceOperationParser::IsSupported, "
                           "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_reduce(op: DelegateOp) -> str | None:
    """One runtime input, one constant input (the axes, int32), one output (any version)."""
    return gpu_io(op, 1, 1, consts=1) or gpu_axes(op, 1)


@register_placement(GPU, ("REDUCE_ALL", "REDUCE_ANY"),
                    source="ml_drift_delegate/tflite/model_builder.cc ReduceOperationParser::IsSupported, "
                           "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_reduce_logical(op: DelegateOp) -> str | None:
    """ML Drift only (bool tensors, its tensor check): one runtime input, constant int32 axes, one output."""
    return gpu_drift_only(op) or gpu_io(op, 1, 1, consts=1) or gpu_axes(op, 1)


@register_placement(GPU, "ARG_MAX", source="ml_drift_delegate/tflite/model_builder.cc ArgMaxOperationParser::IsSupported "
                                           "(no CheckGpuDelegateCompatibility)")
def _gpu_arg_max(op: DelegateOp) -> str | None:
    """ML Drift only: one runtime input, one constant input (the axis), one output (int32, its tensor check)."""
    found = gpu_drift_only(op)
    if found:
        return found
    if len(op.outputs) != 1:
        return reason(CATEGORY_INPUTS, f"{len(op.outputs)} outputs (1)")
    return gpu_io(op, 1, 1, consts=1)


# ---- kernel temporaries (LiteRT's builtin kernels, XNNPACK off) ------------------------------------

_ACCUMULATOR = {"FLOAT32": "FLOAT32", "INT32": "INT64", "INT64": "INT64", "UINT8": "INT32", "INT8": "INT32",
                "INT16": "INT32", "BOOL": "BOOL"}


# MEAN, SUM, REDUCE_MAX/MIN/ANY/ALL with a constant axis: the index scratch (int32 per input dim) and
# the resolved axes (int32 per axis); MEAN and SUM also the accumulator (one per output element:
# float32 for float32, int64 for int32/int64, int32 for 8/16-bit), and REDUCE_PROD (PrepareProd,
# after PrepareSimple) its product accumulator alike, unless its input is constant (the no-op path
# computes it at Prepare). The normalized dims are kTfLiteDynamic unless the input is constant;
# with a non-constant axis everything but the index scratch is dynamic.
@register_temporaries(["MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY", "REDUCE_ALL"])
def _reduce_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's reduction temporaries."""
    x, axis = ctx.input(0), ctx.input(1)
    source = "tflite/kernels/reduce.cc InitializeTemporaries, PrepareSimple, PrepareMeanOrSum, PrepareProd"
    out = [Temporary("temp_index", 4 * x.rank, False, source)]
    if axis.is_constant:
        out.append(Temporary("resolved_axis", 4 * axis.n, False, source))
        accumulates = ctx.op_type in ("MEAN", "SUM") or (ctx.op_type == "REDUCE_PROD" and not x.is_constant)
        if accumulates and x.dtype in _ACCUMULATOR:
            name = "temp_prod" if ctx.op_type == "REDUCE_PROD" else "temp_sum"
            out.append(Temporary(name, dense_bytes(ctx.output(0).n, _ACCUMULATOR[x.dtype]), False, source))
    return tuple(out)


# TensorFlow Lite Micro, reduce.cc InitReduce: OpDataReduce (reduce.h: 11 int32 / float); reduce_common.cc
# PrepareMeanOrSumHelper requests an int32 accumulator per output element (int8 / int16 input), then the
# input-iterator scratch (an int per input dim) and the resolved axes (an int per axis);
# PrepareMinMaxHelper the last two. TfLiteReducerParams: keep_dims.
@register_tflm(["MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"])
def _tflm_reduce(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """TFLM's reference reductions."""
    x, axis = ctx.input(0), ctx.input(1)
    scratch = [4 * len(x.shape), 4 * axis.n]
    if ctx.op_type in ("MEAN", "SUM") and x.dtype in ("INT8", "INT16"):
        scratch.insert(0, 4 * ctx.output(0).n)
    return TflmKernel(c_struct(target, "b"), c_struct(target, "iiiiiiiiiii").size, (), tuple(scratch),
                      "micro/kernels/reduce_common.cc PrepareMeanOrSumHelper, PrepareMinMaxHelper")


# arg_min_max.cc: no Init; TfLiteArgMaxParams / TfLiteArgMinParams: output_type
register_tflm(["ARG_MAX", "ARG_MIN"])(fixed(lambda t: c_struct(t, "i"), source="micro/kernels/arg_min_max.cc",
                                            prepare=False))


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
register_facts(("MEAN", "SUM"), law_group="reduce",
               xnnpack=XnnpackFacts(operator_bytes=920, reshape_buffers=REDUCTION_ACCUMULATORS,
                workspace=INT8_ACCUMULATORS))
register_facts(("REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN"), law_group="reduce",
               xnnpack=XnnpackFacts(operator_bytes=920, reshape_buffers=REDUCTION_ACCUMULATORS))
register_facts(("REDUCE_ANY", "REDUCE_ALL", "ARG_MAX", "ARG_MIN"), law_group="reduce")

# The version op_version.cc gives the int8 kernel (the what-if of a full-integer model, studies/what_if.py).
register_facts(("MEAN", "SUM", "REDUCE_MAX"), int8_version=2)
