"""Convolutions: CONV_2D (grouped), DEPTHWISE_CONV_2D, TRANSPOSE_CONV, CONV_3D, CONV_3D_TRANSPOSE.

Layouts (TFLite kernels): input NHWC; CONV_2D filter [C_out, K_h, K_w, C_in/G];
DEPTHWISE_CONV_2D filter [1, K_h, K_w, C_out]; TRANSPOSE_CONV inputs (output_shape, filter
[C_out, K_h, K_w, C_in], input, bias); CONV_3D filter [K_d, K_h, K_w, C_in/G, C_out];
CONV_3D_TRANSPOSE inputs (output_shape, filter [K_d, K_h, K_w, C_out, C_in], input, bias).

Padding and dilation do not change the count: every output element costs the full kernel,
padded taps included, as in TensorFlow's profiler and the TFLite converter.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC, dense_bytes
from .facts import (ABSORBS_PAD, CONV, DEPTHWISE, DEPTHWISE_INDIRECTION, GEMM_INDIRECTION, OUTPUT_CLAMP,
                   TRANSPOSED_CONV, TRANSPOSED_INDIRECTION, XnnpackFacts, register_facts)
from .placement import (CATEGORY_DTYPE, CATEGORY_HYBRID, CATEGORY_INPUTS, CATEGORY_OPTIONS, CATEGORY_SHAPE, XNNPACK,
                        DelegateOp, activation, bias_type, filter_and_bias, float_or_q8, float_or_qc8, ints, num_io,
                        padding, rank_in, reason, register_placement, static)
from .placement import GPU, gpu_activation, gpu_conv_io, gpu_positive, gpu_version
from .registry import (Cost, KernelSetup, OpContext, Shape, TensorInfo, Temporary, fused_activation, join_notes,
                       register, register_memory, register_temporaries, register_traits, shape_fn)
from .tflm import CLayout, TflmKernel, TflmTarget, c_struct, padding_values, per_channel, register_tflm


def conv_out_dim(size: int, kernel: int, stride: int, dilation: int, padding: str) -> int:
    """Output length of one spatial dim: SAME = ceil(in/stride), VALID = ceil((in-(k-1)·d)/stride)."""
    stride = max(int(stride or 1), 1)
    eff = (kernel - 1) * max(int(dilation or 1), 1) + 1
    if padding == "VALID":
        return max((size - eff) // stride + 1, 0)
    return (size + stride - 1) // stride


def nonempty(ctx: OpContext, shape: Shape) -> Shape:
    """``shape`` unchanged, or ShapeError when a spatial dim came out empty (input smaller than the window)."""
    if any(d <= 0 for d in shape[1:-1]):
        raise ShapeError(f"{ctx.op_type}: input {list(ctx.input(0).shape)} is too small for the window "
                         f"(output {list(shape)} would be empty)")
    return shape


def _bias_and_activation(ctx: OpContext, bias_index: int, n_out: int) -> tuple[int, str]:
    bias = n_out if ctx.has_input(bias_index) else 0
    act, act_note = fused_activation(ctx, n_out)
    return bias + act, join_notes("bias 1/out" if bias else "", act_note)


def _check_rank(ctx: OpContext, i: int, rank: int) -> TensorInfo:
    """Input ``i``, which must have rank ``rank``."""
    t = ctx.input(i)
    if t.rank != rank:
        raise ShapeError(f"{ctx.op_type}: input {i} has rank {t.rank} {t.shape}, expected {rank}")
    return t


register_traits(["CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "CONV_3D", "CONV_3D_TRANSPOSE"],
                contraction=True)


# CONV_2D. MACs = N·H_o·W_o·C_out · K_h·K_w·(C_in/G)  (filter dim 3 is C_in/G, so this is
# n(out)·K_h·K_w·filter[3]); FLOPs = 2·MACs + n(out) bias + fused activation.
@register("CONV_2D", "MACs = N·Ho·Wo·Co·Kh·Kw·Ci/G; FLOPs = 2·MACs + bias(1/out) + act",
          reference="TF profiler Conv2D (MACs exact), TFLite converter (FLOPs)")
def conv2d(ctx: OpContext) -> Cost:
    """Cost of a (grouped) 2-D convolution."""
    c_out, kh, kw, c_in_g = _check_rank(ctx, 1, 4).shape
    out = ctx.output(0)
    if out.shape and out.shape[-1] != c_out:
        raise ShapeError(f"CONV_2D: output channels {out.shape[-1]} != filter {c_out}")
    macs = out.n * kh * kw * c_in_g
    extra, note = _bias_and_activation(ctx, 2, out.n)
    groups = ctx.input(0).shape[-1] // c_in_g if c_in_g else 1
    return Cost(macs, FLOPS_PER_MAC * macs + extra, note=join_notes(f"groups={groups}" if groups > 1 else "", note))


def _conv2d_out(ctx: OpContext, kh: int, kw: int, c_out: int) -> Shape:
    """[N, H_o, W_o, C_out] of a 2-D convolution of input 0 with a K_h×K_w kernel."""
    _check_rank(ctx, 0, 4)
    n, h, w, _ = ctx.input(0).shape
    pad = ctx.opt("padding", "SAME")
    return nonempty(ctx, (n, conv_out_dim(h, kh, ctx.opt("stride_h", 1), ctx.opt("dilation_h_factor", 1), pad),
                          conv_out_dim(w, kw, ctx.opt("stride_w", 1), ctx.opt("dilation_w_factor", 1), pad), c_out))


@shape_fn("CONV_2D")
def _conv2d_shape(ctx: OpContext) -> list[Shape]:
    c_out, kh, kw, _ = ctx.input(1).shape
    return [_conv2d_out(ctx, kh, kw, c_out)]


# DEPTHWISE_CONV_2D. MACs = N·H_o·W_o·C_out · K_h·K_w  (= n(out)·K_h·K_w; C_out = C_in·multiplier)
# FLOPs = 2·MACs + n(out) bias + fused activation.
@register("DEPTHWISE_CONV_2D", "MACs = N·Ho·Wo·Co·Kh·Kw; FLOPs = 2·MACs + bias(1/out) + act",
          reference="TF profiler DepthwiseConv2dNative (MACs exact), TFLite converter")
def depthwise_conv2d(ctx: OpContext) -> Cost:
    """Cost of a depthwise 2-D convolution."""
    _, kh, kw, _ = _check_rank(ctx, 1, 4).shape
    out = ctx.output(0)
    macs = out.n * kh * kw
    extra, note = _bias_and_activation(ctx, 2, out.n)
    return Cost(macs, FLOPS_PER_MAC * macs + extra, note=note)


@shape_fn("DEPTHWISE_CONV_2D")
def _dw_shape(ctx: OpContext) -> list[Shape]:
    _, kh, kw, c_out = ctx.input(1).shape
    return [_conv2d_out(ctx, kh, kw, c_out)]


# TRANSPOSE_CONV, counted over the INPUT spatial size (every input pixel scatters a full kernel):
# MACs = N·H_in·W_in·C_in · K_h·K_w·C_out = n(input)·K_h·K_w·C_out.
# FLOPs = 2·MACs + n(out) bias (when input 3 is present) + fused activation.
@register("TRANSPOSE_CONV", "MACs = N·Hi·Wi·Ci·Kh·Kw·Co (input spatial); FLOPs = 2·MACs + bias + act",
          reference="TFLite converter, TFLite GPU delegate, PyTorch flop_counter")
def transpose_conv(ctx: OpContext) -> Cost:
    """Cost of a 2-D transposed convolution."""
    return transposed_conv2d_cost(ctx, data=2, bias=3)


def transposed_conv2d_cost(ctx: OpContext, data: int, bias: int) -> Cost:
    """Transposed 2-D conv with weights [C_out, K_h, K_w, C_in] at input 1 and the image at input ``data``:
    MACs = n(input)·K_h·K_w·C_out; FLOPs = 2·MACs + n(out) bias (input ``bias`` present) + act."""
    _check_rank(ctx, 1, 4)
    c_out, kh, kw, _ = ctx.input(1).shape
    macs = ctx.input(data).n * kh * kw * c_out
    extra, note = _bias_and_activation(ctx, bias, ctx.output(0).n)
    return Cost(macs, FLOPS_PER_MAC * macs + extra, note=note)


def _shape_from_value(ctx: OpContext, i: int) -> Shape:
    value = ctx.input(i).value
    if value is None:
        raise ShapeError(f"{ctx.op_type}: output_shape input is not a known constant")
    return tuple(int(v) for v in value.reshape(-1).tolist())


@shape_fn(["TRANSPOSE_CONV", "CONV_3D_TRANSPOSE"])
def _from_output_shape_input(ctx: OpContext) -> list[Shape]:
    shape = _shape_from_value(ctx, 0)
    batch = ctx.input(2).shape[:1]
    if shape[:1] != batch:
        raise ShapeError(f"{ctx.op_type}: the model hard-codes output_shape {list(shape)}, "
                         f"which does not follow the input batch {batch[0]}")
    return [shape]


# CONV_3D. MACs = N·D_o·H_o·W_o·C_out · K_d·K_h·K_w·(C_in/G) = n(out)·K_d·K_h·K_w·filter[3];
# FLOPs = 2·MACs + n(out) bias + fused activation.
@register("CONV_3D", "MACs = N·Do·Ho·Wo·Co·Kd·Kh·Kw·Ci/G; FLOPs = 2·MACs + bias + act",
          reference="TF profiler convention (generic conv), PyTorch flop_counter")
def conv3d(ctx: OpContext) -> Cost:
    """Cost of a 3-D convolution."""
    _check_rank(ctx, 1, 5)
    kd, kh, kw, c_in_g, _ = ctx.input(1).shape
    out = ctx.output(0)
    macs = out.n * kd * kh * kw * c_in_g
    extra, note = _bias_and_activation(ctx, 2, out.n)
    return Cost(macs, FLOPS_PER_MAC * macs + extra, note=note)


@shape_fn("CONV_3D")
def _conv3d_shape(ctx: OpContext) -> list[Shape]:
    _check_rank(ctx, 0, 5)
    n, d, h, w, _ = ctx.input(0).shape
    kd, kh, kw, _, c_out = ctx.input(1).shape
    pad = ctx.opt("padding", "SAME")
    return [nonempty(ctx, (n, conv_out_dim(d, kd, ctx.opt("stride_d", 1), ctx.opt("dilation_d_factor", 1), pad),
                           conv_out_dim(h, kh, ctx.opt("stride_h", 1), ctx.opt("dilation_h_factor", 1), pad),
                           conv_out_dim(w, kw, ctx.opt("stride_w", 1), ctx.opt("dilation_w_factor", 1), pad),
                           c_out))]


# CONV_3D_TRANSPOSE over the input volume: MACs = n(input)·K_d·K_h·K_w·C_out (filter dim 3 = C_out);
# FLOPs = 2·MACs + n(out) bias + fused activation.
@register("CONV_3D_TRANSPOSE", "MACs = N·Di·Hi·Wi·Ci·Kd·Kh·Kw·Co (input volume); FLOPs = 2·MACs + bias + act",
          reference="PyTorch flop_counter / fvcore transposed-conv rule")
def conv3d_transpose(ctx: OpContext) -> Cost:
    """Cost of a 3-D transposed convolution."""
    _check_rank(ctx, 1, 5)
    kd, kh, kw, c_out, _ = ctx.input(1).shape
    macs = ctx.input(2).n * kd * kh * kw * c_out
    extra, note = _bias_and_activation(ctx, 3, ctx.output(0).n)
    return Cost(macs, FLOPS_PER_MAC * macs + extra, note=note)


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitConv2DNode / VisitDepthwiseConv2DNode / VisitTransposeConvNode)

_XNN = "xnnpack_delegate.cc "


def _xnn_weights(op: DelegateOp, filter_dim: int) -> str | None:
    """Filter (input 1) and bias (input 2) of a convolution: the checks both conv visitors share, in their order."""
    w, b = op.input(1), op.input(2)
    if w is None:
        return reason(CATEGORY_INPUTS, "no filter")
    return (float_or_qc8(op, w, "filter", filter_dim) or rank_in(w, "filter", 4) or static(w, "filter")
            or (reason(CATEGORY_INPUTS, "no bias (XNNPACK wants one)") if b is None else None)
            or bias_type(op, b) or rank_in(b, "bias", 1) or static(b, "bias") or filter_and_bias(w, b))


def _positive(op: DelegateOp, names: tuple[str, ...]) -> str | None:
    for name in names:
        if int(op.opt(name, 1) or 0) <= 0:
            return reason(CATEGORY_OPTIONS, f"{name} {op.opt(name)}")
    return None


@register_placement(XNNPACK, "CONV_2D", source=_XNN + "VisitConv2DNode")
def _xnn_conv2d(op: DelegateOp) -> str | None:
    """Float, int8/uint8 or dynamic-range (float input, int8 filter) 2-D convolution with static weights."""
    found = (_positive(op, ("stride_w", "stride_h", "dilation_w_factor", "dilation_h_factor")) or num_io(op, 3)
             or float_or_q8(op, op.input(0), "input") or rank_in(op.input(0), "input", 4) or _xnn_weights(op, 0)
             or float_or_q8(op, op.outputs[0], "output") or rank_in(op.outputs[0], "output", 4))
    if found:
        return found
    x, w, y = op.input(0), op.input(1), op.outputs[0]
    hybrid = op.config.dynamically_quantized and x.dtype == "FLOAT32" and w.dtype == "INT8"
    if x.dtype != y.dtype:
        return reason(CATEGORY_DTYPE, f"input {x.dtype} and output {y.dtype}")
    if x.dtype != w.dtype and not hybrid:
        return reason(CATEGORY_HYBRID if x.dtype in ("FLOAT32", "FLOAT16") else CATEGORY_DTYPE,
                      f"input {x.dtype} with {w.dtype} filter")
    if w.shape[3] <= 0 or x.shape[3] // w.shape[3] == 0:
        return reason(CATEGORY_SHAPE, f"input channels {x.shape[3]} under filter channels {w.shape[3]}")
    return padding(op) or activation(op)


@register_placement(XNNPACK, "DEPTHWISE_CONV_2D", source=_XNN + "VisitDepthwiseConv2DNode")
def _xnn_depthwise(op: DelegateOp) -> str | None:
    """Float or int8/uint8 depthwise convolution with static weights; no dynamic-range (hybrid) variant."""
    found = (num_io(op, 3) or float_or_q8(op, op.input(0), "input") or rank_in(op.input(0), "input", 4)
             or _xnn_weights(op, 3) or float_or_q8(op, op.outputs[0], "output") or rank_in(op.outputs[0], "output", 4))
    if found:
        return found
    x, w, y = op.input(0), op.input(1), op.outputs[0]
    if x.dtype != y.dtype:
        return reason(CATEGORY_DTYPE, f"input {x.dtype} and output {y.dtype}")
    if x.dtype != w.dtype:
        return reason(CATEGORY_HYBRID if x.dtype in ("FLOAT32", "FLOAT16") else CATEGORY_DTYPE,
                      f"input {x.dtype} with {w.dtype} filter (no dynamic-range depthwise kernel)")
    multiplier = int(op.opt("depth_multiplier", 1) or 0)
    found = _positive(op, ("stride_w", "stride_h"))
    if found:
        return found
    if multiplier <= 0 or w.shape[3] % multiplier:
        return reason(CATEGORY_OPTIONS, f"depth multiplier {multiplier} with {w.shape[3]} output channels")
    return _positive(op, ("dilation_w_factor", "dilation_h_factor")) or padding(op) or activation(op)


@register_placement(XNNPACK, "TRANSPOSE_CONV", source=_XNN + "VisitTransposeConvNode")
def _xnn_transpose_conv(op: DelegateOp) -> str | None:
    """Float, int8/uint8 or dynamic-range transposed convolution with a static output shape and weights."""
    found = num_io(op, (3, 4))
    if found:
        return found
    shape_t, w, x, y = op.input(0), op.input(1), op.input(2), op.outputs[0]
    if shape_t is None or w is None or x is None:
        return reason(CATEGORY_INPUTS, "a missing input")
    if shape_t.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"output shape is {shape_t.dtype}")
    if shape_t.rank != 1:
        return reason(CATEGORY_SHAPE, f"output shape tensor has rank {shape_t.rank}")
    found = (static(shape_t, "output shape", quasi=False) or
             (reason(CATEGORY_SHAPE, "output shape is not 4-D") if shape_t.shape[0] != 4 else None)
             or rank_in(w, "filter", 4) or static(w, "filter") or float_or_q8(op, x, "input", fp16=False)
             or rank_in(x, "input", 4) or float_or_qc8(op, w, "filter", 0))
    if found:
        return found
    b = op.input(3)
    if b is not None:
        found = bias_type(op, b) or rank_in(b, "bias", 1) or static(b, "bias")
    found = found or float_or_q8(op, y, "output", fp16=False) or rank_in(y, "output", 4)
    if found:
        return found
    out_shape = ints(shape_t)
    if out_shape is not None and len(out_shape) == 4 and out_shape[3] != w.shape[0]:
        return reason(CATEGORY_SHAPE, f"output channels {out_shape[3]} and filter {w.shape[0]}")
    if w.shape[3] != x.shape[3]:
        return reason(CATEGORY_SHAPE, f"input channels {x.shape[3]} and filter {w.shape[3]}")
    found = _positive(op, ("stride_w", "stride_h"))
    if found or out_shape is None or len(out_shape) != 4:
        return found or padding(op) or activation(op)
    return (transpose_conv_padding(op.opt("padding", "SAME"), x.shape[1:3], w.shape[1:3],
                                   (int(op.opt("stride_h")), int(op.opt("stride_w"))), out_shape[1:3])
            or activation(op))


def transpose_conv_padding(pad: str, in_hw, kernel_hw, stride_hw, out_hw) -> str | None:
    """``CalculateTransposeConvPaddings`` (dilation 1): VALID needs the output at least the kernel; SAME needs the
    input size the output implies (``ceil(out / stride)``) and a kernel no smaller than the stride."""
    if pad == "VALID":
        if any(k > o for k, o in zip(kernel_hw, out_hw)):
            return reason(CATEGORY_SHAPE, f"output {list(out_hw)} smaller than the kernel {list(kernel_hw)} (VALID)")
        return None
    if pad == "SAME":
        expected = [-(-o // s) for o, s in zip(out_hw, stride_hw)]
        if expected != list(in_hw):
            return reason(CATEGORY_SHAPE, f"output {list(out_hw)} implies input {expected}, not {list(in_hw)}")
        if any(k < s for k, s in zip(kernel_hw, stride_hw)):
            return reason(CATEGORY_OPTIONS, f"kernel {list(kernel_hw)} smaller than the stride {list(stride_hw)}")
        return None
    return reason(CATEGORY_OPTIONS, f"padding {pad}")


# ---- GPU delegate placement (model_builder.cc Conv2DOperationParser / DepthwiseConvolutionOperationParser /
# TransposeConvBuiltinOperationParser, gpu_compatibility.cc CheckGpuDelegateCompatibility) -----------------------

_GPU = "model_builder.cc "
_GPU_COMPAT = ", gpu_compatibility.cc CheckGpuDelegateCompatibility"
_STRIDES = ("stride_h", "stride_w")
_DILATIONS = ("dilation_h_factor", "dilation_w_factor")


@register_placement(GPU, "CONV_2D", source=_GPU + "Conv2DOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_conv2d(op: DelegateOp) -> str | None:
    """Up to v6; one or two runtime inputs (a runtime filter is taken); strides and dilations above 0;
    no SIGN_BIT activation. Hybrid (int8 filter, float input) and fp16 filters pass: constants are
    not type-checked."""
    return (gpu_version(op, 6) or gpu_conv_io(op) or gpu_positive(op, _STRIDES, "strides")
            or gpu_positive(op, _DILATIONS, "dilations") or gpu_activation(op))


@register_placement(GPU, "DEPTHWISE_CONV_2D", source=_GPU + "DepthwiseConvolutionOperationParser::IsSupported, "
                                                            "gpu_compatibility.cc CheckDepthwiseConvGpuDelegateCompatibility")
def _gpu_depthwise(op: DelegateOp) -> str | None:
    """Up to v6; the convolution checks; 4-D input, filter and output; output channels = filter
    channels = input channels × depth multiplier; a bias input (when the op lists one, even omitted)
    of output-channels elements."""
    found = (gpu_version(op, 6) or gpu_conv_io(op) or gpu_positive(op, _STRIDES, "strides")
             or gpu_positive(op, _DILATIONS, "dilations") or gpu_activation(op))
    if found:
        return found
    x, w, y = op.input(0), op.input(1), op.outputs[0]
    for t, where in ((x, "input"), (w, "filter"), (y, "output")):
        if t is None or t.rank != 4:
            return reason(CATEGORY_SHAPE, f"{where} is not 4-D")
    if x.shape[0] != y.shape[0]:
        return reason(CATEGORY_SHAPE, f"input batch {x.shape[0]} and output batch {y.shape[0]}")
    multiplier = int(op.opt("depth_multiplier", 0) or 0)
    if w.shape[3] != y.shape[3]:
        return reason(CATEGORY_SHAPE, f"filter channels {w.shape[3]} and output channels {y.shape[3]}")
    if y.shape[3] != x.shape[3] * multiplier:
        return reason(CATEGORY_OPTIONS, f"output channels {y.shape[3]} are not input channels {x.shape[3]} × "
                                        f"depth multiplier {multiplier}")
    if len(op.inputs) > 2:
        b = op.input(2)
        n = 1 if b is None else int(np.prod(b.shape, dtype=np.int64))  # an omitted bias has no dims: 1 element
        if n != y.shape[3]:
            what = "an omitted bias" if b is None else f"bias of {n} elements"
            return reason(CATEGORY_SHAPE, f"{what} for {y.shape[3]} output channels")
    return None


@register_placement(GPU, "TRANSPOSE_CONV", source=_GPU + "TransposeConvBuiltinOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_transpose_conv(op: DelegateOp) -> str | None:
    """Up to v3; one or two runtime inputs, one output; strides above 0."""
    return gpu_version(op, 3) or gpu_conv_io(op) or gpu_positive(op, _STRIDES, "strides")


# ---- kernel temporaries (LiteRT's builtin kernels, XNNPACK off) ------------------------------------

_HYBRID_WEIGHTS = frozenset({"INT8", "UINT8", "INT4"})
_QUANTIZED_INPUTS = frozenset({"INT8", "UINT8", "INT16"})
_CONV_SOURCE = "tflite/kernels/conv.cc Prepare, AllocateTemporaryTensorsIfRequired"


# CONV_2D: the pip build registers kMultithreadOptimized (TFLITE_WITH_MULTITHREADED_EIGEN).
# supports_multithreaded_kernel = threads != 1, not hybrid, no dilation, a constant filter; then
# float32 keeps HWCN weights (persistent, Kh·Kw·Ci/G × Co) and needs no im2col. im2col
# (N·Ho·Wo × Kh·Kw·Ci/G, the input's dtype; int8 for hybrid) otherwise, unless 1x1 stride 1 without
# dilation (IsIm2ColRequired). Hybrid (float32 input, int8 filter): the quantized input (int8, the
# input's elements), scaling factors (float32, N·H·W·G of the input), int32 accumulators (Co ×
# N·Ho·Wo), and with per-channel scales that differ (is_hybrid_per_channel), or more than one group, the
# input offsets (int32, N·H·W·G) and persistent row sums (int32, Co).
@register_temporaries("CONV_2D")
def _conv2d_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's CONV_2D temporaries."""
    x, w, y = ctx.input(0), ctx.input(1), ctx.output(0)
    n, h, wd, c_in = x.shape
    c_out, kh, kw, c_per_group = w.shape
    _, ho, wo, _ = y.shape
    groups = c_in // c_per_group if c_per_group else 1
    dilated = (ctx.opt("dilation_h_factor") or 1) != 1 or (ctx.opt("dilation_w_factor") or 1) != 1
    hybrid = x.dtype == "FLOAT32" and w.dtype in _HYBRID_WEIGHTS
    multithreaded = setup.threads != 1 and not hybrid and not dilated and w.is_constant
    hwcn = x.dtype == "FLOAT32" and multithreaded
    window = kh * kw * c_per_group
    out: list[Temporary] = []
    strided = (ctx.opt("stride_h") or 1) != 1 or (ctx.opt("stride_w") or 1) != 1
    if not hwcn and (dilated or strided or kh != 1 or kw != 1) and (x.dtype in _QUANTIZED_INPUTS or not multithreaded):
        dtype = ("INT8" if w.dtype == "INT4" else w.dtype) if hybrid else x.dtype
        out.append(Temporary("im2col", dense_bytes(n * ho * wo * window, dtype), False, _CONV_SOURCE))
    if hwcn:
        out.append(Temporary("hwcn_weights", 4 * window * c_out, True, _CONV_SOURCE))
    if hybrid:
        rows = n * h * wd * groups
        out += [Temporary("input_quantized", x.n, False, _CONV_SOURCE),
                Temporary("scaling_factors", 4 * rows, False, _CONV_SOURCE),
                Temporary("accum_scratch", 4 * c_out * n * ho * wo, False, _CONV_SOURCE)]
        # per channel when the scales differ (is_hybrid_per_channel), and for every grouped one: LiteRT 2.3 keeps the
        # offsets and row sums of a grouped hybrid conv whose scales are all equal (measured at 1 and 4 threads:
        # groups of 1 and of 4 channels, 3x3 and 7x7; the suite's GROUPED_CONVS in dynamic range)
        if setup.weight_scales > 1 or groups > 1:
            out += [Temporary("input_offsets", 4 * rows, False, _CONV_SOURCE),
                    Temporary("row_sums", 4 * c_out, True, _CONV_SOURCE)]
    return tuple(out)


