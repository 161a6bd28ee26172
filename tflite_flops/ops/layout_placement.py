"""Where the layout ops run: the XNNPACK and GPU delegates' rules for the data-movement ops of
:mod:`~tflite_flops.ops.layout` (reshape, slices, pads, splits, transposes, depth/space moves).

They sit apart from the layout formulas only because those ~20 op types' rules would make one
module of 900 lines; every other family keeps its rules next to its formulas. Each rule names the
delegate source function it follows.
"""

from __future__ import annotations

from .placement import (CATEGORY_DTYPE, CATEGORY_DYNAMIC, CATEGORY_INPUTS, CATEGORY_OPTIONS, CATEGORY_QUANT, CATEGORY_SHAPE,
                        XNN_MAX_TENSOR_DIMS, XNNPACK, DelegateOp, DelegateTensor, float_or_q8, ints, num_io, rank_in,
                        reason, register_placement, static)
from .placement import (CATEGORY_OP_TYPE, GPU, gpu_comparison_types, gpu_drift, gpu_drift_int32, gpu_drift_only, gpu_io,
                        gpu_io_either, gpu_version)


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
_DRIFT = "; ml_drift_delegate/tflite/model_builder.cc "  # the LiteRT GPU accelerator's parser, where it differs
_GPU_FLOATS = ("FLOAT32", "FLOAT16")


@register_placement(GPU, "CONCATENATION", source=_GPU + "ConcatenationOperationParser::IsSupported" + _GPU_COMPAT
                    + _DRIFT + "ConcatenationOperationParser::IsSupported")
def _gpu_concat(op: DelegateOp) -> str | None:
    """Up to v2 (ML Drift v6); nothing else is checked (constant inputs are taken)."""
    return gpu_version(op, 2, 6)


@register_placement(GPU, "RESHAPE", source=_GPU + "ReshapeOperationParser::IsSupported" + _GPU_COMPAT)
def _gpu_reshape(op: DelegateOp) -> str | None:
    """v1 only; one runtime input (the shape, when given, a constant), one output."""
    return gpu_version(op, 1) or gpu_io(op, 1, 1)


@register_placement(GPU, ("PAD", "PADV2", "MIRROR_PAD"), source=_GPU + "PadOperationParser::IsSupported" + _GPU_COMPAT
                    + _DRIFT + "PadOperationParser::IsSupported")
def _gpu_pad(op: DelegateOp) -> str | None:
    """Up to v2 (ML Drift v5); MIRROR_PAD in REFLECT mode; one runtime input, one output; constant 3x2 or 4x2
    paddings (ML Drift reads them as INT32 in IsSupported: INT64 paddings are refused)."""
    found = gpu_version(op, 2, 5)
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
    return gpu_drift_int32(op, 1, "paddings") if gpu_drift(op) else None


def _gpu_rank_3_or_4(op: DelegateOp) -> str | None:
    x = op.input(0)
    if x is None or x.rank not in (3, 4):
        return reason(CATEGORY_SHAPE, f"input has rank {x.rank if x else None} (the GPU delegate slices 3-D or 4-D)")
    return None


# ML Drift's SliceOperationParser: begin values per input rank (a 4-D input also takes 3, read as HWC)
_DRIFT_SLICE_BEGINS = {4: (3, 4), 3: (3,), 2: (2,), 1: (1,)}


@register_placement(GPU, "SLICE", source=_GPU + "SliceOperationParser::IsSupported" + _GPU_COMPAT
                    + _DRIFT + "SliceOperationParser::IsSupported (no CheckGpuDelegateCompatibility)")
def _gpu_slice(op: DelegateOp) -> str | None:
    """Up to v2; three inputs; a 3-D or 4-D input. ML Drift: up to v8; at least three inputs; a computed
    input of rank 1 to 4; constant begin and size of one length, the input's rank (or 3 for a 4-D input)."""
    if gpu_drift(op):
        return _drift_slice(op)
    found = gpu_version(op, 2)
    if found:
        return found
    if len(op.inputs) < 3:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (3)")
    return _gpu_rank_3_or_4(op)


def _drift_slice(op: DelegateOp) -> str | None:
    found = gpu_version(op, 2, 8)
    if found:
        return found
    if len(op.inputs) < 3:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (at least 3)")
    x, begin, size = op.inputs[:3]
    if x is None or x.static:
        return reason(CATEGORY_INPUTS, "input 1 is a constant (the GPU delegate slices a computed tensor)")
    found = gpu_drift_int32(op, 1, "begin") or gpu_drift_int32(op, 2, "size")
    if found:
        return found
    if begin.shape != size.shape:
        return reason(CATEGORY_SHAPE, f"begin {list(begin.shape)} and size {list(size.shape)} differ")
    n = begin.shape[0] if begin.rank == 1 else 1
    if n not in _DRIFT_SLICE_BEGINS.get(x.rank, ()):
        return reason(CATEGORY_SHAPE, f"{n} begin values for a {x.rank}-D input (the GPU delegate slices rank 1 to "
                                      f"4 with one value per dimension)")
    return None


