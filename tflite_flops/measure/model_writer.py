"""The one writer of .tflite models: :class:`ModelWriter`, and the models the package writes with it.

Every model the package writes goes through :class:`ModelWriter`: it collects tensors, constant
buffers, operator codes and operators (and the further subgraphs a WHILE calls) with the object API
(``ModelT``, ``Pack``) of the TFLite schema module that the runtime in use ships
(:func:`tflite_flops.measure.runtimes.schema_module`; the ``tflite`` bindings the reader's layouts come
from have no object API, and writing a model is for timing it, which needs a runtime anyway), and
writes the bytes with one file identifier and schema version. Its users:

* per-op timing (:mod:`tflite_flops.measure.single_op`): :func:`single_op_model` cuts one op out of a
  model, with its options, dtypes, quantization and constant buffers (:meth:`ModelWriter.copy_tensor`,
  :meth:`ModelWriter.copy_op`), and :func:`segment_model` a stretch of consecutive ops (the accuracy
  benchmark's split of a model's error between the per-op laws and the whole-model term);
* the roofline (:mod:`tflite_flops.measure.roofline`): :func:`probe_model`, one float32 builtin op;
* the calibration suite (:mod:`tflite_flops.latency.suite`): int8 tensors with (per-channel)
  quantization, float16 weights behind a DEQUANTIZE, int32 biases, several ops in a row, WHILE loops
  (:meth:`ModelWriter.tensor`, :meth:`ModelWriter.op`, :meth:`ModelWriter.subgraph`).

The tests' own builder (``tests/tflite_builder.py``) writes hostile and hand-made models for the
reader's tests with the ``tflite`` builder functions; the speed benchmarks write their large synthetic
models that way too, so that they need no runtime.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3

DTYPES = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "uint8": np.uint8, "int32": np.int32,
          "int64": np.int64, "bool": np.bool_}
TENSOR_TYPES = {"float32": "FLOAT32", "float16": "FLOAT16", "int8": "INT8", "uint8": "UINT8", "int32": "INT32",
                "int64": "INT64", "bool": "BOOL"}
PADDING = {"SAME": 0, "VALID": 1}
ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3, "TANH": 4}


@dataclass(frozen=True)
class Quant:
    """Affine quantization: one scale and zero point per tensor, or one per slice along ``axis``."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0

    @classmethod
    def of(cls, scale: float | Sequence[float], zero_point: int = 0, axis: int = 0) -> "Quant":
        """Per-tensor (a float) or per-channel (a sequence) quantization with one zero point for all."""
        scales = tuple(float(s) for s in (scale if isinstance(scale, (list, tuple, np.ndarray)) else [scale]))
        return cls(scales, tuple(int(zero_point) for _ in scales), axis)


@dataclass(frozen=True)
class ProbeTensor:
    """A float32 tensor of a probe model: a graph input when ``data`` is None, else a constant."""

    name: str
    shape: tuple[int, ...]
    data: np.ndarray | None = None