# DEPTHWISE_CONV_2D: temporaries only for hybrid (float32 input, int8 filter): the quantized input
# (int8, its elements), scaling factors and input offsets (4 B per batch each).
@register_temporaries("DEPTHWISE_CONV_2D", hybrid_only=(0, 1))
def _depthwise_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's DEPTHWISE_CONV_2D temporaries (hybrid only)."""
    x, w = ctx.input(0), ctx.input(1)
    if not (x.dtype == "FLOAT32" and w.dtype in _HYBRID_WEIGHTS):
        return ()
    source = "tflite/kernels/depthwise_conv.cc Prepare"
    batch = x.shape[0]
    return (Temporary("input_quantized", x.n, False, source), Temporary("scaling_factors", 4 * batch, False, source),
            Temporary("input_offsets", 4 * batch, False, source))


# TRANSPOSE_CONV: col2im, the transposed weights and the int32 scratch are kTfLiteDynamic (heap,
# not listed). Hybrid (float32 input, int8 weights) adds arena buffers: the quantized input (int8,
# its elements), scaling factors and input offsets (4 B per input row: n(in) / Ci).
@register_temporaries("TRANSPOSE_CONV", hybrid_only=(2, 1))
def _transpose_conv_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's TRANSPOSE_CONV arena temporaries (hybrid only)."""
    w, x = ctx.input(1), ctx.input(2)
    if not (x.dtype == "FLOAT32" and w.dtype == "INT8"):
        return ()
    source = "tflite/kernels/transpose_conv.cc Prepare"
    rows = x.n // w.shape[3] if w.shape[3] else 0
    return (Temporary("input_quantized", x.n, False, source), Temporary("scaling_factors", 4 * rows, False, source),
            Temporary("input_offsets", 4 * rows, False, source))


