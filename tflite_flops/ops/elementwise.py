"""Elementwise ops: binary arithmetic with broadcasting, comparisons, unary math, activations,
softmax and normalisation, QUANTIZE/DEQUANTIZE.

Each op costs a documented number of operations per output element (see the tables below and
docs/conventions.md). Binary ops read each input at its own (pre-broadcast) size.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from .facts import BINARY_NODE, CLAMP, DEQUANTIZE_WEIGHTS, MIN_MAX_CLAMP, UNARY_NODE, XnnpackFacts, register_facts
from .placement import (CATEGORY_DTYPE, CATEGORY_INPUTS, CATEGORY_OPTIONS, CATEGORY_QUANT, XNN_MAX_TENSOR_DIMS, XNNPACK,
                        DelegateOp, DelegateTensor, activation, float_only, float_or_q8, num_io, q8_only, rank_in,
                        reason, register_placement, same_type, scale, scale_ratio, static)
from .placement import (CATEGORY_OP_TYPE, CATEGORY_SHAPE, GPU, gpu_activation, gpu_broadcast,
                        gpu_comparison_feeds_select, gpu_drift, gpu_drift_only, gpu_io, gpu_io_either,
                        gpu_runtime_inputs, gpu_version, broadcastable)
from .registry import (EXP_LIKE, TRANSCENDENTAL, Cost, OpContext, Shape, broadcast_shapes, fused_activation,
                       register, register_memory, register_traits, same_as_input, shape_fn, value_fn)
from .tflm import CLayout, TflmKernel, TflmTarget, c_struct, fixed, register_tflm

# Binary ops: FLOPs per output element. ADD/SUB/MUL/DIV/MAXIMUM/MINIMUM and comparisons are one op
# (TF profiler, TFLite converter); SQUARED_DIFFERENCE is sub + mul (TF profiler); FLOOR_DIV and
# FLOOR_MOD are divide + floor; POW is log + exp; ATAN2 one transcendental.
BINARY_COST: dict[str, int] = {
    "ADD": 1, "SUB": 1, "MUL": 1, "DIV": 1, "MAXIMUM": 1, "MINIMUM": 1,
    "SQUARED_DIFFERENCE": 2, "FLOOR_DIV": 2, "FLOOR_MOD": 2, "POW": 2 * EXP_LIKE,
    "LESS": 1, "LESS_EQUAL": 1, "GREATER": 1, "GREATER_EQUAL": 1, "EQUAL": 1, "NOT_EQUAL": 1,
    "LOGICAL_AND": 1, "LOGICAL_OR": 1, "BITWISE_XOR": 1, "RIGHT_SHIFT": 1,
    "ATAN2": TRANSCENDENTAL,
    "STABLEHLO_ADD": 1, "STABLEHLO_SUBTRACT": 1, "STABLEHLO_MULTIPLY": 1, "STABLEHLO_DIVIDE": 1,
    "STABLEHLO_MAXIMUM": 1, "STABLEHLO_MINIMUM": 1, "STABLEHLO_REMAINDER": 2,
    "STABLEHLO_POWER": 2 * EXP_LIKE, "STABLEHLO_AND": 1, "STABLEHLO_OR": 1, "STABLEHLO_SHIFT_LEFT": 1,
    "STABLEHLO_COMPARE": 1,
}

# Unary ops and standalone activations: FLOPs per output element.
#   1: one compare/negate/round/multiply (RELU = max(x, 0); SQUARE = x·x; SQRT one instruction)
#   2: RELU6 / RELU_N1_TO_1 / RELU_0_TO_1 (two compares); LEAKY_RELU (compare + mul); RSQRT (TF profiler)
#   5: HARD_SWISH = x·relu6(x+3)/6 (add, 2 compares, 2 mul)
#   EXP_LIKE (32): EXP, LOG, SIN, COS (one polynomial evaluation); ELU = exp + 3
#   TRANSCENDENTAL (64): LOGISTIC, TANH (TFLite converter constant)
#   GELU = TRANSCENDENTAL + 7 (x³: 2 mul, ·c, +x, tanh/erf, +1, ·0.5, ·x)
#   QUANTIZE / DEQUANTIZE: 2 (scale multiply + zero-point add; onnx-tool's convention)
UNARY_COST: dict[str, int] = {
    "ABS": 1, "NEG": 1, "SIGN": 1, "FLOOR": 1, "CEIL": 1, "ROUND": 1, "SQUARE": 1, "SQRT": 1,
    "RSQRT": 2, "LOGICAL_NOT": 1, "RELU": 1, "RELU6": 2, "RELU_N1_TO_1": 2, "RELU_0_TO_1": 2,
    "LEAKY_RELU": 2, "HARD_SWISH": 5, "EXP": EXP_LIKE, "LOG": EXP_LIKE, "SIN": EXP_LIKE,
    "COS": EXP_LIKE, "ELU": EXP_LIKE + 3, "LOGISTIC": TRANSCENDENTAL, "TANH": TRANSCENDENTAL,
    "GELU": TRANSCENDENTAL + 7, "QUANTIZE": 2, "DEQUANTIZE": 2,
    "STABLEHLO_ABS": 1, "STABLEHLO_NEGATE": 1, "STABLEHLO_FLOOR": 1, "STABLEHLO_RSQRT": 2,
    "STABLEHLO_EXPONENTIAL": EXP_LIKE, "STABLEHLO_LOG": EXP_LIKE, "STABLEHLO_COSINE": EXP_LIKE,
    "STABLEHLO_LOGISTIC": TRANSCENDENTAL, "STABLEHLO_TANH": TRANSCENDENTAL,
    "STABLEHLO_CBRT": 2 * EXP_LIKE, "STABLEHLO_CLAMP": 2,
}

_UNARY_REFERENCE = {
    "LOGISTIC": "TFLite converter (64/elem)", "TANH": "TFLite converter (64/elem)",
    "RSQRT": "TF profiler (2/elem)", "SQUARE": "TF profiler (1/elem)", "NEG": "TF profiler (1/elem)",
    "QUANTIZE": "onnx-tool QuantizeLinear (2/elem)", "DEQUANTIZE": "onnx-tool DequantizeLinear (2/elem)",
    "HARD_SWISH": "onnx-tool (5/elem)", "RELU": "onnx-tool (1/elem)", "RELU6": "onnx-tool Clip (2/elem)",
    "LEAKY_RELU": "onnx-tool (2/elem)", "ELU": "onnx-tool (35/elem)",
}


def _binary_shape(ctx: OpContext) -> Shape:
    ins = ctx.present_inputs
    if len(ins) < 2:
        raise ShapeError(f"{ctx.op_type}: needs two inputs, has {len(ins)}")
    return broadcast_shapes(ctx.op_type, *(t.shape for t in ins))


def _make_binary(per: int):
    def cost(ctx: OpContext) -> Cost:
        n_out = ctx.output(0).n
        act, act_note = fused_activation(ctx, n_out)
        return Cost(0, per * n_out + act, note=act_note)

    cost.__doc__ = f"{per} op(s) per output element plus the fused activation."
    return cost


for _name, _per in BINARY_COST.items():
    register(_name, f"FLOPs = {_per}·n(out) + act",
             reference="TF profiler / TFLite converter (1/elem)" if _per == 1 else "")(_make_binary(_per))
shape_fn(list(BINARY_COST))(lambda ctx: [_binary_shape(ctx)])
# Memory (TFLite kernels): ADD, SUB, MUL and DIV may write over either input (kTfLiteInplaceOpInput0Shared
# | kTfLiteInplaceOpInput1Shared); MUL of two constant-or-Prepare-computed inputs is computed at Prepare.
register_memory(["ADD", "SUB", "DIV"], inplace=(0, 1))
register_memory("MUL", inplace=(0, 1), prepare_inputs=(0, 1))


def _make_unary(per: int):
    def cost(ctx: OpContext) -> Cost:
        return Cost(0, per * ctx.output(0).n)

    cost.__doc__ = f"{per} op(s) per output element."
    return cost


for _name, _per in UNARY_COST.items():
    register(_name, f"FLOPs = {_per}·n(out)", reference=_UNARY_REFERENCE.get(_name, ""))(_make_unary(_per))
shape_fn(list(UNARY_COST))(same_as_input)
register_traits("DEQUANTIZE", init_on_constant=True)  # of a constant weight: TFLite caches the result at init


# ADD_N: (n_inputs − 1) additions per output element (TF profiler, TFLite converter).
@register("ADD_N", "FLOPs = (k−1)·n(out)", reference="TF profiler AddN, TFLite converter")
def add_n(ctx: OpContext) -> Cost:
    """k-way sum: k−1 adds per output element."""
    return Cost(0, (len(ctx.present_inputs) - 1) * ctx.output(0).n)


shape_fn("ADD_N")(same_as_input)


# PRELU: compare + multiply by the (broadcast) alpha per output element.
@register("PRELU", "FLOPs = 2·n(out)", reference="onnx-tool PRelu (2/elem)")
def prelu(ctx: OpContext) -> Cost:
    """Parametric ReLU: 2 ops per output element."""
    return Cost(0, 2 * ctx.output(0).n)


shape_fn("PRELU")(lambda ctx: [_binary_shape(ctx)])


# SOFTMAX / LOG_SOFTMAX: the TFLite converter's 64 per element (max, subtract, exp, sum, divide).
@register(["SOFTMAX", "LOG_SOFTMAX"], "FLOPs = 64·n(out)", reference="TFLite converter (64/elem)")
def softmax(ctx: OpContext) -> Cost:
    """Softmax over the last axis."""
    return Cost(0, TRANSCENDENTAL * ctx.output(0).n)


shape_fn(["SOFTMAX", "LOG_SOFTMAX"])(same_as_input)
register_memory("SOFTMAX", inplace=(0,))  # the kernel registers kTfLiteInplaceOpInput0Shared; LOG_SOFTMAX does not


# L2_NORMALIZATION: squared norm (2 per element) + one divide per element = 3·n(out).
@register("L2_NORMALIZATION", "FLOPs = 3·n(out)", reference="TFLite converter")
def l2_normalization(ctx: OpContext) -> Cost:
    """L2 normalisation over the last axis."""
    return Cost(0, 3 * ctx.output(0).n)


shape_fn("L2_NORMALIZATION")(same_as_input)


# LOCAL_RESPONSE_NORMALIZATION: per element, a sum of squares over 2r+1 channels (2 ops each),
# one pow (EXP_LIKE·2) and one multiply.
@register("LOCAL_RESPONSE_NORMALIZATION", "FLOPs = n(out)·(2·(2r+1) + 64 + 1)",
          reference="reference kernel structure (reference_ops.h)")
def lrn(ctx: OpContext) -> Cost:
    """Local response normalisation across channels."""
    radius = int(ctx.opt("radius", 5))
    return Cost(0, ctx.output(0).n * (2 * (2 * radius + 1) + 2 * EXP_LIKE + 1))


shape_fn("LOCAL_RESPONSE_NORMALIZATION")(same_as_input)


# Folding of small known values for shape arithmetic (dynamic-batch and resize chains compute
# shapes with these). DIV on integers truncates toward zero, as the TFLite kernel does.
def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return np.trunc(a / b).astype(np.result_type(a, b))
    return a / b


_FOLD_BINARY = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": _div, "FLOOR_DIV": np.floor_divide,
                "MAXIMUM": np.maximum, "MINIMUM": np.minimum, "FLOOR_MOD": np.mod,
                "LESS": np.less, "LESS_EQUAL": np.less_equal, "GREATER": np.greater,
                "GREATER_EQUAL": np.greater_equal, "EQUAL": np.equal, "NOT_EQUAL": np.not_equal,
                "LOGICAL_AND": np.logical_and, "LOGICAL_OR": np.logical_or}
_FOLD_UNARY = {"NEG": np.negative, "ABS": np.abs, "SQUARE": np.square, "FLOOR": np.floor, "CEIL": np.ceil,
               "ROUND": np.round, "SIGN": np.sign, "LOGICAL_NOT": np.logical_not, "SQRT": np.sqrt}
_NP_OUT = {"INT32": np.int32, "INT64": np.int64, "FLOAT32": np.float32, "FLOAT16": np.float16, "BOOL": np.bool_}


def _as_output(ctx: OpContext, value: np.ndarray) -> np.ndarray | None:
    target = _NP_OUT.get(ctx.output(0).dtype)
    return None if target is None else np.asarray(value).astype(target)


@value_fn(list(_FOLD_BINARY))
def _fold_binary(ctx: OpContext):
    a, b = ctx.input(0).value, ctx.input(1).value
    if a is None or b is None or ctx.opt("fused_activation_function", "NONE") not in (None, "NONE"):
        return [None]
    with np.errstate(all="ignore"):
        return [_as_output(ctx, _FOLD_BINARY[ctx.op_type](a, b))]


@value_fn(list(_FOLD_UNARY))
def _fold_unary(ctx: OpContext):
    a = ctx.input(0).value
    return [None if a is None else _as_output(ctx, _FOLD_UNARY[ctx.op_type](a))]


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitBinaryNode / VisitUnaryNode / VisitSoftmaxNode) ---------------

_XNN_ARITHMETIC = ("ADD", "MUL", "SUB")  # float or 8-bit quantized, one type throughout
_XNN_FLOAT_BINARY = ("DIV", "MAXIMUM", "MINIMUM", "PRELU", "SQUARED_DIFFERENCE")  # float only


@register_placement(XNNPACK, _XNN_ARITHMETIC + _XNN_FLOAT_BINARY, source="xnnpack_delegate.cc VisitBinaryNode")
def _xnn_binary(op: DelegateOp) -> str | None:
    """Broadcasting binary ops up to rank 6; ADD/SUB/MUL also 8-bit quantized within the kernels' scale ranges."""
    found = num_io(op, 2)
    if found:
        return found
    a, b, y = op.input(0), op.input(1), op.outputs[0]
    if a is None or b is None:
        return reason(CATEGORY_INPUTS, "a missing input")
    found = rank_in(a, "input 1", 0, XNN_MAX_TENSOR_DIMS) or rank_in(b, "input 2", 0, XNN_MAX_TENSOR_DIMS)
    if found:
        return found
    if op.op_type in _XNN_ARITHMETIC:
        found = (float_or_q8(op, a, "input 1") or float_or_q8(op, b, "input 2") or float_or_q8(op, y, "output")
                 or same_type((a, b, "inputs"), (a, y, "input and output")))
    else:
        found = float_only(op, a, "input 1") or float_only(op, b, "input 2") or float_only(op, y, "output")
    if found:
        return found
    if op.op_type in ("ADD", "SUB"):
        found = (scale_ratio(a, y, 1 / 1024, 256.0, "input 1 / output")
                 or scale_ratio(b, y, 1 / 1024, 256.0, "input 2 / output"))
    elif op.op_type == "MUL" and a.dtype == b.dtype == y.dtype and a.dtype in ("INT8", "UINT8"):
        sa, sb, sy = scale(a), scale(b), scale(y)
        if sa is not None and sb is not None and sy is not None and not 1 / 65536 <= sa * sb / sy < 256.0:
            found = reason(CATEGORY_QUANT, f"input product / output scale {sa * sb / sy:.3g} is outside [1/65536, 256)")
    elif op.op_type == "PRELU":
        found = static(b, "slope")
    if found:
        return found
    return activation(op) if op.op_type in ("ADD", "SUB", "MUL", "DIV") else None


