"""Reader: a .tflite path or bytes -> :class:`Model` (subgraphs, operators, tensors, signatures).

A path is memory-mapped. Weight bytes are never copied into Python objects: a constant
tensor keeps only the (offset, size) of its data in the file, and :meth:`Model.constant`
returns a NumPy view over the mapping when a formula or the shape engine asks for values.
Memory is therefore O(ops + tensors), not O(file size).

Nothing is read through the generated bindings. The whole flatbuffer is first verified and
decoded by :mod:`tflite_flops.verify` (every offset, vtable, vector length, string and union
checked against the file, as flatbuffers' C++ Verifier does); weights come back as spans and
are never touched. Then every index (tensor, buffer, opcode, subgraph, signature) is checked
against what it indexes, and the subgraph call graph is checked for cycles. Any failure is a
ModelFormatError; a broken file cannot crash, hang or exhaust memory here.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np
from flatbuffers import flexbuffers

from . import schema, verify
from .errors import ModelFormatError, ModelLoadError
from .units import DTYPE_BITS, num_elements

_NP_DTYPES = {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8,
    "INT64": np.int64, "BOOL": np.bool_, "INT16": np.int16, "INT8": np.int8,
    "FLOAT64": np.float64, "UINT64": np.uint64, "UINT32": np.uint32, "UINT16": np.uint16,
    "COMPLEX64": np.complex64, "COMPLEX128": np.complex128,
}

_MAX_RANK = 32  # NumPy's limit is 64; TFLite kernels stop at 6
_F32 = struct.Struct("<f")
_I64 = struct.Struct("<q")

# Errors the generated bindings raise when offsets point outside the buffer or at garbage.
_FB_ERRORS = (struct.error, IndexError, ValueError, OverflowError, TypeError, AttributeError,
              UnicodeDecodeError, MemoryError, RecursionError)


@dataclass(frozen=True, slots=True)
class Quantization:
    """Summary of a tensor's QuantizationParameters."""

    kind: str  # "per_tensor" | "per_axis" | "custom" | "blockwise" | "none"
    axis: int
    num_scales: int
    scale: float | None
    zero_point: int | None


@dataclass(frozen=True, slots=True)
class Sparsity:
    """Summary of a tensor's SparsityParameters."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dim_formats: tuple[str, ...]  # "DENSE" | "SPARSE_CSR" per traversal dim
    dense_sizes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Tensor:
    """One tensor of a subgraph. ``shape`` is what the file stores; -1 in ``shape_signature`` is dynamic."""

    index: int
    name: str
    dtype: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    buffer: int
    data_offset: int  # where the constant data starts in the file (0 if none)
    data_size: int  # bytes of constant data stored (0 for activations)
    is_variable: bool
    quantization: Quantization | None
    sparsity: Sparsity | None

    @property
    def is_constant(self) -> bool:
        """True when the tensor's values are stored in the model (weights, biases, shape constants)."""
        return self.data_size > 0

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
        return (num_elements(self.shape) * DTYPE_BITS.get(self.dtype, 0) + 7) // 8