# CONV_3D: the pip build registers kGenericOptimized: im2col (N·Do·Ho·Wo × Kd·Kh·Kw·Ci, the input's
# dtype) unless the filter is 1x1x1 with stride 1 and no dilation. CONV_3D_TRANSPOSE's col2im is
# kTfLiteDynamic (heap): no arena temporary.
@register_temporaries("CONV_3D")
def _conv3d_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's CONV_3D temporaries."""
    x, w, y = ctx.input(0), ctx.input(1), ctx.output(0)
    kd, kh, kw, c_in, _ = w.shape
    dilated = any((ctx.opt(f"dilation_{a}_factor") or 1) != 1 for a in ("d", "h", "w"))
    strided = any((ctx.opt(f"stride_{a}") or 1) != 1 for a in ("d", "h", "w"))
    if not (dilated or strided or kd != 1 or kh != 1 or kw != 1):
        return ()
    n, do, ho, wo, _ = y.shape
    return (Temporary("im2col", dense_bytes(n * do * ho * wo * kd * kh * kw * c_in, x.dtype), False,
                      "tflite/kernels/conv3d.cc Prepare, AllocateTemporaryTensorsIfRequired"),)


# transpose_conv.cc / conv3d_transpose.cc Prepare: the output is kTfLiteDynamic unless its shape input is constant
register_memory(["TRANSPOSE_CONV", "CONV_3D_TRANSPOSE"], dynamic_unless=(0,))


