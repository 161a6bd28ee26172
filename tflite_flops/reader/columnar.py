"""The flatbuffer verifier: untrusted bytes -> decoded tables, or ModelFormatError.

This plays the role of the C++ ``flatbuffers::Verifier`` that TFLite runs before it trusts a
model. Nothing reads the file through the generated bindings; instead :func:`decode` walks the
table tree described by a :class:`~tflite_flops.reader.flatbuffer_layout.Schema` (the TFLite one is
``schema.MODEL_SCHEMA``, built from the bindings' field layout) and checks, before each read:

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
* nesting depth (64), the number of table visits (1,000,000, as the C++ verifier) and the
  number of vector elements decoded into Python values (2**23; the elements of vectors of
  tables and strings count at every visit), so that a crafted file cannot make the walk take
  unbounded time or memory.

Vectors that may be large or that hold weights (``Buffer.data``, quantization scales) are
returned as a ``Span(start, count)`` and never read, so no weight page is touched.

Instead of walking one table at a time, :func:`decode` takes *all* tables of one type at one
place in the schema (every Tensor of a subgraph, every Operator, every Conv2DOptions...) and
checks them together with array operations. The number of NumPy passes therefore depends on
the schema, not on the model: a 20,000-op model costs the same number of passes as a 20-op
one, and Python only runs per table to build the values the reader needs (names, shapes, spans).
A batch of one table (the root, a model's only subgraph) is checked with Python ints and
``struct`` instead, the same checks in the same order: there NumPy's per-call overhead is all
the cost.

The result keeps vectors of tables as :class:`~tflite_flops.reader.flatbuffer_layout.Columns` (field name -> one value per table)
instead of one dict per table; :func:`~tflite_flops.reader.flatbuffer_layout.plain` turns it into one dict per table. The tests keep
a simple one-table-at-a-time verifier of the same rules (``tests/reference_verifier.py``) and
require both to give the same verdicts and the same decoded values, on the sample models and
on random mutations.

With no memo of decoded tables, both budgets count every *visit* (a table reached twice counts
twice), as flatbuffers' C++ verifier does. Both stay far above what real models need, and they
bound the work on a file whose offsets all point at one table. A string shared by many tables
is decoded once.
"""

from __future__ import annotations

import struct
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ModelFormatError
from .flatbuffer_layout import (SCALAR, STRING, TABLE, UNION, UNKNOWN, VEC_STRING, VEC_TABLE, VECTOR, Columns, Field,
                                Schema, SpanList, UnionColumn)

MAX_DEPTH = 64
MAX_TABLES = 1_000_000
MAX_DECODED = 1 << 23  # elements of non-span vectors decoded into Python tuples (~300 MB at worst)
# The work of a decode is bounded by the file's size, not only by the constants above: a file whose
# offsets all point at one table would otherwise make a few bytes cost one table visit each, and the
# reader and the analysis after it do per-table work in Python. Visits allowed: base + size // bytes.
# Real models need far less: the densest sample holds one table per 60 bytes, one operator per
# ~150 bytes (its table, vectors and output tensor) and one subgraph per several KiB.
TABLES_PER_FILE = (16_384, 16)  # every table visit
# The costliest tables to read and analyze. A subgraph: every visit counts. An operator: the visits of a table
# already visited (a vector that names one table many times: 4 bytes an operator, no real model has one) count
# against TYPE_LIMITS, and the distinct tables against DISTINCT_LIMITS. A distinct operator holds bytes of its
# own: its slot in the operator vector (4), its table (12 and more) and its inputs or outputs vector (8 and
# more), 24 bytes at least; an op that writes a tensor of its own adds that tensor's table, shape and name
# (~48 bytes an op in a chain built by tests/tflite_builder.py, ~150 in the densest sample). So the work of
# the distinct operators grows with the bytes that hold them, and dense valid files are read whole.
TYPE_LIMITS = {"SubGraph": (1_024, 512), "Operator": (4_096, 128)}
DISTINCT_LIMITS = {"Operator": (4_096, 24)}
DECODED_PER_FILE = (65_536, 2)  # vector elements decoded: a shared vector counts once per holder