@register_placement(GPU, "STRIDED_SLICE", source=_GPU + "StridedSliceOperationParser::IsSupported" + _GPU_COMPAT
                    + _DRIFT + "StridedSliceOperationParser::IsSupported, CheckGpuDelegateCompatibility (its own)")
def _gpu_strided_slice(op: DelegateOp) -> str | None:
    """Up to v4 (ML Drift v2); no ellipsis, new-axis or shrink-axis mask; four inputs; a 3-D or 4-D input.
    ML Drift has no rank rule of its own beyond the tensor check (rank 1 to 4): it wants begin values for
    every dimension or all but the batch, constant begin, end and strides, and strides above 0."""
    found = gpu_version(op, 4, 2)
    if found:
        return found
    for mask in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        if int(op.opt(mask, 0) or 0):
            return reason(CATEGORY_OPTIONS, f"{mask} {op.opt(mask)}")
    if len(op.inputs) < 4:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (4)")
    if not gpu_drift(op):
        return _gpu_rank_3_or_4(op)
    x, begin = op.input(0), op.input(1)
    if x is None or begin is None or begin.rank != 1 or x.rank not in (begin.shape[0], begin.shape[0] + 1):
        return reason(CATEGORY_SHAPE, f"{begin.shape[0] if begin is not None and begin.rank == 1 else None} begin "
                                      f"values for a {x.rank if x is not None else None}-D input (the GPU delegate "
                                      f"wants one per dimension, or per dimension but the batch)")
    found = (gpu_drift_int32(op, 1, "begin") or gpu_drift_int32(op, 2, "end")
             or gpu_drift_int32(op, 3, "strides"))
    if found:
        return found
    strides = ints(op.input(3))
    if strides is not None and any(v <= 0 for v in strides):
        return reason(CATEGORY_OPTIONS, f"strides {strides} (the GPU delegate wants them above 0: no reverse slice)")
    return None


@register_placement(GPU, ("SPLIT", "SPLIT_V"), source=_GPU + "SplitOperationParser / SplitVOperationParser; "
                                                           "delegate.cc DelegatePrepare (excluded_ops)")
def _gpu_split(op: DelegateOp) -> str | None:
    """Taken (any version), unless OpenCL is missing: the classic delegate then excludes SPLIT and SPLIT_V.
    ML Drift (which excludes nothing): SPLIT_V with one runtime input and constant sizes and axis."""
    if gpu_drift(op):
        if op.op_type == "SPLIT_V":
            return gpu_io(op, 1, len(op.outputs), consts=2)
        return None
    if not op.config.gpu_opencl:
        return reason(CATEGORY_OP_TYPE, f"{op.op_type} is excluded without OpenCL (the OpenGL backend)")
    return None


@register_placement(GPU, "TRANSPOSE", source=_GPU + "TransposeOperationParser::IsSupported" + _GPU_COMPAT
                    + _DRIFT + "TransposeOperationParser::IsSupported")
def _gpu_transpose(op: DelegateOp) -> str | None:
    """Up to v4 (ML Drift v9, with a constant permutation of 2 to 4 axes); one runtime input, one output."""
    found = gpu_version(op, 4, 9) or gpu_io(op, 1, 1)
    if found or not gpu_drift(op):
        return found
    found = gpu_drift_int32(op, 1, "permutation")
    if found:
        return found
    perm = op.input(1)
    n = perm.shape[0] if perm.rank == 1 else 1
    if not 2 <= n <= 4:
        return reason(CATEGORY_SHAPE, f"a permutation of {n} axes (the GPU delegate transposes 2 to 4)")
    return None


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


@register_placement(GPU, "GATHER", source=_GPU + "GatherOperationParser::IsSupported" + _GPU_COMPAT
                    + _DRIFT + "GatherOperationParser::IsSupported")
def _gpu_gather(op: DelegateOp) -> str | None:
    """v1 (ML Drift: any version, and input and output of one type); two operands (at most one constant),
    one output; 1-D int32 indices."""
    drift = gpu_drift(op)
    found = (None if drift else gpu_version(op, 1)) or gpu_io_either(op)
    if found:
        return found
    idx = op.input(1)
    if idx is None or idx.rank != 1:
        return reason(CATEGORY_SHAPE, f"indices have rank {idx.rank if idx else None} (the GPU delegate wants 1)")
    if idx.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"indices are {idx.dtype} (INT32)")
    x = op.input(0)
    if drift and x is not None and op.outputs and x.dtype != op.outputs[0].dtype:
        return reason(CATEGORY_DTYPE, f"input {x.dtype} and output {op.outputs[0].dtype} (one type)")
    return None


@register_placement(GPU, ("SELECT", "SELECT_V2"), source=_GPU + "SelectV2OperationParser::IsSupported, "
                                                            "gpu_compatibility.cc CheckSelectV2GpuDelegateCompatibility")
