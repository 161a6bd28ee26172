"""Pooling and spatial resampling: AVERAGE/MAX/L2_POOL_2D, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR."""

from __future__ import annotations

from ..errors import ShapeError
from .conv import conv_out_dim, nonempty
from .registry import Cost, OpContext, Shape, fused_activation, register, register_memory, register_zero, shape_fn

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