@register_temporaries("CONV_3D_TRANSPOSE")
def _conv3d_transpose_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """None in the arena: conv3d_transpose.cc AllocateTemporaryTensorsIfRequired makes col2im kTfLiteDynamic."""
    return ()


# ---- TensorFlow Lite Micro (reference kernels) -------------------------------------------------

def _tflm_conv_params(t: TflmTarget) -> CLayout:
    """TfLiteConvParams (core/c/builtin_op_data.h): padding, strides, activation, dilations, bias type."""
    return c_struct(t, "iiiiiii")


def tflm_op_data_conv(t: TflmTarget) -> CLayout:
    """OpDataConv (micro/kernels/conv.h), also DEPTHWISE_CONV_2D's: padding values, zero points,
    multiplier and shift, the two per-channel array pointers, activation range, the filter buffer index."""
    return c_struct(t, padding_values(t), "iiiii", "pp", "iii", compression="ii")


# conv_common.cc ConvInit (OpDataConv) and ConvPrepare: per-channel multipliers and shifts, one int32 per
# output channel (filter dim 0), allocated for every dtype; a scratch buffer only for int4 filters. Prepare
# holds its output, input and filter as temporaries while it allocates them, then CalculateOpDataConv
# takes input, filter, bias and output again (depthwise_conv_common.cc the same).
CONV_HELD = ("o0", "i0", "i1")
CONV_THEN = ("i0", "i1", "i2", "o0")


