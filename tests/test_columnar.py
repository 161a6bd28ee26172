"""The columnar verifier (what ``load_model`` uses) against the one-table-at-a-time reference.

``reference_verifier.verify`` (a tests helper) walks a flatbuffer one table at a time and is
simple enough to read rule by rule; ``columnar.decode`` checks the same rules a whole vector of
tables at a time with NumPy. Both must accept and refuse the same files and decode the same
values: on the sample models, on in-memory models, on crafted schemas, and on thousands of
random mutations.
"""

from __future__ import annotations

import math
import random
import struct

import pytest
import reference_verifier
from fuzz_corpus import mutate, seed_corpus
from reference_verifier import verify
from work_counter import Tally, counting

from tflite_flops.reader import columnar, schema
from tflite_flops.reader.flatbuffer_layout import plain
from tflite_flops.errors import ModelFormatError
from tflite_flops.reader.flatbuffer_layout import VEC_STRING, VEC_TABLE, Field, Schema, Span


def _both(data: bytes, sch: Schema = schema.MODEL_SCHEMA, **limits) -> tuple[object, object]:
    """(reference result or its error, columnar result or its error), errors as ModelFormatError."""
    out = []
    for run in (lambda: verify(data, sch, **limits), lambda: plain(columnar.decode(data, sch, **limits))):
        try:
            out.append(run())
        except ModelFormatError as exc:
            out.append(exc)
    return out[0], out[1]


