"""Pooling and spatial resampling: AVERAGE/MAX/L2_POOL_2D, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR."""

from __future__ import annotations

from ..errors import ShapeError
from .conv import conv_out_dim, nonempty
from .facts import AVERAGE_POOL_BUFFERS, BILINEAR_WEIGHTS, OUTPUT_CLAMP, POOL_INDIRECTION, XnnpackFacts, register_facts
from .placement import (CATEGORY_DTYPE, CATEGORY_OPTIONS, CATEGORY_SHAPE, XNNPACK, DelegateOp, activation, float_only,
                        float_or_q8, ints, num_io, padding, rank_in, reason, register_placement, static)
from .placement import GPU, gpu_activation, gpu_io, gpu_positive, gpu_version
from .registry import Cost, OpContext, Shape, fused_activation, register, register_memory, register_zero, shape_fn
from .tflm import CLayout, TflmTarget, c_struct, fixed, padding_values, register_tflm

# resize_bilinear.cc / resize_nearest_neighbor.cc Prepare: the output is kTfLiteDynamic unless the size is known
register_memory(["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"], dynamic_unless=(1,))


def _window(ctx: OpContext) -> int:
    return int(ctx.opt("filter_height", 1)) * int(ctx.opt("filter_width", 1))


# AVERAGE_POOL_2D / MAX_POOL_2D: K_h·K_w ops per output element (accumulate or compare per tap,
# padded taps included) + fused activation. TF profiler and the TFLite converter agree.
@register(["AVERAGE_POOL_2D", "MAX_POOL_2D"], "FLOPs = Kh·Kw·n(out) + act",
          reference="TF profiler AvgPool/MaxPool, TFLite converter")
def pool2d(ctx: OpContext) -> Cost:
    """Average or max pooling."""
    n_out = ctx.output(0).n
    act, note = fused_activation(ctx, n_out)
    return Cost(0, _window(ctx) * n_out + act, note=note)


# L2_POOL_2D: square-accumulate per tap (2 ops) and one sqrt per output element.
@register("L2_POOL_2D", "FLOPs = (2·Kh·Kw + 1)·n(out) + act", reference="TFLite converter structure")
def l2_pool(ctx: OpContext) -> Cost:
    """L2 pooling."""
    n_out = ctx.output(0).n
    act, note = fused_activation(ctx, n_out)
    return Cost(0, (2 * _window(ctx) + 1) * n_out + act, note=note)


@shape_fn(["AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"])
def _pool_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0)
    if x.rank != 4:
        raise ShapeError(f"{ctx.op_type}: input rank {x.rank}, expected 4")
    n, h, w, c = x.shape
    pad = ctx.opt("padding", "SAME")
    return [nonempty(ctx, (n, conv_out_dim(h, int(ctx.opt("filter_height", 1)), ctx.opt("stride_h", 1), 1, pad),
                           conv_out_dim(w, int(ctx.opt("filter_width", 1)), ctx.opt("stride_w", 1), 1, pad), c))]


# RESIZE_BILINEAR: each output is a weighted sum of 4 neighbours: 4 mul + 3 add = 7 per output
# element (fvcore and onnx-tool count the 4 multiplies only).
@register("RESIZE_BILINEAR", "FLOPs = 7·n(out)", reference="fvcore / onnx-tool (4 mul) + 3 adds")
def resize_bilinear(ctx: OpContext) -> Cost:
    """Bilinear resize."""
    return Cost(0, 7 * ctx.output(0).n)


register_zero("RESIZE_NEAREST_NEIGHBOR", "copies the nearest input pixel (no arithmetic)",
              reference="onnx-tool (0)")


