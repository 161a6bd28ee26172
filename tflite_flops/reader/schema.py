"""The one module that imports the generated TFLite flatbuffer bindings (PyPI package ``tflite``).

Everything else in the package sees plain Python values: op names, dtype names and option
dicts with snake_case keys (``stride_w``, ``fused_activation_function``, ``keep_num_dims``).
Enum-typed option fields are decoded to their names (``"SAME"``, ``"RELU6"``, ``"INT8"``).

The bindings never read a model's bytes: :data:`MODEL_SCHEMA` describes every table (field
slots, types, defaults, unions; the types of :mod:`tflite_flops.reader.flatbuffer_layout`) as read off
the bindings, and :mod:`tflite_flops.reader.columnar` verifies and decodes the file with it. (The tests
read operators through the bindings too, as an independent check of that decoding.)

What is read off the bindings is kept in ``schema_tables.json`` beside this module (the enums, the
options unions' members and every table's layout, :func:`bindings_snapshot`), so that reading a
model does not import the bindings' ~200 modules (~40 ms of every run); a test holds that file equal
to what the installed bindings give, and :func:`write_snapshot` rewrites it. A table
the file lacks is read off the bindings, as before.

The bindings in use may be older than the schema of a model. Codes they do not know are
filled in from the TFLite schema here (``STABLEHLO_CASE = 209``, the newest tensor types).
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import replace
from typing import Any, Mapping, Sequence

from . import flatbuffer_layout as layout
from ..errors import ModelFormatError

FILE_IDENTIFIER = b"TFL3"

# Ops and tensor types newer than the bindings (TFLite schema.fbs, 2026).
_EXTRA_BUILTIN_OPS = {209: "STABLEHLO_CASE"}
_EXTRA_TENSOR_TYPES = {19: "INT2", 20: "UINT4", 21: "FLOAT8_E4M3FN", 22: "FLOAT8_E5M2"}
# Options tables newer than the bindings, by builtin_options_2 union code (their layouts: _NEWER_FIELDS).
_EXTRA_OPTIONS_2 = {23: "StablehloCaseOptions"}


_TABLES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema_tables.json")
# the enums of the bindings that name codes here (the snapshot keeps each as {code: name})
_ENUMS = ("BuiltinOperator", "TensorType", "ActivationFunctionType", "Padding", "FullyConnectedOptionsWeightsFormat",
          "LSTMKernelType", "CombinerType", "MirrorPadMode")


def _bindings() -> Any:
    """The generated bindings (imported only where the snapshot does not answer)."""
    import tflite  # the generated bindings; nothing else in tflite_flops imports them

    return tflite


def _binding_class(tflite: Any, name: str) -> type:
    """The generated class ``name`` (the package exports it, or its module of the same name)."""
    found = getattr(tflite, name)
    return found if isinstance(found, type) else getattr(found, name)


def _load_snapshot() -> dict[str, Any]:
    """``schema_tables.json``: what :func:`bindings_snapshot` read off the bindings, keys back to ints."""
    with open(_TABLES_FILE, encoding="utf-8") as f:
        raw = json.load(f)
    return {"enums": {name: {int(k): v for k, v in codes.items()} for name, codes in raw["enums"].items()},
            "options": [{int(k): v for k, v in members.items()} for members in raw["options"]],
            "tables": raw["tables"]}


_SNAPSHOT = _load_snapshot()


def _enum_names(cls: type) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


def _enum(name: str) -> dict[int, str]:
    return dict(_SNAPSHOT["enums"][name])


BUILTIN_OPS: dict[int, str] = {**_enum("BuiltinOperator"), **_EXTRA_BUILTIN_OPS}
BUILTIN_OPS.pop(127, None)  # PLACEHOLDER_FOR_GREATER_OP_CODES is a sentinel, not an op
BUILTIN_CODES: dict[str, int] = {name: code for code, name in BUILTIN_OPS.items()}
TENSOR_TYPES: dict[int, str] = {**_enum("TensorType"), **_EXTRA_TENSOR_TYPES}
CUSTOM_CODE = BUILTIN_CODES["CUSTOM"]

_ACTIVATIONS = _enum("ActivationFunctionType")
_ENUM_FIELDS: dict[str, dict[int, str]] = {
    "padding": _enum("Padding"),
    "fused_activation_function": _ACTIVATIONS,
    "activation": _ACTIVATIONS,
    "weights_format": _enum("FullyConnectedOptionsWeightsFormat"),
    "kernel_type": _enum("LSTMKernelType"),
    "combiner": _enum("CombinerType"),
    "mode": _enum("MirrorPadMode"),
}
_DTYPE_FIELDS = {"out_type", "output_type", "in_data_type", "out_data_type", "idx_out_type",
                 "index_out_type", "quantized_bias_type"}


def builtin_bindings_codes() -> dict[int, str]:
    """The BuiltinOperator enum exactly as the installed bindings define it (for coverage tests)."""
    codes = _enum_names(_binding_class(_bindings(), "BuiltinOperator"))
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


# ---------------------------------------------------------------------------------------------
# The accessors of the generated classes and the options tables of both unions.

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SKIP_SUFFIXES = ("AsNumpy", "Length", "IsNone", "BufferHasIdentifier")


def _snake(name: str) -> str:
    return _CAMEL_RE.sub("_", name).lower()


def _union_classes(union: type) -> dict[int, type]:
    tflite = _bindings()
    out = {}
    for name, value in vars(union).items():
        if name.startswith("_") or not isinstance(value, int) or value == 0:
            continue
        cls = getattr(tflite, name, None)
        if isinstance(cls, type):
            out[value] = cls
    return out


# the options tables of ``builtin_options`` and ``builtin_options_2``: union code -> table name
_OPTIONS_NAMES: tuple[dict[int, str], dict[int, str]] = (_SNAPSHOT["options"][0],
                                                          {**_EXTRA_OPTIONS_2, **_SNAPSHOT["options"][1]})
_OPTIONS_TABLES = {name for members in _OPTIONS_NAMES for name in members.values()}


def __getattr__(name: str) -> Any:  # PEP 562: the options classes of the bindings, for the tests' reference decoder
    if name in ("_OPTIONS_1", "_OPTIONS_2"):
        union = _binding_class(_bindings(), "BuiltinOptions" if name == "_OPTIONS_1" else "BuiltinOptions2")
        value = globals()[name] = _union_classes(union)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def accessors(cls: type) -> tuple[tuple[str, bool], ...]:
    """The field accessors of a generated table class, as (method name, is a vector), by name."""
    members = {k for k, v in vars(cls).items() if callable(v)}
    return tuple((name, f"{name}Length" in members) for name in sorted(members)
                 if not (name[0].islower() or name.startswith("GetRootAs") or name == "Init"
                         or name.endswith(_SKIP_SUFFIXES)))


# ---------------------------------------------------------------------------------------------
# Table layouts for the verifier (columnar.py), read off the generated bindings.
#
# Each accessor of a generated class is run once against a probe that stands in for
# ``flatbuffers.table.Table`` and records what the accessor reads: its vtable slot, whether it
# follows an offset (table, string, vector, union) and the scalar type it unpacks. Run once
# more with the field absent, it returns the field's default. The layouts therefore follow
# the installed bindings exactly, for all ~200 options tables, without a hand-kept copy of
# schema.fbs. Nothing here ever touches a model's bytes.

# union accessor name -> the bindings' enum of its member types
_UNION_ENUMS = {"BuiltinOptions": "BuiltinOptions", "BuiltinOptions2": "BuiltinOptions2",
                "Details": "QuantizationDetails", "ArraySegments": "SparseIndexVector",
                "ArrayIndices": "SparseIndexVector"}
# (table, field) vectors returned as (start, count) spans and never read: weights and
# per-channel data that nothing needs element by element.
_SPAN_FIELDS = {("Buffer", "data"), ("Operator", "custom_options"), ("QuantizationParameters", "min"),
                ("QuantizationParameters", "max"), ("QuantizationParameters", "scale"),
                ("QuantizationParameters", "zero_point"), ("Int32Vector", "values"),
                ("Uint16Vector", "values"), ("Uint8Vector", "values")}


class _Probe:
    """Stands in for ``flatbuffers.table.Table`` and records what one accessor reads."""

    __slots__ = ("Bytes", "Pos", "slot", "kind", "flags", "absent")

    def __init__(self, absent: bool = False) -> None:
        self.Bytes = b""
        self.Pos = 0
        self.slot: int | None = None
        self.kind: str | None = None
        self.flags: Any = None
        self.absent = absent

    def Offset(self, slot: int) -> int:  # noqa: N802 - the bindings' API
        if self.slot is None:
            self.slot = slot
        return 0 if self.absent else 4

    def Get(self, flags: Any, off: int) -> Any:  # noqa: N802
        if self.flags is None:
            self.flags = flags
        if self.kind is None:
            self.kind = layout.SCALAR
        return flags.py_type(0)

    def Vector(self, off: int) -> int:  # noqa: N802
        self.kind = layout.VECTOR
        return 8

    def VectorLen(self, off: int) -> int:  # noqa: N802
        return 1

    def String(self, off: int) -> bytes:  # noqa: N802
        self.kind = layout.STRING if self.kind is None else layout.VEC_STRING
        return b""

    def Indirect(self, off: int) -> int:  # noqa: N802
        self.kind = layout.TABLE if self.kind is None else layout.VEC_TABLE
        return 8

    def Union(self, table: Any, off: int) -> Any:  # noqa: N802
        self.kind = layout.UNION
        return table


def _call(cls: type, method: str, probe: _Probe, is_vector: bool) -> Any:
    obj = cls.__new__(cls)
    obj._tab = probe
    fn = getattr(obj, method)
    return fn(0) if is_vector else fn()


def _union_members(method: str) -> dict[int, str]:
    enum = getattr(_bindings(), _UNION_ENUMS.get(method, method), None)
    enum_cls = getattr(enum, _UNION_ENUMS.get(method, method), enum) if enum is not None else None
    if not isinstance(enum_cls, type):
        return {}
    return {code: cls.__name__ for code, cls in _union_classes(enum_cls).items()}


# Fields of the TFLite schema newer than the bindings of the ``tflite`` package: weights stored
# outside the model (LiteRT's external buffers; a LiteRT-LM bundle keeps them in a TFLiteWeights
# section). Added to a table only when its bindings lack them. Slot = 4 + 2 * field id.
_NEWER_FIELDS: dict[str, tuple[layout.Field, ...]] = {
    "Tensor": (layout.Field("external_buffer", 24, layout.SCALAR, fmt="I", size=4, default=0),),
    "Model": (layout.Field("external_buffer_groups", 20, layout.VEC_TABLE, table="ExternalBufferGroup"),
              layout.Field("external_buffers", 22, layout.VEC_TABLE, table="ExternalBuffer")),
    "ExternalBufferGroup": (layout.Field("name", 4, layout.STRING),),
    "ExternalBuffer": (layout.Field("id", 4, layout.SCALAR, fmt="I", size=4, default=0),
                       layout.Field("group", 6, layout.SCALAR, fmt="I", size=4, default=0),
                       layout.Field("offset", 8, layout.SCALAR, fmt="Q", size=8, default=0),
                       layout.Field("length", 10, layout.SCALAR, fmt="Q", size=8, default=0),
                       layout.Field("packing", 12, layout.STRING)),
    # table StablehloCaseOptions { branch_subgraph_indices: [int]; } (builtin_options_2 member 23)
    "StablehloCaseOptions": (layout.Field("branch_subgraph_indices", 4, layout.VECTOR, fmt="i", size=4),),
}


@functools.lru_cache(maxsize=None)
def table_layout(name: str) -> tuple[layout.Field, ...]:
    """The verifier's field list of table ``name`` (a class of the bindings, e.g. ``"Tensor"``),
    with the schema's newer fields the bindings lack (:data:`_NEWER_FIELDS`).

    Raises:
        ModelFormatError: no such table in the bindings.
    """
    try:
        known_fields = _SNAPSHOT["tables"].get(name)
        fields = [_field(f) for f in known_fields] if known_fields is not None else _binding_layout(name)
    except ModelFormatError:
        if name not in _NEWER_FIELDS:
            raise
        fields = []  # a table newer than the bindings
    known = {f.name for f in fields}
    if name == "Operator":  # the options_2 union's members newer than the bindings
        fields = [replace(f, union={**_EXTRA_OPTIONS_2, **f.union}) if f.name == "builtin_options2" and f.union
                  else f for f in fields]
    return tuple(fields) + tuple(f for f in _NEWER_FIELDS.get(name, ()) if f.name not in known)


def _field(row: Sequence[Any]) -> layout.Field:
    """A :class:`~tflite_flops.reader.flatbuffer_layout.Field` from its row in ``schema_tables.json``."""
    name, slot, kind, fmt, size, default, table, union, type_field, span = row
    return layout.Field(name, slot, kind, fmt=fmt, size=size, default=default, table=table,
                        union=None if union is None else {int(k): v for k, v in union.items()},
                        type_field=type_field, span=span)


def _binding_layout(name: str) -> list[layout.Field]:
    """The field list of a table, read off the generated bindings."""
    module = getattr(_bindings(), name, None)
    cls = getattr(module, name, module)
    if not isinstance(cls, type):
        raise ModelFormatError(f"no table {name!r} in the schema bindings")
    fields = []
    for method, is_vector in accessors(cls):
        probe = _Probe()
        try:
            result = _call(cls, method, probe, is_vector)
            default = _call(cls, method, _Probe(absent=True), is_vector)
        except Exception:  # noqa: BLE001 - an accessor shape we do not know: checked as opaque
            result, default = None, None
            probe.kind = layout.UNKNOWN if probe.slot is not None else None
        if probe.slot is None or probe.kind is None:
            continue
        key = _snake(method)
        kind = probe.kind
        fmt = probe.flags.packer_type.format.lstrip("<") if probe.flags is not None else ""
        size = probe.flags.bytewidth if probe.flags is not None else 4
        table = type(result).__name__ if kind in (layout.TABLE, layout.VEC_TABLE) else ""
        if kind == layout.UNION:
            fields.append(layout.Field(key, probe.slot, kind, union=_union_members(method),
                                       type_field=f"{key}_type"))
        elif kind == layout.VECTOR:
            # Byte vectors are spans too (opaque blobs), except in options tables: every op's
            # options hold those as tuples of ints, so the verifier decodes them and counts them
            # against its budget of decoded elements (many ops sharing one long vector are refused
            # before anything is allocated, as for the options' other vectors).
            span = (name, key) in _SPAN_FIELDS or (fmt in ("B", "b") and name not in _OPTIONS_TABLES)
            fields.append(layout.Field(key, probe.slot, kind, fmt=fmt, size=size, span=span))
        elif kind == layout.SCALAR:
            fields.append(layout.Field(key, probe.slot, kind, fmt=fmt, size=size, default=default))
        else:
            fields.append(layout.Field(key, probe.slot, kind, table=table))
    return fields


MODEL_SCHEMA = layout.Schema(table_layout, root="Model", identifier=FILE_IDENTIFIER)


def options_columns(code: int, second: bool,
                    table: Mapping[str, Sequence[Any]]) -> tuple[list[str], list[Sequence[Any]]]:
    """Options of many ops holding options table type ``code``, a field (column) at a time.

    Args:
        code: the member type of the ``builtin_options`` union (``builtin_options_2`` if ``second``).
        table: field name -> one decoded value per op, as the verifier returns them.

    Returns:
        The option names and, for each, one converted value per op: enums named, TensorType
        codes named, absent vectors ``()``, byte vectors as tuples of ints; nested tables dropped.
    """
    table_name = _OPTIONS_NAMES[1 if second else 0].get(code or 0)
    plan = _options_plan(table_name) if table_name is not None else {}
    names, columns = [], []
    for name, values in table.items():
        how = plan.get(name)
        if how == "skip":  # nested tables: no formula needs them
            continue
        if how == "vector":
            values = [() if v is None else v for v in values]
        elif how == "dtype":
            values = [dtype_name(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values]
        elif how is not None:  # an enum: value -> name
            values = [how.get(v, v) if isinstance(v, int) else v for v in values]
        names.append(name)
        columns.append(values)
    return names, columns


@functools.lru_cache(maxsize=None)
def _options_plan(name: str) -> dict[str, Any]:
    """How :func:`options_columns` converts each field of options table ``name``.

    field -> "vector" (absent -> ``()``, byte span -> tuple of ints), "dtype" (a TensorType
    name), "skip" (nested tables: no formula needs them) or an enum's value -> name map.
    Fields not listed pass through unchanged.
    """
    plan: dict[str, Any] = {}
    for f in table_layout(name):
        if f.kind in (layout.VECTOR, layout.VEC_STRING):
            plan[f.name] = "vector"
        elif f.kind in (layout.TABLE, layout.VEC_TABLE, layout.UNION):
            plan[f.name] = "skip"
        elif f.name in _ENUM_FIELDS:
            plan[f.name] = _ENUM_FIELDS[f.name]
        elif f.name in _DTYPE_FIELDS:
            plan[f.name] = "dtype"
    return plan


def bindings_snapshot() -> dict[str, Any]:
    """What this module reads off the installed bindings, as ``schema_tables.json`` keeps it: the enums
    (:data:`_ENUMS`), the two options unions' members and the layout of every table reachable from the
    root (:func:`_binding_layout`, without the schema's newer fields, which :func:`table_layout` adds)."""
    tflite = _bindings()
    enums = {name: _enum_names(_binding_class(tflite, name)) for name in _ENUMS}
    options = [{code: cls.__name__ for code, cls in _union_classes(union).items()}
               for union in (_binding_class(tflite, "BuiltinOptions"), _binding_class(tflite, "BuiltinOptions2"))]
    tables: dict[str, list[list[Any]]] = {}
    todo = ["Model", *sorted({name for members in options for name in members.values()})]
    while todo:
        name = todo.pop()
        if name in tables:
            continue
        try:
            fields = _binding_layout(name)
        except ModelFormatError:
            continue  # a table newer than the bindings (``_NEWER_FIELDS``)
        tables[name] = [[f.name, f.slot, f.kind, f.fmt, f.size, f.default, f.table,
                         None if f.union is None else {str(k): v for k, v in sorted(f.union.items())},
                         f.type_field, f.span] for f in fields]
        todo += [f.table for f in fields if f.table] + [v for f in fields if f.union for v in f.union.values()]
    return {"bindings": "the generated TFLite flatbuffer bindings (PyPI package tflite); "
                        "tflite_flops.reader.schema.write_snapshot() rewrites this file",
            "enums": {name: {str(k): v for k, v in sorted(codes.items())} for name, codes in enums.items()},
            "options": [{str(k): v for k, v in sorted(members.items())} for members in options],
            "tables": dict(sorted(tables.items()))}


def write_snapshot(path: str = _TABLES_FILE) -> None:
    """Write :func:`bindings_snapshot` to ``schema_tables.json`` (one table per line)."""
    snap = bindings_snapshot()
    lines = ["{", f'"bindings": {json.dumps(snap["bindings"])},',
             '"enums": {' + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in snap["enums"].items()) + "},",
             '"options": [' + ",\n".join(json.dumps(m) for m in snap["options"]) + "],",
             '"tables": {' + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in snap["tables"].items()) + "}",
             "}"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
