"""The one writer of .tflite models: single-op models cut out of a model, and small probe models.

Per-op timing (:mod:`tflite_flops.measure.single_op`) times each op alone in a model of its own, and
the roofline (:mod:`tflite_flops.measure.roofline`) times two probe models. Both are written here, with
the object API (``ModelT``, ``Pack``) of the TFLite schema module that the runtime in use ships
(:func:`tflite_flops.measure.runtimes.schema_module`): the ``tflite`` bindings the reader's layouts come
from have no object API, and timing needs a runtime anyway. Every model written here has one
subgraph holding one operator; :func:`one_op_model` is the part they share, and :func:`pack_model`
(also used by :mod:`tflite_flops.measure.graph_writer`) writes the bytes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3


@dataclass(frozen=True)
class ProbeTensor:
    """A float32 tensor of a probe model: a graph input when ``data`` is None, else a constant."""

    name: str
    shape: tuple[int, ...]
    data: np.ndarray | None = None


def one_op_model(fb: Any, opcode: Any, op: Any, tensors: Sequence[Any], buffers: Sequence[Any],
                 inputs: Sequence[int], outputs: Sequence[int], *, name: str, description: str) -> bytes:
    """The bytes of a model whose one subgraph ``name`` runs the operator ``op`` (opcode index 0).

    Args:
        fb: the schema module (object API).
        opcode: the ``OperatorCodeT`` of ``op``.
        op: the ``OperatorT``; its tensor indices refer to ``tensors``.
        tensors, buffers: the subgraph's ``TensorT`` list and the model's ``BufferT`` list (buffer 0 empty).
        inputs, outputs: the subgraph's input and output tensor indices.
        name, description: the subgraph's name and the model's description.
    """
    op.opcodeIndex = 0
    return pack_model(fb, [opcode], [op], tensors, buffers, inputs, outputs, name=name, description=description)


def pack_model(fb: Any, opcodes: Sequence[Any], operators: Sequence[Any], tensors: Sequence[Any],
               buffers: Sequence[Any], inputs: Sequence[int], outputs: Sequence[int], *, name: str,
               description: str, more: Sequence[Any] = ()) -> bytes:
    """The bytes of a model with one subgraph ``name`` running ``operators`` in order (their
    ``opcodeIndex`` refers to ``opcodes``, their tensor indices to ``tensors``), then the subgraphs
    ``more`` (``SubGraphT``, indices 1.. : the cond and body of a WHILE)."""
    import flatbuffers

    sub = fb.SubGraphT()
    sub.tensors, sub.inputs, sub.outputs = list(tensors), list(inputs), list(outputs)
    sub.operators, sub.name = list(operators), name
    model = fb.ModelT()
    model.version, model.description = SCHEMA_VERSION, description
    model.operatorCodes, model.subgraphs, model.buffers = list(opcodes), [sub, *more], list(buffers)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def read_model(fb: Any, data: bytes) -> Any:
    """The ``ModelT`` of a model's bytes, to cut single ops out of (:func:`single_op_model`)."""
    return fb.ModelT.InitFromObj(fb.Model.GetRootAs(data, 0))


def single_op_model(fb: Any, model_obj: Any, op_index: int, shapes: dict[int, tuple[int, ...]]
                    ) -> tuple[bytes, list[int]]:
    """A model holding only op ``op_index`` of subgraph 0 of ``model_obj`` (a ``ModelT``).

    The op keeps its options, dtypes, quantization and constant buffers; its tensors take the
    shapes of ``shapes`` (original tensor index -> shape) where given. Inputs without data (and
    not variables) become the graph's inputs.

    Returns:
        The model's bytes and the original indices of its graph inputs, in order.
    """
    sg = model_obj.subgraphs[0]
    op = sg.operators[op_index]
    order = list(dict.fromkeys(i for i in list(op.inputs) + list(op.outputs) if i >= 0))
    remap = {old: new for new, old in enumerate(order)}
    present_inputs = [i for i in op.inputs if i >= 0]
    buffers = [fb.BufferT()]
    tensors = []
    graph_inputs = []
    for old in order:
        t = copy.deepcopy(sg.tensors[old])
        t.shape = list(shapes.get(old, t.shape if t.shape is not None else []))
        t.shapeSignature = None
        buf = model_obj.buffers[t.buffer] if t.buffer and t.buffer < len(model_obj.buffers) else None
        if buf is not None and buf.data is not None and len(buf.data):
            buffers.append(copy.deepcopy(buf))
        else:
            buffers.append(fb.BufferT())
            if old in present_inputs and not t.isVariable:
                graph_inputs.append(old)
        t.buffer = len(buffers) - 1
        tensors.append(t)
    new_op = copy.deepcopy(op)
    new_op.inputs = [remap[i] if i >= 0 else -1 for i in op.inputs]
    new_op.outputs = [remap[i] if i >= 0 else -1 for i in op.outputs]
    new_op.intermediates = [remap[i] for i in (op.intermediates if op.intermediates is not None else [])
                            if i in remap] or None
    blob = one_op_model(fb, copy.deepcopy(model_obj.operatorCodes[op.opcodeIndex]), new_op, tensors, buffers,
                        [remap[i] for i in graph_inputs], [remap[i] for i in op.outputs if i >= 0],
                        name="single_op", description="tflite_flops single-op model")
    return blob, graph_inputs


def probe_model(fb: Any, op_type: str, options: str, inputs: Sequence[ProbeTensor | None],
                outputs: Sequence[ProbeTensor], *, name: str, description: str) -> bytes:
    """A model of one builtin op on float32 tensors, with default options.

    Args:
        fb: the schema module (object API).
        op_type: the builtin op's name (``"FULLY_CONNECTED"``).
        options: the name of its options table (``"FullyConnectedOptions"``).
        inputs: the op's inputs in order; None for an absent optional input. Inputs without data
            are the graph's inputs.
        outputs: the op's outputs (the graph's outputs).
        name, description: the subgraph's name and the model's description.
    """
    code = getattr(fb.BuiltinOperator, op_type)
    opcode = fb.OperatorCodeT()
    opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), 1
    tensors: list[Any] = []
    buffers = [fb.BufferT()]

    def add(spec: ProbeTensor) -> int:
        buffer = fb.BufferT()
        if spec.data is not None:
            buffer.data = np.ascontiguousarray(spec.data, dtype=np.float32).view(np.uint8).reshape(-1)
        t = fb.TensorT()
        t.name, t.shape, t.type, t.buffer = spec.name, list(spec.shape), fb.TensorType.FLOAT32, len(buffers)
        buffers.append(buffer)
        tensors.append(t)
        return len(tensors) - 1

    op = fb.OperatorT()
    op.inputs = [-1 if spec is None else add(spec) for spec in inputs]
    op.outputs = [add(spec) for spec in outputs]
    op.builtinOptionsType, op.builtinOptions = getattr(fb.BuiltinOptions, options), getattr(fb, f"{options}T")()
    graph_inputs = [i for i, spec in zip(op.inputs, inputs) if spec is not None and spec.data is None]
    return one_op_model(fb, opcode, op, tensors, buffers, graph_inputs, op.outputs, name=name, description=description)
