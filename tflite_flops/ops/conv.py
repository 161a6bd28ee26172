"""Convolutions: CONV_2D (grouped), DEPTHWISE_CONV_2D, TRANSPOSE_CONV, CONV_3D, CONV_3D_TRANSPOSE.

Layouts (TFLite kernels): input NHWC; CONV_2D filter [C_out, K_h, K_w, C_in/G];
DEPTHWISE_CONV_2D filter [1, K_h, K_w, C_out]; TRANSPOSE_CONV inputs (output_shape, filter
[C_out, K_h, K_w, C_in], input, bias); CONV_3D filter [K_d, K_h, K_w, C_in/G, C_out];
CONV_3D_TRANSPOSE inputs (output_shape, filter [K_d, K_h, K_w, C_out, C_in], input, bias).

Padding and dilation do not change the count: every output element costs the full kernel,
padded taps included, as in TensorFlow's profiler and the TFLite converter.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC, dense_bytes
from .registry import (Cost, KernelSetup, OpContext, Shape, TensorInfo, Temporary, fused_activation, join_notes,
                       register, register_memory, register_temporaries, register_traits, shape_fn)


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
# N·Ho·Wo), and with per-channel scales the input offsets (int32, N·H·W·G) and persistent row sums
# (int32, Co).
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
        if setup.weight_scales > 1:
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
