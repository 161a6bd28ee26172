"""An in-memory .tflite builder for tests: tiny models made with the flatbuffers Builder and the
``tflite`` generated builder functions (the approach of TFLite's own ``flatbuffer_utils`` tests).
"""

from __future__ import annotations

import flatbuffers
import numpy as np
import tflite

FLOAT32, INT32, INT8 = 0, 2, 9
FULLY_CONNECTED, ADD, CUSTOM, WHILE, IF, CALL_ONCE = 9, 0, 32, 119, 118, 129

# ---------------------------------------------------------------------------------------------
# An in-memory model builder.


def _ints(b: flatbuffers.Builder, values, dtype=np.int32) -> int:
    return b.CreateNumpyVector(np.asarray(values, dtype=dtype))


def _tables(b: flatbuffers.Builder, offsets: list[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _blockwise(b: flatbuffers.Builder, scales: int, zero_points: int, block_size: int) -> int:
    """A ``BlockwiseQuantization`` table (not in the ``tflite`` package's schema): scales and zero
    points are tensor indices (-1: none)."""
    b.StartObject(3)
    b.PrependInt32Slot(0, scales, 0)
    b.PrependInt32Slot(1, zero_points, 0)
    b.PrependInt32Slot(2, block_size, 0)
    return b.EndObject()


def _quant(b: flatbuffers.Builder, q: dict) -> int:
    """Affine quantization (``scale``, ``zero_point``, ``axis``), or ``blockwise``: (scales tensor,
    zero points tensor, block size) with ``axis``."""
    details = _blockwise(b, *q["blockwise"]) if q.get("blockwise") else None
    scale = _ints(b, q["scale"], np.float32) if q.get("scale") is not None else None
    zp = _ints(b, q.get("zero_point", [0] * len(q["scale"])), np.int64) if scale is not None else None
    tflite.QuantizationParametersStart(b)
    if scale is not None:
        tflite.QuantizationParametersAddScale(b, scale)
        tflite.QuantizationParametersAddZeroPoint(b, zp)
    if details is not None:
        tflite.QuantizationParametersAddDetailsType(b, 2)
        tflite.QuantizationParametersAddDetails(b, details)
    tflite.QuantizationParametersAddQuantizedDimension(b, q.get("axis", 0))
    return tflite.QuantizationParametersEnd(b)


def _sparsity(b: flatbuffers.Builder, s: dict) -> int:
    dims = []
    for fmt, dense, segments, indices in s["dims"]:
        extra = []
        for values in (segments, indices):
            if values is None:
                extra.append(None)
                continue
            vec = _ints(b, values)
            tflite.Int32VectorStart(b)
            tflite.Int32VectorAddValues(b, vec)
            extra.append(tflite.Int32VectorEnd(b))
        tflite.DimensionMetadataStart(b)
        tflite.DimensionMetadataAddFormat(b, fmt)
        tflite.DimensionMetadataAddDenseSize(b, dense)
        if extra[0] is not None:
            tflite.DimensionMetadataAddArraySegmentsType(b, 1)
            tflite.DimensionMetadataAddArraySegments(b, extra[0])
        if extra[1] is not None:
            tflite.DimensionMetadataAddArrayIndicesType(b, 1)
            tflite.DimensionMetadataAddArrayIndices(b, extra[1])
        dims.append(tflite.DimensionMetadataEnd(b))
    order = _ints(b, s["traversal_order"])
    block = _ints(b, s.get("block_map", []))
    dim_vec = _tables(b, dims)
    tflite.SparsityParametersStart(b)
    tflite.SparsityParametersAddTraversalOrder(b, order)
    tflite.SparsityParametersAddBlockMap(b, block)
    tflite.SparsityParametersAddDimMetadata(b, dim_vec)
    return tflite.SparsityParametersEnd(b)


def _tensor(b: flatbuffers.Builder, t: dict) -> int:
    name = b.CreateString(t.get("name", ""))
    shape = _ints(b, t["shape"])
    sig = _ints(b, t["shape_signature"]) if t.get("shape_signature") is not None else None
    quant = _quant(b, t["quant"]) if t.get("quant") else None
    sparse = _sparsity(b, t["sparsity"]) if t.get("sparsity") else None
    tflite.TensorStart(b)
    tflite.TensorAddShape(b, shape)
    tflite.TensorAddType(b, t.get("type", FLOAT32))
    tflite.TensorAddBuffer(b, t.get("buffer", 0))
    tflite.TensorAddName(b, name)
    if sig is not None:
        tflite.TensorAddShapeSignature(b, sig)
    if quant is not None:
        tflite.TensorAddQuantization(b, quant)
    if sparse is not None:
        tflite.TensorAddSparsity(b, sparse)
    if t.get("variable"):
        tflite.TensorAddIsVariable(b, True)
    return tflite.TensorEnd(b)


def _options(b: flatbuffers.Builder, kind: str, values: dict) -> int:
    """Build options table ``kind`` (e.g. "WhileOptions") with fields given in snake_case."""
    getattr(tflite, f"{kind}Start")(b)
    for key, value in values.items():
        camel = "".join(part.capitalize() for part in key.split("_"))
        getattr(tflite, f"{kind}Add{camel}")(b, value)
    return getattr(tflite, f"{kind}End")(b)


def _operator(b: flatbuffers.Builder, op: dict) -> int:
    inputs = _ints(b, op.get("inputs", []))
    outputs = _ints(b, op.get("outputs", []))
    options = None
    if op.get("options"):
        kind, values = op["options"]
        options = (getattr(tflite.BuiltinOptions, kind), _options(b, kind, values))
    elif op.get("raw_options"):  # (type code, options table offset built by the caller's function)
        code, fn = op["raw_options"]
        options = (code, fn(b))
    options2 = None
    if op.get("raw_options_2"):  # the same, for the builtin_options_2 union
        code, fn = op["raw_options_2"]
        options2 = (code, fn(b))
    custom = b.CreateByteVector(op["custom_options"]) if op.get("custom_options") is not None else None
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, op.get("opcode", 0))
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(b, options[0])
        tflite.OperatorAddBuiltinOptions(b, options[1])
    if options2 is not None:
        tflite.OperatorAddBuiltinOptions2Type(b, options2[0])
        tflite.OperatorAddBuiltinOptions2(b, options2[1])
    if custom is not None:
        tflite.OperatorAddCustomOptions(b, custom)
    if op.get("large_custom_options"):
        off, size = op["large_custom_options"]
        tflite.OperatorAddLargeCustomOptionsOffset(b, off)
        tflite.OperatorAddLargeCustomOptionsSize(b, size)
    return tflite.OperatorEnd(b)


def _subgraph(b: flatbuffers.Builder, sg: dict) -> int:
    tensors = _tables(b, [_tensor(b, t) for t in sg["tensors"]])
    ops = _tables(b, [_operator(b, o) for o in sg.get("operators", [])])
    inputs = _ints(b, sg.get("inputs", []))
    outputs = _ints(b, sg.get("outputs", []))
    name = b.CreateString(sg.get("name", ""))
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tensors)
    tflite.SubGraphAddOperators(b, ops)
    tflite.SubGraphAddInputs(b, inputs)
    tflite.SubGraphAddOutputs(b, outputs)
    tflite.SubGraphAddName(b, name)
    return tflite.SubGraphEnd(b)


