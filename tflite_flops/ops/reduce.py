"""Reductions: MEAN, SUM, REDUCE_PROD/MAX/MIN/ANY/ALL, ARG_MAX/ARG_MIN.

A reduction of n(in) elements into n(out) results needs n(in) − n(out) binary operations.
MEAN adds one divide per output: n(in) − n(out) + n(out) = n(in) (TF profiler: Mean = n(in)).
"""

from __future__ import annotations

from ..errors import ShapeError
from .registry import Cost, OpContext, Shape, register, shape_fn

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
