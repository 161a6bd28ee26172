"""The layout of flatbuffer tables, as the verifier reads it: field kinds, fields, schemas, spans.

A :class:`Schema` names the root table and the file identifier and gives, for every table
type, its :class:`Field` list: vtable slot, kind (scalar, string, table, union, vector, vector
of tables or strings, unknown), scalar format, default, nested table or union members, and
whether a vector is returned as a :class:`Span` (weights and other big data that are checked
but never read). :mod:`tflite_flops.reader.schema` builds the TFLite schema (``MODEL_SCHEMA``) from the
generated bindings; :mod:`tflite_flops.reader.columnar` verifies and decodes a file with it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, Sequence

# Field kinds.
SCALAR, STRING, TABLE, UNION, VECTOR, VEC_TABLE, VEC_STRING, UNKNOWN = (
    "scalar", "string", "table", "union", "vector", "vec_table", "vec_string", "unknown")


class Span(NamedTuple):
    """Where a vector's elements lie in the file, for vectors that are checked but not read."""

    start: int  # byte offset of the first element
    count: int  # number of elements


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a table, as the verifier needs it.

    Attributes:
        name: key of the value in the decoded dict (snake_case).
        slot: byte offset of the field's entry in the vtable (4, 6, 8, ...).
        kind: one of scalar, string, table, union, vector, vec_table, vec_string, unknown.
        fmt: struct code of a scalar or of a vector's elements ("i", "B", "f", "?", ...).
        size: bytes of the scalar or of one vector element.
        default: value of an absent scalar field.
        table: layout name of a nested table or of a vector's tables.
        union: for a union, type code -> layout name of the member table.
        type_field: for a union, the name of the field that holds its type code.
        span: for a vector, return a :class:`Span` instead of the values (weights, big data).
    """

    name: str
    slot: int
    kind: str
    fmt: str = ""
    size: int = 0
    default: Any = None
    table: str = ""
    union: Mapping[int, str] | None = None
    type_field: str = ""
    span: bool = False


class Schema:
    """Table layouts by name, resolved lazily through ``resolve(name) -> fields``."""

    def __init__(self, resolve: Callable[[str], Sequence[Field]], root: str, identifier: bytes) -> None:
        self.resolve = resolve
        self.root = root
        self.identifier = identifier
        self._plans: dict[str, tuple[Any, ...]] = {}

    def plan(self, name: str) -> tuple[Any, ...]:
        """The compiled field plan of a table: (name, vtable index, kind, Struct, inline size, field)."""
        plan = self._plans.get(name)
        if plan is None:
            items = []
            for f in sorted(self.resolve(name), key=lambda f: f.slot):
                inline = f.size if f.kind == SCALAR else 4 if f.kind != UNKNOWN else 1
                st = struct.Struct("<" + f.fmt) if f.kind == SCALAR else None
                items.append((f.name, (f.slot - 4) >> 1, f.kind, st, inline, f))
            plan = self._plans[name] = tuple(items)
        return plan