@register_tflm("CONV_2D")
def _tflm_conv(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """TFLM's reference CONV_2D."""
    scratch = (ctx.input(1).n,) if ctx.input(1).dtype == "INT4" else ()
    return TflmKernel(_tflm_conv_params(target), tflm_op_data_conv(target).size, per_channel(ctx, 1, 0), scratch,
                      "micro/kernels/conv_common.cc ConvInit, ConvPrepare", held=CONV_HELD, then=CONV_THEN)


# depthwise_conv.cc DepthwiseConvInit (OpDataConv) and depthwise_conv_common.cc DepthwiseConvPrepare:
# per-channel arrays over filter dim 3; TfLiteDepthwiseConvParams: padding, strides, depth multiplier,
# activation, dilations.
@register_tflm("DEPTHWISE_CONV_2D")
def _tflm_depthwise(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """TFLM's reference DEPTHWISE_CONV_2D."""
    scratch = (ctx.input(1).n,) if ctx.input(1).dtype == "INT4" else ()
    return TflmKernel(c_struct(target, "iiiiiii"), tflm_op_data_conv(target).size, per_channel(ctx, 1, 3), scratch,
                      "micro/kernels/depthwise_conv_common.cc DepthwiseConvPrepare", held=CONV_HELD, then=CONV_THEN)


def tflm_transpose_conv_params(t: TflmTarget) -> CLayout:
    """ConvParams (kernels/internal/types.h): a uint8 padding type, int16 padding values, strides and
    dilations, then nine int32/float."""
    return c_struct(t, "b", c_struct(t, "hhhh"), "hhhh", "iiiiiiiii")


# transpose_conv.cc: OpData {ConvParams (types.h: a uint8 padding type, int16 padding values, strides
# and dilations, then nine int32/float), scratch index, [2 compression indices], bias-converted index,
# two per-channel pointers}; Prepare allocates the per-channel arrays (filter dim 0) and requests an
# int32 (int8 input) or int64 (int16 input) scratch of the output's size. Its inputs: output shape, filter,
# input, bias; Prepare holds output, input and filter, and CalculateOpData takes input, filter, bias and
# output again for integer inputs.
@register_tflm("TRANSPOSE_CONV")
def _tflm_transpose_conv(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """TFLM's reference TRANSPOSE_CONV."""
    op_data = c_struct(target, tflm_transpose_conv_params(target), "i", c_struct(target, "", compression="ii"), "i",
                       "pp")
    dtype = ctx.input(2).dtype if len(ctx.inputs) > 2 else ""
    scratch = {"INT8": (4 * ctx.output(0).n,), "INT16": (8 * ctx.output(0).n,)}.get(dtype, ())
    then = ("i2", "i1", "i3", "o0") if ctx.input(2).dtype != "FLOAT32" else ()
    return TflmKernel(c_struct(target, "iiiii"), op_data.size, per_channel(ctx, 1, 0), scratch,
                      "micro/kernels/transpose_conv.cc TransposeConvInit, TransposeConvPrepare",
                      held=("o0", "i2", "i1"), then=then)


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
# A convolution's law also costs by output pixel (out_rows: the GEMM's accumulators set up and stored per pixel, what a
# kernel of many taps amortizes): the raw-audio model's 1x80 one-channel layer took 44 us, 64 without it.
register_facts("CONV_2D", law_group="conv", law_features=("1", "gemm_macs", "narrow_macs", "tile_taps", "out_rows",
                                                             "in", "out", "params", "grouped_taps", "grouped_macs",
                                                             "elems_past_l2"),
               taps_weight=1, tiled_macs=True, fusion=(OUTPUT_CLAMP, ABSORBS_PAD),
               xnnpack=XnnpackFacts(operator_bytes=1_700, weights=CONV, pointwise_as="FULLY_CONNECTED",
                                    reshape_buffers=GEMM_INDIRECTION, depthwise_as="DEPTHWISE_CONV_2D"))
register_facts("DEPTHWISE_CONV_2D", law_group="conv", fusion=(OUTPUT_CLAMP, ABSORBS_PAD),
               xnnpack=XnnpackFacts(operator_bytes=1_700, weights=DEPTHWISE, reshape_buffers=DEPTHWISE_INDIRECTION,
                                    gemm_as="CONV_2D"))
# A transposed convolution's law: XNNPACK's sub-convolutions cost by their GEMM passes (tiled_macs) and by output
# pixel (out_rows: int8 8 ns a pixel here, a 2x2 stride-2 layer of 16 channels 37 us where its MACs say 5).
register_facts("TRANSPOSE_CONV", law_group="conv", law_features=("1", "tiled_macs", "out_rows", "macs", "taps", "in",
                                                                    "out", "params", "elems_past_l2"),
               taps_weight=1, tiled_macs=True, fusion=(OUTPUT_CLAMP,),
               xnnpack=XnnpackFacts(operator_bytes=1_620, weights=TRANSPOSED_CONV,
                                    reshape_buffers=TRANSPOSED_INDIRECTION, gemm_as="CONV_2D"))
register_facts(("CONV_3D", "CONV_3D_TRANSPOSE"), law_group="conv")

# What the converter writes (the what-if of another precision): int8 filters per output channel (a depthwise
# filter's channels are its last axis), an int32 bias in a full-integer model, and the versions op_version.cc
# gives a per-channel hybrid and a per-channel int8 kernel.
register_facts("CONV_2D", quantized_weights=((1, 0),), quantized_bias=2, hybrid_version=5, int8_version=3)
register_facts("DEPTHWISE_CONV_2D", quantized_weights=((1, 3),), quantized_bias=2, hybrid_version=6, int8_version=3)
register_facts("TRANSPOSE_CONV", quantized_weights=((1, 0),), quantized_bias=3, hybrid_version=2, int8_version=2)
