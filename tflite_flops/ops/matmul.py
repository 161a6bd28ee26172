"""Matrix products: FULLY_CONNECTED (N-D input, keep_num_dims) and BATCH_MATMUL (adj, broadcast)."""

from __future__ import annotations

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC, dense_bytes, num_elements
from .registry import (Cost, KernelSetup, OpContext, Shape, Temporary, broadcast_shapes, fused_activation, join_notes,
                       register, register_temporaries, register_traits, shape_fn)


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


# ---- kernel temporaries (LiteRT's builtin kernels, XNNPACK off) ------------------------------------

_HYBRID_WEIGHTS = frozenset({"INT8", "UINT8", "INT4", "INT2"})


# FULLY_CONNECTED: temporaries only for hybrid (float32 input, int8/uint8/int4/int2 weights; the
# int4 path with its own packed buffers is not modelled): the quantized input (int8, the input's
# elements), scaling factors and input offsets (4 B per batch row B), int32 accumulators (U × B),
# persistent int32 row sums (U), and for sparse weights a persistent uint8 ledger.
@register_temporaries("FULLY_CONNECTED", hybrid_only=(0, 1))
def _fc_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's FULLY_CONNECTED temporaries (hybrid only)."""
    x, w = ctx.input(0), ctx.input(1)
    if not (x.dtype == "FLOAT32" and w.dtype in _HYBRID_WEIGHTS):
        return ()
    b, _, units = _fc_dims(ctx)
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
