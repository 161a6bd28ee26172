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

Per subgraph, the arena is the planner's high-water mark: the highest end of a ``kTfLiteArenaRw``
buffer in the ``ArenaPlanner``'s own records (``allocs_``, one offset and size per tensor, found
the same checked way), which outlive the buffers; the persistent arena likewise over
``kTfLiteArenaRwPersistent``. The buffers' addresses give the same extent while they are held
(:attr:`RealSubgraph.address_extent`).
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


class _ArenaAlloc(ctypes.Structure):
    """``ArenaAllocWithUsageInterval`` (tflite/simple_memory_arena.h): the planner's record of one tensor."""

    _fields_ = [("offset", ctypes.c_size_t), ("size", ctypes.c_size_t), ("tensor", ctypes.c_int32),
                ("first_node", ctypes.c_int32), ("last_node", ctypes.c_int32), ("_pad", ctypes.c_int32)]


@dataclass(frozen=True)
class RealTensor:
    """One tensor of a subgraph as LiteRT allocated it."""

    index: int
    name: str | None  # None for a kernel temporary
    allocation_type: int
    bytes: int
    address: int
    offset: int = 0  # the ArenaPlanner's record (allocs_): offset and size in its arena, 0 bytes if none
    planned_bytes: int = 0


@dataclass(frozen=True)
class RealSubgraph:
    """One subgraph's tensors (model tensors first, then the kernels' temporaries) and its arenas."""

    index: int
    model_tensors: int  # tensors of the model file; the others are temporaries
    tensors: tuple[RealTensor, ...]

    def _extent(self, kind: int) -> int:
        spans = [(t.address, t.address + t.bytes) for t in self.tensors
                 if t.allocation_type == kind and t.bytes and t.address]
        return max(end for _, end in spans) - min(start for start, _ in spans) if spans else 0

    @property
    def arena_bytes(self) -> int:
        """The arena's high-water mark, from the planner's own records (``ArenaPlanner::allocs_``):
        the highest end of a ``kTfLiteArenaRw`` buffer. Unlike the addresses, the records survive
        ``ReleaseMemory`` (a WHILE body's arena is freed after each run of the loop)."""
        return max((t.offset + t.planned_bytes for t in self.tensors
                    if t.allocation_type == ARENA_RW and t.planned_bytes), default=0)

    @property
    def address_extent(self) -> int:
        """The arena as the buffers' addresses show it now: lowest to highest address of its live buffers."""
        return self._extent(ARENA_RW)

    @property
    def persistent_bytes(self) -> int:
        """The persistent arena's high-water mark, from the planner's records as :attr:`arena_bytes`."""
        return max((t.offset + t.planned_bytes for t in self.tensors
                    if t.allocation_type == ARENA_RW_PERSISTENT and t.planned_bytes), default=0)

    @property
    def temporaries(self) -> tuple[RealTensor, ...]:
        """The kernels' temporaries that hold bytes."""
        return tuple(t for t in self.tensors[self.model_tensors:] if t.bytes)

    def offset(self, index: int) -> int:
        """Offset of tensor ``index`` in the arena."""
        base = min(t.address for t in self.tensors if t.allocation_type == ARENA_RW and t.bytes and t.address)
        return self.tensors[index].address - base


@dataclass(frozen=True)
class RealAllocation:
    """Every subgraph LiteRT allocated: after ``allocate_tensors`` (``prepared``) and after one invoke
    (``subgraphs``).

    Both are needed: the entry's planning finishes during the first invoke (lazily, after an op with
    a dynamic output), while the subgraphs a WHILE or IF runs are allocated in the control-flow op's
    Prepare and released again after each run of the op (``ReleaseMemory``: their buffers' addresses
    are then null). A subgraph's arena is the larger of the two readings.
    """

    subgraphs: tuple[RealSubgraph, ...]
    prepared: tuple[RealSubgraph, ...] = ()
    heap_bytes: int = 0  # glibc's heap growth from before the interpreter to after the invoke (:func:`heap_in_use`)
    built_heap_bytes: int = 0  # the same once the interpreter is built, before ``allocate_tensors``

    def arena(self, index: int) -> int:
        """Subgraph ``index``'s arena, the larger of its two readings."""
        return max(self.subgraphs[index].arena_bytes,
                   self.prepared[index].arena_bytes if index < len(self.prepared) else 0)

    def persistent(self, index: int) -> int:
        """Subgraph ``index``'s persistent arena, the larger of its two readings."""
        return max(self.subgraphs[index].persistent_bytes,
                   self.prepared[index].persistent_bytes if index < len(self.prepared) else 0)

    @property
    def arena_bytes(self) -> int:
        """Sum of the subgraphs' arenas (each subgraph has its own)."""
        return sum(self.arena(i) for i in range(len(self.subgraphs)))

    @property
    def persistent_bytes(self) -> int:
        """Sum of the subgraphs' persistent arenas."""
        return sum(self.persistent(i) for i in range(len(self.subgraphs)))


def _words(address: int, count: int) -> list[int]:
    return list((ctypes.c_uint64 * count).from_address(address))


def _readable_ranges() -> list[tuple[int, int]]:
    """The readable mappings of this process (Linux ``/proc/self/maps``; empty elsewhere)."""
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        span, perms = line.split()[:2]
        if perms.startswith("r"):
            lo, hi = (int(x, 16) for x in span.split("-"))
            out.append((lo, hi))
    return out


def _is_readable(ranges: list[tuple[int, int]], address: int, size: int) -> bool:
    """Whether ``size`` bytes at ``address`` lie in one readable mapping (True when the maps are unknown)."""
    return not ranges or any(lo <= address and address + size <= hi for lo, hi in ranges)


_PLANNER_WORD: int | None = None  # where a Subgraph holds its memory_planner_, found once