def _gpu_select(op: DelegateOp) -> str | None:
    """v1; three inputs, one output; a bool or float condition broadcasting to the output; each branch
    the output's shape or a scalar (a runtime branch not 2-D). ML Drift's own check: no condition
    broadcast or 2-D branch rule."""
    found = gpu_version(op, 1)
    if found:
        return found
    if len(op.inputs) != 3 or len(op.outputs) != 1 or any(t is None for t in op.inputs):
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (3 and 1)")
    cond, yes, no = op.inputs
    out = op.outputs[0].shape
    if cond.dtype not in ("BOOL",) + _GPU_FLOATS:
        return reason(CATEGORY_DTYPE, f"condition is {cond.dtype} (BOOL or float)")
    if gpu_drift(op):
        for t, where in ((yes, "true branch"), (no, "false branch")):
            if t.shape and t.shape != out and (len(t.shape) > 1 or t.shape[0] > 1):
                return reason(CATEGORY_SHAPE, f"{where} {list(t.shape)} is neither the output's shape {list(out)} "
                                              f"nor a scalar")
        return None
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


@register_placement(GPU, "CAST", source=_GPU + "CastOperationParser::IsSupported" + _GPU_COMPAT
                    + _DRIFT + "CastOperationParser::IsSupported (no CheckGpuDelegateCompatibility)")
def _gpu_cast(op: DelegateOp) -> str | None:
    """Bool to float right after a comparison (its only reader, and read once itself) is taken as is.
    Otherwise one runtime input and one output, casting bool to float, float to bool, or between
    float32 and int32. ML Drift: one input, runtime, and one output, any types its tensor check takes
    (every int, uint, bool and float type for CAST)."""
    if gpu_drift(op):
        if len(op.inputs) != 1:
            return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (1)")
        return gpu_io(op, 1, 1, consts=0)
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


# ---- the LiteRT GPU accelerator only (ml_drift_delegate/tflite/model_builder.cc parsers the classic delegate
# lacks; each also passes CheckGpuDelegateCompatibility, gpu_compatibility.cc, through ValidateSupport) --------------

@register_placement(GPU, "REVERSE_V2", source="ml_drift_delegate/tflite/model_builder.cc "
                                              "ReverseOperationParser::IsSupported, gpu_compatibility.cc "
                                              "CheckGpuDelegateCompatibility")
def _gpu_reverse(op: DelegateOp) -> str | None:
    """ML Drift only: one runtime input, constant int32 axes, one output."""
    found = gpu_drift_only(op) or gpu_io(op, 1, 1, consts=1)
    if found:
        return found
    axes = op.input(1)
    return None if axes.dtype == "INT32" else reason(CATEGORY_DTYPE, f"axes are {axes.dtype} (INT32)")


_DTYPE_BYTES = {"FLOAT32": 4, "INT32": 4, "UINT32": 4, "FLOAT16": 2, "BFLOAT16": 2, "INT16": 2, "UINT16": 2,
                "INT8": 1, "UINT8": 1, "BOOL": 1, "INT64": 8, "UINT64": 8, "FLOAT64": 8}


@register_placement(GPU, "BITCAST", source="ml_drift_delegate/tflite/model_builder.cc BitcastOperationParser::IsSupported, "
                                           "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_bitcast(op: DelegateOp) -> str | None:
    """ML Drift only: one runtime input, one output; same element size and shape, or the wider side one
    rank less, the narrower's last dimension making up its element."""
    found = gpu_drift_only(op) or gpu_io(op, 1, 1)
    if found:
        return found
    x, y = op.input(0), op.outputs[0]
    a, b = _DTYPE_BYTES.get(x.dtype), _DTYPE_BYTES.get(y.dtype)
    if a is None or b is None:
        return reason(CATEGORY_DTYPE, f"bitcast from {x.dtype} to {y.dtype}")
    wide, narrow, big, small = (x.shape, y.shape, a, b) if a >= b else (y.shape, x.shape, b, a)
    ok = (wide == narrow if a == b else
          len(narrow) == len(wide) + 1 and narrow[:-1] == wide and narrow[-1] * small == big)
    return None if ok else reason(CATEGORY_SHAPE, f"bitcast of {x.dtype}{list(x.shape)} to {y.dtype}{list(y.shape)}")


@register_placement(GPU, "STABLEHLO_BROADCAST_IN_DIM",
                    source="ml_drift_delegate/tflite/model_builder.cc BroadcastInDimOperationParser::IsSupported, "
                           "gpu_compatibility.cc CheckGpuDelegateCompatibility")
def _gpu_broadcast_in_dim(op: DelegateOp) -> str | None:
    """ML Drift only: one runtime input, constant 1-D int32 dimensions, one per input dimension; one output."""
    found = gpu_drift_only(op) or gpu_io(op, 1, 1, consts=1)
    if found:
        return found
    x, dims = op.input(0), op.input(1)
    if dims.rank != 1 or dims.dtype != "INT32":
        return reason(CATEGORY_SHAPE, f"dimensions {dims.dtype}{list(dims.shape)} (1-D INT32)")
    if dims.shape[0] != x.rank:
        return reason(CATEGORY_SHAPE, f"{dims.shape[0]} dimensions for a {x.rank}-D operand")
    return None
