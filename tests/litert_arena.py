"""LiteRT's real allocation of a model, read from the interpreter's own C structures.

The independent reference of the memory tests. After ``allocate_tensors`` and one ``invoke``
(LiteRT plans lazily: after an op whose output shape is known only at run time, the rest of the
graph is planned during the first invoke), every subgraph's ``TfLiteContext`` lists its tensors,
the kernels' temporaries included (Prepare adds them with ``AddTensors``), each a C
``TfLiteTensor`` with its ``allocation_type`` and the address the planner gave it.

How the structures are found: the Python wrapper hands out the address of the C++
``tflite::Interpreter``, whose first member is the primary subgraph's ``TfLiteContext*``; a
``std::vector<std::unique_ptr<Subgraph>>`` of the interpreter holds the subgraphs, each with its
``TfLiteContext`` at the same offset as the primary one. Both are located by checking what they
point at (the vector's length is the number of subgraphs, the primary context's tensors are the
ones the Python API reports), never assumed blindly, so a layout change fails loudly instead of
reading garbage.

Per subgraph, the arena is the extent of its ``kTfLiteArenaRw`` buffers, from the lowest address
(the first buffer the planner placed sits at offset 0 of the arena) to the highest end: the
planner's high-water mark. The persistent arena likewise over ``kTfLiteArenaRwPersistent``.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

# TfLiteAllocationType (tflite/core/c/common.h)
MEM_NONE, MMAP_RO, ARENA_RW, ARENA_RW_PERSISTENT, DYNAMIC, PERSISTENT_RO, CUSTOM = range(7)


class _TfLiteTensor(ctypes.Structure):
    """The leading fields of ``TfLiteTensor`` (tflite/core/c/common.h), 112 bytes on 64-bit hosts."""

    _fields_ = [("type", ctypes.c_int), ("data", ctypes.c_void_p), ("dims", ctypes.c_void_p),
                ("scale", ctypes.c_float), ("zero_point", ctypes.c_int32), ("allocation_type", ctypes.c_int),
                ("bytes", ctypes.c_size_t), ("allocation", ctypes.c_void_p), ("name", ctypes.c_char_p),
                ("delegate", ctypes.c_void_p), ("buffer_handle", ctypes.c_int), ("data_is_stale", ctypes.c_bool),
                ("is_variable", ctypes.c_bool), ("quantization_type", ctypes.c_int),
                ("quantization_params", ctypes.c_void_p), ("sparsity", ctypes.c_void_p),
                ("dims_signature", ctypes.c_void_p)]


@dataclass(frozen=True)
class RealTensor:
    """One tensor of a subgraph as LiteRT allocated it."""

    index: int
    name: str | None  # None for a kernel temporary
    allocation_type: int
    bytes: int
    address: int


@dataclass(frozen=True)
class RealSubgraph:
    """One subgraph's tensors (model tensors first, then the kernels' temporaries) and its arenas."""

    index: int
    model_tensors: int  # tensors of the model file; the others are temporaries
    tensors: tuple[RealTensor, ...]

    def _extent(self, kind: int) -> int:
        spans = [(t.address, t.address + t.bytes) for t in self.tensors if t.allocation_type == kind and t.bytes]
        return max(end for _, end in spans) - min(start for start, _ in spans) if spans else 0

    @property
    def arena_bytes(self) -> int:
        """The arena's high-water mark: lowest to highest address of its ``kTfLiteArenaRw`` buffers."""
        return self._extent(ARENA_RW)

    @property
    def persistent_bytes(self) -> int:
        """The persistent arena's extent."""
        return self._extent(ARENA_RW_PERSISTENT)

    @property
    def temporaries(self) -> tuple[RealTensor, ...]:
        """The kernels' temporaries that hold bytes."""
        return tuple(t for t in self.tensors[self.model_tensors:] if t.bytes)

    def offset(self, index: int) -> int:
        """Offset of tensor ``index`` in the arena."""
        base = min(t.address for t in self.tensors if t.allocation_type == ARENA_RW and t.bytes)
        return self.tensors[index].address - base


@dataclass(frozen=True)
class RealAllocation:
    """Every subgraph LiteRT allocated, after one invoke."""

    subgraphs: tuple[RealSubgraph, ...]

    @property
    def arena_bytes(self) -> int:
        """Sum of the subgraphs' arenas (each subgraph has its own)."""
        return sum(s.arena_bytes for s in self.subgraphs)

    @property
    def persistent_bytes(self) -> int:
        """Sum of the subgraphs' persistent arenas."""
        return sum(s.persistent_bytes for s in self.subgraphs)


def _words(address: int, count: int) -> list[int]:
    return list((ctypes.c_uint64 * count).from_address(address))


def read_allocation(model_path: str, threads: int = 1, model_tensors: dict[int, int] | None = None,
                    input_shapes: dict[int, tuple[int, ...]] | None = None) -> RealAllocation:
    """LiteRT's allocation of ``model_path`` with builtin kernels only (no XNNPACK), ``threads`` threads.

    ``model_tensors``: ``{subgraph: number of tensors in the file}`` (to tell temporaries apart);
    ``input_shapes``: ``{input position: shape}`` resized before allocating. The inputs are zeros.
    """
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(model_path=model_path, num_threads=threads,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    details = interpreter.get_input_details()
    for position, shape in (input_shapes or {}).items():
        interpreter.resize_tensor_input(details[position]["index"], list(shape))
    interpreter.allocate_tensors()
    for d in interpreter.get_input_details():
        interpreter.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    interpreter.invoke()
    wrapper = interpreter._interpreter
    count = wrapper.NumSubgraphs()
    me = wrapper.interpreter()
    head = _words(me, 64)
    primary = head[0]
    size = _words(primary, 1)[0]
    if size != wrapper.NumTensors(0):
        raise RuntimeError("LiteRT's Interpreter layout changed: its first member is not the primary context")
    # The subgraph vector: (begin, end) of `count` pointers, the first one just below the primary context.
    contexts = None
    for k in range(1, 62):
        begin, end = head[k], head[k + 1]
        if begin and end - begin == 8 * count and begin % 8 == 0:
            first = _words(begin, 1)[0]
            if 0 < primary - first < 4096:
                offset = primary - first
                contexts = [s + offset for s in _words(begin, count)]
                break
    if contexts is None:
        raise RuntimeError("LiteRT's Interpreter layout changed: no vector of its subgraphs found")
    subgraphs = []
    for index, context in enumerate(contexts):
        n, _, array = _words(context, 3)
        if n != wrapper.NumTensors(index):
            raise RuntimeError(f"subgraph {index}: its context does not hold its {wrapper.NumTensors(index)} tensors")
        raw = (_TfLiteTensor * n).from_address(array)
        tensors = tuple(RealTensor(i, t.name.decode() if t.name else None, t.allocation_type, t.bytes, t.data or 0)
                        for i, t in enumerate(raw))
        own = (model_tensors or {}).get(index, sum(1 for t in tensors if t.name is not None))
        subgraphs.append(RealSubgraph(index, own, tensors))
    # the primary context's tensors are the ones the Python API reports: the structures were read right
    for d in interpreter.get_tensor_details():
        if d["index"] < len(subgraphs[0].tensors) and d["name"] != (subgraphs[0].tensors[d["index"]].name or ""):
            raise RuntimeError("LiteRT's TfLiteTensor layout changed: names do not match")
    del interpreter  # the structures above are copies; the interpreter may go
    return RealAllocation(tuple(subgraphs))
