"""Data movement and shape bookkeeping: zero arithmetic, but shapes (and small values) to propagate.

Output shapes follow the TFLite kernels. Values are folded for small integer tensors so that the
converter's SHAPE → STRIDED_SLICE → PACK → RESHAPE chains (dynamic batch) resolve.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..units import num_elements
from .placement import (CATEGORY_DTYPE, CATEGORY_DYNAMIC, CATEGORY_INPUTS, CATEGORY_OPTIONS, CATEGORY_QUANT, CATEGORY_SHAPE,
                        XNN_MAX_TENSOR_DIMS, XNNPACK, DelegateOp, DelegateTensor, float_or_q8, ints, num_io, rank_in,
                        reason, register_placement, static)
from .placement import (CATEGORY_OP_TYPE, GPU, gpu_comparison_types, gpu_io, gpu_io_either, gpu_runtime_inputs,
                        gpu_version)
from .registry import (MAX_VALUE_ELEMENTS, Cost, OpContext, Shape, broadcast_shapes, fused_activation, register, register_zero,
                       register_memory, same_as_input, shape_fn, value_fn)


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


# ---- XNNPACK placement (xnnpack_delegate.cc, the Visit*Node of each op) ----------------------------------------------
# EXPAND_DIMS has a visitor that refuses every node (it returns before its checks), so it has no rule.

def _xnn_param_vector(t: DelegateTensor | None, where: str, dtypes: tuple[str, ...] = ("INT32",)) -> str | None:
    """``CheckShapeTensorShape`` (1-D), ``CheckTensorStaticAllocation`` and the type check of a parameter tensor."""
    if t is None:
        return reason(CATEGORY_INPUTS, f"no {where}")
    if t.rank != 1:
        return reason(CATEGORY_SHAPE, f"{where} tensor has rank {t.rank}")
    if not t.static:
        return reason(CATEGORY_DYNAMIC, f"{where} is not a constant of the file")
    if t.dtype not in dtypes:
        return reason(CATEGORY_DTYPE, f"{where} is {t.dtype}")
    return None


def _legacy_params(t: DelegateTensor) -> tuple[float, int]:
    """``TfLiteTensor::params``: the scale and zero point of a one-scale quantization, else (0, 0)."""
    q = t.quantization
    if q is None or q.num_scales != 1 or q.kind not in ("per_tensor", "per_axis"):
        return 0.0, 0
    return float(q.scale or 0.0), int(q.zero_point or 0)


def _same_quantization(a: DelegateTensor, b: DelegateTensor, what: str) -> str | None:
    """The zero point and scale checks of ``VisitReshapeNode`` / ``VisitConcatenationNode`` (legacy ``params``)."""
    if _legacy_params(a) != _legacy_params(b):
        return reason(CATEGORY_QUANT, f"{what} have different scales or zero points")
    return None


@register_placement(XNNPACK, "CONCATENATION", source="xnnpack_delegate.cc VisitConcatenationNode")
def _xnn_concat(op: DelegateOp) -> str | None:
    """2 to 5 float or 8-bit inputs (uint8 ones sharing the output's quantization)."""
    found = num_io(op, (2, 5)) or float_or_q8(op, op.outputs[0], "output")
    if found:
        return found
    axis, y = int(op.opt("axis", 0) or 0), op.outputs[0]
    for i, t in enumerate(op.inputs):
        if t is None or axis >= t.rank:
            return reason(CATEGORY_SHAPE, f"axis {axis} beyond input {i + 1}")
    if y.dtype == "UINT8":
        for t in op.inputs:
            found = found or _same_quantization(t, y, "inputs and output")
    for i, t in enumerate(op.inputs):
        found = found or float_or_q8(op, t, f"input {i + 1}")
    return found


@register_placement(XNNPACK, "RESHAPE", source="xnnpack_delegate.cc VisitReshapeNode")
def _xnn_reshape(op: DelegateOp) -> str | None:
    """Float or 8-bit reshape to a static shape (the new-shape input a constant, or the options)."""
    x, y = op.input(0), op.outputs[0]
    found = (num_io(op, (1, 2)) or float_or_q8(op, x, "input") or rank_in(x, "input", 0, XNN_MAX_TENSOR_DIMS)
             or float_or_q8(op, y, "output") or rank_in(y, "output", 0, XNN_MAX_TENSOR_DIMS))
    if found:
        return found
    if y.dtype in ("INT8", "UINT8"):
        found = _same_quantization(x, y, "input and output")
        if found:
            return found
    if len(op.inputs) == 2 and op.input(1) is not None:
        shape = op.input(1)
        if shape.dtype != "INT32":
            return reason(CATEGORY_DTYPE, f"new shape is {shape.dtype}")
        if any(d != 1 for d in shape.shape[:-1]):
            return reason(CATEGORY_SHAPE, f"new shape tensor of shape {list(shape.shape)}")
        if not shape.static:
            return reason(CATEGORY_DYNAMIC, "new shape is computed at run time")
        target = ints(shape)
    else:
        target = [int(v) for v in op.opt("new_shape", ()) or ()]
    if target is not None and target == [-1]:
        return reason(CATEGORY_SHAPE, "flattening to [-1]")
    return None


@register_placement(XNNPACK, "PAD", source="xnnpack_delegate.cc VisitPadNode")
def _xnn_pad(op: DelegateOp) -> str | None:
    """Float or 8-bit zero padding by static, non-negative amounts, rank 1 to 6."""
    x, pads, y = op.input(0), op.input(1), op.outputs[0]
    found = num_io(op, 2) or float_or_q8(op, x, "input") or rank_in(x, "input", 1, XNN_MAX_TENSOR_DIMS)
    if found:
        return found
    if pads is None or pads.dtype != "INT32":
        return reason(CATEGORY_DTYPE, "paddings are not INT32")
    if pads.rank != 2 or pads.shape[0] != x.rank or pads.shape[1] != 2:
        return reason(CATEGORY_SHAPE, f"paddings of shape {list(pads.shape)}")
    found = (static(pads, "paddings", quasi=False) or float_or_q8(op, y, "output")
             or rank_in(y, "output", 1, XNN_MAX_TENSOR_DIMS))
    values = ints(pads)
    if not found and values is not None and any(v < 0 for v in values):
        return reason(CATEGORY_OPTIONS, "negative padding")
    return found


@register_placement(XNNPACK, "SLICE", source="xnnpack_delegate.cc VisitSliceNode")
def _xnn_slice(op: DelegateOp) -> str | None:
    """Float or 8-bit slice with static begin and size, every size positive (no -1)."""
    begin, size = op.input(1), op.input(2)
    found = (_xnn_param_vector(begin, "begin", ("INT32", "INT64")) or _xnn_param_vector(size, "size", ("INT32", "INT64")))
    if found:
        return found
    if begin.shape[0] != size.shape[0]:
        return reason(CATEGORY_SHAPE, "begin and size lengths differ")
    found = float_or_q8(op, op.input(0), "input") or float_or_q8(op, op.outputs[0], "output")
    sizes = ints(size)
    if not found and sizes is not None and any(v <= 0 for v in sizes):
        return reason(CATEGORY_OPTIONS, f"size {sizes} (XNNPACK wants every size given)")
    return found


@register_placement(XNNPACK, "STRIDED_SLICE", source="xnnpack_delegate.cc VisitStridedSliceNode")
def _xnn_strided_slice(op: DelegateOp) -> str | None:
    """Float or 8-bit strided slice with static begin/end, unit strides and no ellipsis/new-axis/shrink masks."""
    for mask in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        if int(op.opt(mask, 0) or 0):
            return reason(CATEGORY_OPTIONS, f"{mask} {op.opt(mask)}")
    x, begin, end, strides = op.input(0), op.input(1), op.input(2), op.input(3)
    found = _xnn_param_vector(strides, "strides")
    if found:
        return found
    values = ints(strides)
    if values is not None and any(v != 1 for v in values):
        return reason(CATEGORY_OPTIONS, f"strides {values} (XNNPACK wants 1)")
    found = _xnn_param_vector(begin, "begin") or _xnn_param_vector(end, "end")
    if found:
        return found
    if x is None or any(t.shape[0] != x.rank for t in (begin, end, strides)):
        return reason(CATEGORY_SHAPE, "begin, end or strides do not match the input rank")
    return float_or_q8(op, x, "input") or float_or_q8(op, op.outputs[0], "output")


@register_placement(XNNPACK, "SPLIT", source="xnnpack_delegate.cc VisitSplitNode")
def _xnn_split(op: DelegateOp) -> str | None:
    """Float or 8-bit split into 2 to 4 outputs along a static int32 axis."""
    if int(op.opt("num_splits", 0) or 0) != len(op.outputs):
        return reason(CATEGORY_OPTIONS, f"num_splits {op.opt('num_splits')} with {len(op.outputs)} outputs")
    found = num_io(op, 2, (2, 4))
    if found:
        return found
    axis = op.input(0)
    if axis is None or axis.dtype != "INT32":
        return reason(CATEGORY_DTYPE, "split axis is not INT32")
    found = static(axis, "split axis", quasi=False) or float_or_q8(op, op.input(1), "input")
    for i, t in enumerate(op.outputs):
        found = found or float_or_q8(op, t, f"output {i + 1}")
    return found


@register_placement(XNNPACK, "TRANSPOSE", source="xnnpack_delegate.cc VisitTransposeNode")
def _xnn_transpose(op: DelegateOp) -> str | None:
    """Float or 8-bit transpose, rank 1 to 6, by a static permutation."""
    x, perm = op.input(0), op.input(1)
    found = num_io(op, 2) or float_or_q8(op, x, "input") or rank_in(x, "input", 1, XNN_MAX_TENSOR_DIMS)
    if found:
        return found
    return reason(CATEGORY_INPUTS, "no permutation") if perm is None else static(perm, "permutation", quasi=False)


@register_placement(XNNPACK, "DEPTH_TO_SPACE", source="xnnpack_delegate.cc VisitDepthToSpaceNode")
def _xnn_depth_to_space(op: DelegateOp) -> str | None:
    """Float or 8-bit, block size above 1."""
    found = num_io(op, 1) or float_or_q8(op, op.input(0), "input") or float_or_q8(op, op.outputs[0], "output")
    if not found and int(op.opt("block_size", 0) or 0) <= 1:
        return reason(CATEGORY_OPTIONS, f"block size {op.opt('block_size')}")
    return found


@register_placement(XNNPACK, "SPACE_TO_DEPTH", source="xnnpack_delegate.cc VisitSpaceToDepthNode")
def _xnn_space_to_depth(op: DelegateOp) -> str | None:
    """Float32 or 8-bit, block size above 1 dividing the height and width."""
    x = op.input(0)
    found = (num_io(op, 1) or float_or_q8(op, x, "input", fp16=False) or float_or_q8(op, op.outputs[0], "output"))
    if found:
        return found
    block = int(op.opt("block_size", 0) or 0)
    if block <= 1:
        return reason(CATEGORY_OPTIONS, f"block size {block}")
    if x.rank >= 3 and (x.shape[1] % block or x.shape[2] % block):
        return reason(CATEGORY_SHAPE, f"height and width {x.shape[1]}x{x.shape[2]} not divisible by {block}")
    return None


# ---- GPU delegate placement (model_builder.cc, the *OperationParser::IsSupported of each op;
# gpu_compatibility.cc CheckGpuDelegateCompatibility) ----------------------------------------------------------

_GPU = "model_builder.cc "
_GPU_COMPAT = ", gpu_compatibility.cc CheckGpuDelegateCompatibility"
_GPU_FLOATS = ("FLOAT32", "FLOAT16")


@register_placement(GPU, "CONCATENATION", source=_GPU + "ConcatenationOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_concat(op: DelegateOp) -> str | None:
    """Up to v2; nothing else is checked (constant inputs are taken)."""
    return gpu_version(op, 2)


@register_placement(GPU, "RESHAPE", source=_GPU + "ReshapeOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_reshape(op: DelegateOp) -> str | None:
    """v1 only; one runtime input (the shape, when given, a constant), one output."""
    return gpu_version(op, 1) or gpu_io(op, 1, 1)


@register_placement(GPU, ("PAD", "PADV2", "MIRROR_PAD"), source=_GPU + "PadOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_pad(op: DelegateOp) -> str | None:
    """Up to v2; MIRROR_PAD in REFLECT mode; one runtime input, one output; constant 3x2 or 4x2 paddings."""
    found = gpu_version(op, 2)
    if found:
        return found
    if op.op_type == "MIRROR_PAD" and op.opt("mode", "REFLECT") not in ("REFLECT", 0):
        return reason(CATEGORY_OPTIONS, f"mirror pad mode {op.opt('mode')} (the GPU delegate reflects only)")
    found = gpu_io(op, 1, 1)
    if found:
        return found
    pads = op.input(1)
    if len(op.inputs) < 2 or pads is None:
        return reason(CATEGORY_INPUTS, "no paddings")
    if pads.rank != 2:
        return reason(CATEGORY_SHAPE, f"paddings tensor has rank {pads.rank} (the GPU delegate wants 2)")
    if pads.shape[0] not in (3, 4) or pads.shape[1] != 2:
        return reason(CATEGORY_SHAPE, f"paddings {pads.shape[0]}x{pads.shape[1]} (the GPU delegate pads 3-D or 4-D "
                                      f"tensors: 3x2 or 4x2)")
    return None


def _gpu_rank_3_or_4(op: DelegateOp) -> str | None:
    x = op.input(0)
    if x is None or x.rank not in (3, 4):
        return reason(CATEGORY_SHAPE, f"input has rank {x.rank if x else None} (the GPU delegate slices 3-D or 4-D)")
    return None


@register_placement(GPU, "SLICE", source=_GPU + "SliceOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_slice(op: DelegateOp) -> str | None:
    """Up to v2; three inputs; a 3-D or 4-D input."""
    found = gpu_version(op, 2)
    if found:
        return found
    if len(op.inputs) < 3:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (3)")
    return _gpu_rank_3_or_4(op)


@register_placement(GPU, "STRIDED_SLICE", source=_GPU + "StridedSliceOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_strided_slice(op: DelegateOp) -> str | None:
    """Up to v4; no ellipsis, new-axis or shrink-axis mask; four inputs; a 3-D or 4-D input."""
    found = gpu_version(op, 4)
    if found:
        return found
    for mask in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        if int(op.opt(mask, 0) or 0):
            return reason(CATEGORY_OPTIONS, f"{mask} {op.opt(mask)}")
    if len(op.inputs) < 4:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (4)")
    return _gpu_rank_3_or_4(op)


@register_placement(GPU, ("SPLIT", "SPLIT_V"), source=_GPU + "SplitOperationParser / SplitVOperationParser; "
                                                           "delegate.cc DelegatePrepare (excluded_ops)")
def _gpu_split(op: DelegateOp) -> str | None:
    """Taken (any version), unless OpenCL is missing: the delegate then excludes SPLIT and SPLIT_V."""
    if not op.config.gpu_opencl:
        return reason(CATEGORY_OP_TYPE, f"{op.op_type} is excluded without OpenCL (the OpenGL backend)")
    return None


@register_placement(GPU, "TRANSPOSE", source=_GPU + "TransposeOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_transpose(op: DelegateOp) -> str | None:
    """Up to v4; one runtime input (a constant permutation), one output."""
    return gpu_version(op, 4) or gpu_io(op, 1, 1)


@register_placement(GPU, "TILE", source=_GPU + "TileOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_tile(op: DelegateOp) -> str | None:
    """One runtime input (constant multiples), one output (any version)."""
    return gpu_io(op, 1, 1)


@register_placement(GPU, ("PACK", "UNPACK"), source=_GPU + "PackOperationParser / UnpackOperationParser::IsSupported"
                                                    + _GPU_COMPAT)
def _gpu_pack(op: DelegateOp) -> str | None:
    """Taken (any version, any inputs): neither parser checks anything."""
    return None


@register_placement(GPU, ("DEPTH_TO_SPACE", "SPACE_TO_DEPTH"),
                    source=_GPU + "DepthToSpaceOperationParser / SpaceToDepthOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_depth_space(op: DelegateOp) -> str | None:
    """SPACE_TO_DEPTH up to v2 (DEPTH_TO_SPACE any); one runtime input, one output; block size above 1."""
    found = (gpu_version(op, 2) if op.op_type == "SPACE_TO_DEPTH" else None) or gpu_io(op, 1, 1)
    if found:
        return found
    block = int(op.opt("block_size", 0) or 0)
    if block == 1:
        return reason(CATEGORY_OPTIONS, "block size 1 (a no-op the GPU delegate refuses)")
    if block < 1:
        return reason(CATEGORY_OPTIONS, f"block size {block}")
    return None


@register_placement(GPU, "GATHER", source=_GPU + "GatherOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_gather(op: DelegateOp) -> str | None:
    """v1; two operands (at most one constant), one output; 1-D int32 indices."""
    found = gpu_version(op, 1) or gpu_io_either(op)
    if found:
        return found
    idx = op.input(1)
    if idx is None or idx.rank != 1:
        return reason(CATEGORY_SHAPE, f"indices have rank {idx.rank if idx else None} (the GPU delegate wants 1)")
    if idx.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"indices are {idx.dtype} (INT32)")
    return None


@register_placement(GPU, ("SELECT", "SELECT_V2"), source=_GPU + "SelectV2OperationParser::IsSupported, "
                                                            "gpu_compatibility.cc CheckSelectV2GpuDelegateCompatibility")
def _gpu_select(op: DelegateOp) -> str | None:
    """v1; three inputs, one output; a bool or float condition broadcasting to the output; each branch
    the output's shape or a scalar (a runtime branch not 2-D)."""
    found = gpu_version(op, 1)
    if found:
        return found
    if len(op.inputs) != 3 or len(op.outputs) != 1 or any(t is None for t in op.inputs):
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (3 and 1)")
    cond, yes, no = op.inputs
    out = op.outputs[0].shape
    if cond.dtype not in ("BOOL",) + _GPU_FLOATS:
        return reason(CATEGORY_DTYPE, f"condition is {cond.dtype} (BOOL or float)")
    if cond.shape:
        offset = len(out) - len(cond.shape)
        if offset < 0 or any(c != out[offset + i] and c != 1 for i, c in enumerate(cond.shape)):
            return reason(CATEGORY_SHAPE, f"condition {list(cond.shape)} does not broadcast to {list(out)}")
    for t, where in ((yes, "true branch"), (no, "false branch")):
        if t.shape and t.shape != out and (len(t.shape) > 1 or t.shape[0] > 1):
            return reason(CATEGORY_SHAPE, f"{where} {list(t.shape)} is neither the output's shape {list(out)} nor "
                                          f"a scalar")
        if not t.static and len(t.shape) == 2:
            return reason(CATEGORY_DYNAMIC, f"{where} is 2-D and computed (the GPU delegate takes a 2-D branch "
                                            f"only as a constant)")
    return None


@register_placement(GPU, "CAST", source=_GPU + "CastOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_cast(op: DelegateOp) -> str | None:
    """Bool to float right after a comparison (its only reader, and read once itself) is taken as is.
    Otherwise one runtime input and one output, casting bool to float, float to bool, or between
    float32 and int32."""
    x, y = op.input(0), op.outputs[0] if op.outputs else None
    if x is not None and y is not None and x.dtype == "BOOL" and y.dtype in _GPU_FLOATS:
        if x.producer is None or len(x.readers) != 1:
            return reason(CATEGORY_INPUTS, "bool input not written by one op and read by this cast only")
        if len(y.readers) != 1:
            return reason(CATEGORY_INPUTS, f"cast from bool whose output has {len(y.readers)} readers (the GPU "
                                           f"delegate wants 1: not a graph output)")
        if x.producer in gpu_comparison_types():
            return None
    found = gpu_io(op, 1, 1)
    if found:
        return found
    a, b = x.dtype, y.dtype
    if ((a == "BOOL" and b in _GPU_FLOATS) or (a in _GPU_FLOATS and b == "BOOL")
            or (a in ("FLOAT32", "INT32") and b in ("FLOAT32", "INT32"))):
        return None
    return reason(CATEGORY_DTYPE, f"cast from {a} to {b}")
