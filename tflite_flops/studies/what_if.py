"""What if the model were converted in another precision, or with a static shape? (``analyze --predict P --what-if``)

Nothing is converted. For each precision the user could convert a float model to, the graph is rewritten in
memory the way the TFLite converter writes that precision, and the rewritten graph goes through the same
analysis and prediction as any model: its laws, placement rules and memory plan are those of the precision.
Only what the analysis reads is rewritten (dtypes, quantization kinds and axes, op versions, the ops the
converter adds); the weights' values are not converted, so zeros are not counted in a variant.

The variants (each only where it changes something):

* ``fp16``: ``supported_types=[float16]``: every float32 constant an op reads is stored as float16, and one
  DEQUANTIZE (an init-time op) feeds its readers with float32;
* ``dynamic_range``: ``Optimize.DEFAULT``: the weights of the ops with a hybrid kernel
  (``OpFacts.quantized_weights`` and ``hybrid_version``) are int8 per channel when they hold at least
  ``DYNAMIC_RANGE_MIN_ELEMENTS`` values (the converter's threshold; smaller ones stay float32);
  activations stay float32, and those ops run their hybrid kernels; an op without one whose table the
  converter quantizes (``dequantized_output``: an embedding's GATHER) runs in int8 with a DEQUANTIZE after it;
* ``int8``: full integer, as ``tflite_flops.convert.to_tflite(..., "int8")`` converts (int8 inputs and
  outputs): every float32 tensor is int8 (activations per tensor, weights per channel, a bias int32),
  each op at its int8 kernel's version (``OpFacts.int8_version``); an op the converter leaves float
  (``float_in_int8``) reads through a DEQUANTIZE and writes through a QUANTIZE. A converter with float
  inputs and outputs adds one QUANTIZE per input and one DEQUANTIZE per output, which the variant does not
  have. The variant assumes each other op has an int8 kernel: the converter refuses a model whose op has none;
* ``static_shape``: where an input's shape is dynamic (-1 in its signature), every tensor at the shape
  the analysis resolved, with no -1 left (the GPU delegate takes no dynamic tensor, XNNPACK none either),
  and the shape arithmetic folded into constants.

``benchmarks/what_if.py`` holds each variant to real conversions of eight Keras models (docs/predict.md).

Each variant is summarised in a :class:`~tflite_flops.report.what_if.WhatIf` row: its predicted time, the
memory headline, the XNNPACK and GPU placement, and what changes against the model as it is.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable

import numpy as np

from ..analysis import analyze_model
from ..analysis.run import resolve_shapes
from ..ops.facts import facts_of, xnnpack_facts
from ..reader.model import Model, Operator, Quantization, Subgraph, Tensor
from ..report import Report
from ..report.headline import runtime_total
from ..report.what_if import WhatIf
from ..settings import Settings
from ..units import tensor_bytes

DYNAMIC_RANGE_MIN_ELEMENTS = 1024  # the converter's default: smaller weights are left float in dynamic range
FP16_DEQUANTIZE_VERSION = 3  # op_version.cc: DEQUANTIZE of a float16 input
DEQUANTIZE_INT8_VERSION = 2  # op_version.cc: DEQUANTIZE of an int8 input
VARIANTS = ("fp16", "dynamic_range", "int8", "static_shape")

# The activations' scales are not calibrated: every activation and weight gets one scale, a bias their product,
# so that each ratio of scales XNNPACK's rules check between activations (an output's to an input's, a product's
# to an output's) is within range; a calibrated model may have one out of range, and that op kept off XNNPACK.
# An activation's zero point is not 0 (a calibrated range is asymmetric: XNNPACK's int8 BATCH_MATMUL refuses a
# computed operand for it), a weight's is 0 (symmetric), and a constant that is no weight (an epsilon added, a
# scale multiplied) gets the scale and zero point of its own values, as the converter computes them.
SCALE = 2.0 ** -7  # an 8-bit value of [-1, 1)
ACTIVATION_ZERO_POINT = -128  # [0, 2): a range that starts at 0, as after a ReLU
_FLOAT = "FLOAT32"
_PER_TENSOR = Quantization("per_tensor", 0, 1, SCALE, ACTIVATION_ZERO_POINT)
_VALUES_READ = 1 << 16  # a constant's values are read for its scale up to this many elements
_FOLDED_DTYPES = {"INT32": "<i4", "INT64": "<i8", "FLOAT32": "<f4"}  # a folded shape value as the file stores it


def _per_axis(shape: tuple[int, ...], axis: int, scale: float = SCALE) -> Quantization:
    """A per-channel quantization along ``axis`` (what the reader summarises: the first scale, zero point 0);
    ``axis`` -1: one scale for the tensor."""
    if axis < 0:
        return Quantization("per_tensor", 0, 1, scale, 0)
    return Quantization("per_axis", axis, shape[axis] if axis < len(shape) else 1, scale, 0, False)


def _retyped(t: Tensor, dtype: str, quantization: Quantization | None) -> Tensor:
    """``t`` stored as ``dtype``: a constant keeps its place in the file, its size that of the new dtype."""
    size = t.data_size
    if t.is_constant and not t.is_external:
        size = min(t.data_size, tensor_bytes(t.shape, dtype))
    return t._replace(dtype=dtype, quantization=quantization, data_size=size)


def _float_constants_read(sg: Subgraph) -> list[int]:
    """The float32 constants the subgraph's ops read, in the order first read."""
    seen: dict[int, None] = {}
    for op in sg.operators:
        for i in op.inputs:
            if i >= 0 and sg.tensors[i].dtype == _FLOAT and sg.tensors[i].is_constant and not sg.tensors[i].is_variable:
                seen.setdefault(i)
    return list(seen)