def _planner_allocs(subgraph: int, context: int, tensors: int) -> list[_ArenaAlloc]:
    """The ``ArenaPlanner::allocs_`` of a subgraph: ``memory_planner_`` is a word of the Subgraph
    pointing at an object whose second word is this subgraph's context and whose ``allocs_`` (after
    the graph info) has one 32-byte record per tensor. Found on the first subgraph (scanning its words
    until the first that fits) and then read at the same place in the others, checked the same way."""
    global _PLANNER_WORD

    none = [_ArenaAlloc() for _ in range(tensors)]
    ranges = _readable_ranges()  # a word that looks like a pointer is followed only into mapped memory

    def fits(word: int, scanning: bool) -> list[_ArenaAlloc] | None:
        q = _words(subgraph + 8 * word, 1)[0]
        if not q and not scanning:
            return none  # no planner yet: the subgraph was never prepared
        if not q or q % 8 or q >= 1 << 47 or q < 1 << 16 or not _is_readable(ranges, q, 48):
            return None
        if _words(q + 8, 1)[0] != context:
            return None
        begin, end, _ = _words(q + 24, 3)
        size = ctypes.sizeof(_ArenaAlloc)
        if end < begin or (end - begin) % size or (end - begin) // size > tensors:
            return None
        if end > begin and not _is_readable(ranges, begin, end - begin):
            return None
        count = (end - begin) // size
        return (list((_ArenaAlloc * count).from_address(begin)) if count else []) + none[count:]

    if _PLANNER_WORD is None:
        for word in range(1, 400):
            found = fits(word, True)
            if found is not None:
                _PLANNER_WORD = word
                return found
        raise RuntimeError("LiteRT's Subgraph layout changed: no ArenaPlanner found")
    found = fits(_PLANNER_WORD, False)
    if found is None:
        raise RuntimeError("LiteRT's Subgraph layout changed: no ArenaPlanner where the first subgraph has it")
    return found


def read_allocation(model_path: str, threads: int = 1, model_tensors: dict[int, int] | None = None,
                    input_shapes: dict[int, tuple[int, ...]] | None = None, xnnpack: bool = False) -> RealAllocation:
    """LiteRT's allocation of ``model_path`` with builtin kernels only (no XNNPACK), ``threads`` threads;
    ``xnnpack``: with LiteRT's default delegate applied (``OpResolverType.AUTO``), as a user gets it.

    ``model_tensors``: ``{subgraph: number of tensors in the file}`` (to tell temporaries apart);
    ``input_shapes``: ``{input position: shape}`` resized before allocating. The inputs are zeros.
    """
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    before = heap_in_use()
    resolver = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    interpreter = Interpreter(model_path=model_path, num_threads=threads, experimental_op_resolver_type=resolver)
    built = heap_in_use() - before  # the default delegate is applied lazily, at the first allocate_tensors
    details = interpreter.get_input_details()
    for position, shape in (input_shapes or {}).items():
        interpreter.resize_tensor_input(details[position]["index"], list(shape))
    interpreter.allocate_tensors()
    prepared = _read_subgraphs(interpreter, model_tensors)
    for d in interpreter.get_input_details():
        interpreter.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    interpreter.invoke()
    grown = heap_in_use() - before
    invoked = _read_subgraphs(interpreter, model_tensors)
    del interpreter  # the structures above are copies; the interpreter may go
    return RealAllocation(invoked, prepared, grown, built)


def heap_in_use() -> int:
    """The bytes glibc's malloc hands out now: ``mallinfo2()``'s ``uordblks`` (chunks in use in the
    heap) plus ``hblkhd`` (blocks mmap'ed for large requests, which is where the arenas and packed
    weights of a few MB go). Exact counts of what the program holds, unlike RSS, which also moves
    with pages touched of the mapped model file, of freed memory not yet returned and of the
    threads' stacks: the delegate's bytes are the difference of this figure between two runs."""
    fields = [ctypes.c_size_t] * 10  # arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost
    info = type("mallinfo2", (ctypes.Structure,), {"_fields_": [(f"f{i}", t) for i, t in enumerate(fields)]})
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = info
    got = libc.mallinfo2()
    return got.f7 + got.f4


def _read_subgraphs(interpreter, model_tensors: dict[int, int] | None) -> tuple[RealSubgraph, ...]:
    """Every subgraph's tensors as the interpreter's C structures hold them now."""
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
    offset = 0
    ranges = _readable_ranges()
    for k in range(1, 62):
        begin, end = head[k], head[k + 1]
        if begin and end - begin == 8 * count and begin % 8 == 0 and _is_readable(ranges, begin, 8 * count):
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
        allocs = _planner_allocs(context - offset, context, n)
        if n != wrapper.NumTensors(index):
            raise RuntimeError(f"subgraph {index}: its context does not hold its {wrapper.NumTensors(index)} tensors")
        raw = (_TfLiteTensor * n).from_address(array)
        tensors = tuple(RealTensor(i, t.name.decode() if t.name else None, t.allocation_type, t.bytes, t.data or 0,
                                   a.offset if a.tensor == i else 0, a.size if a.tensor == i else 0)
                        for i, (t, a) in enumerate(zip(raw, allocs)))
        own = (model_tensors or {}).get(index, sum(1 for t in tensors if t.name is not None))
        subgraphs.append(RealSubgraph(index, own, tensors))
    # the primary context's tensors are the ones the Python API reports: the structures were read right
    for d in interpreter.get_tensor_details():
        if d["index"] < len(subgraphs[0].tensors) and d["name"] != (subgraphs[0].tensors[d["index"]].name or ""):
            raise RuntimeError("LiteRT's TfLiteTensor layout changed: names do not match")
    return tuple(subgraphs)
