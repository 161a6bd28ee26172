"""A flatbuffers verifier that also decodes: untrusted bytes -> plain dicts, or ModelFormatError.

This plays the role of the C++ ``flatbuffers::Verifier`` that TFLite runs before it trusts a
model. Nothing reads the file through the generated bindings; instead :func:`verify` walks the
table tree described by a :class:`Schema` (built by ``schema.py`` from the bindings' field
layout) and checks, before each read:

* the root offset and the 4-byte file identifier;
* every table: 4-byte aligned, its vtable offset inside the file, the vtable 2-byte aligned,
  of even size >= 4 and wholly inside the file, the table's inline size inside the file, and
  every present field inside the table's inline part and aligned to its size;
* every offset: non-zero, below 2**31, pointing inside the file;
* every vector and string: its 4-byte length field aligned and inside the file, and the
  claimed length times the element size fitting in what is left of the file. A vector that
  claims 2**31 elements is refused *before* anything is allocated for it;
* strings: a terminating zero byte inside the file, and distinct strings holding no more
  bytes in all than the file (overlapping strings would make decoding quadratic);
* unions: a member table of the type named by the type field (unknown types, newer than the
  bindings, get the table-header checks only and decode to ``None``, as the C++ verifier
  accepts them);
* nesting depth (64), the number of distinct tables (1,000,000, as the C++ verifier) and
  the number of vector elements decoded into Python values (2**23; the elements of vectors of
  tables and strings count at every visit), so that a crafted file cannot make the walk take
  unbounded time or memory.

Decoded tables are memoised by (position, table type), so a file whose offsets all point at
one table costs one decode: the work is O(file size) whatever the offsets say. Vectors that
may be large or that hold weights (``Buffer.data``, quantization scales) are returned as a
``Span(start, count)`` and never read, so no weight page is touched.

:func:`verify` is the reference: one table at a time, each rule where it applies. The reader
uses :mod:`tflite_flops.columnar`, which checks the same rules on a whole vector of tables at
once with NumPy (several times faster on big models); the tests run both on the sample models
and on random mutations and require the same verdicts and the same decoded values.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from .errors import ModelFormatError

MAX_DEPTH = 64
MAX_TABLES = 1_000_000
MAX_DECODED = 1 << 23  # elements of non-span vectors decoded into Python tuples (~300 MB at worst)
_MAX_OFFSET = 1 << 31  # offsets are uoffset_t used as signed: FLATBUFFERS_MAX_BUFFER_SIZE

_U16x2 = struct.Struct("<HH")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")

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


def _memo_tag(f: Field) -> str:
    """Second half of the memo key of a vector: what it was decoded as."""
    return f"span{f.size}" if f.span else f.fmt


def verify(buf: Any, schema: Schema, *, max_depth: int = MAX_DEPTH, max_tables: int = MAX_TABLES) -> dict[str, Any]:
    """Verify ``buf`` against ``schema`` and return the decoded root table.

    Args:
        buf: the file's bytes (bytes, bytearray, mmap or memoryview).
        schema: table layouts, the root table's name and the file identifier.
        max_depth: deepest table nesting accepted.
        max_tables: most distinct tables accepted.

    Returns:
        The root table as a dict: field name -> scalar, str, tuple, nested dict, ``None``
        (absent table, string or vector), or a :class:`Span` for span vectors.

    Raises:
        ModelFormatError: the bytes break one of the rules in the module docstring.
    """
    check_header(buf, schema)
    return _Verifier(buf, schema, max_depth, max_tables).root()


def check_header(buf: Any, schema: Schema) -> None:
    """Refuse a buffer too small to hold a root offset and identifier, or with the wrong identifier."""
    size = len(buf)
    if size < 8:
        raise ModelFormatError(f"file is too small to be a TFLite model ({size} bytes)")
    ident = bytes(buf[4:8])
    if ident != schema.identifier:
        raise ModelFormatError(
            f"not a TFLite flatbuffer (file identifier is {ident!r}, expected {schema.identifier!r})")


class Walk:
    """What both verifiers share: one walk's limits and counters, and the checks made once per vtable."""

    def __init__(self, buf: Any, schema: Schema, max_depth: int, max_tables: int) -> None:
        self.buf = buf
        self.size = len(buf)
        self.schema = schema
        self.max_depth = max_depth
        self.max_tables = max_tables
        self.tables_seen = 0
        self.decoded = 0
        self.vtables: dict[int, tuple[tuple[int, ...], int]] = {}  # vtables are shared between tables
        self.layouts: dict[tuple[int, str], tuple[int, ...]] = {}  # (vtable, table type) -> field voffsets

    def root_offset(self) -> int:
        (rel,) = _U32.unpack_from(self.buf, 0)
        if rel < 8 or rel >= _MAX_OFFSET or rel + 4 > self.size:
            raise ModelFormatError(f"root table offset {rel} lies outside the {self.size}-byte file")
        return rel

    def enter(self, count: int, what: str, depth: int) -> None:
        """Count ``count`` tables at nesting ``depth``; refuse past the depth or table limit."""
        if depth > self.max_depth:
            raise ModelFormatError(f"{what}: tables nested deeper than {self.max_depth} levels")
        self.tables_seen += count
        if self.tables_seen > self.max_tables:
            raise ModelFormatError(f"more than {self.max_tables} tables: refusing to walk further")

    def count_decoded(self, n: int, what: str) -> None:
        """Count ``n`` more vector elements read into Python values; refuse past MAX_DECODED (before reading)."""
        self.decoded += n
        if self.decoded > MAX_DECODED:
            raise ModelFormatError(f"{what}: more than {MAX_DECODED:,} vector elements to decode "
                                   "(shapes, tensor lists, options): refusing to allocate them")

    def vtable(self, vt: int, t: int, what: str) -> tuple[tuple[int, ...], int]:
        """The field voffsets and table size of the vtable at ``vt`` (used by the table at ``t``), checked once."""
        cached = self.vtables.get(vt)
        if cached is None:
            size = self.size
            if vt < 0 or vt & 1 or vt + 4 > size:
                raise ModelFormatError(f"{what}: table at byte {t} has its vtable at {vt}, outside the file")
            vsize, tsize = _U16x2.unpack_from(self.buf, vt)
            if vsize & 1 or vsize < 4 or vt + vsize > size:
                raise ModelFormatError(f"{what}: vtable at byte {vt} has an invalid size {vsize}")
            if tsize < 4:
                raise ModelFormatError(f"{what}: vtable at byte {vt} gives its tables {tsize} bytes")
            n = (vsize - 4) >> 1
            cached = self.vtables[vt] = ((struct.unpack_from(f"<{n}H", self.buf, vt + 4) if n else ()), tsize)
        return cached

    def field_offsets(self, name: str, vt: int, voffs: tuple[int, ...], tsize: int) -> tuple[int, ...]:
        """Voffset of each field of ``schema.plan(name)`` in this vtable (0: absent), checked once per vtable.

        Present fields lie inside the table's inline part, aligned to their size (tables are
        4-aligned, so this holds for every table of the vtable) and do not overlap; fields the
        bindings cannot read are only checked to lie inside the table.
        """
        key = (vt, name)
        cached = self.layouts.get(key)
        if cached is None:
            nslots = len(voffs)
            offsets, spans = [], []
            for fname, idx, kind, _st, inline, _f in self.schema.plan(name):
                vo = voffs[idx] if idx < nslots else 0
                offsets.append(vo)
                if not vo:
                    continue
                if kind == UNKNOWN:
                    if vo + inline > tsize:
                        raise ModelFormatError(f"{name}.{fname}: field lies outside its table")
                    continue
                if vo < 4 or vo + inline > tsize:
                    raise ModelFormatError(f"{name}.{fname}: field at {vo} lies outside its {tsize}-byte table")
                if inline in (2, 4) and vo % inline:
                    raise ModelFormatError(f"{name}.{fname}: misaligned field (offset {vo} in its table)")
                spans.append((vo, inline, fname))
            end = 0
            for vo, inline, fname in sorted(spans):
                if vo < end:
                    raise ModelFormatError(f"{name}.{fname}: field overlaps another field of its table")
                end = vo + inline
            cached = self.layouts[key] = tuple(offsets)
        return cached