def _opcode(b: flatbuffers.Builder, oc: dict | int) -> int:
    oc = {"builtin": oc} if isinstance(oc, int) else oc
    custom = b.CreateString(oc["custom"]) if oc.get("custom") is not None else None
    tflite.OperatorCodeStart(b)
    if oc.get("builtin") is not None:
        tflite.OperatorCodeAddBuiltinCode(b, oc["builtin"])
    deprecated = oc.get("deprecated", min(oc.get("builtin") or 0, 127))
    tflite.OperatorCodeAddDeprecatedBuiltinCode(b, deprecated)
    if custom is not None:
        tflite.OperatorCodeAddCustomCode(b, custom)
    tflite.OperatorCodeAddVersion(b, oc.get("version", 1))
    return tflite.OperatorCodeEnd(b)


def _buffer(b: flatbuffers.Builder, data) -> int:
    if isinstance(data, tuple):  # (offset, size) of data stored after the flatbuffer
        tflite.BufferStart(b)
        tflite.BufferAddOffset(b, data[0])
        tflite.BufferAddSize(b, data[1])
        return tflite.BufferEnd(b)
    vec = b.CreateByteVector(bytes(data)) if data else None
    tflite.BufferStart(b)
    if vec is not None:
        tflite.BufferAddData(b, vec)
    return tflite.BufferEnd(b)