def fp16_subgraph(sg: Subgraph) -> Subgraph:
    """``sg`` as the converter writes it with float16 weights: each float32 constant stored as float16, read
    through one DEQUANTIZE placed before the ops (as the converter orders them)."""
    constants = _float_constants_read(sg)
    if not constants:
        return sg
    readers: dict[int, list[Operator]] = {}
    for op in sg.operators:
        for i in dict.fromkeys(op.inputs):
            readers.setdefault(i, []).append(op)
    # the DEQUANTIZE of a GEMM's weights first (XNNPACK takes it with the GEMM: analysis/placement.py's fp16
    # weights), the others after: the order TensorFlow 2.21's converter writes them in, which decides the
    # partitions they join
    constants.sort(key=lambda i: not all(xnnpack_facts(op.op_type).gemm and op.inputs[0] != i
                                         for op in readers.get(i, ())))
    tensors = list(sg.tensors)
    dequantized: dict[int, int] = {}
    new_ops: list[Operator] = []
    for i in constants:
        t = tensors[i]
        tensors[i] = _retyped(t, "FLOAT16", None)
        out = len(tensors)
        tensors.append(Tensor(out, t.name + "_dequantized", _FLOAT, t.shape, t.shape_signature, 0, 0, 0, False,
                              None, None))
        dequantized[i] = out
        new_ops.append(Operator(0, "DEQUANTIZE", 6, FP16_DEQUANTIZE_VERSION, (i,), (out,), (), {}))
    for op in sg.operators:
        new_ops.append(op._replace(inputs=tuple(dequantized.get(i, i) for i in op.inputs)))
    ops = tuple(op._replace(index=k) for k, op in enumerate(new_ops))
    return replace(sg, tensors=tuple(tensors), operators=ops)