class _Verifier(Walk):
    """One verification walk, a table at a time; holds the memo of decoded tables."""

    def __init__(self, buf: Any, schema: Schema, max_depth: int, max_tables: int) -> None:
        super().__init__(buf, schema, max_depth, max_tables)
        self.string_bytes = 0
        self.memo: dict[tuple[int, str], Any] = {}
        self.compiled: dict[tuple[int, str], tuple[Any, ...]] = {}  # (vtable, table type) -> reader

    # -- primitives -------------------------------------------------------------------------

    def vector_len(self, pos: int, elem: int, what: str) -> int:
        """Length of the vector at ``pos``; refuses a length the rest of the file cannot hold."""
        if pos & 3 or pos + 4 > self.size:
            raise ModelFormatError(f"{what}: vector at byte {pos} is misaligned or outside the file")
        (n,) = _U32.unpack_from(self.buf, pos)
        room = self.size - pos - 4
        if n * elem > room:
            raise ModelFormatError(f"{what}: vector at byte {pos} claims {n} elements of {elem} bytes, "
                                   f"but only {room} bytes follow (truncated or corrupted)")
        return n

    def string(self, pos: int, what: str) -> str:
        key = (pos, "")
        hit = self.memo.get(key)
        if hit is None:
            n = self.vector_len(pos, 1, what)
            end = pos + 4 + n
            if end >= self.size or self.buf[end] != 0:
                raise ModelFormatError(f"{what}: string at byte {pos} has no terminating zero")
            self.string_bytes += n  # distinct strings of a valid file never share bytes
            if self.string_bytes > self.size:
                raise ModelFormatError(f"{what}: strings overlap (more string bytes than the file holds; corrupted)")
            hit = self.memo[key] = bytes(self.buf[pos + 4:end]).decode("utf-8", "replace")
        return hit

    def table_header(self, t: int, what: str, depth: int) -> tuple[int, tuple[int, ...], int]:
        """Check a table's start and vtable; return (vtable position, field voffsets, inline size)."""
        self.enter(1, what, depth)
        if t & 3 or t + 4 > self.size:
            raise ModelFormatError(f"{what}: table at byte {t} is misaligned or outside the file")
        vt = t - _I32.unpack_from(self.buf, t)[0]
        voffs, tsize = self.vtable(vt, t, what)
        if t + tsize > self.size:
            raise ModelFormatError(f"{what}: table at byte {t} claims {tsize} bytes, past the end of the file")
        return vt, voffs, tsize

    def compile(self, name: str, vt: int, voffs: tuple[int, ...], tsize: int) -> tuple[Any, ...]:
        """How to read every table of type ``name`` that uses this vtable.

        Returns (Struct over the present inline fields, their names, defaults of the absent
        fields, offset fields as (name, voffset, kind, Field, memo tag), voffsets of 8-byte scalars whose
        alignment depends on the table's position).
        """
        present = []
        defaults: dict[str, Any] = {}
        for (fname, _idx, kind, _st, inline, f), vo in zip(self.schema.plan(name),
                                                          self.field_offsets(name, vt, voffs, tsize)):
            if not vo or kind == UNKNOWN:
                defaults[fname] = f.default if not vo else None
                continue
            present.append((vo, inline, fname, f.fmt if kind == SCALAR else "I", kind, f))
        present.sort(key=lambda p: p[0])
        fmt, end = ["<"], 0
        for vo, inline, _fname, code, _kind, _f in present:  # checked: in order, no overlaps
            fmt.append(f"{vo - end}x{code}" if vo > end else code)
            end = vo + inline
        names = tuple(p[2] for p in present)
        offsets = tuple((fname, vo, kind, f, _memo_tag(f)) for vo, _i, fname, _c, kind, f in present
                        if kind != SCALAR)
        align8 = tuple(vo for vo, inline, *_ in present if inline == 8)
        return struct.Struct("".join(fmt)), names, defaults, offsets, align8

    # -- tables -----------------------------------------------------------------------------

    def root(self) -> dict[str, Any]:
        return self.table(self.root_offset(), self.schema.root, 1)

    def table(self, t: int, name: str, depth: int) -> dict[str, Any]:
        key = (t, name)
        memo = self.memo
        hit = memo.get(key)
        if hit is not None:
            return hit
        vt, voffs, tsize = self.table_header(t, name, depth)
        ckey = (vt, name)
        compiled = self.compiled.get(ckey)
        if compiled is None:
            compiled = self.compiled[ckey] = self.compile(name, vt, voffs, tsize)
        st, names, defaults, offsets, align8 = compiled
        out = dict(zip(names, st.unpack_from(self.buf, t)))
        if defaults:
            out.update(defaults)
        for vo in align8:
            if (t + vo) & 7:
                raise ModelFormatError(f"{name}: misaligned 8-byte field at byte {t + vo}")
        size = self.size
        for fname, vo, kind, f, tag in offsets:
            rel = out[fname]
            p = t + vo
            target = p + rel
            if rel == 0 or rel >= _MAX_OFFSET or target >= size:
                raise ModelFormatError(f"{name}.{fname}: invalid offset {rel} at byte {p} "
                                       f"(the file has {size} bytes; truncated or corrupted)")
            if kind == VECTOR:
                value = memo.get((target, tag))
                out[fname] = value if value is not None else self.vector(target, f, name)
            elif kind == VEC_TABLE:
                sub, d = f.table, depth + 1
                table = self.table
                out[fname] = tuple([table(e, sub, d) for e in self.elements(target, name)])
            elif kind == STRING:
                value = memo.get((target, ""))
                out[fname] = value if value is not None else self.string(target, name)
            elif kind == TABLE:
                out[fname] = self.table(target, f.table, depth + 1)
            elif kind == UNION:
                out[fname] = self.union(target, f, out.get(f.type_field, 0), f"{name}.{fname}", depth + 1)
            elif kind == VEC_STRING:
                out[fname] = tuple(self.string(e, name) for e in self.elements(target, name))
        memo[key] = out
        return out

    def vector(self, pos: int, f: Field, what: str) -> Any:
        key = (pos, _memo_tag(f))
        hit = self.memo.get(key)
        if hit is None:
            n = self.vector_len(pos, f.size, what)
            if f.span:
                hit = Span(pos + 4, n)
            else:
                self.count_decoded(n, what)
                hit = struct.unpack_from(f"<{n}{f.fmt}", self.buf, pos + 4) if n else ()
            self.memo[key] = hit
        return hit

    def elements(self, pos: int, what: str) -> list[int]:
        """Targets of a vector of offsets (tables or strings), counted as decoded elements at every visit.

        Counting every visit bounds the work on a file whose many tables share one long vector.
        """
        n = self.vector_len(pos, 4, what)
        self.count_decoded(n, what)
        start = pos + 4
        rels = struct.unpack_from(f"<{n}I", self.buf, start) if n else ()
        out = []
        size = self.size
        for i, rel in enumerate(rels):
            at = start + 4 * i
            target = at + rel
            if rel == 0 or rel >= _MAX_OFFSET or target >= size:
                raise ModelFormatError(f"{what}[{i}]: invalid offset {rel} at byte {at}")
            out.append(target)
        return out

    def union(self, pos: int, f: Field, code: Any, what: str, depth: int) -> dict[str, Any] | None:
        if not code:
            return None
        member = (f.union or {}).get(int(code))
        if member is None:  # a type newer than our schema: accepted, not decoded
            self.table_header(pos, f"{what} (type {code})", depth)
            return None
        return self.table(pos, member, depth)