def _signature(b: flatbuffers.Builder, sig: dict) -> int:
    maps = []
    for entries in (sig["inputs"], sig["outputs"]):
        tms = []
        for name, idx in entries.items():
            s = b.CreateString(name)
            tflite.TensorMapStart(b)
            tflite.TensorMapAddName(b, s)
            tflite.TensorMapAddTensorIndex(b, idx)
            tms.append(tflite.TensorMapEnd(b))
        maps.append(_tables(b, tms))
    key = b.CreateString(sig["key"])
    tflite.SignatureDefStart(b)
    tflite.SignatureDefAddInputs(b, maps[0])
    tflite.SignatureDefAddOutputs(b, maps[1])
    tflite.SignatureDefAddSignatureKey(b, key)
    tflite.SignatureDefAddSubgraphIndex(b, sig.get("subgraph", 0))
    return tflite.SignatureDefEnd(b)


def build_model(subgraphs: list[dict], opcodes: list, buffers: list | None = None, description: str | None = None,
                signatures: list[dict] | None = None, version: int = 3) -> bytes:
    """Serialize a TFLite model described with plain dicts (see the tests below for the keys).

    ``buffers`` entries are bytes (inline data), None/b"" (empty) or ``(offset, size)`` for
    data stored outside the flatbuffer.
    """
    b = flatbuffers.Builder(1024)
    desc = b.CreateString(description) if description is not None else None
    sgs = _tables(b, [_subgraph(b, sg) for sg in subgraphs])
    codes = _tables(b, [_opcode(b, oc) for oc in opcodes])
    bufs = _tables(b, [_buffer(b, d) for d in (buffers if buffers is not None else [None])])
    sigs = _tables(b, [_signature(b, s) for s in signatures]) if signatures else None
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, version)
    tflite.ModelAddOperatorCodes(b, codes)
    tflite.ModelAddSubgraphs(b, sgs)
    tflite.ModelAddBuffers(b, bufs)
    if desc is not None:
        tflite.ModelAddDescription(b, desc)
    if sigs is not None:
        tflite.ModelAddSignatureDefs(b, sigs)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def fc_model(opcode: dict | int | None = None, **sg_extra) -> bytes:
    """x[1,4] · W[3,4]ᵀ + b[3] -> y[1,3]: one FULLY_CONNECTED (or the op named by ``opcode``)."""
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    bias = np.ones(3, dtype=np.float32)
    sg = {"tensors": [{"name": "x", "shape": [1, 4]}, {"name": "w", "shape": [3, 4], "buffer": 1},
                      {"name": "b", "shape": [3], "buffer": 2}, {"name": "y", "shape": [1, 3]}],
          "operators": [{"opcode": 0, "inputs": [0, 1, 2], "outputs": [3],
                         "options": ("FullyConnectedOptions", {"fused_activation_function": 1})}],
          "inputs": [0], "outputs": [3], "name": "main", **sg_extra}
    return build_model([sg], [FULLY_CONNECTED if opcode is None else opcode],
                       buffers=[None, w.tobytes(), bias.tobytes()], description="fc test model")


def control_flow_model(edges: dict[int, tuple[str, dict]], n: int) -> bytes:
    """``n`` subgraphs; subgraph i holds one control-flow op given by ``edges[i]`` (or an ADD)."""
    codes = [ADD, WHILE, IF, CALL_ONCE]
    which = {"WhileOptions": 1, "IfOptions": 2, "CallOnceOptions": 3}
    sgs = []
    for i in range(n):
        if i in edges:
            kind, values = edges[i]
            op = {"opcode": which[kind], "inputs": [0], "outputs": [1], "options": (kind, values)}
        else:
            op = {"opcode": 0, "inputs": [0, 0], "outputs": [1]}
        sgs.append({"tensors": [{"shape": [1], "type": INT32}, {"shape": [1], "type": INT32}],
                    "operators": [op], "inputs": [0], "outputs": [1]})
    return build_model(sgs, codes)