_XNN_FLOAT_UNARY = ("ABS", "CEIL", "COS", "EXP", "FLOOR", "GELU", "HARD_SWISH", "LOG", "NEG", "RELU_N1_TO_1", "RELU",
                    "RELU6", "ROUND", "RSQRT", "SIN", "SQRT", "SQUARE")


@register_placement(XNNPACK, _XNN_FLOAT_UNARY + ("DEQUANTIZE", "ELU", "LOGISTIC", "TANH", "LEAKY_RELU", "QUANTIZE"),
                    source="xnnpack_delegate.cc VisitUnaryNode")
def _xnn_unary(op: DelegateOp) -> str | None:
    """Unary ops up to rank 6: float only, except DEQUANTIZE/QUANTIZE, ELU (int8), LOGISTIC/TANH/LEAKY_RELU (8-bit)."""
    found = num_io(op, 1)
    if found:
        return found
    x, y = op.input(0), op.outputs[0]
    if x is None:
        return reason(CATEGORY_INPUTS, "no input")
    found = rank_in(x, "input", 0, XNN_MAX_TENSOR_DIMS)
    if found:
        return found
    kind = op.op_type
    if kind in _XNN_FLOAT_UNARY:
        return float_only(op, x, "input") or float_only(op, y, "output")
    if kind == "DEQUANTIZE":
        return q8_only(op, x, "input") or float_only(op, y, "output")
    if kind == "ELU":
        return float_or_q8(op, x, "input", uint8=False) or float_or_q8(op, y, "output", uint8=False)
    found = float_or_q8(op, x, "input") or float_or_q8(op, y, "output")
    if found or kind in ("LOGISTIC", "TANH"):
        return found
    if kind == "LEAKY_RELU":
        alpha = float(op.opt("alpha", 0.0) or 0.0)
        if not math.isfinite(alpha) or alpha == 0.0 or abs(alpha) < np.finfo(np.float32).tiny:
            return reason(CATEGORY_OPTIONS, f"alpha {alpha}")
        sx, sy = scale(x), scale(y)
        if sx and sy:
            positive = sx / sy
            negative = positive * alpha
            if not 1 / 256 <= positive <= 128 or not -127.99609375 <= negative <= 128 or abs(negative) < 1 / 256:
                return reason(CATEGORY_QUANT, f"input / output scale {positive:.3g} with alpha {alpha}")
        return None
    # QUANTIZE: from float, or a requantization within one 8-bit type
    if x.dtype in ("FLOAT32", "FLOAT16"):
        return None
    if _q8_kind(x) != _q8_kind(y):
        return reason(CATEGORY_DTYPE, f"requantization from {x.dtype} to {y.dtype}")
    sx, sy = scale(x), scale(y)
    ratio = sx / sy if sx and sy else float("nan")
    if not 1 / 256 <= ratio <= 128:
        return reason(CATEGORY_QUANT, f"input / output scale {ratio:.3g} is outside [1/256, 128]")
    return None