def dynamic_range_subgraph(sg: Subgraph) -> Subgraph:
    """``sg`` as the converter writes it with ``Optimize.DEFAULT`` alone: int8 weights (per channel) for the
    ops with a hybrid kernel, when they hold at least DYNAMIC_RANGE_MIN_ELEMENTS values; an op without one
    (``dequantized_output``) runs in int8 and a DEQUANTIZE after it gives its readers float32."""
    tensors = list(sg.tensors)
    ops: list[Operator] = []
    renamed: dict[int, int] = {}  # an output now int8 -> the float32 tensor its DEQUANTIZE writes
    outputs = list(sg.outputs)
    for op in sg.operators:
        op = op._replace(inputs=tuple(renamed.get(i, i) for i in op.inputs)) if renamed else op
        facts = facts_of(op.op_type)
        changed = False
        if facts.hybrid_version:
            for pos, axis in facts.quantized_weights:
                i = op.inputs[pos] if pos < len(op.inputs) else -1
                t = tensors[i] if i >= 0 else None
                if t is None or not t.is_constant:
                    continue
                if t.dtype == "INT8":
                    changed = True  # shared with an op already rewritten
                elif t.dtype == _FLOAT and math.prod(t.shape) >= DYNAMIC_RANGE_MIN_ELEMENTS:
                    tensors[i] = _retyped(t, "INT8", _per_axis(t.shape, axis))
                    changed = True
        if not changed:
            ops.append(op)
            continue
        ops.append(op._replace(version=max(op.version, facts.hybrid_version)))
        if facts.dequantized_output:
            for o in op.outputs:
                if o < 0 or tensors[o].dtype != _FLOAT:
                    continue
                t = tensors[o]
                tensors[o] = _retyped(t, "INT8", _PER_TENSOR)
                out = len(tensors)
                tensors.append(t._replace(index=out, name=t.name + "_dequantized"))
                renamed[o] = out
                ops.append(Operator(0, "DEQUANTIZE", 6, DEQUANTIZE_INT8_VERSION, (o,), (out,), (), {}))
                outputs = [out if x == o else x for x in outputs]
    ops = [op._replace(index=k) for k, op in enumerate(ops)]
    return replace(sg, tensors=tuple(tensors), operators=tuple(_one_version_per_type(ops)), outputs=tuple(outputs))


def _one_version_per_type(ops: list[Operator]) -> list[Operator]:
    """The ops with one version per op type, the highest: the converter writes one operator code per op type
    (seen in its dynamic-range output: once one CONV_2D is hybrid, every CONV_2D of the model is version 5)."""
    top: dict[str, int] = {}
    for op in ops:
        top[op.op_type] = max(top.get(op.op_type, 0), op.version)
    return [op if op.version == top[op.op_type] else op._replace(version=top[op.op_type]) for op in ops]


def _constant_quantization(t: Tensor, values: Callable[[Tensor], "np.ndarray | None"]) -> Quantization:
    """A constant's per-tensor quantization from its values: the range [min(v, 0), max(v, 0)] in 255 steps."""
    v = values(t) if 0 < t.num_elements <= _VALUES_READ else None
    if v is None or not np.all(np.isfinite(v)):
        return _PER_TENSOR
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    if hi == lo:
        return _PER_TENSOR
    scale = (hi - lo) / 255
    return Quantization("per_tensor", 0, 1, scale, int(round(-128 - lo / scale)))