@shape_fn(["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def _resize_shape(ctx: OpContext) -> list[Shape]:
    x, size = ctx.input(0), ctx.input(1).value
    if size is None or size.size != 2 or x.rank != 4:
        raise ShapeError(f"{ctx.op_type}: size is not a known constant")
    return [(x.shape[0], int(size.reshape(-1)[0]), int(size.reshape(-1)[1]), x.shape[3])]


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitAveragePool2DNode / VisitMaxPool2DNode / VisitResizeBilinearNode)

def _xnn_pool_params(op: DelegateOp) -> str | None:
    """``CheckPoolingParams``: positive strides and window, stride within the window, no 1x1 window with a stride."""
    sw, sh = int(op.opt("stride_w", 0) or 0), int(op.opt("stride_h", 0) or 0)
    fw, fh = int(op.opt("filter_width", 0) or 0), int(op.opt("filter_height", 0) or 0)
    if min(sw, sh, fw, fh) <= 0:
        return reason(CATEGORY_OPTIONS, f"stride {sw}x{sh} or window {fw}x{fh} not positive")
    if sw > fw or sh > fh:
        return reason(CATEGORY_OPTIONS, f"stride {sw}x{sh} exceeds the {fw}x{fh} window")
    if fw == 1 and fh == 1 and max(sw, sh) > 1:
        return reason(CATEGORY_OPTIONS, f"1x1 window with stride {sw}x{sh}")
    return None


@register_placement(XNNPACK, "AVERAGE_POOL_2D", source="xnnpack_delegate.cc VisitAveragePool2DNode")
def _xnn_average_pool(op: DelegateOp) -> str | None:
    """Float average pooling."""
    return (num_io(op, 1) or float_only(op, op.input(0), "input") or float_only(op, op.outputs[0], "output")
            or _xnn_pool_params(op) or padding(op) or activation(op))


@register_placement(XNNPACK, "MAX_POOL_2D", source="xnnpack_delegate.cc VisitMaxPool2DNode")
def _xnn_max_pool(op: DelegateOp) -> str | None:
    """Float32 or 8-bit max pooling."""
    return (num_io(op, 1) or float_or_q8(op, op.input(0), "input", fp16=False)
            or float_or_q8(op, op.outputs[0], "output") or _xnn_pool_params(op) or padding(op) or activation(op))


@register_placement(XNNPACK, "RESIZE_BILINEAR", source="xnnpack_delegate.cc VisitResizeBilinearNode")
def _xnn_resize_bilinear(op: DelegateOp) -> str | None:
    """Float32 or 8-bit 4-D bilinear resize to a static, positive size."""
    found = num_io(op, 2) or float_or_q8(op, op.input(0), "input", fp16=False) or rank_in(op.input(0), "input", 4)
    if found:
        return found
    size = op.input(1)
    if size is None or size.dtype != "INT32":
        return reason(CATEGORY_DTYPE, "size is not INT32")
    if size.rank != 1:
        return reason(CATEGORY_SHAPE, f"size tensor has rank {size.rank}")
    found = (static(size, "size", quasi=False) or float_or_q8(op, op.outputs[0], "output")
             or rank_in(op.outputs[0], "output", 4))
    if found:
        return found
    values = ints(size)
    if values is not None and any(v <= 0 for v in values):
        return reason(CATEGORY_OPTIONS, f"size {values}")
    return None


# ---- GPU delegate placement (model_builder.cc Pooling2DOperationParser / Resize2DOperationParser,
# gpu_compatibility.cc CheckPooling2DGpuDelegateCompatibility / CheckGpuDelegateCompatibility) ---------------------

@register_placement(GPU, ("AVERAGE_POOL_2D", "MAX_POOL_2D"),
                    source="model_builder.cc Pooling2DOperationParser::IsSupported, gpu_compatibility.cc "
                           "CheckPooling2DGpuDelegateCompatibility")
def _gpu_pool(op: DelegateOp) -> str | None:
    """Up to v2; one runtime input, one output; window and strides above 0; no SIGN_BIT activation."""
    return (gpu_version(op, 2) or gpu_io(op, 1, 1) or gpu_positive(op, ("filter_height", "filter_width"), "window")
            or gpu_positive(op, ("stride_h", "stride_w"), "strides") or gpu_activation(op))


@register_placement(GPU, ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"),
                    source="model_builder.cc Resize2DOperationParser::IsSupported, gpu_compatibility.cc "
                           "CheckGpuDelegateCompatibility")
def _gpu_resize(op: DelegateOp) -> str | None:
    """Up to v3; one runtime input (a constant size), one output; bilinear not both align_corners and
    half_pixel_centers."""
    found = gpu_version(op, 3) or gpu_io(op, 1, 1)
    if found:
        return found
    if op.op_type == "RESIZE_BILINEAR" and op.opt("align_corners", False) and op.opt("half_pixel_centers", False):
        return reason(CATEGORY_OPTIONS, "align_corners with half_pixel_centers")
    return None


# TensorFlow Lite Micro, pooling.cc PoolInit: OpDataPooling (pooling.h: padding values, int32 and float
# activation ranges); TfLitePoolParams: padding, strides, filter size, activation, computed padding.
def tflm_op_data_pooling(t: TflmTarget) -> CLayout:
    """OpDataPooling (micro/kernels/pooling.h)."""
    return c_struct(t, padding_values(t), "iiii")


register_tflm(["AVERAGE_POOL_2D", "MAX_POOL_2D"])(fixed(
    lambda t: c_struct(t, "iiiiii", padding_values(t)), tflm_op_data_pooling, "micro/kernels/pooling.cc PoolInit"))
# resize_nearest_neighbor.cc: no Init; TfLiteResizeNearestNeighborParams: two bools
register_tflm("RESIZE_NEAREST_NEIGHBOR")(fixed(lambda t: c_struct(t, "bb"), source="micro/kernels/resize_nearest_neighbor.cc"))
# resize_bilinear.cc: no Init; TfLiteResizeBilinearParams: align_corners, half_pixel_centers
register_tflm("RESIZE_BILINEAR")(fixed(lambda t: c_struct(t, "bb"), source="micro/kernels/resize_bilinear.cc"))


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
register_facts("MAX_POOL_2D", law_group="pool", fusion=(OUTPUT_CLAMP,),
               xnnpack=XnnpackFacts(operator_bytes=832, reshape_buffers=POOL_INDIRECTION))
register_facts("AVERAGE_POOL_2D", law_group="pool", fusion=(OUTPUT_CLAMP,),
               xnnpack=XnnpackFacts(operator_bytes=832, reshape_buffers=AVERAGE_POOL_BUFFERS))
register_facts("L2_POOL_2D", law_group="pool")
# A resize's kernels loop over output pixels and channels whatever the input (timed here: a bilinear 16x16x21 ->
# 128x128 takes 76 us, where the layout law's per-input-element cost said 4)
RESIZE_FEATURES = ("1", "out", "out_rows", "elems_past_l2")
register_facts("RESIZE_BILINEAR", law_group="layout", law_features=RESIZE_FEATURES,
               xnnpack=XnnpackFacts(operator_bytes=920, reshape_buffers=BILINEAR_WEIGHTS))
register_facts("RESIZE_NEAREST_NEIGHBOR", law_group="layout", law_features=RESIZE_FEATURES,
               xnnpack=XnnpackFacts(operator_bytes=920))

# The version op_version.cc gives the int8 kernel (the what-if of a full-integer model, studies/what_if.py).
register_facts(("MAX_POOL_2D", "AVERAGE_POOL_2D", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"), int8_version=2)