def size_limit(size: int, rule: tuple[int, int]) -> int:
    """The visits a ``(base, bytes per visit)`` rule allows in a file of ``size`` bytes."""
    base, per = rule
    return base + size // per
MAX_OFFSET = 1 << 31  # offsets are uoffset_t used as signed: FLATBUFFERS_MAX_BUFFER_SIZE

_U16x2 = struct.Struct("<HH")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_SCALARS: dict[str, struct.Struct] = {}  # struct format -> its little-endian Struct


def decode(buf: Any, schema: Schema, *, max_depth: int = MAX_DEPTH,
           max_tables: int = MAX_TABLES) -> dict[str, Any]:
    """Verify ``buf`` against ``schema`` and return the root table as a dict.

    Args:
        buf: the file's bytes (bytes, bytearray, mmap or memoryview).
        schema: table layouts, the root table's name and the file identifier.
        max_depth: deepest table nesting accepted.
        max_tables: most table visits accepted.

    Returns:
        The root table as a dict: field name -> scalar, str, tuple, nested dict, ``None``
        (absent table, string or vector), a :class:`Span` for span vectors, a :class:`Columns`
        for a vector of tables (a :class:`SpanList` for its span fields, a :class:`UnionColumn`
        for its unions).

    Raises:
        ModelFormatError: the bytes break one of the rules in the module docstring.
    """
    check_header(buf, schema)
    return _ColumnVerifier(buf, schema, max_depth, max_tables).root()


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
    """One walk's limits and counters, and the checks made once per vtable.

    The tests' one-table-at-a-time reference verifier shares it, so both count and refuse alike.
    """

    def __init__(self, buf: Any, schema: Schema, max_depth: int, max_tables: int) -> None:
        self.buf = buf
        self.size = len(buf)
        self.schema = schema
        self.max_depth = max_depth
        self.max_tables = max_tables
        self.tables_seen = 0
        self.decoded = 0
        self.max_decoded = MAX_DECODED
        self.vtables: dict[int, tuple[tuple[int, ...], int]] = {}  # vtables are shared between tables
        self.layouts: dict[tuple[int, str], tuple[int, ...]] = {}  # (vtable, table type) -> field voffsets

    def root_offset(self) -> int:
        (rel,) = _U32.unpack_from(self.buf, 0)
        if rel < 8 or rel >= MAX_OFFSET or rel + 4 > self.size:
            raise ModelFormatError(f"root table offset {rel} lies outside the {self.size}-byte file")
        return rel

    def enter(self, count: int, what: str, depth: int) -> None:
        """Count ``count`` tables at nesting ``depth``; refuse past the depth or table limit."""
        if depth > self.max_depth:
            raise ModelFormatError(f"{what}: tables nested deeper than {self.max_depth} levels")
        self.tables_seen += count
        if self.tables_seen > self.max_tables:
            raise ModelFormatError(f"more than {self.max_tables:,} tables in a {self.size:,}-byte file: "
                                   "refusing to walk further")

    def count_decoded(self, n: int, what: str) -> None:
        """Count ``n`` more vector elements read into Python values; refuse past ``max_decoded`` (before reading)."""
        self.decoded += n
        if self.decoded > self.max_decoded:
            raise ModelFormatError(f"{what}: more than {self.max_decoded:,} vector elements to decode "
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


def _absent_column(f: Field, n: int) -> Sequence[Any]:
    """The column of a field that none of ``n`` tables holds."""
    if f.kind == UNION:
        return UnionColumn(n, [])
    if f.span:
        return SpanList([None] * n, [0] * n)
    return [f.default if f.kind in (SCALAR, UNKNOWN) else None] * n


def _first(bad: np.ndarray) -> int | None:
    """Index of the first True of a mask, or None (``argmax``: one C call, where ``any`` goes through Python)."""
    if not len(bad):
        return None
    i = int(bad.argmax())
    return i if bad[i] else None


def _raise_if(bad: np.ndarray, message: Callable[[int], str]) -> None:
    i = _first(bad)
    if i is not None:
        raise ModelFormatError(message(i))


def _scatter(n: int, where: np.ndarray, values: list[Any], fill: Any = None) -> list[Any]:
    """A list of ``n`` values: ``values`` at the indices ``where``, ``fill`` elsewhere."""
    if len(values) == n:
        return values
    out = [fill] * n
    for i, v in zip(where.tolist(), values):
        out[i] = v
    return out


def _filled(n: int, where: np.ndarray, values: np.ndarray, fill: Any) -> np.ndarray | None:
    """An array of ``n``: ``values`` at the indices ``where``, ``fill`` elsewhere; None unless the
    array's type holds ``fill`` exactly (an int for integers, a bool for bools: then its ``tolist``
    equals :func:`_scatter` of the values' ``tolist``)."""
    if (type(fill) is int and values.dtype.kind in "iu") or (type(fill) is bool and values.dtype.kind == "b"):
        try:
            full = np.full(n, fill, dtype=values.dtype)
        except OverflowError:  # a default the field's type cannot hold
            return None
        full[where] = values
        return full
    return None


def _span_column(n: int, where: np.ndarray | None, starts: np.ndarray, counts: np.ndarray) -> SpanList:
    """The :class:`SpanList` of ``n`` tables, of which those at ``where`` (None: all) hold the vectors."""
    if where is None:
        return SpanList(starts.tolist(), counts.tolist())
    full = np.zeros(n, dtype=np.int64)
    full[where] = counts
    all_counts = full.tolist()
    full[where] = starts
    all_starts: list[int | None] = full.tolist()
    absent = np.ones(n, dtype=bool)
    absent[where] = False
    for i in absent.nonzero()[0].tolist():
        all_starts[i] = None
    return SpanList(all_starts, all_counts)


def unique_ints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)`` for 1-D integer arrays.

    Written out because ``np.unique`` imports ``numpy.ma`` on first use, which costs more than
    reading a whole model.
    """
    order = values.argsort(kind="stable")
    ordered = values[order]
    new = np.ones(len(values), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(values), dtype=np.intp)
    inverse[order] = new.cumsum() - 1
    return ordered[new], order[new], inverse


def _bounds(counts: np.ndarray) -> tuple[list[int], list[int]]:
    """Start and end of each run of ``counts`` consecutive elements in their concatenation."""
    ends = counts.cumsum()
    return (ends - counts).tolist(), ends.tolist()


def _runs(starts: np.ndarray, counts: np.ndarray, step: int, total: int | None = None) -> np.ndarray:
    """Concatenated ``starts[i] + step * k`` for k in range(counts[i]): every element's position.

    ``total`` is ``counts.sum()`` when the caller knows it.
    """
    if total is None:
        total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    if len(counts) == 1:  # one run
        return np.arange(total, dtype=np.int64) * step + int(starts[0])
    before = counts.cumsum() - counts
    inside = np.arange(total, dtype=np.int64)
    if step != 1:
        inside *= step
        before *= step
    return (starts - before).repeat(counts) + inside


class _ColumnVerifier(Walk):
    """One verification walk over a whole file, a batch of same-typed tables at a time."""

    def __init__(self, buf: Any, schema: Schema, max_depth: int, max_tables: int) -> None:
        super().__init__(buf, schema, max_depth, min(max_tables, size_limit(len(buf), TABLES_PER_FILE)))
        self.max_decoded = min(MAX_DECODED, size_limit(len(buf), DECODED_PER_FILE))
        self.type_limits = {name: size_limit(len(buf), rule) for name, rule in TYPE_LIMITS.items()}
        self.type_seen = dict.fromkeys(TYPE_LIMITS, 0)  # visits (of a table already visited, for DISTINCT_LIMITS')
        self.distinct_limits = {name: size_limit(len(buf), rule) for name, rule in DISTINCT_LIMITS.items()}
        self.distinct: dict[str, set[int]] = {name: set() for name in DISTINCT_LIMITS}  # their tables' positions
        self._views: dict[str, np.ndarray] = {}
        self.u8 = self.view("B")
        self.u16 = self.view("H")
        self.i32 = self.view("i")
        self.u32 = self.view("I")

    def view(self, fmt: str) -> np.ndarray:
        """The whole file as an array of the struct type ``fmt`` (aligned elements only)."""
        arr = self._views.get(fmt)
        if arr is None:
            dtype = np.dtype("<" + ("u1" if fmt == "?" else fmt))
            arr = self._views[fmt] = np.frombuffer(self.buf, dtype=dtype, count=self.size // dtype.itemsize)
        return arr

    def gather_array(self, fmt: str, pos: np.ndarray) -> np.ndarray:
        """The values of type ``fmt`` at the (aligned, checked) byte positions ``pos``, as an array (bools for ``?``)."""
        arr = self.view(fmt)
        values = arr[pos // arr.itemsize]
        return values != 0 if fmt == "?" else values

    def gather(self, fmt: str, pos: np.ndarray) -> list[Any]:
        """Python values of type ``fmt`` at the (aligned, checked) byte positions ``pos``."""
        if len(pos) == 1:  # one table (the root, a model's only subgraph): struct, without NumPy's overhead
            st = _SCALARS.get(fmt) or _SCALARS.setdefault(fmt, struct.Struct("<" + fmt))
            return list(st.unpack_from(self.buf, int(pos[0])))
        arr = self.view(fmt)
        values = arr[pos // arr.itemsize]
        return (values != 0).tolist() if fmt == "?" else values.tolist()

    # -- primitives -------------------------------------------------------------------------

    def vector_lengths(self, pos: np.ndarray, elem: int, what: str) -> np.ndarray:
        """Lengths of the vectors at ``pos``; refuses any that the rest of the file cannot hold.

        One vector is checked with Python ints, the same checks in the same order (as in
        :meth:`offsets`, :meth:`headers`, :meth:`string_values` and :meth:`scalar_vectors`):
        a batch of one is common (the root table, a model's only subgraph) and NumPy's
        per-call overhead would dominate it.
        """
        size = self.size
        if len(pos) == 1:
            p = int(pos[0])
            if p & 3 or p + 4 > size:
                raise ModelFormatError(f"{what}: vector at byte {p} is misaligned or outside the file")
            (count,) = _U32.unpack_from(self.buf, p)
            room = size - p - 4
            if count * elem > room:
                raise ModelFormatError(
                    f"{what}: vector at byte {p} claims {count} elements of {elem} bytes, but only {room} bytes "
                    "follow (truncated or corrupted)")
            return np.array([count], dtype=np.int64)
        _raise_if(((pos & 3) != 0) | (pos + 4 > size), lambda i: (
            f"{what}: vector at byte {pos[i]} is misaligned or outside the file"))
        n = self.u32[pos >> 2].astype(np.int64)
        room = size - pos - 4
        _raise_if(n * elem > room, lambda i: (
            f"{what}: vector at byte {pos[i]} claims {n[i]} elements of {elem} bytes, but only {room[i]} bytes "
            "follow (truncated or corrupted)"))
        return n

    def offsets(self, at: np.ndarray, what: Callable[[int], str], detail: str = "") -> np.ndarray:
        """Targets of the uoffsets stored at the (4-aligned) positions ``at``, each checked."""
        if len(at) == 1:
            a = int(at[0])
            (one,) = _U32.unpack_from(self.buf, a)
            if one == 0 or one >= MAX_OFFSET or a + one >= self.size:
                raise ModelFormatError(f"{what(0)}: invalid offset {one} at byte {a}{detail}")
            return np.array([a + one], dtype=np.int64)
        rel = self.u32[at >> 2]  # uint32; the sum with the int64 positions is int64
        target = at + rel
        _raise_if((rel == 0) | (rel >= MAX_OFFSET) | (target >= self.size), lambda i: (
            f"{what(i)}: invalid offset {rel[i]} at byte {at[i]}{detail}"))
        return target

    def elements(self, pos: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Targets of every element of the offset vectors at ``pos`` (concatenated) and each vector's length."""
        n = self.vector_lengths(pos, 4, what)
        total = int(n.sum())
        self.count_decoded(total, what)
        at = _runs(pos + 4, n, 4, total)
        if not total:
            return at, n

        def where(i: int) -> str:  # the element's index within its vector, for the message only
            before = (n.cumsum() - n).repeat(n)
            return f"{what}[{i - int(before[i])}]"

        return self.offsets(at, where), n

    def string_values(self, pos: np.ndarray, what: str) -> list[str]:
        """The strings at ``pos``, each checked for its length and terminating zero.

        Each distinct string of the batch is decoded once. Distinct strings of a valid file
        occupy disjoint bytes, so a batch of more string bytes than the file holds means
        overlapping (crafted) strings: refused, as their decoding would otherwise grow with the
        square of the file size.
        """
        if len(pos) == 1:
            return [self.string_value(pos, what)]
        if _first(pos[1:] >= pos[:-1]) is None:  # strictly decreasing, as flatbuffers builders write them
            strings = self.distinct_strings(pos[::-1], what)
            strings.reverse()
            return strings
        if _first(pos[1:] <= pos[:-1]) is None:  # strictly increasing
            return self.distinct_strings(pos, what)
        places, _, which = unique_ints(pos)
        strings = self.distinct_strings(places, what)
        return [strings[k] for k in which.tolist()]

    def distinct_strings(self, places: np.ndarray, what: str) -> list[str]:
        """:meth:`string_values` of strings at distinct, ascending positions ``places``."""
        n = self.vector_lengths(places, 1, what)
        end = places + 4 + n
        inside = end < self.size
        bad = ~inside
        bad[inside] = self.u8[end[inside]] != 0
        _raise_if(bad, lambda i: f"{what}: string at byte {places[i]} has no terminating zero")
        if int(n.sum()) > self.size:
            raise ModelFormatError(f"{what}: strings overlap (more string bytes than the file holds; corrupted)")
        # One decode for all: each string with its terminating zero, split on the zeros. A
        # string holding a zero byte of its own breaks the count; those files decode one by one.
        blob = self.u8[_runs(places + 4, n + 1, 1)].tobytes()
        strings = blob.decode("utf-8", "replace").split("\0")
        if len(strings) == len(places) + 1:
            strings.pop()
        else:
            buf = self.buf
            strings = [bytes(buf[p + 4:e]).decode("utf-8", "replace") for p, e in zip(places.tolist(), end.tolist())]
        return strings

    def string_value(self, pos: np.ndarray, what: str) -> str:
        """:meth:`string_values` of one string (``pos`` holds its position): the same checks, with Python ints."""
        n = self.vector_lengths(pos, 1, what)
        p = int(pos[0])
        count = int(n[0])
        end = p + 4 + count
        if end >= self.size or self.buf[end] != 0:
            raise ModelFormatError(f"{what}: string at byte {p} has no terminating zero")
        if count > self.size:
            raise ModelFormatError(f"{what}: strings overlap (more string bytes than the file holds; corrupted)")
        strings = bytes(self.buf[p + 4:end + 1]).decode("utf-8", "replace").split("\0")
        if len(strings) == 2:
            return strings[0]
        return bytes(self.buf[p + 4:end]).decode("utf-8", "replace")  # a zero byte inside the string

    def scalar_vectors(self, pos: np.ndarray, fmt: str, elem: int, what: str) -> list[tuple[Any, ...]]:
        """The scalar vectors at ``pos`` as tuples (counted against the decoded-element budget)."""
        n = self.vector_lengths(pos, elem, what)
        total = int(n.sum())
        self.count_decoded(total, what)
        if len(pos) == 1:  # one vector: one struct call
            return [struct.unpack_from(f"<{total}{fmt}", self.buf, int(pos[0]) + 4)]
        first = pos + 4
        if elem == 8 and ((first & 7) != 0).any():  # 8-byte elements off their natural alignment
            return [struct.unpack_from(f"<{c}{fmt}", self.buf, p) if c else ()
                    for p, c in zip(first.tolist(), n.tolist())]
        if not total:
            return [()] * len(pos)
        values = tuple(self.gather(fmt, _runs(first, n, elem, total)))  # a tuple's slices are tuples
        if n.min() == n.max():  # vectors of one length: cut by zip, without a slice per vector
            return list(zip(*[iter(values)] * int(n[0])))
        lo, hi = _bounds(n)
        return [values[a:b] for a, b in zip(lo, hi)]

    # -- tables -----------------------------------------------------------------------------

    def root(self) -> dict[str, Any]:
        cols = self.tables(np.array([self.root_offset()], dtype=np.int64), self.schema.root, 1)
        return {k: v[0] for k, v in cols.fields.items()}

    def headers(self, t: np.ndarray, name: str, depth: int) -> tuple[list[int], np.ndarray, list[tuple[tuple[int, ...], int]]]:
        """Check the tables at ``t`` and their vtables.

        Returns the distinct vtable positions, which of them each table uses, and per distinct
        vtable its field voffsets and the inline size it gives its tables.
        """
        self.enter(len(t), name, depth)
        if name in self.type_seen:
            self.count_type(t, name)
        size = self.size
        if len(t) == 1:  # one table: the same checks with Python ints
            t0 = int(t[0])
            if t0 & 3 or t0 > size - 4:
                raise ModelFormatError(f"{name}: table at byte {t0} is misaligned or outside the file")
            vt0 = t0 - _I32.unpack_from(self.buf, t0)[0]
            layout = self.vtable(vt0, t0, name)
            if t0 > size - layout[1]:
                raise ModelFormatError(f"{name}: table at byte {t0} claims {layout[1]} bytes, past the end of the file")
            return [vt0], np.zeros(1, dtype=np.intp), [layout]
        _raise_if(((t & 3) != 0) | (t > size - 4), lambda i: (
            f"{name}: table at byte {t[i]} is misaligned or outside the file"))
        vt = t - self.i32[t >> 2]  # int64
        low, high = int(vt.min()), int(vt.max())
        if low == high:  # one vtable for all (the common case for options tables)
            distinct, first, which = [low], [0], np.zeros(len(t), dtype=np.intp)
        else:
            is_low, is_high = vt == low, vt == high
            if np.count_nonzero(is_low) + np.count_nonzero(is_high) == len(t):  # two: as unique_ints gives them
                distinct, first = [low, high], [int(is_low.argmax()), int(is_high.argmax())]
                which = is_high.astype(np.intp)
            else:
                uniq, first_at, which = unique_ints(vt)
                distinct, first = uniq.tolist(), first_at.tolist()
        layouts = [self.vtable(v, int(t[i]), name) for v, i in zip(distinct, first)]
        if len(layouts) == 1:
            tsize = layouts[0][1]
            _raise_if(t > size - tsize, lambda i: (
                f"{name}: table at byte {t[i]} claims {tsize} bytes, past the end of the file"))
        else:
            tsizes = np.array([ts for _, ts in layouts], dtype=np.int64)[which]
            _raise_if(t + tsizes > size, lambda i: (
                f"{name}: table at byte {t[i]} claims {tsizes[i]} bytes, past the end of the file"))
        return distinct, which, layouts

    def count_type(self, t: np.ndarray, name: str) -> None:
        """Count the tables at ``t`` against their type's limits (TYPE_LIMITS, DISTINCT_LIMITS); refuse past one."""
        visits = len(t)
        distinct = self.distinct.get(name)
        if distinct is not None:
            before = len(distinct)
            distinct.update(t.tolist())
            new = len(distinct) - before
            visits -= new  # the visits of tables already visited
            if len(distinct) > self.distinct_limits[name]:
                base, per = DISTINCT_LIMITS[name]
                raise ModelFormatError(f"more than {self.distinct_limits[name]:,} distinct {name} tables in a "
                                       f"{self.size:,}-byte file (limit {base:,} + one per {per} bytes): refusing "
                                       "to read further")
        self.type_seen[name] += visits
        if self.type_seen[name] > self.type_limits[name]:
            base, per = TYPE_LIMITS[name]
            again = " named again (one table named by many entries)" if distinct is not None else ""
            raise ModelFormatError(f"more than {self.type_limits[name]:,} {name} tables{again} in a {self.size:,}-byte "
                                   f"file (limit {base:,} + one per {per} bytes): refusing to read further")

    def tables(self, t: np.ndarray, name: str, depth: int) -> Columns:
        """Verify and decode the tables of type ``name`` at the byte positions ``t``."""
        plan = self.schema.plan(name)
        n = len(t)
        if n == 0:
            return Columns(0, {fname: _absent_column(f, 0) for fname, *_, f in plan})
        distinct, which, layouts = self.headers(t, name, depth)
        per_vtable = [self.field_offsets(name, v, voffs, tsize) for v, (voffs, tsize) in zip(distinct, layouts)]
        out: dict[str, Sequence[Any]] = {}
        arrays: dict[str, np.ndarray] = {}  # scalar columns as arrays too (a union's type codes are grouped with them)
        for j, (fname, _idx, kind, _st, inline, f) in enumerate(plan):
            offsets = [vo[j] for vo in per_vtable]
            if not any(offsets) or kind == UNKNOWN:
                absent = f.default if kind in (SCALAR, UNKNOWN) else None
                out[fname] = _absent_column(f, n) if not any(offsets) else [
                    None if offsets[w] else absent for w in which.tolist()]
                continue
            if len(offsets) == 1:  # one vtable: the field is at the same place in every table
                rows = None
                at = t + offsets[0]
            elif all(offsets):  # every table holds the field
                rows = None
                at = t + np.array(offsets, dtype=np.int64)[which]
            else:
                vo = np.array(offsets, dtype=np.int64)[which]
                rows = vo.nonzero()[0]
                at = t[rows] + vo[rows]
                if len(rows) == n:
                    rows = None
            if inline == 8:
                _raise_if((at & 7) != 0, lambda i: f"{name}: misaligned 8-byte field at byte {at[i]}")
            if kind == SCALAR:
                if n == 1:
                    out[fname] = self.gather(f.fmt, at)
                    continue
                values = self.gather_array(f.fmt, at)
                if rows is not None:
                    values = _filled(n, rows, values, f.default)
                    if values is None:  # a default the array cannot hold: filled in Python
                        out[fname] = _scatter(n, rows, self.gather(f.fmt, at), f.default)
                        continue
                arrays[fname] = values
                out[fname] = values.tolist()
                continue
            target = self.offsets(at, lambda i: f"{name}.{fname}",
                                  f" (the file has {self.size} bytes; truncated or corrupted)")
            if kind == UNION:
                if f.type_field not in out:  # (the type field comes first in every schema)
                    codes = np.zeros(n, dtype=np.int64)
                else:
                    codes = arrays.get(f.type_field)
                    if codes is None:
                        codes = np.array(out[f.type_field], dtype=np.int64)
                out[fname] = self.union(target, codes if rows is None else codes[rows], rows, n, f,
                                        f"{name}.{fname}", depth + 1)
                continue
            if kind == VECTOR and f.span:  # (start, count) of each vector, never read
                out[fname] = _span_column(n, rows, target + 4, self.vector_lengths(target, f.size, name))
                continue
            values = self.follow(target, kind, f, name, depth + 1)
            out[fname] = values if rows is None else _scatter(n, rows, values)
        return Columns(n, out)

    def follow(self, target: np.ndarray, kind: str, f: Field, name: str, depth: int) -> Any:
        """The values of an offset field of kind ``kind`` at the checked targets."""
        if kind == VECTOR:  # (vectors returned as spans are read by tables(), with _span_column)
            return self.scalar_vectors(target, f.fmt, f.size, name)
        if kind == STRING:
            return self.string_values(target, name)
        if kind == TABLE:
            return self.tables(target, f.table, depth).rows()
        elements, n = self.elements(target, name)
        if kind == VEC_TABLE:
            sub = self.tables(elements, f.table, depth)
            if len(n) == 1:  # one parent holds them all (the root's subgraphs, a subgraph's tensors)
                return [sub]
            lo, hi = _bounds(n)
            return [sub.slice(a, b) for a, b in zip(lo, hi)]
        if kind == VEC_STRING:
            strings = self.string_values(elements, name)
            lo, hi = _bounds(n)
            return [tuple(strings[a:b]) for a, b in zip(lo, hi)]
        raise AssertionError(kind)  # every offset kind is handled above

    def union(self, target: np.ndarray, codes: np.ndarray, parents: np.ndarray | None, n: int, f: Field,
              what: str, depth: int) -> UnionColumn:
        """The union members at ``target``, of type ``codes``, held by the tables ``parents`` of ``n``
        (None: all of them), grouped by type code."""
        members = f.union or {}
        groups = []
        for code in sorted(set(codes.tolist())):
            if not code:
                continue
            idx = (codes == code).nonzero()[0]
            member = members.get(code)
            if member is None:  # a type newer than our schema: accepted, not decoded
                self.headers(target[idx], f"{what} (type {code})", depth)
                continue
            held = idx if parents is None else parents[idx]
            groups.append((code, member, held.tolist(), self.tables(target[idx], member, depth)))
        return UnionColumn(n, groups)
