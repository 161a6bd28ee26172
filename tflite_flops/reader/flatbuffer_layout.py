"""The layout of flatbuffer tables, as the verifier reads it (field kinds, fields, schemas, spans), and the
columns it decodes them into (:class:`Columns`, :class:`SpanList`, :class:`UnionColumn`).

A :class:`Schema` names the root table and the file identifier and gives, for every table
type, its :class:`Field` list: vtable slot, kind (scalar, string, table, union, vector, vector
of tables or strings, unknown), scalar format, default, nested table or union members, and
whether a vector is returned as a :class:`Span` (weights and other big data that are checked
but never read). :mod:`tflite_flops.reader.schema` builds the TFLite schema (``MODEL_SCHEMA``) from the
generated bindings; :mod:`tflite_flops.reader.columnar` verifies and decodes a file with it.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

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


# ---------------------------------------------------------------------------------------------
# What the verifier decodes into: columns of tables (one value per table and field).

class SpanList(Sequence):
    """A column of span vectors: ``starts[i]``/``counts[i]``, or ``None`` where the field is absent."""

    __slots__ = ("starts", "counts")

    def __init__(self, starts: list[int | None], counts: list[int]) -> None:
        self.starts = starts
        self.counts = counts

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return SpanList(self.starts[i], self.counts[i])
        start = self.starts[i]
        return None if start is None else Span(start, self.counts[i])

    def __iter__(self) -> Iterator[Span | None]:
        new = tuple.__new__  # Span(s, c) without the named tuple's keyword __new__
        return (None if s is None else new(Span, (s, c)) for s, c in zip(self.starts, self.counts))


class Columns:
    """The decoded fields of ``n`` tables of one type: field name -> a sequence of ``n`` values.

    Values are as in the root table :func:`decode` returns: a vector of tables is a
    :class:`Columns` (or ``None`` when absent) and span vectors come as a :class:`SpanList`.
    """

    __slots__ = ("n", "fields")

    def __init__(self, n: int, fields: dict[str, Sequence[Any]]) -> None:
        self.n = n
        self.fields = fields

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, name: str) -> Sequence[Any]:
        return self.fields[name]

    def slice(self, lo: int, hi: int) -> "Columns":
        """Tables ``lo`` to ``hi`` (exclusive)."""
        return Columns(hi - lo, {k: v[lo:hi] for k, v in self.fields.items()})

    def rows(self) -> list[dict[str, Any]]:
        """One dict per table (nested vectors of tables stay :class:`Columns`)."""
        keys = list(self.fields)
        return [dict(zip(keys, values)) for values in zip(*(self.fields[k] for k in keys))] if keys else [
            {} for _ in range(self.n)]


class UnionColumn(Sequence):
    """A column of union values, kept by member type: ``groups`` of (type code, member table name,
    the indices of the tables that hold it, in ascending order, and the members' :class:`Columns`).

    Indexing gives the member as a dict, or None (no member, type 0, or a type newer than the
    schema). Readers that convert a whole column (operator options) use ``groups`` directly.
    """

    __slots__ = ("n", "groups")

    def __init__(self, n: int, groups: list[tuple[int, str, list[int], Columns]]) -> None:
        self.n = n
        self.groups = groups

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            lo, hi, _ = i.indices(self.n)
            groups = []
            for code, member, rows, cols in self.groups:
                a, b = bisect.bisect_left(rows, lo), bisect.bisect_left(rows, hi)
                if b > a:
                    groups.append((code, member, [r - lo for r in rows[a:b]], cols.slice(a, b)))
            return UnionColumn(max(hi - lo, 0), groups)
        if not -self.n <= i < self.n:
            raise IndexError(i)
        i %= self.n
        for _code, _member, rows, cols in self.groups:
            j = bisect.bisect_left(rows, i)
            if j < len(rows) and rows[j] == i:
                return {k: v[j] for k, v in cols.fields.items()}
        return None

    def __iter__(self) -> Iterator[dict[str, Any] | None]:
        values: list[Any] = [None] * self.n
        for _code, _member, rows, cols in self.groups:
            for i, row in zip(rows, cols.rows()):
                values[i] = row
        return iter(values)


def plain(value: Any) -> Any:
    """Columns and dicts holding them -> plain values: a vector of tables as a tuple of dicts."""
    if isinstance(value, Columns):
        return tuple(plain(row) for row in value.rows())
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value
