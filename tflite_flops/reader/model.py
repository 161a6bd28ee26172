"""The parsed model: :class:`Model` (subgraphs, operators, tensors, signatures) and its file's hash.

Weight bytes are never copied into Python objects: a constant tensor keeps only the (offset,
size) of its data in the file, and :meth:`Model.constant` returns a NumPy view over the mapping
when a formula or the shape engine asks for values. Memory is therefore O(ops + tensors), not
O(file size). :func:`tflite_flops.reader.load.load_model` makes a Model from a path or bytes.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from operator import attrgetter
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from .. import files
from ..units import num_elements, tensor_bytes
from .bundle import Bundle, Section

_NP_DTYPES = {name: np.dtype(t).newbyteorder("<") for name, t in {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8,
    "INT64": np.int64, "BOOL": np.bool_, "INT16": np.int16, "INT8": np.int8,
    "FLOAT64": np.float64, "UINT64": np.uint64, "UINT32": np.uint32, "UINT16": np.uint16,
    "COMPLEX64": np.complex64, "COMPLEX128": np.complex128,
}.items()}  # TFLite stores little-endian values

# float16's integer of the same size and that integer's minimum (the bits of -0.0): counting non-zero
# bits is its faster count (count_nonzero). float32 and float64 are counted fastest as ``part != 0``
# (a comparison, then a count of booleans: 2-3x NumPy's integer count and its minimum, measured with
# NumPy 2.4), which is the same count (-0.0 is zero, NaN is not).
_FLOAT_BITS = {np.dtype("<f2"): (np.dtype("<i2"), int(np.iinfo("<i2").min))}
_COMPARED = frozenset({np.dtype("<f4"), np.dtype("<f8")})
_BITS_FROM = 1 << 12  # elements: below that, NumPy's call overhead is most of either count

_MAX_RANK = 32  # NumPy's limit is 64; TFLite kernels stop at 6


@dataclass(frozen=True, slots=True)
class Quantization:
    """Summary of a tensor's QuantizationParameters."""

    kind: str  # "per_tensor" | "per_axis" | "custom" | "blockwise" | "none"
    axis: int
    num_scales: int
    scale: float | None
    zero_point: int | None
    uniform_scales: bool = True  # all num_scales scales equal (a kernel may then treat them as one)