def _q8_kind(t: DelegateTensor) -> str:
    q = t.quantization
    return f"{t.dtype}/{'channelwise' if q is not None and q.num_scales > 1 else 'tensor'}"


@register_placement(XNNPACK, "SOFTMAX", source="xnnpack_delegate.cc VisitSoftmaxNode")
def _xnn_softmax(op: DelegateOp) -> str | None:
    """Float softmax with beta 1."""
    beta = float(op.opt("beta", 0.0) or 0.0)
    if beta != 1.0:
        return reason(CATEGORY_OPTIONS, f"beta {beta:g} (XNNPACK wants 1)")
    return num_io(op, 1) or float_only(op, op.input(0), "input") or float_only(op, op.outputs[0], "output")


# ---- GPU delegate placement (model_builder.cc ElementwiseOperationParser / ReLUOperationParser / ...,
# gpu_compatibility.cc CheckGpuDelegateCompatibility) ------------------------------------------------------------

_GPU_SRC = "model_builder.cc NewOperationParser, "
_GPU_ONE_OPERAND = ("ABS", "COS", "ELU", "EXP", "FLOOR", "GELU", "LOG", "LOGISTIC", "NEG", "RSQRT", "SIGN", "SIN", "SQRT",
                    "SQUARE", "TANH")
