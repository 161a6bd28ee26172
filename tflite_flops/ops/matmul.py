"""Matrix products: FULLY_CONNECTED (N-D input, keep_num_dims) and BATCH_MATMUL (adj, broadcast)."""

from __future__ import annotations

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC, num_elements
from .registry import (Cost, OpContext, Shape, broadcast_shapes, fused_activation, join_notes, register,
                       register_traits, shape_fn)


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