class ModelWriter:
    """Collects one subgraph's tensors, constants and operators, then writes the model's bytes."""

    def __init__(self, fb: Any) -> None:
        self.fb = fb
        self.tensors: list[Any] = []
        self.buffers: list[Any] = [fb.BufferT()]
        self.operators: list[Any] = []
        self.opcodes: list[Any] = []
        self._codes: dict[str, int] = {}
        self._more: list[Any] = []  # SubGraphT of subgraphs 1.. (shared with the writers of those subgraphs)

    def subgraph(self, make: Any, name: str) -> int:
        """Add a subgraph that ``make(writer)`` fills (returning its inputs and outputs) and return its
        index. Its writer shares this one's buffers and opcodes: tensor indices are its own."""
        child = ModelWriter(self.fb)
        child.buffers, child.opcodes, child._codes, child._more = self.buffers, self.opcodes, self._codes, self._more
        inputs, outputs = make(child)
        self._more.append(_subgraph(self.fb, child.tensors, child.operators, inputs, outputs, name))
        return len(self._more)

    def tensor(self, shape: Sequence[int], dtype: str = "float32", data: np.ndarray | None = None,
               quant: Quant | None = None, name: str | None = None, signature: Sequence[int] | None = None) -> int:
        """Add a tensor (a constant when ``data`` is given); returns its index. ``signature``: its
        ``shape_signature`` (-1 for a dim known only at run time), when it has one."""
        fb = self.fb
        buffer = fb.BufferT()
        if data is not None:
            array = np.ascontiguousarray(np.asarray(data, dtype=DTYPES[dtype]).reshape(tuple(shape)))
            buffer.data = array.view(np.uint8).reshape(-1)
        t = fb.TensorT()
        t.name = name or f"t{len(self.tensors)}"
        t.shape, t.type = list(shape), getattr(fb.TensorType, TENSOR_TYPES[dtype])
        if signature is not None:
            t.shapeSignature = list(signature)
        if quant is not None:
            q = fb.QuantizationParametersT()
            # numpy vectors: the object API writes a list element by element, an array in one copy
            q.scale, q.zeroPoint = np.asarray(quant.scale, np.float32), np.asarray(quant.zero_point, np.int64)
            q.quantizedDimension = quant.axis
            t.quantization = q
        return self.copy_tensor(t, buffer)

    def copy_tensor(self, t: Any, buffer: Any) -> int:
        """Add a ``TensorT`` as it is (another model's, with its dtype and quantization) with ``buffer`` (a
        ``BufferT``: empty, or the constant's bytes) as its own buffer; returns its index."""
        t.buffer = len(self.buffers)
        self.buffers.append(buffer)
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, op_type: str, inputs: Sequence[int], outputs: Sequence[int], options: str | None = None,
           **fields: Any) -> None:
        """Add operator ``op_type`` (a builtin's name) with its options table ``options`` (e.g.
        ``"Conv2DOptions"``) whose object-API fields (``strideW``, ``fusedActivationFunction``) are ``fields``."""
        fb = self.fb
        if op_type not in self._codes:
            code = getattr(fb.BuiltinOperator, op_type)
            opcode = fb.OperatorCodeT()
            opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), 1
            self._codes[op_type] = len(self.opcodes)
            self.opcodes.append(opcode)
        op = fb.OperatorT()
        op.opcodeIndex = self._codes[op_type]
        op.inputs, op.outputs = list(inputs), list(outputs)
        if options is not None:
            table = getattr(fb, f"{options}T")()
            for key, value in fields.items():
                if not hasattr(table, key):
                    raise ValueError(f"{options} has no field {key!r}")
                setattr(table, key, value)
            op.builtinOptionsType, op.builtinOptions = getattr(fb.BuiltinOptions, options), table
        self.operators.append(op)

    def copy_op(self, op: Any, opcode: Any) -> None:
        """Add an ``OperatorT`` as it is (another model's, with its options; its tensor indices already this
        writer's) with its ``OperatorCodeT`` (kept whole: version, custom code) as a new operator code."""
        op.opcodeIndex = len(self.opcodes)
        self.opcodes.append(opcode)
        self.operators.append(op)

    def to_bytes(self, inputs: Sequence[int], outputs: Sequence[int], description: str, name: str = "main") -> bytes:
        """The model: subgraph 0 ``name`` with these graph inputs and outputs, then those :meth:`subgraph` added."""
        import flatbuffers

        fb = self.fb
        model = fb.ModelT()
        model.version, model.description = SCHEMA_VERSION, description
        model.operatorCodes, model.buffers = list(self.opcodes), list(self.buffers)
        model.subgraphs = [_subgraph(fb, self.tensors, self.operators, inputs, outputs, name), *self._more]
        # sized for the constants up front: a builder that starts small copies its whole buffer at each doubling
        data = sum(len(b.data) for b in self.buffers if b.data is not None)
        builder = flatbuffers.Builder(data + 4096 * (len(self.tensors) + len(self.operators) + 1))
        builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
        return bytes(builder.Output())


def _subgraph(fb: Any, tensors: Sequence[Any], operators: Sequence[Any], inputs: Sequence[int],
              outputs: Sequence[int], name: str) -> Any:
    sub = fb.SubGraphT()
    sub.tensors, sub.inputs, sub.outputs = list(tensors), list(inputs), list(outputs)
    sub.operators, sub.name = list(operators), name
    return sub


