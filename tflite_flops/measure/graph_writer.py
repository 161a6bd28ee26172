"""A small writer of multi-op .tflite graphs: the calibration suite's models (and held-out benchmark models).

:mod:`tflite_flops.measure.model_writer` writes one float32 op per model; the calibration suite
needs more: int8 tensors with (per-channel) quantization, float16 weights behind a DEQUANTIZE, int32
biases, several ops in a row. :class:`GraphWriter` collects tensors, constant buffers and operators
with the object API (``ModelT``, ``Pack``) of the schema module the runtime ships, and writes the
model with :func:`tflite_flops.measure.model_writer.pack_model` (the same file identifier and schema
version as every other model the project writes). :meth:`GraphWriter.subgraph` adds the further
subgraphs a WHILE calls (its cond and body).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .model_writer import pack_model

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


class GraphWriter:
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
        child = GraphWriter(self.fb)
        child.buffers, child.opcodes, child._codes, child._more = self.buffers, self.opcodes, self._codes, self._more
        inputs, outputs = make(child)
        sub = self.fb.SubGraphT()
        sub.tensors, sub.inputs, sub.outputs = list(child.tensors), list(inputs), list(outputs)
        sub.operators, sub.name = list(child.operators), name
        self._more.append(sub)
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
        t.shape, t.type, t.buffer = list(shape), getattr(fb.TensorType, TENSOR_TYPES[dtype]), len(self.buffers)
        if signature is not None:
            t.shapeSignature = list(signature)
        if quant is not None:
            q = fb.QuantizationParametersT()
            q.scale, q.zeroPoint, q.quantizedDimension = list(quant.scale), list(quant.zero_point), quant.axis
            t.quantization = q
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

    def to_bytes(self, inputs: Sequence[int], outputs: Sequence[int], description: str, name: str = "main") -> bytes:
        """The model: subgraph 0 ``name`` with these graph inputs and outputs, then those :meth:`subgraph` added."""
        return pack_model(self.fb, self.opcodes, self.operators, self.tensors, self.buffers, inputs, outputs,
                          name=name, description=description, more=self._more)