_GPU_TWO_OPERANDS = ("DIV", "FLOOR_DIV", "FLOOR_MOD", "LOGICAL_AND", "MAXIMUM", "MINIMUM", "POW", "SQUARED_DIFFERENCE",
                     "SUB")
_GPU_COMPARE = ("EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "NOT_EQUAL")
# ML Drift's ElementwiseOperationParser also takes these (NewOperationParser of ml_drift_delegate/tflite/model_builder.cc)
_DRIFT_ONE_OPERAND = ("CEIL", "LOGICAL_NOT", "ROUND")
_DRIFT_TWO_OPERANDS = ("ATAN2", "LOGICAL_OR", "RIGHT_SHIFT", "STABLEHLO_SHIFT_LEFT")
# ML Drift's ElementwiseOperationParser::IsSupported: kSupportedOpVersion per operation (2 for the others; ADD_N is
# its ADD)
_DRIFT_VERSIONS = {"ABS": 5, "FLOOR_DIV": 3, "MAXIMUM": 4, "MINIMUM": 4, "MUL": 8, "ADD": 6, "ADD_N": 6, "GELU": 3}
_DRIFT_SRC = ("; ml_drift_delegate/tflite/model_builder.cc ElementwiseOperationParser::IsSupported "
              "(kEnhancedBroadcast)")


@register_placement(GPU, ("ADD", "ADD_N", "MUL") + _GPU_ONE_OPERAND + _GPU_TWO_OPERANDS + _GPU_COMPARE
                    + _DRIFT_ONE_OPERAND + _DRIFT_TWO_OPERANDS,
                    source=_GPU_SRC + "ElementwiseOperationParser::IsSupported, gpu_compatibility.cc "
                                      "CheckGpuDelegateCompatibility" + _DRIFT_SRC)
def _gpu_elementwise(op: DelegateOp) -> str | None:
    """Classic: up to v2 (MUL v3). A comparison only feeding a CAST or SELECT to float; ADD and MUL two
    inputs broadcast the delegate's way (ADD's fused activation is not checked here: the parser fuses it
    later); ADD_N two inputs; unary ops one runtime input; binary ops two operands, at most one
    constant; no SIGN_BIT activation on MUL, DIV, SUB. ML Drift: its version per operation (ADD 6, MUL 8,
    ABS 5, MAXIMUM/MINIMUM 4, FLOOR_DIV/GELU 3, others 2), the same operand checks with any numpy-style
    broadcast, comparisons checked as any binary op, and two runtime inputs neither one tensor twice (but
    for ADD and MUL) nor of ranks that do not broadcast; CEIL, ROUND, LOGICAL_NOT, ATAN2, LOGICAL_OR,
    RIGHT_SHIFT and STABLEHLO_SHIFT_LEFT too."""
    kind = op.op_type
    drift = gpu_drift(op)
    if kind in _DRIFT_ONE_OPERAND or kind in _DRIFT_TWO_OPERANDS:
        found = gpu_drift_only(op)
        if found:
            return found
    found = gpu_version(op, 3 if kind == "MUL" else 2, _DRIFT_VERSIONS.get(kind, 2))
    if found:
        return found
    if kind in _GPU_COMPARE and not drift:
        return gpu_comparison_feeds_select(op)
    if kind in ("ADD", "MUL"):
        if len(op.inputs) != 2:
            return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs ({kind} on the GPU wants two)")
        a, b = op.input(0), op.input(1)
        found = gpu_broadcast(a, b, enhanced=drift) if a is not None and b is not None else None
        found = found or (gpu_activation(op) if kind == "MUL" else None)
    elif kind == "ADD_N":
        found = None if len(op.inputs) == 2 else reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (ADD_N on the "
                                                                         f"GPU takes 2)")
    elif kind in _GPU_ONE_OPERAND or kind in _DRIFT_ONE_OPERAND:
        return gpu_io(op, 1, 1, consts=0)
    else:
        found = gpu_io_either(op) or (gpu_activation(op) if kind in ("DIV", "SUB") else None)
    if found or not drift:
        return found
    return _drift_two_runtime_inputs(op)


def _drift_two_runtime_inputs(op: DelegateOp) -> str | None:
    """ML Drift's ElementwiseOperationParser::IsSupported on a binary op with two runtime inputs: one tensor
    read twice only by ADD and MUL ("No support of few identical inputs"), inputs of different ranks only
    when they broadcast (``IsBroadcastable``)."""
    if len(op.inputs) != 2 or gpu_runtime_inputs(op) != 2:
        return None
    a, b = op.inputs
    if a.index == b.index:
        if op.op_type not in ("ADD", "ADD_N", "MUL"):
            return reason(CATEGORY_INPUTS, f"one tensor as both inputs (the GPU delegate takes that for ADD and "
                                           f"MUL only)")
        return None
    if a.rank != b.rank and not broadcastable(a.shape, b.shape):
        return reason(CATEGORY_SHAPE, f"inputs {list(a.shape)} and {list(b.shape)} do not broadcast")
    return None


@register_placement(GPU, "BITWISE_XOR", source="ml_drift_delegate/tflite/model_builder.cc NewOperationParser "
                                               "(ElementwiseOperationParser), ValidateSupport, gpu_compatibility.cc "
                                               "CheckGpuDelegateCompatibility (no case)")
def _gpu_bitwise_xor(op: DelegateOp) -> str | None:
    """Refused by both: ML Drift parses it, but its parser's ValidateSupport calls CheckGpuDelegateCompatibility,
    which has no case for it ("Not supported op")."""
    return gpu_drift_only(op) or reason(CATEGORY_OP_TYPE, "CheckGpuDelegateCompatibility has no case for "
                                                          "BITWISE_XOR (the parser's own check refuses it)")


@register_placement(GPU, "STABLEHLO_REMAINDER", source="ml_drift_delegate/tflite/model_builder.cc "
                                                       "RemainderOperationParser::IsSupported, gpu_compatibility.cc "
                                                       "CheckGpuDelegateCompatibility")
def _gpu_remainder(op: DelegateOp) -> str | None:
    """ML Drift only: two operands (at most one constant), one output."""
    return gpu_drift_only(op) or gpu_io_either(op)


@register_placement(GPU, "STABLEHLO_CBRT", source="ml_drift_delegate/tflite/model_builder.cc "
                                                  "CbrtOperationParser::IsSupported, gpu_compatibility.cc "
                                                  "CheckGpuDelegateCompatibility")
def _gpu_cbrt(op: DelegateOp) -> str | None:
    """ML Drift only: one runtime input, one output, float (or bfloat16) in and the same type out."""
    found = gpu_drift_only(op) or gpu_io(op, 1, 1, consts=0)
    if found:
        return found
    x, y = op.input(0), op.outputs[0]
    if x.dtype not in ("FLOAT32", "FLOAT16", "BFLOAT16") or x.dtype != y.dtype:
        return reason(CATEGORY_DTYPE, f"input {x.dtype} and output {y.dtype} (one float type)")
    return None


@register_placement(GPU, "STABLEHLO_CLAMP", source="ml_drift_delegate/tflite/model_builder.cc "
                                                   "ClampOperationsParser::IsSupported, gpu_compatibility.cc "
                                                   "CheckGpuDelegateCompatibility")
def _gpu_clamp(op: DelegateOp) -> str | None:
    """ML Drift only: three runtime inputs (min, operand, max) of one type, one output; min and max the
    operand's shape or a single element."""
    found = gpu_drift_only(op) or gpu_io(op, 3, 1, consts=0)
    if found:
        return found
    lo, x, hi = op.inputs
    if not lo.dtype == x.dtype == hi.dtype:
        return reason(CATEGORY_DTYPE, f"min {lo.dtype}, operand {x.dtype}, max {hi.dtype} (one type)")
    for t, where in ((lo, "min"), (hi, "max")):
        if t.shape != x.shape and math.prod(t.shape) != 1:
            return reason(CATEGORY_SHAPE, f"{where} {list(t.shape)} is neither the operand's shape "
                                          f"{list(x.shape)} nor a single element")
    return None


@register_placement(GPU, "HARD_SWISH", source=_GPU_SRC + "HardSwishOperationParser::IsSupported, "
                                                         "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_hard_swish(op: DelegateOp) -> str | None:
    """One runtime input, one output (any version)."""
    return gpu_io(op, 1, 1)


@register_placement(GPU, ("RELU", "RELU6", "RELU_0_TO_1", "RELU_N1_TO_1", "LEAKY_RELU"),
                    source=_GPU_SRC + "ReLUOperationParser::IsSupported; ml_drift_delegate/tflite/model_builder.cc "
                                      "ReLUOperationParser::IsSupported (ValidateSupport)")
def _gpu_relu(op: DelegateOp) -> str | None:
    """Up to v2; nothing else is checked by the classic delegate. ML Drift: one runtime input, no constant,
    one output, and CheckGpuDelegateCompatibility, which has no case for RELU_0_TO_1 (refused)."""
    found = gpu_version(op, 2)
    if found or not gpu_drift(op):
        return found
    if op.op_type == "RELU_0_TO_1":
        return reason(CATEGORY_OP_TYPE, "CheckGpuDelegateCompatibility has no case for RELU_0_TO_1 (the LiteRT GPU "
                                        "accelerator's ReLU parser calls it)")
    return gpu_io(op, 1, 1, consts=0)


@register_placement(GPU, "PRELU", source=_GPU_SRC + "PReLUOperationParser::IsSupported")
def _gpu_prelu(op: DelegateOp) -> str | None:
    """v1; nothing else is checked (the parser wants a constant alpha later)."""
    return gpu_version(op, 1)


@register_placement(GPU, "SOFTMAX", source=_GPU_SRC + "SoftmaxOperationParser::IsSupported, gpu_compatibility.cc "
                                                      "CheckGpuDelegateCompatibility")
def _gpu_softmax(op: DelegateOp) -> str | None:
    """Up to v2 (ML Drift v4, with one runtime input, no constant, one output), beta 1."""
    beta = float(op.opt("beta", 0.0) or 0.0)
    found = gpu_version(op, 2, 4) or (gpu_io(op, 1, 1, consts=0) if gpu_drift(op) else None)
    return found or (reason(CATEGORY_OPTIONS, f"beta {beta:g} (the GPU delegate wants 1)") if beta != 1.0 else None)


def _gpu_quant_ops(op: DelegateOp) -> str | None:
    """``NewOperationParser``: DEQUANTIZE and QUANTIZE have a parser only with quantized ops allowed (always, under
    ML Drift)."""
    if not op.config.gpu_quant_ops and not gpu_drift(op):
        return reason(CATEGORY_OP_TYPE, f"the GPU delegate parses {op.op_type} only with quantized ops enabled "
                                        f"(TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT)")
    return None


@register_placement(GPU, "DEQUANTIZE", source=_GPU_SRC + "DequantizeOperationParser::IsSupported, "
                                                         "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_dequantize(op: DelegateOp) -> str | None:
    """With quantized ops on: up to v3, one input and one output, not INT16; ML Drift: a constant input of
    rank 2 to 4, a computed one with a single scale. (A DEQUANTIZE of constant fp16 weights never reaches
    this rule: see :mod:`tflite_flops.analysis.placement`.)"""
    found = _gpu_quant_ops(op) or gpu_version(op, 3)
    if found:
        return found
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (1 each)")
    x = op.input(0)
    if x is not None and x.dtype == "INT16":
        return reason(CATEGORY_DTYPE, "INT16 input (the GPU delegate does not dequantize INT16)")
    if x is not None and gpu_drift(op):
        if x.static and not 2 <= x.rank <= 4:
            return reason(CATEGORY_SHAPE, f"constant input of rank {x.rank} (the GPU delegate dequantizes "
                                          f"constants of rank 2 to 4)")
        if not x.static and x.quantization is not None and x.quantization.num_scales > 1:
            return reason(CATEGORY_QUANT, f"{x.quantization.num_scales} scales (the GPU delegate dequantizes a "
                                          f"computed tensor with one)")
    return None


@register_placement(GPU, "QUANTIZE", source=_GPU_SRC + "QuantizeOperationParser::IsSupported, gpu_compatibility.cc "
                                                       "CheckGpuDelegateCompatibility")
def _gpu_quantize(op: DelegateOp) -> str | None:
    """With quantized ops on: up to v2, one runtime input, one output."""
    return _gpu_quant_ops(op) or gpu_version(op, 2) or gpu_io(op, 1, 1)


# ---- TensorFlow Lite Micro (reference kernels): each Init's OpData and the parsed builtin options ----

# add.cc AddInit: OpDataAdd (add.h: requires_broadcast, then 14 int32 shifts, multipliers, offsets and
# activation ranges, int and float); TfLiteAddParams / TfLiteSubParams: activation, pot_scale_int16.
register_tflm("ADD")(fixed(lambda t: c_struct(t, "ib"), lambda t: c_struct(t, "b", "iiiiiiiiiiiiii"),
                           "micro/kernels/add.cc AddInit"))
# sub.cc SubInit: OpDataSub (sub.h: requires_broadcast and 13 int32)
register_tflm("SUB")(fixed(lambda t: c_struct(t, "ib"), lambda t: c_struct(t, "b", "iiiiiiiiiiiii"),
                           "micro/kernels/sub.cc SubInit"))
# mul_common.cc MulInit: OpDataMul (mul.h: 9 int32 / float); TfLiteMulParams: activation
register_tflm("MUL")(fixed(lambda t: c_struct(t, "i"), lambda t: c_struct(t, "iiiiiiiii"),
                           "micro/kernels/mul_common.cc MulInit"))
# activations.cc ReluInit / Relu6Init: ReluOpData {ReluParams: ActivationParams (a uint8 activation type,
# int32 min and max) + input/output offsets, multiplier, shift}; Relu6OpData (activations.h: six, zero)
register_tflm("RELU")(fixed(None, lambda t: c_struct(t, "bii", "iiii"), "micro/kernels/activations.cc ReluInit"))
register_tflm("RELU6")(fixed(None, lambda t: c_struct(t, "ii"), "micro/kernels/activations.cc Relu6Init"))
# logistic.cc LogisticInit: OpDataLogistic; tanh.cc TanhInit: OpData (both: input zero point, range
# radius, multiplier, left shift)
register_tflm(["LOGISTIC", "TANH"])(fixed(None, lambda t: c_struct(t, "iiii"),
                                          "micro/kernels/logistic.cc LogisticInit, tanh.cc TanhInit"))
# comparisons.cc Init: OpData {ComparisonParams: 7 int32 and is_broadcast}
register_tflm(["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"])(fixed(
    None, lambda t: c_struct(t, "iiiiiii", "b"), "micro/kernels/comparisons.cc Init"))
# logical.cc: no Init, no Prepare
register_tflm(["LOGICAL_AND", "LOGICAL_OR"])(fixed(source="micro/kernels/logical.cc", prepare=False))
# quantize.cc InitQuantizeReference: OpDataQuantizeReference {QuantizationParams (int32, double),
# multiplier, shift, input zero point}; dequantize.cc DequantizeInit: DequantizeOpData
# {DequantizationParams (double, int32), multiplier, shift, zero point}
register_tflm("QUANTIZE")(fixed(None, lambda t: c_struct(t, c_struct(t, "id"), "iii"),
                                "micro/kernels/quantize.cc InitQuantizeReference"))
register_tflm("DEQUANTIZE")(fixed(None, lambda t: c_struct(t, c_struct(t, "di"), "iii"),
                                  "micro/kernels/dequantize.cc DequantizeInit"))


# softmax_common.cc SoftmaxInit: SoftmaxParams (types.h: double beta, six int32, a float scale, five
# table pointers); SoftmaxPrepare allocates two int16 lookup tables of LUTSize<int16_t>() = 513 entries
# for an int16 input. TfLiteSoftmaxParams: beta.
def tflm_softmax_params(t: TflmTarget) -> CLayout:
    """SoftmaxParams (kernels/internal/types.h): beta (a double), six int32, an int, five pointers."""
    return c_struct(t, "d", "iiiiii", "i", "ppppp")


@register_tflm("SOFTMAX")
def _tflm_softmax(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """TFLM's reference SOFTMAX."""
    prepare = (2 * 513, 2 * 513) if ctx.input(0).dtype == "INT16" else ()
    return TflmKernel(c_struct(target, "i"), tflm_softmax_params(target).size, prepare,
                      source="micro/kernels/softmax_common.cc SoftmaxInit, SoftmaxPrepare")

# div.cc DivInit: OpDataDiv (7 int32); TfLiteDivParams: activation
register_tflm("DIV")(fixed(lambda t: c_struct(t, "i"), lambda t: c_struct(t, "iiiiiii"), "micro/kernels/div.cc DivInit"))
# hard_swish.cc HardSwishInit: HardSwishParams (types.h: three int16, an int, an int16, an int)
register_tflm("HARD_SWISH")(fixed(None, lambda t: c_struct(t, "hhh", "i", "h", "i"),
                                  "micro/kernels/hard_swish.cc HardSwishInit"))
# leaky_relu.cc LeakyReluInit: LeakyReluOpData (leaky_relu.h: 6 int32); TfLiteLeakyReluParams: alpha
register_tflm("LEAKY_RELU")(fixed(lambda t: c_struct(t, "i"), lambda t: c_struct(t, "iiiiii"),
                                  "micro/kernels/leaky_relu.cc LeakyReluInit"))
# prelu.cc PreluInit: PreluParams (types.h: 7 int32)
register_tflm("PRELU")(fixed(None, lambda t: c_struct(t, "iiiiiii"), "micro/kernels/prelu.cc PreluInit"))
# maximum_minimum.cc, floor.cc: no Init, no Prepare, no options; exp.cc: a Prepare
register_tflm(["MAXIMUM", "MINIMUM", "FLOOR"])(fixed(source="micro/kernels/maximum_minimum.cc, floor.cc", prepare=False))
register_tflm("EXP")(fixed(source="micro/kernels/exp.cc"))
# elementwise.cc ElementWiseAbsRsqrtInit (ABS, RSQRT): OpDataAbsRsqrt (4 int32, needs_rescale, two enums);
# SIN, COS, LOG, SQRT, SQUARE: no Init; neg.cc: no Init, no Prepare
register_tflm(["ABS", "RSQRT"])(fixed(None, lambda t: c_struct(t, "iiii", "b", "ii"),
                                      "micro/kernels/elementwise.cc ElementWiseAbsRsqrtInit"))
register_tflm(["SIN", "COS", "LOG", "SQRT", "SQUARE"])(fixed(source="micro/kernels/elementwise.cc GenericPrepare"))
register_tflm("NEG")(fixed(source="micro/kernels/neg.cc", prepare=False))
# squared_difference.cc SquaredDifferenceInit: OpData {requires_broadcast, ArithmeticParams (types.h: a uint8
# category, 12 int32, 2 floats, 2 int64, 2 int16, broadcast_shape[5])}
register_tflm("SQUARED_DIFFERENCE")(fixed(
    None, lambda t: c_struct(t, "b", c_struct(t, "b", "iiiiiiiiiiii", "ii", "dd", "hh", "iiiii")),
    "micro/kernels/squared_difference.cc SquaredDifferenceInit"))


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
# UNARY_NODE / BINARY_NODE: how the delegate defines the op (xnn_define_unary / xnn_define_binary), for
# XNNPACK's fusion of 8-bit element-wise chains into one lookup table (latency/predict.py, fused_ops).
register_facts(("ADD", "SUB", "MUL", "DIV", "SQUARED_DIFFERENCE", "PRELU"), law_group="binary",
               fusion=(BINARY_NODE,), xnnpack=XnnpackFacts(operator_bytes=648))
register_facts(("MAXIMUM", "MINIMUM"), law_group="binary", fusion=(MIN_MAX_CLAMP, BINARY_NODE),
               xnnpack=XnnpackFacts(operator_bytes=648))
register_facts(("FLOOR_DIV", "FLOOR_MOD", "POW", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL",
                "NOT_EQUAL", "LOGICAL_AND", "LOGICAL_OR", "ATAN2", "ADD_N"),
               law_group="binary")
register_facts(("RELU", "RELU6", "RELU_N1_TO_1"), law_group="unary", fusion=(CLAMP, UNARY_NODE))
register_facts(("ABS", "NEG", "SIGN", "FLOOR", "CEIL", "ROUND", "SQUARE", "SQRT", "RSQRT",
                "RELU_0_TO_1", "LEAKY_RELU", "HARD_SWISH", "EXP", "LOG", "SIN", "COS", "ELU", "GELU"),
               law_group="unary", fusion=(UNARY_NODE,))
register_facts("LOGICAL_NOT", law_group="unary")
register_facts(("LOGISTIC", "TANH"), law_group="unary", fusion=(UNARY_NODE,), xnnpack=XnnpackFacts(lookup_table_bytes=256))
register_facts("SOFTMAX", law_group="normalize", xnnpack=XnnpackFacts(operator_bytes=608))
register_facts(("LOG_SOFTMAX", "L2_NORMALIZATION", "LOCAL_RESPONSE_NORMALIZATION"), law_group="normalize")
register_facts("QUANTIZE", law_group="convert", fusion=(UNARY_NODE,))
register_facts("DEQUANTIZE", law_group="convert", fusion=(UNARY_NODE,), weight_unpacking=DEQUANTIZE_WEIGHTS)

# The version op_version.cc gives the int8 kernel (the what-if of a full-integer model, studies/what_if.py).
register_facts(("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "RELU", "RELU6", "LOGISTIC", "TANH", "SOFTMAX",
                "LOG_SOFTMAX"), int8_version=2)
# A NEG stays float in a full-integer model: TensorFlow 2.21's converter dequantizes before it and quantizes
# after it (a Keras GELU's, in a transformer encoder).
register_facts("NEG", float_in_int8=True)