def int8_subgraph(sg: Subgraph, values: Callable[[Tensor], "np.ndarray | None"] = lambda t: None) -> Subgraph:
    """``sg`` as the converter writes it in full integer with int8 inputs and outputs: every float32 tensor int8
    (per tensor; a weight per channel, a bias int32 per channel), each op at its int8 kernel's version; an op the
    converter leaves float (``float_in_int8``) reads through a DEQUANTIZE and writes through a QUANTIZE."""
    tensors = list(sg.tensors)
    done: set[int] = set()
    ops: list[Operator] = []
    renamed: dict[int, int] = {}  # a float output of an op left float -> the int8 tensor its QUANTIZE writes
    outputs = list(sg.outputs)

    def converted(kind: str, source: int, dtype: str, quantization: Quantization | None) -> int:
        out = len(tensors)
        tensors.append(sg.tensors[source]._replace(index=out, name=sg.tensors[source].name + "_" + kind.lower(),
                                                   dtype=dtype, quantization=quantization, buffer=0,
                                                   data_offset=0, data_size=0))
        return out

    for original in sg.operators:
        facts = facts_of(original.op_type)
        if facts.float_in_int8:
            op = original  # reads float32: the float output of an op left float too, as it is
            inputs = list(op.inputs)
            for pos, i in enumerate(op.inputs):
                if i >= 0 and i not in renamed and sg.tensors[i].dtype == _FLOAT and not sg.tensors[i].is_constant:
                    if i not in done:
                        tensors[i] = _retyped(tensors[i], "INT8", _PER_TENSOR)
                        done.add(i)
                    inputs[pos] = converted("DEQUANTIZE", i, _FLOAT, None)
                    ops.append(Operator(0, "DEQUANTIZE", 6, DEQUANTIZE_INT8_VERSION, (i,), (inputs[pos],), (), {}))
            ops.append(op._replace(inputs=tuple(inputs)))
            for o in op.outputs:
                if o >= 0 and sg.tensors[o].dtype == _FLOAT:
                    done.add(o)  # stays float32
                    renamed[o] = converted("QUANTIZE", o, "INT8", _PER_TENSOR)
                    ops.append(Operator(0, "QUANTIZE", 114, 1, (o,), (renamed[o],), (), {}))
                    outputs = [renamed[o] if x == o else x for x in outputs]
            continue
        op = original._replace(inputs=tuple(renamed.get(i, i) for i in original.inputs)) if renamed else original
        special = dict(facts.quantized_weights)
        for pos, i in enumerate(op.inputs):
            if i < 0 or i in done or tensors[i].dtype != _FLOAT:
                continue
            t = tensors[i]
            if pos in special and t.is_constant:
                tensors[i] = _retyped(t, "INT8", _per_axis(t.shape, special[pos]))
            elif pos == facts.quantized_bias and t.is_constant:
                tensors[i] = _retyped(t, "INT32", _per_axis(t.shape, 0, SCALE * SCALE))
            elif t.is_constant:
                tensors[i] = _retyped(t, "INT8", _constant_quantization(t, values))
            else:
                tensors[i] = _retyped(t, "INT8", _PER_TENSOR)
            done.add(i)
        for i in op.outputs:
            if i >= 0 and i not in done and tensors[i].dtype == _FLOAT:
                tensors[i] = _retyped(tensors[i], "INT8", _PER_TENSOR)
                done.add(i)
        floats = any(i >= 0 and sg.tensors[i].dtype == _FLOAT for i in original.inputs + original.outputs)
        ops.append(op._replace(version=max(op.version, facts.int8_version)) if floats else op)
    for i in sg.inputs + tuple(outputs):  # an input or output no op reads or writes
        if i >= 0 and i not in done and tensors[i].dtype == _FLOAT:
            tensors[i] = _retyped(tensors[i], "INT8", _PER_TENSOR)
    ops = [op._replace(index=k) for k, op in enumerate(ops)]
    return replace(sg, tensors=tuple(tensors), operators=tuple(_one_version_per_type(ops)), outputs=tuple(outputs))


