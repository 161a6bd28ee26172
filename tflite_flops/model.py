"""Reader: a .tflite path or bytes -> :class:`Model` (subgraphs, operators, tensors, signatures).

A path is memory-mapped. Weight bytes are never copied into Python objects: a constant
tensor keeps only the (offset, size) of its data in the file, and :meth:`Model.constant`
returns a NumPy view over the mapping when a formula or the shape engine asks for values.
Memory is therefore O(ops + tensors), not O(file size).

Every index read from the file (tensor, buffer, opcode, subgraph) is checked before use,
and every error of the flatbuffer bindings on corrupted bytes becomes a ModelFormatError.
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

from . import schema
from .errors import ModelFormatError, ModelLoadError
from .units import DTYPE_BITS, num_elements

_NP_DTYPES = {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8,
    "INT64": np.int64, "BOOL": np.bool_, "INT16": np.int16, "INT8": np.int8,
    "FLOAT64": np.float64, "UINT64": np.uint64, "UINT32": np.uint32, "UINT16": np.uint16,
    "COMPLEX64": np.complex64, "COMPLEX128": np.complex128,
}

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
        """SHA-256 of the file, streamed so that weight pages do not stay resident."""
        h = hashlib.sha256()
        if self.path is not None:
            with open(self.path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        else:
            h.update(self._buf)
        return h.hexdigest()

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
        count = num_elements(tensor.shape)
        itemsize = np.dtype(np_dtype).itemsize
        if count * itemsize > tensor.data_size:
            return None
        arr = np.frombuffer(self.raw(tensor.data_offset, count * itemsize), dtype=np_dtype, count=count)
        return arr.reshape(tensor.shape) if tensor.shape else arr.reshape(())

    @property
    def main(self) -> Subgraph:
        """Subgraph 0, the primary graph."""
        return self.subgraphs[0]


# ---------------------------------------------------------------------------------------------


def _open(source: str | os.PathLike | bytes | bytearray | memoryview) -> tuple[Any, str | None]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return (bytes(source) if isinstance(source, memoryview) else source), None
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
        return _Reader(buf, path).read()
    except ModelFormatError as exc:
        raise ModelFormatError(f"{name}: {exc}") from exc
    except RecursionError as exc:
        raise ModelFormatError(f"{name}: corrupted flatbuffer (nested offsets loop)") from exc
    except _FB_ERRORS as exc:
        raise ModelFormatError(f"{name}: corrupted or truncated flatbuffer ({type(exc).__name__}: {exc})") from exc


class _Reader:
    """Walks the flatbuffer once, checking every length and index against what it indexes."""

    def __init__(self, buf: Any, path: str | None) -> None:
        self.buf = buf
        self.path = path
        self.size = len(buf)
        self.fb = schema.root(buf)
        self.buffer_cache: dict[int, tuple[int, int]] = {}

    def length(self, n: int, what: str, elem_bytes: int = 4) -> int:
        if n < 0 or n * elem_bytes > self.size:
            raise ModelFormatError(f"{what} claims {n} elements, more than the file can hold")
        return n

    def ints(self, obj: Any, name: str, what: str) -> tuple[int, ...]:
        if getattr(obj, f"{name}IsNone")():
            return ()
        self.length(getattr(obj, f"{name}Length")(), what)
        return tuple(int(x) for x in getattr(obj, f"{name}AsNumpy")().tolist())

    def string(self, value: bytes | None) -> str:
        return value.decode("utf-8", "replace") if value else ""

    def read(self) -> Model:
        fb = self.fb
        n_codes = self.length(fb.OperatorCodesLength(), "operator_codes")
        codes = []
        for i in range(n_codes):
            oc = fb.OperatorCodes(i)
            code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
            custom = self.string(oc.CustomCode()) if code == schema.CUSTOM_CODE else None
            codes.append((code, custom, int(oc.Version())))
        self.n_buffers = self.length(fb.BuffersLength(), "buffers")
        n_sub = self.length(fb.SubgraphsLength(), "subgraphs")
        if n_sub == 0:
            raise ModelFormatError("model has no subgraphs")
        subgraphs = tuple(self.subgraph(i, fb.Subgraphs(i), codes) for i in range(n_sub))
        for sg in subgraphs:
            for op in sg.operators:
                for key, ref in op.subgraph_refs.items():
                    if not 0 <= ref < n_sub:
                        raise ModelFormatError(
                            f"subgraph {sg.index} op {op.index} ({op.op_type}) {key}={ref} "
                            f"is out of range (model has {n_sub} subgraphs)")
        signatures = []
        for i in range(self.length(fb.SignatureDefsLength(), "signature_defs")):
            sd = fb.SignatureDefs(i)
            sub = int(sd.SubgraphIndex())
            if not 0 <= sub < n_sub:
                raise ModelFormatError(f"signature {i} refers to subgraph {sub} of {n_sub}")
            n_t = len(subgraphs[sub].tensors)
            maps = []
            for getter, length in ((sd.Inputs, sd.InputsLength), (sd.Outputs, sd.OutputsLength)):
                entries = {}
                for j in range(self.length(length(), "signature tensors")):
                    tm = getter(j)
                    idx = int(tm.TensorIndex())
                    if not 0 <= idx < n_t:
                        raise ModelFormatError(f"signature {i} names tensor {idx} of {n_t}")
                    entries[self.string(tm.Name())] = idx
                maps.append(MappingProxyType(entries))
            signatures.append(Signature(self.string(sd.SignatureKey()), sub, maps[0], maps[1]))
        metadata = {}
        for i in range(self.length(fb.MetadataLength(), "metadata")):
            md = fb.Metadata(i)
            metadata[self.string(md.Name())] = int(md.Buffer())
        return Model(
            path=self.path, size_bytes=self.size, version=int(fb.Version()),
            description=self.string(fb.Description()), subgraphs=subgraphs,
            signatures=tuple(signatures), metadata=MappingProxyType(metadata), _buf=self.buf)

    def buffer_span(self, index: int) -> tuple[int, int]:
        span = self.buffer_cache.get(index)
        if span is None:
            if not 0 <= index < self.n_buffers:
                raise ModelFormatError(f"buffer index {index} is out of range ({self.n_buffers} buffers)")
            b = self.fb.Buffers(index)
            start, size = schema.vector_span(b, schema.BUFFER_DATA_SLOT)
            if size == 0:
                off, big = int(b.Offset()), int(b.Size())
                if off > 1:  # data stored outside the flatbuffer (models over 2 GB)
                    start, size = off, big
            if start < 0 or start + size > self.size:
                raise ModelFormatError(f"buffer {index} data ({start}+{size}) lies outside the file")
            span = self.buffer_cache[index] = (start, size)
        return span

    def quantization(self, t: Any) -> Quantization | None:
        q = t.Quantization()
        if q is None:
            return None
        details = int(q.DetailsType())
        n_scales = self.length(q.ScaleLength(), "quantization scales")
        if details:
            kind = {1: "custom", 2: "blockwise", 3: "multi_axis"}.get(details, "custom")
        elif n_scales == 0:
            return None
        else:
            kind = "per_axis" if n_scales > 1 else "per_tensor"
        n_zp = self.length(q.ZeroPointLength(), "quantization zero points", 8)
        return Quantization(
            kind=kind, axis=int(q.QuantizedDimension()), num_scales=n_scales,
            scale=float(q.Scale(0)) if n_scales else None,
            zero_point=int(q.ZeroPoint(0)) if n_zp else None)

    def sparsity(self, t: Any) -> Sparsity | None:
        s = t.Sparsity()
        if s is None:
            return None
        formats, sizes = [], []
        for i in range(self.length(s.DimMetadataLength(), "sparsity dim_metadata")):
            dm = s.DimMetadata(i)
            formats.append("SPARSE_CSR" if dm.Format() == 1 else "DENSE")
            sizes.append(int(dm.DenseSize()))
        return Sparsity(self.ints(s, "TraversalOrder", "traversal_order"),
                        self.ints(s, "BlockMap", "block_map"), tuple(formats), tuple(sizes))

    def tensor(self, index: int, t: Any) -> Tensor:
        shape = self.ints(t, "Shape", "tensor shape")
        sig = self.ints(t, "ShapeSignature", "shape_signature") if not t.ShapeSignatureIsNone() else None
        dtype = schema.dtype_name(int(t.Type()))
        buffer = int(t.Buffer())
        start, size = self.buffer_span(buffer) if buffer else (0, 0)
        return Tensor(
            index=index, name=self.string(t.Name()), dtype=dtype, shape=shape,
            shape_signature=sig if sig else None, buffer=buffer, data_offset=start, data_size=size,
            is_variable=bool(t.IsVariable()), quantization=self.quantization(t), sparsity=self.sparsity(t))

    def custom_options(self, span: tuple[int, int], fmt: int) -> Mapping[str, Any]:
        """Decode a custom op's FlexBuffer options map; undecodable options give an empty map."""
        start, size = span
        if fmt != 0 or size == 0 or start + size > self.size:
            return MappingProxyType({})
        try:
            value = flexbuffers.Loads(bytes(self.buf[start:start + size]))
        except Exception:  # noqa: BLE001 - foreign bytes; a custom op's options are optional to us
            return MappingProxyType({})
        if not isinstance(value, dict):
            return MappingProxyType({})
        return MappingProxyType({str(k): v for k, v in value.items()})

    def subgraph(self, index: int, sg: Any, codes: list[tuple[int, str | None, int]]) -> Subgraph:
        n_t = self.length(sg.TensorsLength(), "tensors")
        tensors = tuple(self.tensor(i, sg.Tensors(i)) for i in range(n_t))

        def check(ids: tuple[int, ...], what: str, optional: bool = False) -> tuple[int, ...]:
            for i in ids:
                if not (0 <= i < n_t or (optional and i == -1)):
                    raise ModelFormatError(f"subgraph {index}: {what} refers to tensor {i} of {n_t}")
            return ids

        ops = []
        for i in range(self.length(sg.OperatorsLength(), "operators")):
            op = sg.Operators(i)
            ci = int(op.OpcodeIndex())
            if not 0 <= ci < len(codes):
                raise ModelFormatError(f"subgraph {index} op {i}: opcode index {ci} of {len(codes)}")
            code, custom, version = codes[ci]
            what = f"op {i}"
            custom_span = schema.vector_span(op, schema.OPERATOR_CUSTOM_OPTIONS_SLOT)
            options = (schema.decode_options(op, self.size) if code != schema.CUSTOM_CODE
                       else self.custom_options(custom_span, int(op.CustomOptionsFormat())))
            ops.append(Operator(
                index=i, op_type=schema.op_name(code, custom), builtin_code=code, version=version,
                inputs=check(self.ints(op, "Inputs", "op inputs"), what, optional=True),
                outputs=check(self.ints(op, "Outputs", "op outputs"), what, optional=True),
                intermediates=check(self.ints(op, "Intermediates", "op intermediates"), what, optional=True),
                options=options,
                custom_code=custom,
                custom_options=custom_span))
        return Subgraph(
            index=index, name=self.string(sg.Name()), tensors=tensors, operators=tuple(ops),
            inputs=check(self.ints(sg, "Inputs", "subgraph inputs"), "inputs"),
            outputs=check(self.ints(sg, "Outputs", "subgraph outputs"), "outputs"))
