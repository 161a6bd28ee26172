"""Activation memory: tensor lifetimes, live bytes per op, and the arenas two real planners would allocate.

A pass over the shapes the analysis resolved (never a second shape walk). For every subgraph the
runtime holds, it derives, as TFLite's ``ArenaPlanner`` does (tflite/arena_planner.cc):

* where each tensor lives: constants stay in the file (weights, reported apart); variable tensors
  and the init-time results of DEQUANTIZE / DENSIFY of a constant go to the *persistent* arena;
  outputs that a kernel computes once at Prepare from constants (SHAPE, shape arithmetic:
  ``SetTensorToPersistentRo``) are read-only buffers outside the arena; every other tensor with
  bytes is an activation in the arena;
* in-place reuse: an op registered as in-place (RESHAPE, ADD, SOFTMAX, … — the registry's
  :class:`~tflite_flops.ops.registry.MemoryFacts`) writes its output into an input's buffer under
  the planner's conditions (same size, a single reader unless the data is unmodified, neither a
  subgraph input nor output);
* lifetimes by reference counting in op order: subgraph inputs live from the start, outputs to
  the end, every other buffer from the op that writes it to the last op that reads it;
* the arena: whole-lifetime buffers first, then the rest by size (largest first), each placed at
  the best-fitting 64-byte-aligned gap among the buffers whose lifetimes overlap its own
  (``SimpleMemoryArena::Allocate``).

TensorFlow Lite Micro's ``GreedyMemoryPlanner`` is simulated too, with its own lifetime rules
(tflite/micro/micro_allocation_info.cc: one timeline over the entry subgraph and the subgraphs
its IF / WHILE / CALL_ONCE ops run, sizes rounded up to 16 bytes, largest first, first fit).

Not covered: kernel temporaries (im2col and other scratch buffers a kernel asks for in Prepare),
tensors the runtime sizes only at invoke time (dynamic outputs), and delegates, which keep their
partitions' tensors in their own memory. See docs/memory.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate, compress
from operator import itemgetter
from typing import Mapping, Sequence

from .model import Model, Subgraph
from .ops.registry import MEMORY_FACTS, PLAIN_MEMORY
from .report import MemorySummary, SubgraphMemory
from .shapes import SubgraphShapes, subgraph_tensors
from .units import dense_bytes, num_elements

TFLITE_ALIGNMENT = 64  # kDefaultTensorAlignment (tflite/util.h) and kDefaultArenaAlignment
TFLM_ALIGNMENT = 16  # MicroArenaBufferAlignment()
_MAX_SHARABLE_INPUTS = 3  # kTfLiteMaxSharableOpInputs
_SCALAR_BYTES = 4  # kScalarTensorBytes: smaller tensors are never written in place
_END = 1 << 62  # "never deallocated" (kNodeNotAssigned)

# Where a tensor lives, as TfLiteAllocationType.
CONSTANT, ARENA, PERSISTENT, PREPARED, NOTHING = "mmap_ro", "arena_rw", "arena_rw_persistent", "persistent_ro", "none"


def align(n: int, alignment: int) -> int:
    """``n`` rounded up to a multiple of ``alignment``."""
    return -(-n // alignment) * alignment


@dataclass(frozen=True)
class SubgraphPlan:
    """TFLite's plan of one subgraph: every arena buffer's lifetime and offset, and the op-by-op live bytes."""

    index: int
    sizes: tuple[int, ...]  # bytes of every tensor at the resolved shapes
    kinds: tuple[str, ...]  # allocation type of every tensor (CONSTANT, ARENA, ...)
    shared: Mapping[int, int]  # output tensor -> the tensor whose buffer it reuses
    first: Mapping[int, int]  # arena buffer -> op that allocates it (0 for inputs)
    last: Mapping[int, int]  # arena buffer -> last op that reads it (_END: never freed)
    offsets: Mapping[int, int]  # arena buffer -> offset in the arena
    arena_bytes: int
    persistent_bytes: int
    live: tuple[int, ...]  # bytes of arena buffers alive while each op runs
    activations_total_bytes: int  # every arena tensor at its own 64-byte-aligned place: no reuse at all


def tensor_sizes(sg: Subgraph, shapes: Sequence[tuple[int, ...]], constant: Sequence[bool] | None = None,
                 numel: Sequence[int] | None = None, stored: Sequence[tuple[int, ...]] | None = None
                 ) -> list[int]:
    """Bytes of every tensor of ``sg`` at its resolved shape (packed int4/int2 round up; strings are 0).

    Constant tensors are 0 when ``constant`` is given (weights are never planned). ``numel`` and
    ``stored`` (the walk's element counts of the stored shapes) spare recounting unchanged shapes.
    """
    if constant is None:
        constant = [False] * len(shapes)
    if numel is None or stored is None:
        return [0 if c else dense_bytes(num_elements(shape), t.dtype)
                for t, shape, c in zip(sg.tensors, shapes, constant)]
    return [0 if c else dense_bytes(n if shape is s else num_elements(shape), t.dtype)
            for t, shape, c, n, s in zip(sg.tensors, shapes, constant, numel, stored)]


def allocation_kinds(sg: Subgraph, sizes: Sequence[int], constant: Sequence[bool],
                     init_constant: Sequence[bool]) -> list[str]:
    """Where TFLite puts each tensor of ``sg`` (see the module docstring)."""
    kinds = [CONSTANT if c else NOTHING if not size else PERSISTENT if t.is_variable or init else ARENA
             for t, c, init, size in zip(sg.tensors, constant, init_constant, sizes)]
    facts = MEMORY_FACTS.get
    for op in sg.operators:
        needs = facts(op.op_type, PLAIN_MEMORY).prepare_inputs
        if needs is None:
            continue
        ready = all(op.inputs[p] < 0 or kinds[op.inputs[p]] in (CONSTANT, PREPARED)
                    for p in needs if p < len(op.inputs))
        if ready:
            for o in op.outputs:
                if o >= 0 and kinds[o] == ARENA and o not in sg.inputs:
                    kinds[o] = PREPARED
    return kinds  # NOTHING: strings, resources and empty tensors have nothing in the arena


def plan_subgraph(sg: Subgraph, sizes: Sequence[int], kinds: Sequence[str]) -> SubgraphPlan:
    """TFLite's ArenaPlanner on one subgraph: in-place sharing, lifetimes, best-fit placement."""
    ops = sg.operators
    n = len(sizes)
    graph_inputs = {t for t in sg.inputs if t >= 0}
    graph_outputs = {t for t in sg.outputs if t >= 0}
    variables = [i for i, t in enumerate(sg.tensors) if t.is_variable]
    pinned = [False] * n  # kept alive to the end: subgraph outputs, inputs and variables
    readers = [0] * n  # refcounts_ of the planner: one per pin and one per read
    for t in (*graph_outputs, *variables, *graph_inputs):
        pinned[t] = True
        readers[t] += 1
    last_read = [-1] * n
    first = [-1] * n  # op that allocates each tensor (-1: never)
    for t in variables:
        first[t] = 0
    for t in graph_inputs:
        first[t] = 0
    allocated = sorted({*variables, *graph_inputs})  # every tensor that gets an allocation op
    allocate = allocated.append
    for i, op in enumerate(ops):
        for t in op.inputs:
            if t >= 0:
                readers[t] += 1
                last_read[t] = i
        for t in op.outputs:
            if t >= 0 and first[t] < 0:
                first[t] = i
                allocate(t)

    shared: dict[int, int] = {}
    root = list(range(n))  # the tensor whose buffer each tensor uses
    inplace = {op_type: facts for op_type, facts in MEMORY_FACTS.items() if facts.inplace}
    for op in ops:  # IdentifyInPlaceTensors
        facts = inplace.get(op.op_type)
        if facts is None or not op.outputs or op.outputs[0] < 0:
            continue
        out = op.outputs[0]
        changed = not facts.data_unmodified
        source = -1
        for pos in facts.inplace:
            if pos >= min(_MAX_SHARABLE_INPUTS, len(op.inputs)) or op.inputs[pos] < 0:
                continue
            t = op.inputs[pos]
            if changed and (sizes[t] != sizes[out] or sizes[t] <= _SCALAR_BYTES or readers[t] > 1):
                continue
            if t in graph_inputs or out in graph_outputs:
                continue
            if kinds[t] != kinds[out] and kinds[t] != ARENA:
                continue
            source = t
            break
        if source < 0:
            continue
        base = root[source]
        if changed and readers[base] > 1:
            continue
        # CalculateAllocations drops a share whose buffer is not an arena one of the same size.
        if kinds[base] == ARENA and kinds[out] == ARENA and sizes[base] == sizes[out]:
            shared[out] = root[out] = base

    # A buffer is freed after the last read of any tensor using it (its reference count reaches 0
    # there), unless it is pinned.
    last = [_END if pin or read < 0 else read for read, pin in zip(last_read, pinned)]
    for out, base in shared.items():
        if not pinned[base] and last_read[out] >= 0 and (last[base] == _END or last_read[out] > last[base]):
            last[base] = last_read[out]

    # Whole-run buffers first (by index); then by size, largest first; ties by allocation op, then index.
    # (persistent buffers are laid out in the same order, apart: sorting them alone keeps it)
    whole: list[int] = []
    rest: list[int] = []
    kept: list[int] = []
    for t in allocated:
        kind = kinds[t]
        if kind == ARENA:
            if sizes[t] and t not in shared:
                (whole if first[t] == 0 and last[t] == _END else rest).append(t)
        elif kind == PERSISTENT and t not in shared:
            kept.append(t)
    whole.sort()
    rest.sort(key=lambda t: (-sizes[t], first[t], t))
    arena = whole + rest
    persistent = 0
    for t in sorted(kept, key=lambda t: (0, 0, 0, t) if first[t] == 0 and last[t] == _END else (1, -sizes[t], first[t], t)):
        persistent = align(persistent, TFLITE_ALIGNMENT) + sizes[t]
    steps = max(len(ops), 1)
    end = steps - 1
    spans = [(sizes[t], first[t], last[t] if last[t] < end else end) for t in arena]
    placed = place_buffers(spans, steps, TFLITE_ALIGNMENT)
    offsets = dict(zip(arena, placed[0]))
    delta = [0] * (steps + 1)  # live bytes per op by differences: +size at first, -size after last
    for size, lo, hi in spans:
        delta[lo] += size
        delta[hi + 1] -= size
    delta.pop()
    live = list(accumulate(delta))[:len(ops)]
    total = sum([-(-size // TFLITE_ALIGNMENT) * TFLITE_ALIGNMENT for size, kind in zip(sizes, kinds) if kind == ARENA])
    return SubgraphPlan(sg.index, tuple(sizes), tuple(kinds), shared, {t: first[t] for t in arena},
                        {t: last[t] for t in arena}, offsets, placed[1], persistent, tuple(live), total)


def place_buffers(buffers: Sequence[tuple[int, int, int]], steps: int, alignment: int = 0) -> tuple[list[int], int]:
    """Offsets of ``(size, first step, last step)`` buffers placed in the given order, and the arena size.

    Each buffer is compared only with the placed buffers alive at some step of its own lifetime
    (lifetimes are inclusive). ``alignment`` > 0: TFLite's ``SimpleMemoryArena::Allocate``, the
    smallest gap that fits at an aligned offset, else the aligned end of the overlapping buffers.
    ``alignment`` 0: TFLM's ``GreedyMemoryPlanner``, the first gap from offset 0 that fits.
    """
    alive: list[list[tuple[int, int]]] = [[] for _ in range(steps)]  # (offset, end) of buffers alive at a step
    starting: list[list[tuple[int, int]]] = [[] for _ in range(steps)]  # ... of buffers whose lifetime starts there
    offsets: list[int] = []
    append = offsets.append
    high = 0
    for size, lo, hi in buffers:
        # A placed buffer overlaps [lo, hi] when it is alive at lo or starts within (lo, hi]: two
        # disjoint sets, so no buffer is seen twice. (hi < lo: a tensor read before it is written
        # in a malformed graph; such a lifetime overlaps nothing.)
        others = alive[lo] if hi >= lo else []
        if hi > lo:
            if hi == lo + 1:
                if starting[hi]:
                    others = others + starting[hi]
            else:
                others = others + [entry for step in range(lo + 1, hi + 1) for entry in starting[step]]
        others.sort()  # (alive[lo] itself is sorted in place: the order of a step's list does not matter)
        if alignment:
            best = best_gap = -1
            current = start = 0  # start: current rounded up to the alignment
            for offset, end in others:
                if start + size <= offset and (best_gap < 0 or offset - start < best_gap):
                    best, best_gap = start, offset - current
                    if best_gap == 0:
                        break
                if end > current:
                    current = end
                    start = -(-end // alignment) * alignment
            at = best if best >= 0 else start
        else:
            at = 0
            for offset, end in others:
                if offset - at >= size:
                    break
                if end > at:
                    at = end
        end = at + size
        entry = (at, end)
        if hi >= lo:
            starting[lo].append(entry)
            alive[lo].append(entry)
            if hi == lo + 1:
                alive[hi].append(entry)
            elif hi > lo:
                for step in range(lo + 1, hi + 1):
                    alive[step].append(entry)
        if end > high:
            high = end
        append(at)
    return offsets, high


def tflm_arena(model: Model, entry: int, sizes: Mapping[int, Sequence[int]],
               constant: Mapping[int, Sequence[bool]]) -> int:
    """The head of TFLM's arena by GreedyMemoryPlanner, for the tensors of every subgraph.

    Lifetimes follow ``AllocationInfoBuilder::MarkAllocationLifetimes`` from ``entry``: one scope
    count per op, the subgraphs of IF / WHILE / CALL_ONCE nested inside their caller's scope.
    Tensors no op reaches keep TFLM's "uninitialized" lifetime (-1, -1), as TFLM plans them too.
    """
    first = {sg.index: [-1] * len(sg.tensors) for sg in model.subgraphs}  # -1: TFLM's "uninitialized"
    last = {sg.index: [-1] * len(sg.tensors) for sg in model.subgraphs}
    scope = 0

    def mark(index: int, depth: int) -> None:
        nonlocal scope
        sg, firsts, lasts = model.subgraphs[index], first[index], last[index]
        for t in sg.inputs:
            if t >= 0:
                if firsts[t] < 0:
                    firsts[t] = scope
                lasts[t] = scope
        for op in sg.operators:
            scope += 1
            if op.subgraph_refs and depth < 64:
                for t in op.outputs:
                    if t >= 0 and firsts[t] < 0:
                        firsts[t] = scope
                for key in _TFLM_CALLS.get(op.op_type, ()):
                    if key in op.subgraph_refs:
                        scope += 1
                        mark(op.subgraph_refs[key], depth + 1)
            for t in op.inputs:
                if t >= 0:
                    lasts[t] = scope
            for t in op.outputs:  # (first use here too, unless a called subgraph moved the scope on)
                if t >= 0:
                    if firsts[t] < 0:
                        firsts[t] = scope
                    lasts[t] = scope
        for t in sg.outputs:
            if t >= 0:
                if firsts[t] < 0:
                    firsts[t] = scope
                lasts[t] = scope

    mark(entry, 0)
    buffers = []
    for sg in model.subgraphs:
        buffers += [(-(-size // TFLM_ALIGNMENT) * TFLM_ALIGNMENT, f, l) for tensor, size, c, f, l
                    in zip(sg.tensors, sizes[sg.index], constant[sg.index], first[sg.index], last[sg.index])
                    if size and not c and not tensor.is_variable]
    return greedy_plan(buffers, scope + 2)


# The subgraphs TFLM's allocator nests inside an op's lifetime scope, in its order.
_TFLM_CALLS = {"IF": ("then_subgraph_index", "else_subgraph_index"), "CALL_ONCE": ("init_subgraph_index",),
               "WHILE": ("cond_subgraph_index", "body_subgraph_index")}


def greedy_plan(buffers: Sequence[tuple[int, int, int]], steps: int | None = None) -> int:
    """GreedyMemoryPlanner's arena size for ``(size, first_used, last_used)`` buffers: largest first
    (a stable sort), each at the first gap from offset 0 among the buffers alive at the same time.

    Lifetimes are time steps from -1 (TFLM's "never used") to ``steps - 2``.
    """
    if steps is None:
        steps = max((b[2] for b in buffers), default=0) + 2
    shifted = [(size, first + 1, last + 1) for size, first, last in buffers]  # -1 ("never used") -> step 0
    shifted.sort(key=itemgetter(0), reverse=True)  # stable: equal sizes keep their tensor order
    return place_buffers(shifted, steps)[1]


def analyze_memory(model: Model, entry: int, states: Mapping[int, SubgraphShapes], reached: Sequence[int],
                   calls: Mapping[tuple[int, int], Sequence[int]]
                   ) -> tuple[MemorySummary, dict[int, tuple[int, ...]]]:
    """The memory figures of a model at its resolved shapes, and the live bytes of every op.

    Args:
        model: the parsed model.
        entry: the subgraph the analysis started from.
        states: the analysis' resolved shapes of every subgraph of the model; ``derived_constant``
            marks tensors made from constants once at init (DEQUANTIZE / DENSIFY of a weight),
            which TFLite keeps in its persistent arena.
        reached: the subgraphs the runtime runs (entry first), each with its own arena.
        calls: ``(subgraph, op) -> subgraphs the op runs`` for the control-flow ops.

    Returns:
        The :class:`MemorySummary` and ``{subgraph: live bytes of each op}`` for the reached subgraphs.
    """
    constant: dict[int, Sequence[bool]] = {}
    sizes: dict[int, list[int]] = {}
    for sg in model.subgraphs:
        state = states[sg.index]
        tensors = subgraph_tensors(sg, state)
        constant[sg.index] = tensors.constant
        sizes[sg.index] = tensor_sizes(sg, state.shapes, tensors.constant, tensors.numel, tensors.stored)
    plans: dict[int, SubgraphPlan] = {}
    for index in reached:
        sg = model.subgraphs[index]
        kinds = allocation_kinds(sg, sizes[index], constant[index], states[index].derived_constant)
        plans[index] = plan_subgraph(sg, sizes[index], kinds)

    nested: dict[int, tuple[int, str | None]] = {}

    def peak(index: int, stack: tuple[int, ...] = ()) -> tuple[int, str | None]:
        """(largest bytes alive at once while ``index`` runs, counting what its callers hold, and where)."""
        if index in nested:
            return nested[index]
        plan = plans[index]
        if plan.live and not any(key[0] == index for key in calls):  # no control flow: the first largest
            best = max(plan.live)
            nested[index] = (best, f"{index}:{plan.live.index(best)}")
            return nested[index]
        best, where = _pinned_bytes(plan), None
        for i, live in enumerate(plan.live):
            inner, inner_where = 0, None
            for child in calls.get((index, i), ()):
                if child in plans and child not in stack:
                    child_peak = peak(child, stack + (index,))
                    if child_peak[0] > inner:
                        inner, inner_where = child_peak
            if live + inner > best or where is None:
                best, where = live + inner, inner_where or f"{index}:{i}"
        nested[index] = (best, where)
        return nested[index]

    peak_bytes, peak_op = peak(entry)
    weights = _weights_bytes(model, reached, constant)
    subgraphs = []
    for index in reached:
        plan = plans[index]
        own_peak = max(plan.live, default=_pinned_bytes(plan))
        own_op = f"{index}:{plan.live.index(own_peak)}" if plan.live else None
        subgraphs.append(SubgraphMemory(
            subgraph=index, name=model.subgraphs[index].name, buffers=len(plan.offsets),
            shared_tensors=len(plan.shared), activations_total_bytes=plan.activations_total_bytes,
            peak_live_bytes=own_peak, peak_op=own_op, arena_bytes=plan.arena_bytes,
            persistent_bytes=plan.persistent_bytes))
    summary = MemorySummary(
        activations_total_bytes=sum(s.activations_total_bytes for s in subgraphs),
        peak_live_bytes=peak_bytes, peak_op=peak_op,
        arena_bytes=sum(s.arena_bytes for s in subgraphs),
        persistent_arena_bytes=sum(s.persistent_bytes for s in subgraphs),
        tflm_arena_bytes=tflm_arena(model, entry, sizes, constant),
        weights_bytes=weights, subgraphs=tuple(subgraphs),
        complete=all(all(states[i].resolved) for i in reached))
    return summary, {index: plan.live for index, plan in plans.items()}


def _pinned_bytes(plan: SubgraphPlan) -> int:
    """Bytes of the buffers alive for the whole run (a subgraph with no ops still holds its inputs)."""
    return sum(plan.sizes[t] for t in plan.offsets if plan.first[t] == 0 and plan.last[t] == _END)


def _weights_bytes(model: Model, reached: Sequence[int], constant: Mapping[int, Sequence[bool]]) -> int:
    """Bytes of the constant buffers the reached subgraphs use, as stored, each buffer once."""
    seen: dict[int, int] = {}
    for index in reached:
        seen.update({t.buffer: t.data_size for t in compress(model.subgraphs[index].tensors, constant[index])})
    return sum(seen.values())
