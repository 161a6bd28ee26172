"""The reference the tests hold the shipped reader to: a simple verifier and the bindings' options.

* :func:`verify` checks the rules of :mod:`tflite_flops.reader.columnar` one table at a time, each rule
  where it applies, and returns plain dicts. It is simple enough to read rule by rule; the
  columnar verifier checks the same rules a whole vector of tables at a time with NumPy, and
  ``tests/test_columnar.py`` requires both to give the same verdicts and the same values (after
  ``columnar.plain``) on the sample models, crafted files and random mutations. It shares the
  per-vtable checks and the limits of ``columnar.Walk``; unlike the columnar verifier it keeps a
  memo of decoded tables, so its table budget counts distinct tables, not visits.
* :func:`decode_options` reads an operator's options through the generated ``tflite`` bindings
  (on verified bytes only), an independent check of the options the reader decodes.
"""

from __future__ import annotations

import struct
from types import MappingProxyType
from typing import Any, Mapping

from tflite_flops.reader.columnar import MAX_DEPTH, MAX_OFFSET, MAX_TABLES, Walk, check_header
from tflite_flops.errors import ModelFormatError
from tflite_flops.reader.flatbuffer_layout import (SCALAR, STRING, TABLE, UNION, UNKNOWN, VEC_STRING, VEC_TABLE,
                                                   VECTOR, Field, Schema, Span)
from tflite_flops.reader.schema import (_DTYPE_FIELDS, _ENUM_FIELDS, _OPTIONS_1, _OPTIONS_2, _snake, accessors,
                                        dtype_name)

_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")


def _memo_tag(f: Field) -> str:
    """Second half of the memo key of a vector: what it was decoded as."""
    return f"span{f.size}" if f.span else f.fmt


def verify(buf: Any, schema: Schema, *, max_depth: int = MAX_DEPTH, max_tables: int = MAX_TABLES) -> dict[str, Any]:
    """What ``columnar.decode`` returns after ``columnar.plain``, one table at a time.

    Same arguments and errors as ``columnar.decode``, except that ``max_tables`` counts distinct
    tables (decoded tables are memoised by position and type), not visits.
    """
    check_header(buf, schema)
    return _Verifier(buf, schema, max_depth, max_tables).root()


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
            if rel == 0 or rel >= MAX_OFFSET or target >= size:
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
            if rel == 0 or rel >= MAX_OFFSET or target >= size:
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


# -- options through the bindings ------------------------------------------------------------

def _decode_table(cls: type, table: Any, buf_len: int) -> dict[str, Any]:
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for method, is_vector in accessors(cls):
        key = _snake(method)
        if is_vector:
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