@dataclass(frozen=True, slots=True)
class Sparsity:
    """Summary of a tensor's SparsityParameters."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dim_formats: tuple[str, ...]  # "DENSE" | "SPARSE_CSR" per traversal dim
    dense_sizes: tuple[int, ...]


NO_REFS: Mapping[str, int] = MappingProxyType({})
NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class Tensor(NamedTuple):
    """One tensor of a subgraph. ``shape`` is what the file stores; -1 in ``shape_signature`` is dynamic.

    Immutable. A named tuple rather than a frozen dataclass because a model has thousands of
    tensors and building one costs a sixth of a frozen dataclass's ``__init__``.
    """

    index: int
    name: str
    dtype: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    buffer: int
    # where the constant data starts in the file (0 if none); negative for weights stored outside the
    # model (an external buffer: -id), which are counted (data_size) but have no readable values
    data_offset: int
    data_size: int  # bytes of constant data stored (0 for activations)
    is_variable: bool
    quantization: Quantization | None
    sparsity: Sparsity | None

    @property
    def is_constant(self) -> bool:
        """True when the tensor's values are stored in the model (weights, biases, shape constants)."""
        return self.data_size > 0

    @property
    def is_external(self) -> bool:
        """True when the values are stored outside the model (an external buffer, e.g. a bundle's weights section)."""
        return self.data_offset < 0

    @property
    def is_dynamic(self) -> bool:
        """True when the signature has a -1 (the stored shape is then a placeholder)."""
        return self.shape_signature is not None and any(d < 0 for d in self.shape_signature)

    @property
    def num_elements(self) -> int:
        """Elements of the stored shape."""
        return num_elements(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the stored shape at this dtype (dense)."""
        return tensor_bytes(self.shape, self.dtype)


class Operator(NamedTuple):
    """One operator, in execution order within its subgraph. Immutable (a named tuple, as :class:`Tensor`)."""

    index: int
    op_type: str  # "CONV_2D", "CUSTOM:TFLite_Detection_PostProcess", "UNKNOWN_250"
    builtin_code: int
    version: int
    inputs: tuple[int, ...]  # -1 marks an omitted optional input
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options: Mapping[str, Any]  # builtin options, or a custom op's FlexBuffer options map
    custom_code: str | None = None
    custom_options: tuple[int, int] = (0, 0)  # (offset, size) in the file
    subgraph_refs: Mapping[str, int] = NO_REFS  # subgraph indices this op calls, by option name (WHILE, IF, ...)


calls_subgraphs = attrgetter("subgraph_refs")  # truthy for an operator that names subgraphs


def subgraph_refs(options: Mapping[str, Any]) -> Mapping[str, int]:
    """The subgraph indices named in builtin options: ``*subgraph_index`` and ``subgraph`` fields, and each
    element of a ``*subgraph_indices`` vector (STABLEHLO_CASE's ``branch_subgraph_indices``), keyed
    ``name[i]`` in the vector's order (:func:`branch_refs` reads them back)."""
    refs = {}
    for k, v in options.items():
        if isinstance(v, int) and not isinstance(v, bool):
            if k.endswith("subgraph_index") or k == "subgraph":
                refs[k] = v
        elif k.endswith("subgraph_indices") and isinstance(v, tuple):
            refs.update((f"{k}[{i}]", int(x)) for i, x in enumerate(v))
    return MappingProxyType(refs) if refs else NO_REFS


def branch_refs(refs: Mapping[str, int], name: str) -> list[int]:
    """The elements of the subgraph-index vector ``name`` among ``refs`` (:func:`subgraph_refs`), in order."""
    prefix = name + "["
    return [v for k, v in refs.items() if k.startswith(prefix)]


@dataclass(frozen=True, slots=True)
class Subgraph:
    """A subgraph: its tensors, operators in execution order, inputs and outputs."""

    index: int
    name: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Signature:
    """A SignatureDef: named inputs and outputs of one entry subgraph."""

    key: str
    subgraph_index: int
    inputs: Mapping[str, int]
    outputs: Mapping[str, int]


@dataclass(frozen=True)
class Model:
    """A parsed model. Holds the mapped bytes; constant data is read lazily."""

    path: str | None
    size_bytes: int
    version: int
    description: str
    subgraphs: tuple[Subgraph, ...]
    signatures: tuple[Signature, ...]
    metadata: Mapping[str, int]
    _buf: Any = field(repr=False, compare=False)
    # weights stored outside the model: external buffer id -> (group, offset, length); group names
    external_buffers: Mapping[int, tuple[int, int, int]] = field(default_factory=dict, repr=False)
    external_groups: tuple[str, ...] = ()
    # a model read from a LiteRT-LM bundle: the bundle and its section (offsets above are the section's)
    bundle: Bundle | None = field(default=None, repr=False, compare=False)
    section: Section | None = None

    def sha256(self) -> str:
        """SHA-256 of the file (of the whole bundle for a bundle's section), streamed so that weight pages
        do not stay resident; computed once."""
        return self.hasher()()

    def hasher(self) -> "Hasher":
        """The callable behind :meth:`sha256`, which keeps the file's path and bytes but not the parsed
        model: a report holds it to hash lazily without keeping the model's tensors and ops alive."""
        hasher = self.__dict__.get("_hasher")
        if hasher is None:  # a bundle's section: the hash of the whole bundle, as a file or as bytes
            hasher = Hasher(self.path, self._buf if self.bundle is None else self.bundle.buf)
            object.__setattr__(self, "_hasher", hasher)  # a cache, not state: Model stays frozen
        return hasher

    def constant(self, tensor: Tensor) -> np.ndarray | None:
        """Values of a constant tensor as a read-only NumPy array view, or None.

        Returns None for activations, sparse-encoded or packed (int4) data, and dtypes
        without a NumPy equivalent.
        """
        flat = self._flat_values(tensor)
        if flat is None:
            return None
        return flat.reshape(tensor.shape) if tensor.shape else flat.reshape(())

    def _flat_values(self, tensor: Tensor) -> np.ndarray | None:
        """The values of :meth:`constant`, flat (a view over the file; nothing is copied)."""
        layout = self._layout(tensor)
        if layout is None:
            return None
        return np.frombuffer(self._buf, dtype=layout[0], count=layout[1], offset=tensor.data_offset)

    def _layout(self, tensor: Tensor) -> tuple[np.dtype, int] | None:
        """(NumPy dtype, element count) of a constant tensor's readable values, or None."""
        np_dtype = _NP_DTYPES.get(tensor.dtype)
        if not tensor.data_size or np_dtype is None or tensor.sparsity is not None or tensor.data_offset < 0:
            return None  # (a negative offset: the values are in an external buffer, not in this file)
        shape = tensor.shape
        if len(shape) > _MAX_RANK or (shape and min(shape) < 0):
            return None  # a corrupted or placeholder shape: the values cannot be laid out
        count = num_elements(shape)
        if count == 0 and num_elements(d for d in shape if d) >= 1 << 62:
            return None  # zero-size, but NumPy would overflow computing the other dims' product
        nbytes = count * np_dtype.itemsize
        if nbytes > tensor.data_size or tensor.data_offset + nbytes > self.size_bytes:
            return None
        return np_dtype, count

    def count_nonzero(self, tensor: Tensor, zero: int | float = 0, chunk_bytes: int = 8 << 20,
                      enough: int | None = None) -> int | None:
        """Elements of a constant tensor that differ from ``zero``, or None when it has no readable values.

        The data is read ``chunk_bytes`` at a time, and the pages of a memory-mapped file are
        released after each chunk, so counting the zeros of a 500 MB model keeps only one
        chunk of weights resident (RSS stays O(chunk), not O(file)). ``enough``: stop once that
        many non-zeros are found (the first ``enough`` elements are read first): a count of
        ``enough`` or more is then a lower bound, a smaller one is exact.
        """
        flat = self._flat_values(tensor)
        if flat is None:
            return None
        return self._count_flat(tensor, flat, zero, chunk_bytes, enough)

    def _count_flat(self, tensor: Tensor, flat: np.ndarray, zero: int | float, chunk_bytes: int,
                    enough: int | None) -> int:
        """:meth:`count_nonzero` of ``tensor`` whose values ``flat`` are (:meth:`_flat_values`)."""
        if flat.size < _BITS_FROM and flat.nbytes <= chunk_bytes:  # small: one part, as the loop below counts it
            if zero != 0:
                return int(np.count_nonzero(flat != zero))
            if enough is not None and 0 < enough < flat.size:
                nnz = int(np.count_nonzero(flat[:enough]))
                return nnz if nnz >= enough else nnz + int(np.count_nonzero(flat[enough:]))
            return int(np.count_nonzero(flat))
        itemsize = flat.itemsize
        # float16 is counted on its bits (NumPy's integer count is 25x its float16 one): the same count
        # unless a -0.0 (the sign bit alone, the integer minimum) is there, which is zero as a float; a
        # part holding one is counted as floats. float32/64 are compared with 0 (see _COMPARED).
        bits = _FLOAT_BITS.get(flat.dtype) if zero == 0 and flat.size >= _BITS_FROM else None
        compared = zero != 0 or (flat.size >= _BITS_FROM and flat.dtype in _COMPARED)
        release = flat.nbytes > chunk_bytes  # small: nothing worth releasing
        cuts = list(range(0, flat.size, max(chunk_bytes // itemsize, 1))) + [flat.size]
        if enough is not None and 0 < enough < cuts[1]:
            cuts.insert(1, enough)
        nnz = 0
        for first, last in zip(cuts, cuts[1:]):
            part = flat[first:last]
            if bits is not None:
                ints = part.view(bits[0])
                found = int(np.count_nonzero(ints))
                nnz += int(np.count_nonzero(part)) if found and ints.min() == bits[1] else found
            else:
                nnz += int(np.count_nonzero(part != zero)) if compared else int(np.count_nonzero(part))
            if release:
                self._release(tensor.data_offset + first * itemsize, part.size * itemsize)
            if enough is not None and nnz >= enough:
                break
        return nnz

    def count_nonzeros(self, requests: Sequence[tuple[Tensor, int | float]],
                       chunk_bytes: int = 8 << 20, enough: Sequence[int | None] | None = None) -> list[int | None]:
        """:meth:`count_nonzero` of many ``(tensor, zero)`` at once; same results, fewer NumPy calls.

        Weights of one dtype and zero that lie close together in the file are counted in one
        pass over the range that holds them (one comparison, then a sum per tensor), instead of
        one NumPy call per tensor; those counts are exact. Tensors above ``chunk_bytes`` and
        scattered ones are counted one by one, as :meth:`count_nonzero` does, each with its
        ``enough`` (one per request) when given.
        """
        out: list[int | None] = [None] * len(requests)
        groups: dict[tuple[Any, int | float], list[tuple[int, Tensor, int]]] = {}
        layout_of = self._layout
        for i, (tensor, zero) in enumerate(requests):
            layout = layout_of(tensor)
            if layout is None:
                continue
            dtype, count = layout
            if count * dtype.itemsize > chunk_bytes or tensor.data_offset % dtype.itemsize:
                out[i] = self._count_flat(tensor, np.frombuffer(self._buf, dtype=dtype, count=count,
                                                                offset=tensor.data_offset),
                                          zero, chunk_bytes, enough and enough[i])
            else:
                groups.setdefault((dtype, zero), []).append((i, tensor, count))
        for (dtype, zero), members in groups.items():
            itemsize = dtype.itemsize
            starts = np.array([t.data_offset for _, t, _ in members], dtype=np.int64)
            sizes = np.array([count for _, _, count in members], dtype=np.int64)
            lo, hi = int(starts.min()), int((starts + sizes * itemsize).max())
            if len(members) < 4 or hi - lo > max(2 * int(sizes.sum()) * itemsize, 1 << 16) or hi - lo > chunk_bytes:
                for i, tensor, count in members:  # few or scattered: one by one (the layout is known)
                    flat = np.frombuffer(self._buf, dtype=dtype, count=count, offset=tensor.data_offset)
                    out[i] = self._count_flat(tensor, flat, zero, chunk_bytes, enough and enough[i])
                continue
            region = np.frombuffer(self._buf, dtype=dtype, count=(hi - lo) // itemsize, offset=lo)
            nonzero = region != zero  # what np.count_nonzero counts: -0.0 is zero, NaN is not
            starts = (starts - lo) // itemsize
            ends = starts + sizes
            # one count of booleans per tensor (about 3x the sums of np.add.reduceat over the pieces)
            count = np.count_nonzero
            for (i, _, _), first, last in zip(members, starts.tolist(), ends.tolist()):
                out[i] = int(count(nonzero[first:last]))
        return out

    def _release(self, offset: int, size: int) -> None:
        """Drop the mapped pages of a file range from this process (they stay in the page cache)."""
        buf = self._buf
        if self.bundle is not None and self.section is not None:  # a view of a bundle's mapping
            buf, offset = self.bundle.buf, offset + self.section.begin
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if not isinstance(buf, mmap.mmap) or advice is None or size <= 0:
            return
        page = mmap.PAGESIZE
        start = offset // page * page
        end = min(-(-(offset + size) // page) * page, len(buf))
        if end > start:
            try:
                buf.madvise(advice, start, end - start)
            except (OSError, ValueError):
                pass  # advice is best effort

    @property
    def main(self) -> Subgraph:
        """Subgraph 0, the primary graph."""
        return self.subgraphs[0]


# ---------------------------------------------------------------------------------------------


class Hasher:
    """The SHA-256 of a model's file (or bytes), computed once when first called (see :meth:`Model.sha256`)."""

    __slots__ = ("path", "buf", "job", "value")

    def __init__(self, path: str | None, buf: Any) -> None:
        self.path, self.buf = path, buf
        self.job: files.FileDigest | None = None
        self.value: str | None = None

    def start(self, job: files.FileDigest | None = None) -> None:
        """Hash the file on a background thread from now on, or take ``job``, the digest of this file already
        running (nothing when done or started already)."""
        if self.value is None and self.job is None and self.path is not None:
            self.job = job if job is not None else files.FileDigest(self.path)

    def __call__(self) -> str:
        if self.value is None:
            if self.job is not None:
                self.value = self.job.result()
            elif self.path is not None:
                self.value = files.sha256_file(self.path)
            else:
                import hashlib

                self.value = hashlib.sha256(self.buf).hexdigest()
        return self.value