@dataclass(frozen=True, slots=True)
class Operator:
    """One operator, in execution order within its subgraph."""

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

    @property
    def subgraph_refs(self) -> dict[str, int]:
        """Subgraph indices this op calls, by option name (WHILE, IF, CALL_ONCE, ...)."""
        return {k: v for k, v in self.options.items()
                if isinstance(v, int) and not isinstance(v, bool)
                and (k.endswith("subgraph_index") or k == "subgraph")}


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

    def sha256(self) -> str:
        """SHA-256 of the file, streamed so that weight pages do not stay resident; computed once."""
        cached = self.__dict__.get("_sha256")
        if cached is not None:
            return cached
        h = hashlib.sha256()
        if self.path is not None:
            with open(self.path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        else:
            h.update(self._buf)
        object.__setattr__(self, "_sha256", h.hexdigest())  # a cache, not state: Model stays frozen
        return self.__dict__["_sha256"]

    def raw(self, offset: int, size: int) -> memoryview:
        """A read-only view of ``size`` bytes at ``offset`` (no copy)."""
        if offset < 0 or size < 0 or offset + size > self.size_bytes:
            raise ModelFormatError(f"data range {offset}+{size} lies outside the file")
        return memoryview(self._buf)[offset:offset + size]

    def constant(self, tensor: Tensor) -> np.ndarray | None:
        """Values of a constant tensor as a read-only NumPy array view, or None.

        Returns None for activations, sparse-encoded or packed (int4) data, and dtypes
        without a NumPy equivalent.
        """
        np_dtype = _NP_DTYPES.get(tensor.dtype)
        if not tensor.is_constant or np_dtype is None or tensor.sparsity is not None:
            return None
        shape = tensor.shape
        if len(shape) > _MAX_RANK or any(d < 0 for d in shape):
            return None  # a corrupted or placeholder shape: the values cannot be laid out
        count = num_elements(shape)
        if count == 0 and num_elements(d for d in shape if d) >= 1 << 62:
            return None  # zero-size, but NumPy would overflow computing the other dims' product
        itemsize = np.dtype(np_dtype).itemsize
        if count * itemsize > tensor.data_size:
            return None
        arr = np.frombuffer(self.raw(tensor.data_offset, count * itemsize), dtype=np_dtype, count=count)
        return arr.reshape(tensor.shape) if tensor.shape else arr.reshape(())

    def count_nonzero(self, tensor: Tensor, zero: int | float = 0, chunk_bytes: int = 8 << 20) -> int | None:
        """Elements of a constant tensor that differ from ``zero``, or None when it has no readable values.

        The data is read ``chunk_bytes`` at a time, and the pages of a memory-mapped file are
        released after each chunk, so counting the zeros of a 500 MB model keeps only one
        chunk of weights resident (RSS stays O(chunk), not O(file)).
        """
        whole = self.constant(tensor)
        if whole is None:
            return None
        if whole.nbytes <= chunk_bytes:  # small: one pass, nothing worth releasing
            return int(np.count_nonzero(whole)) if zero == 0 else int(np.count_nonzero(whole != zero))
        flat = whole.reshape(-1)
        itemsize = flat.itemsize
        step = max(chunk_bytes // itemsize, 1)
        nnz = 0
        for first in range(0, flat.size, step):
            part = flat[first:first + step]
            nnz += int(np.count_nonzero(part)) if zero == 0 else int(np.count_nonzero(part != zero))
            self._release(tensor.data_offset + first * itemsize, part.size * itemsize)
        return nnz

    def _release(self, offset: int, size: int) -> None:
        """Drop the mapped pages of a file range from this process (they stay in the page cache)."""
        buf = self._buf
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
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise ModelLoadError(f"{path}: file is empty")
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise ModelLoadError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    return buf, path


def load_model(source: str | os.PathLike | bytes | bytearray | memoryview) -> Model:
    """Parse a .tflite file or its bytes.

    The whole flatbuffer is verified first (:mod:`tflite_flops.verify`): every offset, vector
    length, string and union is checked against the file before it is used. Then every index
    (tensor, buffer, opcode, subgraph) is checked against what it indexes, and the subgraph
    call graph (WHILE/IF/CALL_ONCE/CALL/... references) is checked for cycles.

    Args:
        source: a path (memory-mapped) or the model's bytes.

    Returns:
        The parsed :class:`Model`.

    Raises:
        ModelLoadError: the file is missing, a directory, empty or unreadable.
        ModelFormatError: the bytes are not a valid TFLite flatbuffer.
    """
    buf, path = _open(source)
    name = path or "<bytes>"
    try:
        model = _Reader(buf, path).read()
        check_call_graph(model)
        return model
    except ModelFormatError as exc:
        raise ModelFormatError(f"{name}: {exc}") from exc
    except RecursionError as exc:
        raise ModelFormatError(f"{name}: corrupted flatbuffer (nested offsets loop)") from exc
    except MemoryError as exc:
        raise ModelFormatError(f"{name}: corrupted flatbuffer (a size field is absurdly large)") from exc
    except _FB_ERRORS as exc:  # belt and braces: the verifier should have refused these bytes
        raise ModelFormatError(f"{name}: corrupted or truncated flatbuffer ({type(exc).__name__}: {exc})") from exc


# The analysis walks a called subgraph once per call site. A file whose subgraphs call each
# other in a diamond chain (IF then=s+1 else=s+1, ...) would make that walk exponential; it is
# refused when the walk would visit more ops than this (plus 16 per op of the model).
MAX_WALK_VISITS = 2_000_000


def check_call_graph(model: Model) -> None:
    """Refuse subgraph references that form a cycle or that expand into an absurd walk.

    Args:
        model: a parsed model whose subgraph references are already range-checked.

    Raises:
        ModelFormatError: a cycle (``0 -> 1 -> 0``) or a call graph whose fully expanded walk
            visits more than ``MAX_WALK_VISITS + 16 * ops`` operators.
    """
    n = len(model.subgraphs)
    callees = [[ref for op in sg.operators for ref in op.subgraph_refs.values()] for sg in model.subgraphs]
    if not any(callees):
        return
    # Iterative depth-first search with colours: 0 new, 1 on the stack, 2 done.
    colour = [0] * n
    visits = [0] * n  # ops visited by a walk that starts at this subgraph
    for start in range(n):
        if colour[start]:
            continue
        stack = [(start, 0)]
        colour[start] = 1
        while stack:
            node, i = stack[-1]
            if i < len(callees[node]):
                stack[-1] = (node, i + 1)
                child = callees[node][i]
                if colour[child] == 1:
                    path = [s for s, _ in stack]
                    loop = path[path.index(child):] + [child]
                    raise ModelFormatError("subgraph references form a cycle: "
                                           + " -> ".join(map(str, loop)))
                if colour[child] == 0:
                    colour[child] = 1
                    stack.append((child, 0))
                continue
            stack.pop()
            colour[node] = 2
            visits[node] = len(model.subgraphs[node].operators) + sum(visits[c] for c in callees[node])
    total_ops = sum(len(sg.operators) for sg in model.subgraphs)
    limit = MAX_WALK_VISITS + 16 * total_ops
    if sum(visits) > limit:
        raise ModelFormatError(f"subgraph references expand into a walk over {sum(visits):,} operators "
                               f"(limit {limit:,}); refusing a call graph this deep")


class _Reader:
    """Builds the Model from the verified, decoded table tree, checking every index."""

    def __init__(self, buf: Any, path: str | None) -> None:
        self.buf = buf
        self.path = path
        self.size = len(buf)
        self.fb = verify.verify(buf, schema.MODEL_SCHEMA)
        self.buffer_cache: dict[int, tuple[int, int]] = {}

    def string(self, value: str | None) -> str:
        return value or ""

    def read(self) -> Model:
        fb = self.fb
        codes = []
        for oc in fb["operator_codes"] or ():
            code = max(oc["builtin_code"], oc["deprecated_builtin_code"])
            custom = self.string(oc["custom_code"]) if code == schema.CUSTOM_CODE else None
            codes.append((code, custom, oc["version"]))
        self.buffers = fb["buffers"] or ()
        raw_subgraphs = fb["subgraphs"] or ()
        n_sub = len(raw_subgraphs)
        if n_sub == 0:
            raise ModelFormatError("model has no subgraphs")
        subgraphs = tuple(self.subgraph(i, sg, codes) for i, sg in enumerate(raw_subgraphs))
        for sg in subgraphs:
            for op in sg.operators:
                for key, ref in op.subgraph_refs.items():
                    if not 0 <= ref < n_sub:
                        raise ModelFormatError(
                            f"subgraph {sg.index} op {op.index} ({op.op_type}) {key}={ref} "
                            f"is out of range (model has {n_sub} subgraphs)")
        signatures = []
        for i, sd in enumerate(fb["signature_defs"] or ()):
            sub = sd["subgraph_index"]
            if not 0 <= sub < n_sub:
                raise ModelFormatError(f"signature {i} refers to subgraph {sub} of {n_sub}")
            n_t = len(subgraphs[sub].tensors)
            maps = []
            for key in ("inputs", "outputs"):
                entries = {}
                for tm in sd[key] or ():
                    idx = tm["tensor_index"]
                    if not 0 <= idx < n_t:
                        raise ModelFormatError(f"signature {i} names tensor {idx} of {n_t}")
                    entries[self.string(tm["name"])] = idx
                maps.append(MappingProxyType(entries))
            signatures.append(Signature(self.string(sd["signature_key"]), sub, maps[0], maps[1]))
        metadata = {self.string(md["name"]): md["buffer"] for md in fb["metadata"] or ()}
        return Model(
            path=self.path, size_bytes=self.size, version=fb["version"],
            description=self.string(fb["description"]), subgraphs=subgraphs,
            signatures=tuple(signatures), metadata=MappingProxyType(metadata), _buf=self.buf)

    def buffer_span(self, index: int) -> tuple[int, int]:
        span = self.buffer_cache.get(index)
        if span is None:
            if not 0 <= index < len(self.buffers):
                raise ModelFormatError(f"buffer index {index} is out of range ({len(self.buffers)} buffers)")
            b = self.buffers[index]
            data = b["data"]
            start, size = (data.start, data.count) if data is not None else (0, 0)
            if size == 0:
                off, big = b["offset"], b["size"]
                if off > 1:  # data stored outside the flatbuffer (models over 2 GB)
                    start, size = off, big
            if start < 0 or start + size > self.size:
                raise ModelFormatError(f"buffer {index} data ({start}+{size}) lies outside the {self.size}-byte file")
            span = self.buffer_cache[index] = (start, size)
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
        return Quantization(
            kind=kind, axis=q["quantized_dimension"], num_scales=n_scales,
            scale=_F32.unpack_from(self.buf, scale.start)[0] if n_scales else None,
            zero_point=_I64.unpack_from(self.buf, zero_point.start)[0] if n_zp else None)

    def sparsity(self, s: Mapping[str, Any] | None) -> Sparsity | None:
        if s is None:
            return None
        dims = s["dim_metadata"] or ()
        return Sparsity(tuple(s["traversal_order"] or ()), tuple(s["block_map"] or ()),
                        tuple("SPARSE_CSR" if dm["format"] == 1 else "DENSE" for dm in dims),
                        tuple(dm["dense_size"] for dm in dims))

    def tensor(self, index: int, t: Mapping[str, Any]) -> Tensor:
        sig = t["shape_signature"]
        buffer = t["buffer"]
        start, size = self.buffer_span(buffer) if buffer else (0, 0)
        return Tensor(
            index=index, name=self.string(t["name"]), dtype=schema.dtype_name(t["type"]), shape=t["shape"] or (),
            shape_signature=sig if sig else None, buffer=buffer, data_offset=start, data_size=size,
            is_variable=bool(t["is_variable"]), quantization=self.quantization(t["quantization"]),
            sparsity=self.sparsity(t["sparsity"]))

    def custom_options(self, span: tuple[int, int], fmt: int) -> Mapping[str, Any]:
        """Decode a custom op's FlexBuffer options map; raw int32 words (``raw_int32``) otherwise."""
        start, size = span
        if fmt != 0 or size == 0 or start + size > self.size:
            return MappingProxyType({})
        try:
            value = flexbuffers.Loads(bytes(self.buf[start:start + size]))
        except Exception:  # noqa: BLE001 - foreign bytes; a custom op's options are optional to us
            value = None
        if not isinstance(value, dict):
            # Not a FlexBuffer map: some custom ops (MediaPipe's) store a raw C struct of int32s.
            if size % 4 == 0 and size <= 256:
                return MappingProxyType({"raw_int32": struct.unpack_from(f"<{size // 4}i", self.buf, start)})
            return MappingProxyType({})
        return MappingProxyType({str(k): v for k, v in value.items()})

    def op_custom_span(self, op: Mapping[str, Any]) -> tuple[int, int]:
        data = op["custom_options"]
        if data is not None and data.count:
            return data.start, data.count
        off, size = op["large_custom_options_offset"], op["large_custom_options_size"]
        if size:  # custom options stored outside the flatbuffer (models over 2 GB)
            if off + size > self.size:
                raise ModelFormatError(f"custom options ({off}+{size}) lie outside the {self.size}-byte file")
            return off, size
        return 0, 0

    def subgraph(self, index: int, sg: Mapping[str, Any], codes: list[tuple[int, str | None, int]]) -> Subgraph:
        tensors = tuple(self.tensor(i, t) for i, t in enumerate(sg["tensors"] or ()))
        n_t = len(tensors)

        def check(ids: tuple[int, ...] | None, what: str, optional: bool = False) -> tuple[int, ...]:
            if not ids:
                return ()
            for i in ids:
                if not (0 <= i < n_t or (optional and i == -1)):
                    raise ModelFormatError(f"subgraph {index}: {what} refers to tensor {i} of {n_t}")
            return ids

        ops = []
        n_codes = len(codes)
        for i, op in enumerate(sg["operators"] or ()):
            ci = op["opcode_index"]
            if not 0 <= ci < n_codes:
                raise ModelFormatError(f"subgraph {index} op {i}: opcode index {ci} of {n_codes}")
            code, custom, version = codes[ci]
            what = f"op {i}"
            custom_span = self.op_custom_span(op)
            options = (schema.options_from(op, self.buf) if code != schema.CUSTOM_CODE
                       else self.custom_options(custom_span, op["custom_options_format"]))
            ops.append(Operator(
                index=i, op_type=schema.op_name(code, custom), builtin_code=code, version=version,
                inputs=check(op["inputs"], what, optional=True),
                outputs=check(op["outputs"], what, optional=True),
                intermediates=check(op["intermediates"], what, optional=True),
                options=options,
                custom_code=custom,
                custom_options=custom_span))
        return Subgraph(
            index=index, name=self.string(sg["name"]), tensors=tensors, operators=tuple(ops),
            inputs=check(sg["inputs"], "inputs"), outputs=check(sg["outputs"], "outputs"))