def static_model(model: Model, settings: Settings) -> Model:
    """``model`` as the converter writes it from static input shapes: every tensor of a reached subgraph at the
    shape the analysis resolves at ``settings``, no dynamic dim left, and the ops whose outputs the shapes
    alone determine (a SHAPE and the arithmetic on it) folded into constants, as the converter folds them."""
    states = resolve_shapes(model, settings)
    subgraphs = list(model.subgraphs)
    extra = bytearray()
    base = model.size_bytes if model.bundle is None else -1  # a bundle's section: nothing is folded
    for index, state in states.items():
        sg = subgraphs[index]
        tensors = [t._replace(shape=tuple(state.shapes[t.index]), shape_signature=None)
                   if t.is_dynamic and state.resolved[t.index] else t for t in sg.tensors]
        ops = []
        folded: dict[int, np.ndarray] = {}  # outputs of the ops folded: what reads only them and shapes folds too
        gone: set[int] = set()  # the inputs of the ops folded
        for op in sg.operators:
            values = [state.values[o] if o >= 0 else None for o in op.outputs]
            if (base < 0 or op.subgraph_refs or not op.outputs or any(v is None for v in values)
                    or not any(i in folded or sg.tensors[i].is_dynamic for i in op.inputs if i >= 0)):
                ops.append(op)
                continue
            folded.update(zip(op.outputs, values))
            gone.update(op.inputs)
        read = {i for op in ops for i in op.inputs} | set(sg.outputs)
        for i in gone - read:  # a constant only the folded ops read is gone with them
            if i >= 0 and tensors[i].is_constant:
                tensors[i] = tensors[i]._replace(buffer=0, data_offset=0, data_size=0)
        for o, v in folded.items():  # a folded output still read is a constant of the file (the others are gone)
            if o not in read:
                continue
            data = np.ascontiguousarray(v, dtype=_FOLDED_DTYPES.get(tensors[o].dtype, v.dtype)).tobytes()
            extra += bytes(-(base + len(extra)) % 16)
            tensors[o] = tensors[o]._replace(shape=tuple(np.shape(v)), data_offset=base + len(extra),
                                             data_size=len(data))
            extra += data
        ops = [op._replace(index=k) for k, op in enumerate(ops)]
        subgraphs[index] = replace(sg, tensors=tuple(tensors), operators=tuple(ops))
    if not extra:
        return replace(model, subgraphs=tuple(subgraphs))
    buf = bytes(model._buf[:base]) + bytes(extra)
    return replace(model, subgraphs=tuple(subgraphs), _buf=buf, size_bytes=len(buf))


def _each_subgraph(model: Model, rewrite: Callable[[Subgraph], Subgraph]) -> Model:
    return replace(model, subgraphs=tuple(rewrite(sg) for sg in model.subgraphs))


def applicable(model: Model) -> tuple[str, ...]:
    """The variants that change ``model``: a precision only from a float32 model (float32 constants read by its
    ops, no quantized or float16 tensor), the static shape only where an input of the entry is dynamic."""
    out = []
    tensors = [t for sg in model.subgraphs for t in sg.tensors]
    quantized = any(t.dtype == "FLOAT16" or (t.dtype in ("INT8", "UINT8") and t.quantization is not None)
                    for t in tensors)
    if not quantized and any(_float_constants_read(sg) for sg in model.subgraphs):
        out.append("fp16")
        if any(a is not b for sg in model.subgraphs for a, b in zip(dynamic_range_subgraph(sg).tensors, sg.tensors)):
            out.append("dynamic_range")  # some weight is large enough to quantize
        out.append("int8")
    main = model.main
    if any(main.tensors[i].is_dynamic for i in main.inputs if i >= 0):
        out.append("static_shape")
    return tuple(out)


def rewrite(model: Model, variant: str, settings: Settings) -> Model:
    """``model`` as the converter would write it in ``variant`` (one of VARIANTS)."""
    if variant == "fp16":
        return _each_subgraph(model, fp16_subgraph)
    if variant == "dynamic_range":
        return _each_subgraph(model, dynamic_range_subgraph)
    if variant == "int8":
        return _each_subgraph(model, lambda sg: int8_subgraph(sg, model.constant))
    if variant == "static_shape":
        return static_model(model, settings)
    raise ValueError(f"unknown what-if variant {variant!r} (one of {', '.join(VARIANTS)})")


def summarize(variant: str, report: Report, base: Report | None = None) -> WhatIf:
    """The row of one variant's report, with what changes against ``base`` (the model as it is)."""
    xnn = report.delegation.get("xnnpack")
    gpu = report.delegation.get("gpu")
    total = runtime_total(report.memory)
    pred = report.prediction
    row = WhatIf(variant=variant, predicted_ms=None if pred is None else pred.latency_ms,
                 prediction_complete=None if pred is None else pred.complete,
                 memory_bytes=None if total is None else total.total_bytes,
                 weights_bytes=None if report.memory is None else report.memory.weights_bytes,
                 ops=len(report.ops),
                 xnnpack_delegated=None if xnn is None else xnn.delegated_ops,
                 xnnpack_kept=None if xnn is None else xnn.kept_ops,
                 xnnpack_partitions=None if xnn is None else xnn.partitions,
                 gpu_delegated=None if gpu is None else gpu.delegated_ops,
                 gpu_partitions=None if gpu is None else gpu.partitions)
    return row if base is None else replace(row, changes=changes(row, summarize("as is", base)))


