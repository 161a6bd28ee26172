"""The one module that imports the generated TFLite flatbuffer bindings (PyPI package ``tflite``).

Everything else in the package sees plain Python values: op names, dtype names and option
dicts with snake_case keys (``stride_w``, ``fused_activation_function``, ``keep_num_dims``).
Enum-typed option fields are decoded to their names (``"SAME"``, ``"RELU6"``, ``"INT8"``).

The bindings in use may be older than the schema of a model. Codes they do not know are
filled in from the TFLite schema here (``STABLEHLO_CASE = 209``, the newest tensor types).
"""

from __future__ import annotations

import re
import struct
from types import MappingProxyType
from typing import Any, Mapping

import tflite  # the generated bindings; nothing else in tflite_flops imports them
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.BuiltinOptions2 import BuiltinOptions2
from tflite.CombinerType import CombinerType
from tflite.FullyConnectedOptionsWeightsFormat import FullyConnectedOptionsWeightsFormat
from tflite.LSTMKernelType import LSTMKernelType
from tflite.MirrorPadMode import MirrorPadMode
from tflite.Model import Model as FbModel
from tflite.Padding import Padding
from tflite.TensorType import TensorType

from .errors import ModelFormatError

FILE_IDENTIFIER = b"TFL3"

# Ops and tensor types newer than the bindings (TFLite schema.fbs, 2026).
_EXTRA_BUILTIN_OPS = {209: "STABLEHLO_CASE"}
_EXTRA_TENSOR_TYPES = {19: "INT2", 20: "UINT4", 21: "FLOAT8_E4M3FN", 22: "FLOAT8_E5M2"}


def _enum_names(cls: type) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


BUILTIN_OPS: dict[int, str] = {**_enum_names(BuiltinOperator), **_EXTRA_BUILTIN_OPS}
BUILTIN_OPS.pop(127, None)  # PLACEHOLDER_FOR_GREATER_OP_CODES is a sentinel, not an op
BUILTIN_CODES: dict[str, int] = {name: code for code, name in BUILTIN_OPS.items()}
TENSOR_TYPES: dict[int, str] = {**_enum_names(TensorType), **_EXTRA_TENSOR_TYPES}
CUSTOM_CODE = BuiltinOperator.CUSTOM

_ACTIVATIONS = _enum_names(ActivationFunctionType)
_ENUM_FIELDS: dict[str, dict[int, str]] = {
    "padding": _enum_names(Padding),
    "fused_activation_function": _ACTIVATIONS,
    "activation": _ACTIVATIONS,
    "weights_format": _enum_names(FullyConnectedOptionsWeightsFormat),
    "kernel_type": _enum_names(LSTMKernelType),
    "combiner": _enum_names(CombinerType),
    "mode": _enum_names(MirrorPadMode),
}
_DTYPE_FIELDS = {"out_type", "output_type", "in_data_type", "out_data_type", "idx_out_type",
                 "index_out_type", "quantized_bias_type"}


def builtin_bindings_codes() -> dict[int, str]:
    """The BuiltinOperator enum exactly as the installed bindings define it (for coverage tests)."""
    codes = _enum_names(BuiltinOperator)
    codes.pop(127, None)
    return codes


def op_name(builtin_code: int, custom_code: str | None) -> str:
    """Name an op: the builtin name, ``CUSTOM:<custom_code>``, or ``UNKNOWN_<code>``."""
    if builtin_code == CUSTOM_CODE:
        return f"CUSTOM:{custom_code or ''}"
    return BUILTIN_OPS.get(builtin_code, f"UNKNOWN_{builtin_code}")


def dtype_name(code: int) -> str:
    """Name a TensorType code (``UNKNOWN_<code>`` for codes beyond the schema)."""
    return TENSOR_TYPES.get(code, f"UNKNOWN_{code}")