def _indices(values: Any) -> list[int]:
    """A ``ModelT`` index list (a numpy array, a list or None) as Python ints."""
    return [] if values is None else [int(v) for v in values]


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
    return segment_model(fb, model_obj, op_index, op_index + 1, shapes, "tflite_flops single-op model", "single_op",
                         every_output=True)


def segment_model(fb: Any, model_obj: Any, start: int, stop: int, shapes: dict[int, tuple[int, ...]] | None = None,
                  description: str = "tflite_flops segment model", name: str = "segment", every_output: bool = False
                  ) -> tuple[bytes, list[int]]:
    """A model holding ops ``start`` to ``stop - 1`` of subgraph 0 of ``model_obj`` (a ``ModelT``), in their
    order (a subgraph's operators are in execution order): a stretch of the model to time on its own.

    The ops keep their options, dtypes, quantization and constant buffers; the tensors take the shapes of
    ``shapes`` (original tensor index -> shape) where given. The graph's inputs are the tensors the ops read
    that none of them writes, without data and not variables; its outputs, the tensors they write that a
    later op or the model's outputs read (the last op's outputs when none is; every tensor they write with
    ``every_output``). The ops must not call other
    subgraphs (their indices would point nowhere): ``ValueError`` when one has a subgraph index option.

    Returns:
        The model's bytes and the original indices of its graph inputs, in order.
    """
    sg = model_obj.subgraphs[0]
    if not 0 <= start < stop <= len(sg.operators):
        raise ValueError(f"ops {start}..{stop - 1} are not in subgraph 0's {len(sg.operators)} ops")
    ops = sg.operators[start:stop]
    for op in ops:
        options = op.builtinOptions
        if options is not None and any("subgraph" in k.lower() for k in vars(options)):
            raise ValueError(f"op {start + ops.index(op)} calls another subgraph: it cannot be cut out")
    shapes = shapes or {}
    written = {i for op in ops for i in op.outputs if i >= 0}
    read_later = {i for op in sg.operators[stop:] for i in op.inputs if i >= 0} | set(_indices(sg.outputs))
    order = list(dict.fromkeys(i for op in ops for i in list(op.inputs) + list(op.outputs) if i >= 0))
    remap = {old: new for new, old in enumerate(order)}
    w = ModelWriter(fb)
    graph_inputs = []
    for old in order:
        t = copy.deepcopy(sg.tensors[old])
        t.shape = list(shapes.get(old, t.shape if t.shape is not None else []))
        t.shapeSignature = None
        buf = model_obj.buffers[t.buffer] if t.buffer and t.buffer < len(model_obj.buffers) else None
        if buf is not None and buf.data is not None and len(buf.data):
            w.copy_tensor(t, copy.deepcopy(buf))
        else:
            w.copy_tensor(t, fb.BufferT())
            if old not in written and not t.isVariable:
                graph_inputs.append(old)
    for op in ops:
        new_op = copy.deepcopy(op)
        new_op.inputs = [remap[i] if i >= 0 else -1 for i in op.inputs]
        new_op.outputs = [remap[i] if i >= 0 else -1 for i in op.outputs]
        new_op.intermediates = [remap[i] for i in (op.intermediates if op.intermediates is not None else [])
                                if i in remap] or None
        w.copy_op(new_op, copy.deepcopy(model_obj.operatorCodes[op.opcodeIndex]))
    outputs = [i for i in order if i in written and (every_output or i in read_later)] or \
        [i for i in ops[-1].outputs if i >= 0]
    blob = w.to_bytes([remap[i] for i in graph_inputs], [remap[i] for i in outputs], description, name=name)
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
    w = ModelWriter(fb)

    def add(spec: ProbeTensor) -> int:
        return w.tensor(spec.shape, "float32", spec.data, name=spec.name)

    op_inputs = [-1 if spec is None else add(spec) for spec in inputs]
    op_outputs = [add(spec) for spec in outputs]
    w.op(op_type, op_inputs, op_outputs, options)
    graph_inputs = [i for i, spec in zip(op_inputs, inputs) if spec is not None and spec.data is None]
    return w.to_bytes(graph_inputs, op_outputs, description, name=name)