def changes(row: WhatIf, base: WhatIf) -> tuple[str, ...]:
    """What a variant changes against the model as it is, one phrase per figure that differs."""
    out = []
    if row.predicted_ms is not None and base.predicted_ms:
        ratio = row.predicted_ms / base.predicted_ms
        out.append(f"time {ratio:.2f}x ({base.predicted_ms:.3f} -> {row.predicted_ms:.3f} ms)")
    if row.memory_bytes is not None and base.memory_bytes and abs(row.memory_bytes / base.memory_bytes - 1) >= 0.005:
        out.append(f"memory {row.memory_bytes / base.memory_bytes:.2f}x ({_mib(base.memory_bytes)} -> "
                   f"{_mib(row.memory_bytes)})")
    if (row.xnnpack_delegated, row.xnnpack_partitions) != (base.xnnpack_delegated, base.xnnpack_partitions):
        out.append(f"XNNPACK {base.xnnpack_delegated} -> {row.xnnpack_delegated} ops delegated, "
                   f"{base.xnnpack_partitions} -> {row.xnnpack_partitions} partitions")
    if (row.gpu_delegated, row.gpu_partitions) != (base.gpu_delegated, base.gpu_partitions):
        out.append(f"GPU {base.gpu_delegated} -> {row.gpu_delegated} ops delegated, "
                   f"{base.gpu_partitions} -> {row.gpu_partitions} partitions")
    if row.ops != base.ops:
        out.append(f"{row.ops - base.ops:+d} ops")
    return tuple(out)


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.2f} MiB"


def what_if(model: Model, report: Report, settings: Settings) -> tuple[WhatIf, ...]:
    """The rows of every variant that applies to ``model`` (:func:`applicable`), each re-analysed (and
    predicted when ``settings.predict`` holds a profile) at ``settings``; ``report`` is the model as it is."""
    quiet = replace(settings, count_zeros=False)  # a variant's weights keep the float values' bytes
    rows = []
    for variant in applicable(model):
        variant_report = analyze_model(rewrite(model, variant, settings), quiet)
        rows.append(summarize(variant, variant_report, report))
    return tuple(rows)


def converted_variant(model: Model) -> str | None:
    """The precision ``model`` was converted in, as a what-if variant: ``fp16`` (float16 constants), ``int8``
    (int8 activations), ``dynamic_range`` (int8 weights, float activations), or None (float32, or another)."""
    tensors = [t for sg in model.subgraphs for t in sg.tensors]
    if any(t.is_constant and t.dtype == "FLOAT16" for t in tensors):
        return "fp16"
    if any(not t.is_constant and t.dtype == "INT8" and t.quantization is not None for t in tensors):
        return "int8"
    if any(t.is_constant and t.dtype == "INT8" and t.quantization is not None for t in tensors):
        return "dynamic_range"
    return None


def twin_rows(model_a: Model, report_a: Report, model_b: Model, report_b: Report, settings: Settings
              ) -> tuple[WhatIf, WhatIf] | None:
    """(A's what-if row in B's precision, B's own row) when B is a conversion of float A into a precision the
    what-if predicts (``compare A B``), else None. Both rows' changes are against A as it is."""
    variant = converted_variant(model_b)
    if variant is None or variant not in applicable(model_a):
        return None
    quiet = replace(settings, count_zeros=False)
    predicted = summarize(variant, analyze_model(rewrite(model_a, variant, settings), quiet), report_a)
    return predicted, summarize(variant, report_b, report_a)
