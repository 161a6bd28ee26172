"""Data movement and shape bookkeeping: zero arithmetic, but shapes (and small values) to propagate.

Output shapes follow the TFLite kernels. Values are folded for small integer tensors so that the
converter's SHAPE → STRIDED_SLICE → PACK → RESHAPE chains (dynamic batch) resolve.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..units import num_elements
from .facts import PER_INPUT, PER_OUTPUT, RESHAPE_IN_PLACE, XnnpackFacts, ZERO_PAD, register_facts
from .registry import (MAX_VALUE_ELEMENTS, Cost, OpContext, Shape, broadcast_shapes, fused_activation, register, register_zero,
                       register_memory, same_as_input, shape_fn, value_fn)
from .tflm import TflmKernel, TflmTarget, c_struct, fixed, register_tflm


register_zero(["RESHAPE", "SQUEEZE", "EXPAND_DIMS", "BITCAST"],
              "shares the input buffer (in-place): no arithmetic, no copy", bytes_model="alias")
register_zero(["SHAPE", "RANK"], "reads only tensor metadata", bytes_model="metadata")
register_zero(["TRANSPOSE", "SLICE", "STRIDED_SLICE", "GATHER", "GATHER_ND", "PACK", "UNPACK", "SPLIT",
               "SPLIT_V", "PAD", "PADV2", "MIRROR_PAD", "TILE", "BROADCAST_TO", "SPACE_TO_DEPTH",
               "DEPTH_TO_SPACE", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "REVERSE_V2", "CAST",
               "FILL", "ZEROS_LIKE", "SELECT", "SELECT_V2", "BROADCAST_ARGS"],
              "data movement: no arithmetic")

# Memory (TFLite kernels): RESHAPE, SQUEEZE, EXPAND_DIMS and BITCAST relabel their input's buffer
# (registered kTfLiteInplaceOpInput0Shared | kTfLiteInplaceOpDataUnmodified). SHAPE and RANK are
# computed at Prepare into a read-only persistent buffer (SetTensorToPersistentRo), and so are
# RESHAPE, GATHER, STRIDED_SLICE, TILE and BROADCAST_ARGS when their inputs are constant or
# themselves computed at Prepare: none of these live in the activation arena.
register_memory(["SQUEEZE", "EXPAND_DIMS", "BITCAST"], inplace=(0,), data_unmodified=True)
register_memory("RESHAPE", inplace=(0,), data_unmodified=True, prepare_inputs=(0, 1))
register_memory(["SHAPE", "RANK"], prepare_inputs=())
register_memory(["GATHER", "BROADCAST_ARGS"], prepare_inputs=(0, 1))
# The output is kTfLiteDynamic unless the inputs that decide its shape are known at Prepare:
# tile.cc Prepare (multipliers), strided_slice.cc Prepare (begin, end; the offset option aside),
# slice.cc Prepare (begin, size), pad.cc Prepare (paddings), broadcast_to.cc Prepare (shape),
# fill.cc Prepare (dims).
register_memory("TILE", prepare_inputs=(0, 1), dynamic_unless=(1,))
register_memory("STRIDED_SLICE", prepare_inputs=(0, 1, 2, 3), dynamic_unless=(1, 2))
register_memory("SLICE", dynamic_unless=(1, 2))
register_memory(["PAD", "PADV2", "MIRROR_PAD", "BROADCAST_TO"], dynamic_unless=(1,))
register_memory("FILL", dynamic_unless=(0,))


# CONCATENATION: copying is free; only a fused activation costs (rare).
@register("CONCATENATION", "FLOPs = act (copy only)", reference="every surveyed counter (0)")
def concatenation(ctx: OpContext) -> Cost:
    """Concatenation along one axis."""
    flops, note = fused_activation(ctx, ctx.output(0).n)
    return Cost(0, flops, note=note)


def _ints(ctx: OpContext, i: int, what: str) -> list[int]:
    value = ctx.input(i).value
    if value is None:
        raise ShapeError(f"{ctx.op_type}: {what} (input {i}) is not a known constant")
    return [int(v) for v in value.reshape(-1).tolist()]


def _axis(axis: int, rank: int, op_type: str) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"{op_type}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def _reshape_target(n_in: int, target: list[int], op_type: str) -> Shape:
    unknown = [i for i, d in enumerate(target) if d == -1]
    known = num_elements(d for d in target if d != -1)
    if len(unknown) > 1:
        raise ShapeError(f"{op_type}: more than one -1 in {target}")
    if unknown:
        if known == 0 or n_in % known:
            raise ShapeError(f"{op_type}: cannot reshape {n_in} elements to {target}")
        target = list(target)
        target[unknown[0]] = n_in // known
    elif num_elements(target) != n_in:
        raise ShapeError(f"{op_type}: cannot reshape {n_in} elements to {target}")
    return tuple(target)


@shape_fn("RESHAPE")
def _reshape_shape(ctx: OpContext) -> list[Shape]:
    # The kernel reads the shape tensor when it is a 1-D int vector; otherwise the new_shape
    # option, where the legacy [0] means a scalar.
    if ctx.has_input(1) and ctx.input(1).rank == 1:
        target = _ints(ctx, 1, "shape")
    elif ctx.opt("new_shape") is not None:
        target = list(ctx.opt("new_shape"))
        if target == [0]:
            target = []
    elif ctx.has_input(1) and ctx.input(1).value is not None:
        target = _ints(ctx, 1, "shape")
    else:
        raise ShapeError("RESHAPE: target shape is not known")
    return [_reshape_target(ctx.input(0).n, target, "RESHAPE")]


@shape_fn("SQUEEZE")
def _squeeze_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    dims = {_axis(d, len(x), "SQUEEZE") for d in ctx.opt("squeeze_dims", ()) or ()}
    if not dims:
        return [tuple(d for d in x if d != 1)]
    return [tuple(d for i, d in enumerate(x) if i not in dims)]


@shape_fn("EXPAND_DIMS")
def _expand_shape(ctx: OpContext) -> list[Shape]:
    x = list(ctx.input(0).shape)
    axis = _ints(ctx, 1, "axis")[0]
    axis = _axis(axis, len(x) + 1, "EXPAND_DIMS")
    x.insert(axis, 1)
    return [tuple(x)]


@shape_fn("TRANSPOSE")
def _transpose_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    perm = _ints(ctx, 1, "perm")
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"TRANSPOSE: perm {perm} does not fit rank {len(x)}")
    return [tuple(x[p] for p in perm)]


@shape_fn("SLICE")
def _slice_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    begin, size = _ints(ctx, 1, "begin"), _ints(ctx, 2, "size")
    return [tuple(d - b if s == -1 else s for d, b, s in zip(x, begin, size))]


def _strided_spec(ctx: OpContext, shape: Shape) -> list[tuple]:
    """The slice, canonicalised as TensorFlow does: one entry per output position, in order.

    ``("new", 0, 0, 0)`` is a new axis of size 1; ``("shrink", dim, index, 0)`` keeps one index of
    input dim ``dim`` and drops the dim; ``("range", dim, start, stop, step)`` keeps
    ``range(start, stop, step)`` of input dim ``dim``, with start and stop already clamped the way
    the kernel clamps them (``stop = -1`` runs down to index 0 for a negative step). Dims after
    the spec (or covered by the ellipsis) are kept whole.
    """
    begin, end, strides = _ints(ctx, 1, "begin"), _ints(ctx, 2, "end"), _ints(ctx, 3, "strides")
    if not len(begin) == len(end) == len(strides):
        raise ShapeError(f"STRIDED_SLICE: begin/end/strides lengths differ ({len(begin)}, {len(end)}, {len(strides)})")
    bm, em = int(ctx.opt("begin_mask", 0)), int(ctx.opt("end_mask", 0))
    shrink, new_axis = int(ctx.opt("shrink_axis_mask", 0)), int(ctx.opt("new_axis_mask", 0))
    ellipsis = int(ctx.opt("ellipsis_mask", 0))
    offset = bool(ctx.opt("offset", False))
    rank = len(shape)
    k = len(begin)
    if ellipsis & (ellipsis - 1):
        raise ShapeError("STRIDED_SLICE: more than one ellipsis")
    # Sparse entries that consume an input dim (neither ellipsis nor new axis).
    consuming = sum(1 for i in range(k) if not (ellipsis >> i & 1) and not (new_axis >> i & 1))
    if not ellipsis:  # an implicit ellipsis at the end covers the remaining dims
        k_entries = list(range(k)) + ["..."]
    else:
        k_entries = ["..." if ellipsis >> i & 1 else i for i in range(k)]
    spec: list[tuple] = []
    dim = 0
    for entry in k_entries:
        if entry == "...":
            for _ in range(max(rank - consuming, 0)):
                spec.append(("range", dim, 0, shape[dim], 1))
                dim += 1
            continue
        i = int(entry)
        if new_axis >> i & 1:
            spec.append(("new", 0, 0, 0))
            continue
        if dim >= rank:
            raise ShapeError(f"STRIDED_SLICE: slice spec of length {k} does not fit rank {rank}")
        size = shape[dim]
        b, e, s = begin[i], end[i], strides[i]
        if s == 0:
            raise ShapeError("STRIDED_SLICE: stride 0")
        if offset:
            e = b + e
        if shrink >> i & 1:
            b = b + size if b < 0 else b
            if not 0 <= b < size:
                raise ShapeError(f"STRIDED_SLICE: index {begin[i]} out of range for dim {dim} of size {size}")
            spec.append(("shrink", dim, b, 0))
            dim += 1
            continue
        if s > 0:
            b = 0 if bm >> i & 1 else min(max(b + size if b < 0 else b, 0), size)
            e = size if em >> i & 1 else min(max(e + size if e < 0 else e, 0), size)
        else:
            b = size - 1 if bm >> i & 1 else min(max(b + size if b < 0 else b, -1), size - 1)
            e = -1 if em >> i & 1 else min(max(e + size if e < 0 else e, -1), size - 1)
        spec.append(("range", dim, b, e, s))
        dim += 1
    return spec


@shape_fn("STRIDED_SLICE")
def _strided_slice_shape(ctx: OpContext) -> list[Shape]:
    out = []
    for kind, _, *rest in _strided_spec(ctx, ctx.input(0).shape):
        if kind == "new":
            out.append(1)
        elif kind == "range":
            out.append(len(range(*rest)))
    return [tuple(out)]


@shape_fn("GATHER")
def _gather_shape(ctx: OpContext) -> list[Shape]:
    params, indices = ctx.input(0).shape, ctx.input(1).shape
    axis, batch_dims = _gather_axes(ctx, params, indices)
    return [params[:axis] + indices[batch_dims:] + params[axis + 1:]]


def _gather_axes(ctx: OpContext, params: Shape, indices: Shape) -> tuple[int, int]:
    """(axis, batch_dims), both made non-negative; output = params[:axis] + indices[batch_dims:] + params[axis+1:]."""
    axis = _axis(int(ctx.opt("axis", 0)), len(params), "GATHER")
    batch_dims = int(ctx.opt("batch_dims", 0))
    if batch_dims < 0:
        batch_dims += len(indices)
    if not 0 <= batch_dims <= min(axis, len(indices)):
        raise ShapeError(f"GATHER: batch_dims {ctx.opt('batch_dims')} does not fit axis {axis} and indices {indices}")
    if params[:batch_dims] != indices[:batch_dims]:
        raise ShapeError(f"GATHER: batch dims of params {params} and indices {indices} differ")
    return axis, batch_dims


@shape_fn("GATHER_ND")
def _gather_nd_shape(ctx: OpContext) -> list[Shape]:
    params, indices = ctx.input(0).shape, ctx.input(1).shape
    return [indices[:-1] + params[indices[-1]:]]


@value_fn("GATHER_ND")
def _fold_gather_nd(ctx: OpContext):
    vals = _values(ctx)
    if vals is None or not _small(ctx):
        return [None]
    params, indices = vals
    flat = indices.reshape(-1, indices.shape[-1])
    return [np.stack([params[tuple(ix)] for ix in flat]).reshape(ctx.output(0).shape) if len(flat) else None]


@shape_fn("SPACE_TO_BATCH_ND")
def _s2b_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    block, pads = _ints(ctx, 1, "block_shape"), _ints(ctx, 2, "paddings")
    m = len(block)
    if len(pads) != 2 * m or len(x) < m + 1:
        raise ShapeError(f"SPACE_TO_BATCH_ND: block {block} / paddings {pads} do not fit {x}")
    spatial = []
    for i, b in enumerate(block):
        padded = x[1 + i] + pads[2 * i] + pads[2 * i + 1]
        if b <= 0 or padded % b:
            raise ShapeError(f"SPACE_TO_BATCH_ND: padded dim {padded} is not a multiple of block {b}")
        spatial.append(padded // b)
    return [(x[0] * num_elements(block),) + tuple(spatial) + x[1 + m:]]


@shape_fn("BATCH_TO_SPACE_ND")
def _b2s_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    block, crops = _ints(ctx, 1, "block_shape"), _ints(ctx, 2, "crops")
    m = len(block)
    prod = num_elements(block)
    if len(crops) != 2 * m or len(x) < m + 1 or prod <= 0 or x[0] % prod:
        raise ShapeError(f"BATCH_TO_SPACE_ND: block {block} / crops {crops} do not fit {x}")
    spatial = tuple(x[1 + i] * b - crops[2 * i] - crops[2 * i + 1] for i, b in enumerate(block))
    return [(x[0] // prod,) + spatial + x[1 + m:]]


@shape_fn("BROADCAST_ARGS")
def _broadcast_args_shape(ctx: OpContext) -> list[Shape]:
    return [(max(ctx.input(0).n, ctx.input(1).n),)]


@value_fn("BROADCAST_ARGS")
def _fold_broadcast_args(ctx: OpContext):
    a, b = _ints(ctx, 0, "shape"), _ints(ctx, 1, "shape")
    dtype = ctx.input(0).value.dtype  # type: ignore[union-attr]
    return [np.asarray(broadcast_shapes("BROADCAST_ARGS", tuple(a), tuple(b)), dtype=dtype)]


@shape_fn("PACK")
def _pack_shape(ctx: OpContext) -> list[Shape]:
    ins = ctx.present_inputs
    x = list(ins[0].shape)
    x.insert(_axis(int(ctx.opt("axis", 0)), len(x) + 1, "PACK"), len(ins))
    return [tuple(x)]


@shape_fn("UNPACK")
def _unpack_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    axis = _axis(int(ctx.opt("axis", 0)), len(x), "UNPACK")
    piece = x[:axis] + x[axis + 1:]
    return [piece] * len(ctx.outputs)


@shape_fn("SPLIT")
def _split_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(1).shape
    axis = _axis(_ints(ctx, 0, "axis")[0], len(x), "SPLIT")
    k = len(ctx.outputs)
    if x[axis] % k:
        raise ShapeError(f"SPLIT: dim {x[axis]} does not split into {k}")
    return [x[:axis] + (x[axis] // k,) + x[axis + 1:]] * k


@shape_fn("SPLIT_V")
def _split_v_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    sizes = _ints(ctx, 1, "size_splits")
    axis = _axis(_ints(ctx, 2, "axis")[0], len(x), "SPLIT_V")
    if -1 in sizes:
        sizes[sizes.index(-1)] = x[axis] - sum(s for s in sizes if s != -1)
    return [x[:axis] + (s,) + x[axis + 1:] for s in sizes]


@shape_fn("CONCATENATION")
def _concat_shape(ctx: OpContext) -> list[Shape]:
    ins = ctx.present_inputs
    x = list(ins[0].shape)
    axis = _axis(int(ctx.opt("axis", 0)), len(x), "CONCATENATION")
    x[axis] = sum(t.shape[axis] for t in ins)
    return [tuple(x)]


@shape_fn(["PAD", "PADV2", "MIRROR_PAD"])
def _pad_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    pads = _ints(ctx, 1, "paddings")
    if len(pads) != 2 * len(x):
        raise ShapeError(f"{ctx.op_type}: paddings {pads} do not fit rank {len(x)}")
    return [tuple(d + pads[2 * i] + pads[2 * i + 1] for i, d in enumerate(x))]


@shape_fn("TILE")
def _tile_shape(ctx: OpContext) -> list[Shape]:
    return [tuple(d * m for d, m in zip(ctx.input(0).shape, _ints(ctx, 1, "multiples")))]


@shape_fn("BROADCAST_TO")
def _broadcast_to_shape(ctx: OpContext) -> list[Shape]:
    return [tuple(_ints(ctx, 1, "shape"))]


@shape_fn(["SELECT", "SELECT_V2"])
def _select_shape(ctx: OpContext) -> list[Shape]:
    return [broadcast_shapes(ctx.op_type, *(t.shape for t in ctx.present_inputs))]


@shape_fn("SHAPE")
def _shape_shape(ctx: OpContext) -> list[Shape]:
    return [(ctx.input(0).rank,)]


@shape_fn("RANK")
def _rank_shape(ctx: OpContext) -> list[Shape]:
    return [()]


@shape_fn("FILL")
def _fill_shape(ctx: OpContext) -> list[Shape]:
    return [tuple(_ints(ctx, 0, "dims"))]


shape_fn(["CAST", "ZEROS_LIKE", "REVERSE_V2", "BITCAST"])(same_as_input)


@shape_fn("SPACE_TO_DEPTH")
def _s2d_shape(ctx: OpContext) -> list[Shape]:
    n, h, w, c = ctx.input(0).shape
    b = int(ctx.opt("block_size", 1))
    return [(n, h // b, w // b, c * b * b)]


@shape_fn("DEPTH_TO_SPACE")
def _d2s_shape(ctx: OpContext) -> list[Shape]:
    n, h, w, c = ctx.input(0).shape
    b = int(ctx.opt("block_size", 1))
    return [(n, h * b, w * b, c // (b * b))]


# ---------------------------------------------------------------------------------------------
# Constant folding of small tensors (shape arithmetic).


def _small(ctx: OpContext) -> bool:
    return all(t.n <= MAX_VALUE_ELEMENTS for t in ctx.outputs)


def _values(ctx: OpContext) -> list[np.ndarray] | None:
    vals = [t.value for t in ctx.present_inputs]
    return None if any(v is None for v in vals) else vals  # type: ignore[return-value]


@value_fn("SHAPE")
def _fold_shape(ctx: OpContext):
    dtype = np.int64 if ctx.opt("out_type") == "INT64" else np.int32
    return [np.asarray(ctx.input(0).shape, dtype=dtype)]


@value_fn("RANK")
def _fold_rank(ctx: OpContext):
    return [np.asarray(ctx.input(0).rank, dtype=np.int32)]


@value_fn(["RESHAPE", "SQUEEZE", "EXPAND_DIMS"])
def _fold_reshape(ctx: OpContext):
    v = ctx.input(0).value
    return [None if v is None or not _small(ctx) else v.reshape(ctx.output(0).shape)]


@value_fn("STRIDED_SLICE")
def _fold_strided_slice(ctx: OpContext):
    v = ctx.input(0).value
    if v is None or not _small(ctx):
        return [None]
    index: list = []
    for kind, _, *rest in _strided_spec(ctx, v.shape):
        if kind == "new":
            index.append(None)
        elif kind == "shrink":
            index.append(rest[0])
        else:
            index.append(list(range(*rest)))
    out = v
    # Apply one axis at a time (fancy indexing on several axes at once would pair the indices).
    axis = 0
    for item in index:
        if item is None:
            out = np.expand_dims(out, axis)
            axis += 1
        elif isinstance(item, int):
            out = np.take(out, item, axis=axis)
        else:
            out = np.take(out, item, axis=axis)
            axis += 1
    return [out]


@value_fn("SLICE")
def _fold_slice(ctx: OpContext):
    v = ctx.input(0).value
    if v is None or not _small(ctx):
        return [None]
    begin, size = _ints(ctx, 1, "begin"), _ints(ctx, 2, "size")
    return [v[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]]


@value_fn("PACK")
def _fold_pack(ctx: OpContext):
    vals = _values(ctx)
    return [None if vals is None or not _small(ctx) else np.stack(vals, axis=int(ctx.opt("axis", 0)))]


@value_fn("CONCATENATION")
def _fold_concat(ctx: OpContext):
    vals = _values(ctx)
    if vals is None or not _small(ctx):
        return [None]
    return [np.concatenate([np.atleast_1d(v) for v in vals], axis=int(ctx.opt("axis", 0)))]


@value_fn("GATHER")
def _fold_gather(ctx: OpContext):
    vals = _values(ctx)
    if vals is None or not _small(ctx):
        return [None]
    params, indices = vals
    axis, batch_dims = _gather_axes(ctx, params.shape, indices.shape)
    if not batch_dims:
        return [np.take(params, indices, axis=axis)]
    flat_p = params.reshape((-1,) + params.shape[batch_dims:])
    flat_i = indices.reshape((-1,) + indices.shape[batch_dims:])
    parts = [np.take(p, i, axis=axis - batch_dims) for p, i in zip(flat_p, flat_i)]
    return [np.stack(parts).reshape(ctx.output(0).shape) if parts else None]


@value_fn("CAST")
def _fold_cast(ctx: OpContext):
    v = ctx.input(0).value
    kinds = {"INT32": np.int32, "INT64": np.int64, "FLOAT32": np.float32}
    target = kinds.get(ctx.output(0).dtype)
    return [None if v is None or target is None or not _small(ctx) else v.astype(target)]


@value_fn("FILL")
def _fold_fill(ctx: OpContext):
    v = ctx.input(1).value
    return [None if v is None or not _small(ctx) else np.full(ctx.output(0).shape, v.reshape(-1)[0])]


@value_fn("TRANSPOSE")
def _fold_transpose(ctx: OpContext):
    v = ctx.input(0).value
    return [None if v is None or not _small(ctx) else np.transpose(v, _ints(ctx, 1, "perm"))]


@value_fn("TILE")
def _fold_tile(ctx: OpContext):
    v = ctx.input(0).value
    return [None if v is None or not _small(ctx) else np.tile(v, _ints(ctx, 1, "multiples"))]


@value_fn("BROADCAST_TO")
def _fold_broadcast_to(ctx: OpContext):
    v = ctx.input(0).value
    return [None if v is None or not _small(ctx) else np.broadcast_to(v, ctx.output(0).shape).copy()]


@value_fn("UNPACK")
def _fold_unpack(ctx: OpContext):
    v = ctx.input(0).value
    if v is None or not _small(ctx):
        return [None] * len(ctx.outputs)
    axis = _axis(int(ctx.opt("axis", 0)), v.ndim, "UNPACK")
    return [np.take(v, i, axis=axis) for i in range(v.shape[axis])]


@value_fn(["SPLIT", "SPLIT_V"])
def _fold_split(ctx: OpContext):
    data = ctx.input(1 if ctx.op_type == "SPLIT" else 0).value
    if data is None or not _small(ctx):
        return [None] * len(ctx.outputs)
    axis = _axis(_ints(ctx, 0 if ctx.op_type == "SPLIT" else 2, "axis")[0], data.ndim, ctx.op_type)
    sizes = [o.shape[axis] for o in ctx.outputs]
    return np.split(data, np.cumsum(sizes)[:-1].tolist(), axis=axis)


@value_fn(["SELECT", "SELECT_V2"])
def _fold_select(ctx: OpContext):
    vals = _values(ctx)
    return [None if vals is None or not _small(ctx) else np.where(vals[0].astype(bool), vals[1], vals[2])]


@value_fn("ZEROS_LIKE")
def _fold_zeros_like(ctx: OpContext):
    v = ctx.input(0).value
    return [None if v is None or not _small(ctx) else np.zeros_like(v)]


@value_fn("REVERSE_V2")
def _fold_reverse(ctx: OpContext):
    v = ctx.input(0).value
    return [None if v is None or not _small(ctx) else np.flip(v, axis=tuple(_ints(ctx, 1, "axis")))]


# ---- TensorFlow Lite Micro (reference kernels) -------------------------------------------------

# reshape.cc, slice.cc, gather.cc, split.cc, pack.cc, squeeze.cc: no Init (no OpData).
# TfLiteReshapeParams: shape[8], num_dimensions; TfLiteGatherParams: axis, batch_dims; TfLiteSplitParams: num_splits.
register_tflm("RESHAPE")(fixed(lambda t: c_struct(t, "iiiiiiiii"), source="micro/kernels/reshape.cc"))


# gather.cc GatherPrepare: the output's dims relocated to the tail (kernel_util.cc
# CreateWritableTensorDimsWithCopy: a TfLiteIntArray, its size and one int per dim of the output).
# RESHAPE does the same only when its stored output shape holds a -1 (reshape_common.cc ReshapeOutput),
# which a model TFLM runs does not.
@register_tflm("GATHER")
def _tflm_gather(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """TFLM's GATHER: its options, and its output's dims copied into the tail."""
    return TflmKernel(c_struct(target, "ii"), prepare=(4 + 4 * len(ctx.output(0).shape),),
                      source="micro/kernels/gather.cc GatherPrepare")


register_tflm("SPLIT")(fixed(lambda t: c_struct(t, "i"), source="micro/kernels/split.cc"))
register_tflm("SLICE")(fixed(source="micro/kernels/slice.cc"))
# concatenation.cc ConcatenationInit: OpData {ConcatenationParams (types.h: axis, two pointers, count,
# zero point, scale) [, 10 compression scratch indices]}; TfLiteConcatenationParams: axis, activation
register_tflm("CONCATENATION")(fixed(
    lambda t: c_struct(t, "ii"), lambda t: c_struct(t, c_struct(t, "i", "pp", "iii"), compression="iiiiiiiiii"),
    "micro/kernels/concatenation.cc ConcatenationInit"))
# strided_slice_common.cc StridedSliceInit: StridedSliceParams (types.h: three int8 counts each before
# five int32, five uint16 masks, offset); TfLiteStridedSliceParams: five masks, offset
register_tflm("STRIDED_SLICE")(fixed(
    lambda t: c_struct(t, "iiiiib"), lambda t: c_struct(t, "biiiii", "biiiii", "biiiii", "hhhhh", "b"),
    "micro/kernels/strided_slice_common.cc StridedSliceInit"))
# pad_common.cc PadInit: OpData {PadParams (types.h: an int8 count and five int32 per side, a uint8
# resizing category), output zero point}
register_tflm(["PAD", "PADV2"])(fixed(None, lambda t: c_struct(t, "biiiii", "biiiii", "b", "i"),
                                      "micro/kernels/pad_common.cc PadInit"))
# squeeze.cc, expand_dims.cc, shape.cc, transpose.cc, cast.cc: no Init; pack.cc, unpack.cc: no Init, no Prepare.
# TfLiteSqueezeParams: squeeze_dims[8], count; TfLitePackParams / TfLiteUnpackParams: two ints;
# TfLiteShapeParams: out_type; TfLiteCastParams: two types
register_tflm("SQUEEZE")(fixed(lambda t: c_struct(t, "iiiiiiiii"), source="micro/kernels/squeeze.cc"))
register_tflm(["PACK", "UNPACK"])(fixed(lambda t: c_struct(t, "ii"), source="micro/kernels/pack.cc, unpack.cc",
                                        prepare=False))
register_tflm("CAST")(fixed(lambda t: c_struct(t, "ii"), source="micro/kernels/cast.cc"))
register_tflm("SHAPE")(fixed(lambda t: c_struct(t, "i"), source="micro/kernels/shape.cc"))
register_tflm(["EXPAND_DIMS", "TRANSPOSE"])(fixed(source="micro/kernels/expand_dims.cc, transpose.cc"))
# select.cc SelectInit: OpData {requires_broadcast}
register_tflm(["SELECT", "SELECT_V2"])(fixed(None, lambda t: c_struct(t, "b"), "micro/kernels/select.cc SelectInit"))


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
register_facts(("SELECT", "SELECT_V2"), law_group="binary")
register_facts("GATHER", row_lookup=(0, 1))  # reads the rows of params (input 0) that the indices (input 1) name
register_facts("RESHAPE", law_group="layout", fusion=(RESHAPE_IN_PLACE,))
register_facts(("SQUEEZE", "EXPAND_DIMS", "GATHER", "GATHER_ND", "TILE", "BROADCAST_TO", "SPACE_TO_BATCH_ND",
                "BATCH_TO_SPACE_ND", "REVERSE_V2"),
               law_group="layout")
register_facts(("TRANSPOSE", "SLICE", "STRIDED_SLICE", "SPACE_TO_DEPTH", "DEPTH_TO_SPACE"), law_group="layout",
               xnnpack=XnnpackFacts(operator_bytes=608))
register_facts("PAD", law_group="layout", fusion=(ZERO_PAD,), xnnpack=XnnpackFacts(operator_bytes=840))
register_facts(("PADV2", "MIRROR_PAD"), law_group="layout", xnnpack=XnnpackFacts(operator_bytes=840))
register_facts(("PACK", "CONCATENATION"), law_group="layout", xnnpack=XnnpackFacts(copies_per=PER_INPUT))
register_facts(("UNPACK", "SPLIT", "SPLIT_V"), law_group="layout", xnnpack=XnnpackFacts(copies_per=PER_OUTPUT))
register_facts("CAST", law_group="convert")

# The version op_version.cc gives the int8 kernel (the what-if of a full-integer model, studies/what_if.py).
register_facts(("CONCATENATION", "PAD", "TRANSPOSE", "STRIDED_SLICE", "SLICE", "SPLIT", "PACK", "UNPACK"),
               int8_version=2)
# An embedding table (GATHER's params): int8 with one scale in a dynamic-range model, read by the int8 kernel
# (version 2) and its output dequantized after it, as TensorFlow 2.21's converter writes a Keras Embedding.
register_facts("GATHER", quantized_weights=((0, -1),), hybrid_version=2, int8_version=2, dequantized_output=True)
# A CAST stays float in a full-integer model: TensorFlow 2.21's converter dequantizes its int8 input before it
# (a text model's float token ids cast to int32).
register_facts("CAST", float_in_int8=True)