def _same(a: object, b: object) -> bool:
    """Deep equality in which NaN equals NaN (a mutated option can decode to NaN in both)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple) and type(a) is type(b):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_seed_models_decode_identically():
    corpus = seed_corpus()  # the sample models and in-memory control-flow / custom / unknown-op models
    assert len(corpus) >= 10
    for data in corpus:
        ref, col = _both(data)
        assert not isinstance(ref, ModelFormatError), ref
        assert _same(ref, col)


def test_columns_keep_vectors_of_tables_as_columns(samples_dir):
    root = columnar.decode((samples_dir / "cnn_int8.tflite").read_bytes(), schema.MODEL_SCHEMA)
    subgraphs = root["subgraphs"]
    assert isinstance(subgraphs, columnar.Columns) and len(subgraphs) == 1
    tensors = subgraphs["tensors"][0]
    assert isinstance(tensors, columnar.Columns)
    assert len(tensors["name"]) == len(tensors) > 10
    data = root["buffers"]["data"]
    assert isinstance(data, columnar.SpanList)
    assert any(isinstance(span, Span) and span.count > 100 for span in data)  # weights: spans, not values


@pytest.mark.parametrize("limits, message", [
    ({"max_tables": 5}, "more than 5 tables"),
    ({"max_depth": 2}, "deeper than 2"),
])
def test_limits_refuse_in_both(limits, message, samples_dir):
    data = (samples_dir / "cnn_float.tflite").read_bytes()
    ref, col = _both(data, **limits)
    assert isinstance(ref, ModelFormatError) and message in str(ref)
    assert isinstance(col, ModelFormatError) and message in str(col)


# -- crafted files over a one-table schema: root { names: [string] } --------------------------

_NAMES = Schema(lambda name: (Field("names", 4, VEC_STRING),), root="Root", identifier=b"TEST")


def _names_file(strings: list[int], blob: bytes, blob_at: int = 0) -> bytes:
    """A file whose root holds a vector of offsets to ``strings`` (byte positions inside ``blob``)."""
    n = len(strings)
    head = struct.pack("<I4sHHHH", 16, b"TEST", 6, 8, 4, 0)  # root at 16; vtable at 8: 6 bytes, table 8
    table = struct.pack("<iI", 16 - 8, 4)  # soffset to the vtable; the vector 4 bytes after the field
    vector_at = 24
    start = vector_at + 4 + 4 * n
    offsets = [start + s - (vector_at + 4 + 4 * k) for k, s in enumerate(strings)]
    return head + table + struct.pack(f"<I{n}I", n, *offsets) + blob


def test_shared_strings_decode_once_and_agree():
    blob = struct.pack("<I", 5) + b"hello\0\0\0"
    data = _names_file([0] * 1000, blob)
    ref, col = _both(data, _NAMES)
    assert ref == col == {"names": ("hello",) * 1000}


def _count_gathered(monkeypatch, budget: int | None = None) -> tuple[Tally, Tally]:
    """Tallies of the work of both verifiers, counted where it is done (no clock).

    columnar: the elements every gather asks ``columnar._runs`` for (offset vectors, scalar
    vectors, string bytes), counted *before* the gather runs, so a budget stops a huge one
    before it allocates. reference: the characters of every string it decodes.
    """
    col, ref = Tally(budget), Tally(budget)
    monkeypatch.setattr(columnar, "_runs", counting(
        columnar._runs, col, before=lambda starts, counts, step, total=None: int(counts.sum())))
    monkeypatch.setattr(reference_verifier._Verifier, "string", counting(
        reference_verifier._Verifier.string, ref, after=len))
    return col, ref


def test_overlapping_strings_are_refused_before_decoding_them(monkeypatch):
    # 20,000 strings that start 4 bytes apart and all run to the same terminating zero: each one
    # is valid alone, but decoding them all would take ~800 MB. A valid file's distinct strings
    # never share bytes, so both verifiers refuse more string bytes than the file holds.
    m = 20_000
    blob = bytearray(4 * m + 1)
    for j in range(m):
        struct.pack_into("<I", blob, 4 * j, 4 * m - 4 * j - 4)  # runs to the zero at the end
    data = _names_file([4 * j for j in range(m)], bytes(blob))
    # Work, not time: neither verifier may gather or decode more than the file's bytes (a
    # regression would ask for ~800 M and is stopped by the budget before it allocates them).
    col_work, ref_work = _count_gathered(monkeypatch, budget=len(data))
    ref, col = _both(data, _NAMES)
    assert isinstance(ref, ModelFormatError) and "strings overlap" in str(ref)
    assert isinstance(col, ModelFormatError) and "strings overlap" in str(col)
    assert col_work.total <= m  # the one vector of 20,000 string offsets; no string bytes
    assert ref_work.total < 2 * 4 * m  # the strings decoded before their sum passed the file size


def test_string_with_an_inner_zero_byte():
    blob = struct.pack("<I", 3) + b"a\0b\0" + struct.pack("<I", 2) + b"cd\0\0"
    ref, col = _both(_names_file([0, 8], blob), _NAMES)
    assert ref == col == {"names": ("a\0b", "cd")}


# -- differential fuzzing ------------------------------------------------------------------------

# A fixed number of mutations, not a time budget: every machine checks the same files, and a
# slow machine cannot make the test check fewer.
SMOKE_MUTATIONS = 400
BUDGET_MUTATIONS = 4000


def _differential(cases: int, seed: int) -> tuple[int, int]:
    """Run ``cases`` mutations (the same ones on every machine); returns (cases, how many both accepted)."""
    rng = random.Random(seed)
    corpus = seed_corpus()
    accepted = 0
    for count in range(cases):
        data, what = mutate(rng, rng.choice(corpus), corpus)
        ref, col = _both(data)
        same = (isinstance(ref, ModelFormatError) and isinstance(col, ModelFormatError)) or _same(ref, col)
        assert same, f"mutation {count} ({what}): reference {ref!r:.200} vs columnar {col!r:.200}"
        accepted += not isinstance(ref, ModelFormatError)
    return cases, accepted


@pytest.mark.slow
def test_differential_fuzz_smoke():
    _, accepted = _differential(SMOKE_MUTATIONS, 20261122)
    print(f"\ndifferential fuzz: {SMOKE_MUTATIONS} mutations, {accepted} accepted by both, 0 disagreements")
    assert accepted > 0


@pytest.mark.slow
def test_differential_fuzz_budget():
    _, accepted = _differential(BUDGET_MUTATIONS, 7)
    print(f"\ndifferential fuzz: {BUDGET_MUTATIONS} mutations, {accepted} accepted by both, 0 disagreements")
    assert accepted > 0


_SHARED = Schema(lambda name: {"Root": (Field("items", 4, VEC_TABLE, table="Item"),),
                               "Item": (Field("names", 4, VEC_STRING),)}[name], root="Root", identifier=b"TEST")


def _shared_vector_file(n: int, m: int) -> bytes:
    """``n`` tables that all point at one vector of ``m`` strings: n·m element visits."""
    out = bytearray(struct.pack("<I4sHHH2x", 16, b"TEST", 6, 8, 4))  # root at 16, vtable at 8 (shared)
    out += struct.pack("<iI", 8, 4)  # root table: soffset to vtable 8, items vector 4 bytes later
    items_at = len(out)
    tables_at = items_at + 4 + 4 * n
    out += struct.pack("<I", n) + b"".join(
        struct.pack("<I", tables_at + 8 * k - (items_at + 4 + 4 * k)) for k in range(n))
    names_at = tables_at + 8 * n
    for k in range(n):  # each item table: soffset to the vtable at 8, names vector offset
        at = tables_at + 8 * k
        out += struct.pack("<iI", at - 8, names_at - (at + 4))
    strings_at = names_at + 4 + 4 * m
    out += struct.pack("<I", m) + b"".join(
        struct.pack("<I", strings_at - (names_at + 4 + 4 * k)) for k in range(m))
    out += struct.pack("<I", 1) + b"x\0\0\0"  # every entry names the same string
    return bytes(out)


@pytest.mark.parametrize("n", [1000, 4000])
def test_a_vector_shared_by_many_tables_is_bounded(monkeypatch, n):
    # n tables that all point at one vector of n strings: n·n element visits (16 M for n = 4,000)
    # from a file of 16·n bytes. Both verifiers count offset-vector elements at every visit and
    # stop at MAX_DECODED instead of building n·n entries. Work, not time: the elements each one
    # really visits are counted, and stay under the limit when n·n is 5 or 80 times over it.
    # The limit is lowered to 200,000 so that the one-table-at-a-time reference reaches it in
    # a fraction of a second (at the shipped 2**23 it walks 8 M elements in Python first).
    limit = 200_000
    monkeypatch.setattr(columnar, "MAX_DECODED", limit)
    # (the columnar verifier's own, tighter bound in proportion to the file is tested on its own below)
    monkeypatch.setattr(columnar, "DECODED_PER_FILE", (limit, 1 << 40))
    col_work = Tally(budget=limit)  # a regression stops here instead of building n·n entries
    monkeypatch.setattr(columnar, "_runs", counting(
        columnar._runs, col_work, before=lambda starts, counts, step, total=None: int(counts.sum())))
    ref_work = Tally(budget=limit)
    monkeypatch.setattr(reference_verifier._Verifier, "elements", counting(
        reference_verifier._Verifier.elements, ref_work, after=len))
    data = _shared_vector_file(n, n)
    assert n * n >= 5 * limit
    ref, col = _both(data, _SHARED)
    assert isinstance(ref, ModelFormatError) and "more than 200,000 vector elements" in str(ref)
    assert isinstance(col, ModelFormatError) and "more than 200,000 vector elements" in str(col)
    assert ref_work.total <= limit  # whole vectors, each counted before it is walked
    assert col_work.total <= n  # the items vector; the n·n names are refused before they are gathered


def test_union_column_indexing_and_slicing_agree_with_iteration(samples_dir):
    root = columnar.decode((samples_dir / "transformer_block.tflite").read_bytes(), schema.MODEL_SCHEMA)
    options = root["subgraphs"]["operators"][0]["builtin_options"]
    assert isinstance(options, columnar.UnionColumn)
    rows = list(options)
    assert sum(r is not None for r in rows) > 10
    assert [options[i] for i in range(len(options))] == rows
    assert options[-1] == rows[-1]
    assert list(options[3:9]) == rows[3:9]
    with pytest.raises(IndexError):
        options[len(options)]


def test_decoded_elements_are_bounded_by_the_file_s_size():
    # The same shared vector: 16·n bytes of file, n·n elements; the columnar verifier stops at
    # DECODED_PER_FILE (65,536 + 2 per byte), far below MAX_DECODED, before building them.
    n = 1000
    data = _shared_vector_file(n, n)
    base, per = columnar.DECODED_PER_FILE
    limit = base + len(data) // per
    work = Tally(budget=limit)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar, "_runs", counting(
            columnar._runs, work, before=lambda starts, counts, step, total=None: int(counts.sum())))
        with pytest.raises(ModelFormatError, match=f"more than {limit:,} vector elements"):
            columnar.decode(data, _SHARED)
    assert work.total <= limit
