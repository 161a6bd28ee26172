"""Reading: a .tflite path or bytes -> :class:`~tflite_flops.reader.model.Model`.

A path is memory-mapped. Nothing is read through the generated bindings: the whole flatbuffer is
first verified and decoded by :mod:`tflite_flops.reader.columnar`; the tables come a column at a
time, so building the :class:`~tflite_flops.reader.model.Tensor` and
:class:`~tflite_flops.reader.model.Operator` tuples is the only per-item Python work. Then every
index (tensor, buffer, opcode, subgraph, signature) is checked against what it indexes, and the
subgraph call graph is checked for cycles. Any failure is a ModelFormatError; a broken file cannot
crash, hang or exhaust memory here.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import replace
from itertools import chain, repeat
from operator import itemgetter
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from . import columnar, schema
from ..errors import InputSpecError, ModelFormatError, ModelLoadError
from ..files import open_regular
from ..units import printable
from .bounds import check_call_graph
from .bundle import Bundle, Section, is_bundle, read_bundle
from .flatbuffer_layout import Columns, Span, SpanList
from .model import (NO_OPTIONS, NO_REFS, Model, Operator, Quantization, Signature, Sparsity, Subgraph, Tensor,
                    calls_subgraphs, subgraph_refs)

_F32 = struct.Struct("<f")
_I64 = struct.Struct("<q")

# Errors that reading bytes the verifier should have refused can raise (an offset outside the
# buffer, a value out of range). TypeError, AttributeError and MemoryError are not among them:
# those are bugs of ours, and must surface as bugs rather than as "bad model file".
_FB_ERRORS = (struct.error, IndexError, ValueError, OverflowError, UnicodeDecodeError, RecursionError)


def _open(source: str | os.PathLike | bytes | bytearray | memoryview) -> tuple[Any, str | None]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return (bytes(source) if isinstance(source, memoryview) else source), None
    if not isinstance(source, (str, os.PathLike)):
        raise ModelLoadError(f"cannot read a model from a {type(source).__name__}: expected a .tflite path or its "
                             "bytes (or, with TensorFlow, a Keras model, a SavedModel directory or a concrete function)")
    path = os.fspath(source)
    if not os.path.exists(path):
        raise ModelLoadError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ModelLoadError(f"{path}: is a directory, not a .tflite file")
    try:
        with open_regular(path, "rb") as f:  # a FIFO or device is refused, never waited on
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise ModelLoadError(f"{path}: file is empty")
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise ModelLoadError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    return buf, path


# A tensor of more dims is refused: no TFLite kernel takes one (they stop at 6 to 8), NumPy stops at 64, and 64
# dims of 2**31-1 make an element count of 600 digits, far inside the 4,300 that str() and JSON write.
MAX_RANK = 64
FLEX_MAX_DEPTH = 32  # nesting of a custom op's options: real ones nest two or three levels


class FlexBomb(Exception):
    """A FlexBuffer that decodes to far more values than its bytes can hold (children shared), or nests too deep."""


def flex_value(buf: bytes) -> Any:
    """The Python value of a FlexBuffer (as ``flexbuffers.Loads``), decoding at most a number of values
    proportional to its size.

    Every value of a FlexBuffer takes at least a byte of it, unless a vector or map names the same child
    more than once: 780 bytes of vectors that share their children decode to billions of values. Such a
    buffer, or one nested past :data:`FLEX_MAX_DEPTH`, raises :class:`FlexBomb`.
    """
    from flatbuffers import flexbuffers  # only for a custom op's options: not on every run

    budget = [4 * len(buf) + 64]

    def take(n: int) -> None:
        budget[0] -= n
        if budget[0] < 0:
            raise FlexBomb(f"a FlexBuffer of {len(buf):,} bytes decodes to more than {4 * len(buf) + 64:,} values "
                           "(its vectors share children)")

    def value(ref: Any, depth: int) -> Any:
        take(1)
        if depth > FLEX_MAX_DEPTH:
            raise FlexBomb(f"a FlexBuffer nested more than {FLEX_MAX_DEPTH} levels deep")
        if ref.IsMap:
            m = ref.AsMap
            return {k.Value: value(v, depth + 1) for k, v in zip(m.Keys, m.Values)}
        if ref.IsVector:
            return [value(e, depth + 1) for e in ref.AsVector]
        if ref.IsTypedVector or ref.IsFixedTypedVector:
            vector = ref.AsTypedVector if ref.IsTypedVector else ref.AsFixedTypedVector
            take(len(vector))
            return vector.Value
        return ref.Value

    return value(flexbuffers.GetRoot(buf), 0)


def load_model(source: str | os.PathLike | bytes | bytearray | memoryview, section: str | int | None = None) -> Model:
    """Parse a .tflite file or its bytes, or a model section of a LiteRT-LM bundle (``.litertlm``).

    The whole flatbuffer is verified first (:mod:`tflite_flops.reader.columnar`): every offset, vector
    length, string and union is checked against the file before it is used. Then every index
    (tensor, buffer, opcode, subgraph) is checked against what it indexes, and the subgraph
    call graph (WHILE/IF/CALL_ONCE/CALL/... references) is checked for cycles.

    A bundle's header is read by :func:`tflite_flops.reader.bundle.read_bundle`; the chosen model
    section is then read in place, through a zero-copy view of the mapped file, and the Model
    keeps the bundle and the section (``model.bundle``, ``model.section``).

    Args:
        source: a path (memory-mapped) or the model's bytes.
        section: for a bundle, the model section to read: its index or ``model_type``
            (default: the ``prefill_decode`` model, see :meth:`Bundle.pick`).

    Returns:
        The parsed :class:`Model`.

    Raises:
        ModelLoadError: the file is missing, a directory, empty or unreadable.
        ModelFormatError: the bytes are not a valid TFLite flatbuffer or LiteRT-LM bundle.
        InputSpecError: ``section`` names no model section, or is given for a plain .tflite.
    """
    buf, path = _open(source)
    name = path or "<bytes>"
    try:
        if is_bundle(buf):
            bundle = read_bundle(buf, path)
            return load_section(bundle, bundle.pick(section))
        if section is not None:
            raise InputSpecError(f"{name}: --section applies to a LiteRT-LM bundle (.litertlm), not a .tflite file")
        model = _Reader(buf, path).read()
        check_call_graph(model)
        return model
    except ModelFormatError as exc:
        raise ModelFormatError(f"{name}: {exc}") from exc
    except RecursionError as exc:
        raise ModelFormatError(f"{name}: corrupted flatbuffer (nested offsets loop)") from exc
    except _FB_ERRORS as exc:  # belt and braces: the verifier should have refused these bytes
        raise ModelFormatError(f"{name}: corrupted or truncated flatbuffer ({type(exc).__name__}: {exc})") from exc


def load_section(bundle: Bundle, section: Section) -> Model:
    """Parse one TFLite model section of a bundle, in place (a zero-copy view of the bundle's bytes).

    Raises:
        ModelFormatError: the section is not a valid TFLite flatbuffer (the message names the section).
    """
    try:
        model = _Reader(bundle.view(section), bundle.path).read()
        check_call_graph(model)
    except ModelFormatError as exc:
        raise ModelFormatError(f"section {section.label}: {exc}") from exc
    except RecursionError as exc:
        raise ModelFormatError(f"section {section.label}: corrupted flatbuffer (nested offsets loop)") from exc
    except _FB_ERRORS as exc:
        raise ModelFormatError(f"section {section.label}: corrupted or truncated flatbuffer "
                               f"({type(exc).__name__}: {exc})") from exc
    weights = bundle.weights_for(section)
    if model.external_buffers and weights:  # the ranges are checked against the sections, never read
        room = max(w.size for w in weights)
        for ident, (_group, offset, length) in model.external_buffers.items():
            if offset + length > room:
                raise ModelFormatError(f"section {section.label}: external buffer {ident} ({offset}+{length}) lies "
                                       f"outside its {room}-byte TFLiteWeights section")
    return replace(model, bundle=bundle, section=section)


# Groups of at least this many ops of one options type look for equal stored values before
# converting them (below, finding them costs more than converting every op).
_SHARE_BEFORE_CONVERTING = 16


class _Reader:
    """Builds the Model from the verified, decoded tables, checking every index."""

    def __init__(self, buf: Any, path: str | None) -> None:
        self.buf = buf
        self.path = path
        self.size = len(buf)
        self.fb = columnar.decode(buf, schema.MODEL_SCHEMA)
        # (second union?, options type, converted values) -> (options, subgraph refs), shared by equal ops
        self.options_cache: dict[tuple[bool, int, tuple[Any, ...]], tuple[Mapping[str, Any], Mapping[str, int]]] = {}

    def read(self) -> Model:
        fb = self.fb
        codes = []
        opcodes = fb["operator_codes"]
        if opcodes is not None:
            for builtin, deprecated, custom, version in zip(
                    opcodes["builtin_code"], opcodes["deprecated_builtin_code"], opcodes["custom_code"],
                    opcodes["version"]):
                code = max(builtin, deprecated)
                custom_code = (custom or "") if code == schema.CUSTOM_CODE else None
                if custom_code and not custom_code.isprintable():  # an op type is an identifier in every output:
                    custom_code = printable(custom_code)  # a control character in it is shown escaped, everywhere
                codes.append((code, custom_code, version, schema.op_name(code, custom_code)))
        self.buffers = fb["buffers"] or Columns(0, {"data": SpanList([], []), "offset": [], "size": []})
        self.data_table(self.buffers)
        raw_subgraphs = fb["subgraphs"]
        n_sub = len(raw_subgraphs) if raw_subgraphs is not None else 0
        if n_sub == 0:
            raise ModelFormatError("model has no subgraphs")
        subgraphs = tuple(self.subgraph(i, sg, codes) for i, sg in enumerate(raw_subgraphs.rows()))
        for sg in subgraphs:
            for op in filter(calls_subgraphs, sg.operators):  # (the filter runs in C: most ops call none)
                for key, ref in op.subgraph_refs.items():
                    if not 0 <= ref < n_sub:
                        raise ModelFormatError(
                            f"subgraph {sg.index} op {op.index} ({op.op_type}) {key}={ref} "
                            f"is out of range (model has {n_sub} subgraphs)")
        signatures = []
        for i, sd in enumerate(fb["signature_defs"].rows() if fb["signature_defs"] is not None else ()):
            sub = sd["subgraph_index"]
            if not 0 <= sub < n_sub:
                raise ModelFormatError(f"signature {i} refers to subgraph {sub} of {n_sub}")
            n_t = len(subgraphs[sub].tensors)
            maps = []
            for key in ("inputs", "outputs"):
                entries = {}
                for tm in sd[key].rows() if sd[key] is not None else ():
                    idx = tm["tensor_index"]
                    if not 0 <= idx < n_t:
                        raise ModelFormatError(f"signature {i} names tensor {idx} of {n_t}")
                    entries[tm["name"] or ""] = idx
                maps.append(MappingProxyType(entries))
            signatures.append(Signature(sd["signature_key"] or "", sub, maps[0], maps[1]))
        metadata = ({name or "": buffer for name, buffer in zip(fb["metadata"]["name"], fb["metadata"]["buffer"])}
                    if fb["metadata"] is not None else {})
        external, groups = self.external if hasattr(self, "external") else self.external_buffers()
        return Model(
            path=self.path, size_bytes=self.size, version=fb["version"],
            description=fb["description"] or "", subgraphs=subgraphs,
            signatures=tuple(signatures), metadata=MappingProxyType(metadata), _buf=self.buf,
            external_buffers=MappingProxyType(external), external_groups=groups)

    def data_table(self, buffers: Columns) -> None:
        """Tensor buffer -> data offset and size (``data_starts``, ``data_sizes``; 0 and 0 for buffer 0).

        ``bad_spans`` tells whether a buffer's data lies outside the file (an error only when a
        tensor uses it). When every buffer's data is inside the flatbuffer, the verifier has
        already checked each range against the file, so the columns are taken as they are.
        """
        data = buffers["data"]
        if buffers["offset"].count(0) == len(buffers):  # no data stored after the flatbuffer
            starts, sizes = list(data.starts), list(data.counts)
            if starts and starts.count(None) > (starts[0] is None):  # (buffer 0, often the only one, is set below)
                starts = [start or 0 for start in starts]
            self.bad_spans = False
        else:
            spans = self.buffer_spans(buffers)
            starts = [span[0] if span else 0 for span in spans]
            sizes = [span[1] if span else 0 for span in spans]
            self.bad_spans = None in spans[1:]
        if starts:
            starts[0] = sizes[0] = 0  # buffer 0 means "no data", whatever it holds
        self.data_starts, self.data_sizes = starts or [0], sizes or [0]

    def buffer_spans(self, buffers: Columns) -> list[tuple[int, int] | None]:
        """(start, size) of every buffer's data in the file; None for a buffer whose range lies outside.

        A bad range is an error only when a tensor uses the buffer (see :meth:`buffer_span`).
        """
        spans: list[tuple[int, int] | None] = []
        data = buffers["data"]
        file_size = self.size
        for start, count, off, big in zip(data.starts, data.counts, buffers["offset"], buffers["size"]):
            start = start or 0
            if count == 0 and off > 1:  # data stored outside the flatbuffer (models over 2 GB)
                start, count = off, big
            spans.append((start, count) if start + count <= file_size else None)
        return spans

    def buffer_span(self, index: int) -> tuple[int, int]:
        """The data range of buffer ``index``, or ModelFormatError naming what is wrong with it."""
        spans = self.buffer_spans(self.buffers)
        if not 0 <= index < len(spans):
            raise ModelFormatError(f"buffer index {index} is out of range ({len(spans)} buffers)")
        span = spans[index]
        if span is None:
            buffers = self.buffers
            data = buffers["data"]
            start, size = data.starts[index] or 0, data.counts[index]
            if size == 0:
                start, size = buffers["offset"][index], buffers["size"][index]
            raise ModelFormatError(f"buffer {index} data ({start}+{size}) lies outside the {self.size}-byte file")
        return span

    def quantization(self, q: Mapping[str, Any] | None) -> Quantization | None:
        if q is None:
            return None
        details = q["details_type"]
        scale, zero_point = q["scale"], q["zero_point"]
        n_scales = scale.count if scale is not None else 0
        if details:
            kind = {1: "custom", 2: "blockwise", 3: "multi_axis"}.get(details, "custom")
        elif n_scales == 0:
            return None
        else:
            kind = "per_axis" if n_scales > 1 else "per_tensor"
        n_zp = zero_point.count if zero_point is not None else 0
        # bytes: a bundle's section is a memoryview, which has no ``*`` (the per-channel check below)
        raw = bytes(self.buf[scale.start:scale.start + 4 * n_scales]) if n_scales > 1 else b""
        return Quantization(
            kind=kind, axis=q["quantized_dimension"], num_scales=n_scales,
            scale=_F32.unpack_from(self.buf, scale.start)[0] if n_scales else None,
            zero_point=_I64.unpack_from(self.buf, zero_point.start)[0] if n_zp else None,
            uniform_scales=raw == raw[:4] * n_scales)

    def sparsity(self, s: Mapping[str, Any] | None) -> Sparsity | None:
        if s is None:
            return None
        dims = s["dim_metadata"].rows() if s["dim_metadata"] is not None else ()
        return Sparsity(tuple(s["traversal_order"] or ()), tuple(s["block_map"] or ()),
                        tuple("SPARSE_CSR" if dm["format"] == 1 else "DENSE" for dm in dims),
                        tuple(dm["dense_size"] for dm in dims))

    def tensors(self, cols: Columns | None) -> tuple[Tensor, ...]:
        """The :class:`Tensor` tuples of a subgraph, built a column at a time.

        Each field becomes one list (names, dtype names, data spans, quantization...), and the
        tuples are then made by ``map`` over the zipped columns, so that no Python code runs per
        tensor except where a column needs converting (quantization and sparsity tables, which
        only quantized and sparse models hold).
        """
        if cols is None or not len(cols):
            return ()
        n = len(cols)
        starts, sizes = self.tensor_data(cols["buffer"])
        external = cols["external_buffer"]
        if any(external):
            starts, sizes = self.external_data(external, starts, sizes)
        codes = cols["type"]
        names = {code: schema.dtype_name(code) for code in set(codes)}
        dtypes = [*names.values()] * n if len(names) == 1 else _take(names, codes)
        name, shape, sig = cols["name"], cols["shape"], cols["shape_signature"]
        if None in name:
            name = [s or "" for s in name]
        if None in shape:
            shape = [s or () for s in shape]
        if sig.count(None) != n:
            sig = [s or None for s in sig]
        if max(map(len, shape)) > MAX_RANK or max((len(s) for s in sig if s is not None), default=0) > MAX_RANK:
            i = next(i for i in range(n) if max(len(shape[i]), len(sig[i] or ())) > MAX_RANK)
            raise ModelFormatError(f"tensor {i} ({printable(name[i][:80])!r}) has "
                                   f"{max(len(shape[i]), len(sig[i] or ())):,} dims (a TFLite tensor has at most "
                                   f"{MAX_RANK})")
        quant, sparse = cols["quantization"], cols["sparsity"]
        if quant.count(None) != n:
            quantization = self.quantization
            quant = [quantization(q) if q is not None else None for q in quant]
        if sparse.count(None) != n:
            sparsity = self.sparsity
            sparse = [sparsity(sp) if sp is not None else None for sp in sparse]
        # Tensor's fields in order, without the keyword __new__ (benchmarks/static_speed.py)
        return tuple(map(tuple.__new__, repeat(Tensor, n), zip(
            range(n), name, dtypes, shape, sig, cols["buffer"], starts, sizes, cols["is_variable"], quant, sparse)))

    def external_buffers(self) -> tuple[dict[int, tuple[int, int, int]], tuple[str, ...]]:
        """The model's external buffers, id -> (group, offset, length), and the groups' names (checked)."""
        fb = self.fb
        groups = tuple(name or "" for name in fb["external_buffer_groups"]["name"]) \
            if fb["external_buffer_groups"] is not None else ()
        table = fb["external_buffers"]
        out: dict[int, tuple[int, int, int]] = {}
        if table is None:
            return out, groups
        for ident, group, offset, length in zip(table["id"], table["group"], table["offset"], table["length"]):
            if group >= len(groups):
                raise ModelFormatError(f"external buffer {ident} names group {group} of {len(groups)}")
            out[ident] = (group, offset, length)
        return out, groups

    def external_data(self, external: Sequence[int], starts: Sequence[int],
                      sizes: Sequence[int]) -> tuple[list[int], list[int]]:
        """``starts`` and ``sizes`` with the tensors stored in external buffers set to ``-id`` and the length.

        Raises:
            ModelFormatError: a tensor names an external buffer the model does not have.
        """
        if not hasattr(self, "external"):
            self.external = self.external_buffers()
        known = self.external[0]
        starts, sizes = list(starts), list(sizes)
        for i, ident in enumerate(external):
            if ident:
                entry = known.get(ident)
                if entry is None:
                    raise ModelFormatError(f"tensor {i} names external buffer {ident}, which the model does not have "
                                           f"({len(known)} external buffers)")
                starts[i], sizes[i] = -ident, entry[2]
        return starts, sizes

    def tensor_data(self, buffers: Sequence[int]) -> tuple[Sequence[int], Sequence[int]]:
        """The (data_offset, data_size) columns of tensors that use ``buffers``: (0, 0) for buffer 0.

        Raises:
            ModelFormatError: naming the first tensor whose buffer is out of range or lies
                outside the file (:meth:`buffer_span`).
        """
        try:
            starts, sizes = _take(self.data_starts, buffers), _take(self.data_sizes, buffers)
        except IndexError:  # a buffer index out of range
            starts = sizes = ()
        if not starts or self.bad_spans:
            spans = self.buffer_spans(self.buffers)
            for buffer in buffers:  # raises at the first bad one, if any
                if buffer and (buffer >= len(spans) or spans[buffer] is None):
                    self.buffer_span(buffer)
        return starts, sizes

    def custom_options(self, span: tuple[int, int], fmt: int) -> Mapping[str, Any]:
        """Decode a custom op's FlexBuffer options map; raw int32 words (``raw_int32``) otherwise."""
        start, size = span
        if fmt != 0 or size == 0 or start + size > self.size:
            return MappingProxyType({})
        try:
            value = flex_value(bytes(self.buf[start:start + size]))
        except FlexBomb as exc:
            raise ModelFormatError(f"the custom options at byte {start} of the file: {exc}") from None
        except Exception:  # noqa: BLE001 - foreign bytes; a custom op's options are optional to us
            value = None
        if not isinstance(value, dict):
            # Not a FlexBuffer map: some custom ops (MediaPipe's) store a raw C struct of int32s.
            if size % 4 == 0 and size <= 256:
                return MappingProxyType({"raw_int32": struct.unpack_from(f"<{size // 4}i", self.buf, start)})
            return MappingProxyType({})
        return MappingProxyType({str(k): v for k, v in value.items()})

    def builtin_options(self, cols: Columns) -> tuple[list[Mapping[str, Any]], list[Mapping[str, int]]]:
        """Options of every op of a subgraph and the subgraphs they name (empty for ops without options).

        Converted an options type at a time; ops with equal options share one read-only mapping.
        """
        n = len(cols)
        options: list[Mapping[str, Any]] = [NO_OPTIONS] * n
        refs: list[Mapping[str, int]] = [NO_REFS] * n
        for second, column in ((False, cols["builtin_options"]), (True, cols["builtin_options2"])):
            for code, _member, rows, table in column.groups:
                self.options_group(second, code, rows, table, options, refs)
        return options, refs

    def options_group(self, second: bool, code: int, rows: list[int], table: Columns,
                      options: list[Mapping[str, Any]], refs: list[Mapping[str, int]]) -> None:
        """Set ``options[row]`` and ``refs[row]`` of the ops ``rows``, which hold options table type ``code``.

        Ops with equal options share one entry of ``options_cache``. In a large group, ops whose
        stored values are equal are found first, so that only one of each is converted
        (:func:`schema.options_columns`).
        """
        fields = table.fields
        which = None  # with shared values: for each op, the first op that stores the same values
        if len(rows) >= _SHARE_BEFORE_CONVERTING and fields and not second:  # (second: may merge; rare)
            first: dict[tuple[Any, ...], int] = {}
            try:
                which = list(map(first.setdefault, zip(*fields.values()), range(len(rows))))
            except TypeError:  # an unhashable value (a nested table): every op converted on its own
                which = None
            else:
                if len(first) == len(rows):
                    which = None
                else:
                    distinct = list(first.values())
                    fields = {name: [values[i] for i in distinct] for name, values in fields.items()}
        names, values = schema.options_columns(code, second, fields)
        keys = zip(*values) if values else repeat((), len(rows) if which is None else 1)
        if which is None:  # one key per op
            self.set_options(second, code, names, zip(rows, keys), options, refs)
        else:  # one key per distinct set of values, set at its first op; then each op takes its set's
            first_options: list[Any] = [None] * len(rows)
            first_refs: list[Any] = [None] * len(rows)
            self.set_options(second, code, names, zip(distinct, keys), first_options, first_refs)
            for row, i in zip(rows, which):
                options[row] = first_options[i]
                refs[row] = first_refs[i]

    def set_options(self, second: bool, code: int, names: list[str], keys: Iterable[tuple[int, tuple[Any, ...]]],
                    options: list[Mapping[str, Any]], refs: list[Mapping[str, int]]) -> None:
        """Set ``options[row]`` and ``refs[row]`` for each (row, converted values) of ``keys``, from the cache."""
        cache = self.options_cache
        for row, key in keys:
            try:
                hit = cache.get((second, code, key))
            except TypeError:  # an unhashable value: not shared
                hit = None
            if hit is None:
                hit = self.options_entry(second, code, names, key)
            opts, called = hit
            if second and options[row] is not NO_OPTIONS:  # both unions set: one merged mapping
                opts = MappingProxyType({**options[row], **opts})
                called = subgraph_refs(opts)
            options[row] = opts
            refs[row] = called

    def options_entry(self, second: bool, code: int, names: list[str],
                      key: tuple[Any, ...]) -> tuple[Mapping[str, Any], Mapping[str, int]]:
        """The (options, subgraph refs) of converted option values ``key``: built and cached (when hashable)."""
        options = MappingProxyType(dict(zip(names, key)))
        hit = (options, subgraph_refs(options))
        try:
            self.options_cache[(second, code, key)] = hit
        except TypeError:
            pass
        return hit

    def custom_span(self, data: Span | None, offset: int, size: int) -> tuple[int, int]:
        if data is not None and data.count:
            return data.start, data.count
        if size:  # custom options stored outside the flatbuffer (models over 2 GB)
            if offset + size > self.size:
                raise ModelFormatError(f"custom options ({offset}+{size}) lie outside the {self.size}-byte file")
            return offset, size
        return 0, 0

    def custom_spans(self, cols: Columns, stop: int) -> list[tuple[int, int]]:
        """(offset, size) of the custom options of every op ((0, 0) for none), checked for ops before ``stop``.

        Raises:
            ModelFormatError: the first of those ops whose options lie outside the file.
        """
        data, large_off, large_size = (cols["custom_options"], cols["large_custom_options_offset"],
                                       cols["large_custom_options_size"])
        spans = [(0, 0)] * len(cols)
        if data.starts.count(None) == len(cols) and not any(large_size):
            return spans
        for i in range(stop):
            if data.starts[i] is not None or large_size[i]:
                spans[i] = self.custom_span(data[i], large_off[i], large_size[i])
        return spans

    def operators(self, index: int, cols: Columns | None, n_t: int,
                  codes: list[tuple[int, str | None, int, str]]) -> tuple[Operator, ...]:
        """The :class:`Operator` tuples of a subgraph, built a column at a time (as :meth:`tensors`).

        Raises:
            ModelFormatError: a tensor index out of range (the first op, inputs before outputs
                before intermediates), else the first op with an opcode index out of range or
                custom options outside the file.
        """
        if cols is None or not len(cols):
            return ()
        n = len(cols)
        columns = []
        for column in (cols["inputs"], cols["outputs"], cols["intermediates"]):  # tensor indices, a column at a time
            flat = list(chain.from_iterable(filter(None, column)))
            if flat and (min(flat) < -1 or max(flat) >= n_t):
                for i, ids in enumerate(column):
                    _check_ids(ids, n_t, f"subgraph {index}: op {i}", optional=True)  # raises at the first bad one
            columns.append([ids or () for ids in column] if None in column else column)
        opcode_index = cols["opcode_index"]
        n_codes = len(codes)
        bad = next(i for i, ci in enumerate(opcode_index) if ci >= n_codes) if max(opcode_index) >= n_codes else n
        spans = self.custom_spans(cols, bad)  # the ops before the first bad opcode index may fail first
        if bad < n:
            raise ModelFormatError(f"subgraph {index} op {bad}: opcode index {opcode_index[bad]} of {n_codes}")
        code, custom_code, version, op_type = (_take(column, opcode_index) for column in zip(*codes))
        options, refs = self.builtin_options(cols)
        if schema.CUSTOM_CODE in code:
            fmt = cols["custom_options_format"]
            for i in [i for i, c in enumerate(code) if c == schema.CUSTOM_CODE]:
                options[i], refs[i] = self.custom_options(spans[i], fmt[i]), NO_REFS
        inputs, outputs, intermediates = columns
        # Operator's fields in order, without the keyword __new__ (benchmarks/static_speed.py)
        return tuple(map(tuple.__new__, repeat(Operator, n), zip(
            range(n), op_type, code, version, inputs, outputs, intermediates, options, custom_code, spans, refs)))

    def subgraph(self, index: int, sg: Mapping[str, Any], codes: list[tuple[int, str | None, int, str]]) -> Subgraph:
        tensors = self.tensors(sg["tensors"])
        n_t = len(tensors)
        what = f"subgraph {index}: "
        return Subgraph(
            index=index, name=sg["name"] or "", tensors=tensors,
            operators=self.operators(index, sg["operators"], n_t, codes),
            inputs=_check_ids(sg["inputs"], n_t, what + "inputs"),
            outputs=_check_ids(sg["outputs"], n_t, what + "outputs"))


def _take(table: Sequence[Any] | Mapping[Any, Any], keys: Sequence[Any]) -> tuple[Any, ...]:
    """``tuple(table[k] for k in keys)`` in one C call (``keys`` is not empty)."""
    if len(keys) == 1:  # itemgetter of one key gives the item itself
        return (table[keys[0]],)
    return itemgetter(*keys)(table)


def _dtype_name(code: int, _names: Mapping[int, str] = schema.TENSOR_TYPES) -> str:
    name = _names.get(code)
    return name if name is not None else schema.dtype_name(code)


def _check_ids(ids: tuple[int, ...] | None, n_t: int, what: str, optional: bool = False) -> tuple[int, ...]:
    """``ids`` when every one indexes a tensor (or is -1 for an omitted optional input); () for None."""
    if not ids:
        return ()
    low = -1 if optional else 0
    if min(ids) < low or max(ids) >= n_t:
        bad = next(i for i in ids if not low <= i < n_t)
        raise ModelFormatError(f"{what} refers to tensor {bad} of {n_t}")
    return ids