def root(buf: Any) -> FbModel:
    """Return the flatbuffer root table of a model after checking its identifier and size."""
    if len(buf) < 8:
        raise ModelFormatError(f"file is too small to be a TFLite model ({len(buf)} bytes)")
    ident = bytes(buf[4:8])
    if ident != FILE_IDENTIFIER:
        raise ModelFormatError(
            f"not a TFLite flatbuffer (file identifier is {ident!r}, expected {FILE_IDENTIFIER!r})")
    (offset,) = struct.unpack_from("<I", buf, 0)
    if offset < 8 or offset + 4 > len(buf):
        raise ModelFormatError(f"root table offset {offset} lies outside the {len(buf)}-byte file")
    return FbModel.GetRootAs(buf, 0)


# ---------------------------------------------------------------------------------------------
# Options decoding: one generic reader for every options table of both unions.

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SKIP_SUFFIXES = ("AsNumpy", "Length", "IsNone", "BufferHasIdentifier")


def _snake(name: str) -> str:
    return _CAMEL_RE.sub("_", name).lower()


def _union_classes(union: type) -> dict[int, type]:
    out = {}
    for name, value in vars(union).items():
        if name.startswith("_") or not isinstance(value, int) or value == 0:
            continue
        cls = getattr(tflite, name, None)
        if isinstance(cls, type):
            out[value] = cls
    return out


_OPTIONS_1 = _union_classes(BuiltinOptions)
_OPTIONS_2 = _union_classes(BuiltinOptions2)
_READERS: dict[type, tuple[tuple[str, str], ...]] = {}


def _reader_plan(cls: type) -> tuple[tuple[str, str], ...]:
    """Which accessors of an options class to call: (method, kind) with kind scalar|vector."""
    plan = _READERS.get(cls)
    if plan is None:
        members = {k for k, v in vars(cls).items() if callable(v)}
        items = []
        for name in sorted(members):
            if name[0].islower() or name.startswith(("GetRootAs", "Init")) or name.endswith(_SKIP_SUFFIXES):
                continue
            kind = "vector" if f"{name}Length" in members else "scalar"
            items.append((name, kind))
        plan = _READERS[cls] = tuple(items)
    return plan


def _decode_table(cls: type, table: Any, buf_len: int) -> dict[str, Any]:
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for method, kind in _reader_plan(cls):
        key = _snake(method)
        if kind == "vector":
            n = getattr(obj, f"{method}Length")()
            if n < 0 or n > buf_len:
                raise ModelFormatError(f"options vector {key} claims {n} elements")
            getter = getattr(obj, method)
            value: Any = tuple(getter(i) for i in range(n))
        else:
            value = getattr(obj, method)()
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            elif not isinstance(value, (int, float, bool)) and value is not None:
                continue  # nested tables are not needed by any formula
        if key in _ENUM_FIELDS and isinstance(value, int):
            value = _ENUM_FIELDS[key].get(value, value)
        elif key in _DTYPE_FIELDS and isinstance(value, int):
            value = dtype_name(value)
        out[key] = value
    return out


def decode_options(fb_op: Any, buf_len: int) -> Mapping[str, Any]:
    """Decode ``builtin_options`` and ``builtin_options_2`` of an operator into one dict."""
    out: dict[str, Any] = {}
    for type_getter, table_getter, classes in (
        (fb_op.BuiltinOptionsType, fb_op.BuiltinOptions, _OPTIONS_1),
        (fb_op.BuiltinOptions2Type, fb_op.BuiltinOptions2, _OPTIONS_2),
    ):
        kind = type_getter()
        if not kind:
            continue
        cls = classes.get(kind)
        table = table_getter()
        if cls is None or table is None:
            continue  # an options table newer than the bindings: nothing to decode
        out.update(_decode_table(cls, table, buf_len))
    return MappingProxyType(out)


def vector_span(table_obj: Any, slot_offset: int) -> tuple[int, int]:
    """(start, length) in bytes of a ``[ubyte]`` vector field, or (0, 0) when absent."""
    tab = table_obj._tab
    o = tab.Offset(slot_offset)
    if not o:
        return 0, 0
    return tab.Vector(o), tab.VectorLen(o)


BUFFER_DATA_SLOT = 4  # Buffer.data is field 0 -> vtable slot 4
OPERATOR_CUSTOM_OPTIONS_SLOT = 14  # Operator.custom_options is field 5
