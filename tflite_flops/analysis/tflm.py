"""TensorFlow Lite Micro's arena: the size to give ``MicroInterpreter``, head plus tail.

The head: the tensors' lifetimes as its allocator marks them, planned by ``GreedyMemoryPlanner``
(tflite/micro/micro_allocation_info.cc: one timeline over the entry subgraph and the subgraphs its
IF / WHILE / CALL_ONCE ops run, sizes rounded up to 16 bytes, largest first, first fit), with the
kernels' scratch buffers (``RequestScratchBufferInArena``) planned among them, each alive while its
op runs. The tail: what ``MicroAllocator`` and the kernels allocate for the interpreter's life
(:func:`tflm_tail`), from the C struct layouts of a :class:`~tflite_flops.ops.tflm.TflmTarget`
and the per-op facts registered next to the formulas (:mod:`tflite_flops.ops.tflm`), those of the
target's kernel set (CMSIS-NN's, :mod:`tflite_flops.ops.cmsis_nn`) over the reference kernels'.
"""
from __future__ import annotations

from itertools import compress
from typing import Mapping, NamedTuple, Sequence

from ..ops.facts import CALL_ONCE_INIT, IF_ELSE, WHILE_LOOP, fact_failed, facts_of
from ..ops.registry import OpContext
from ..ops.tflm import CORTEX_M, CLayout, TflmKernel, TflmTarget, c_struct, tflm_kernel_table
from ..reader.model import Model, Tensor
from ..units import dense_bytes, num_elements
from .planner import TFLM_ALIGNMENT, first_fit_arena, first_fit_arenas, greedy_order
from .shapes import SubgraphShapes, subgraph_tensors


def tflm_arena(model: Model, entry: int, sizes: Mapping[int, Sequence[int]], constant: Mapping[int, Sequence[bool]],
               entry_buffers: list[tuple[int, int, int]] | None = None,
               scratch: Mapping[tuple[int, int], Sequence[int]] | None = None) -> int:
    """The head of TFLM's arena by GreedyMemoryPlanner (:func:`tflm_buffers`' buffers, the tensors' then
    the scratch requests')."""
    tensors, requests, steps = tflm_buffers(model, entry, sizes, constant, entry_buffers, scratch)
    return first_fit_arena(greedy_order(tensors + requests), steps)


def tflm_buffers(model: Model, entry: int, sizes: Mapping[int, Sequence[int]], constant: Mapping[int, Sequence[bool]],
                 entry_buffers: list[tuple[int, int, int]] | None = None,
                 scratch: Mapping[tuple[int, int], Sequence[int]] | None = None
                 ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]], int]:
    """The buffers of the head of TFLM's arena by GreedyMemoryPlanner, for the tensors of every subgraph and the
    kernels' ``scratch`` buffers (``{(subgraph, op): bytes of each request}``, none by default), as
    GreedyMemoryPlanner is given them: ``(tensors, scratch requests, steps)``, each ``(size, first use,
    last use)`` with lifetimes shifted by one (TFLM's "never used", -1, is step 0).

    Lifetimes follow ``AllocationInfoBuilder::MarkAllocationLifetimes`` from ``entry``: one scope
    count per op, the subgraphs of IF / WHILE / CALL_ONCE nested inside their caller's scope.
    Tensors no op reaches keep TFLM's "uninitialized" lifetime (-1, -1), as TFLM plans them too.
    ``entry_buffers``: the entry's buffers as the memory pass makes them when the entry calls no
    subgraph (its scopes are then its ops' own), which spares a second walk of the entry.
    Scratch buffers come after the tensors in the planner's list (``AllocationInfoBuilder``), in the
    order the kernels requested them (subgraph by subgraph, op by op), each alive from its op's scope
    to the scope after the subgraphs the op runs (``MarkAllocationLifetimes``).
    """
    first = {sg.index: [-1] * len(sg.tensors) for sg in model.subgraphs}  # -1: TFLM's "uninitialized"
    last = {sg.index: [-1] * len(sg.tensors) for sg in model.subgraphs}
    scopes: dict[tuple[int, int], tuple[int, int]] = {}  # (subgraph, op) -> its scope span, for the scratch
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
            start = scope
            if op.subgraph_refs and depth < 64:
                for t in op.outputs:
                    if t >= 0 and firsts[t] < 0:
                        firsts[t] = scope
                for key in _TFLM_CALLS.get(facts_of(op.op_type).control_flow, ()):
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
            scopes[(index, op.index)] = (start, scope)
        for t in sg.outputs:
            if t >= 0:
                if firsts[t] < 0:
                    firsts[t] = scope
                lasts[t] = scope

    if entry_buffers is None:
        mark(entry, 0)
    mark = None  # type: ignore[assignment]  # a recursive closure: its cycle would keep the model alive
    if entry_buffers is not None:
        scope = len(model.subgraphs[entry].operators)
    buffers: list[tuple[int, int, int]] = []  # (size, first use, last use), shifted: -1 ("never used") -> step 0
    for sg in model.subgraphs:
        if sg.index == entry and entry_buffers is not None:
            buffers += entry_buffers
            continue
        tensors, size_of, constant_of, firsts, lasts = (sg.tensors, sizes[sg.index], constant[sg.index],
                                                        first[sg.index], last[sg.index])
        for t in compress(range(min(len(tensors), len(size_of), len(constant_of))), size_of):
            if not constant_of[t] and not tensors[t].is_variable:
                buffers.append((-(-size_of[t] // TFLM_ALIGNMENT) * TFLM_ALIGNMENT, firsts[t] + 1, lasts[t] + 1))
    requested: list[tuple[int, int, int]] = []
    for (index, op), requests in sorted((scratch or {}).items()):
        if entry_buffers is not None:  # the memory pass's entry buffers count op i at scope i + 1; no other subgraph runs
            lo, hi = (op + 1, op + 1) if index == entry else (-1, -1)
        else:  # an op the entry never reaches keeps TFLM's "uninitialized" lifetime
            lo, hi = scopes.get((index, op), (-1, -1))
        requested += [(-(-n // TFLM_ALIGNMENT) * TFLM_ALIGNMENT, lo + 1, hi + 1) for n in requests if n > 0]
    return buffers, requested, scope + 2


_MAX_SCRATCH_PER_OP = 12  # kMaxScratchBuffersPerOp (micro_allocator.cc): room kept for one op's scratch requests
# GreedyMemoryPlanner::per_buffer_size(): BufferRequirements (4 ints), a sorted size and id, a ListEntry
# (3 ints) and an offset per buffer, whatever the pointer size
_PLANNER_BYTES_PER_BUFFER = 16 + 4 + 4 + 12 + 4

# The subgraphs TFLM's allocator nests inside an op's lifetime scope, in its order.
_TFLM_CALLS = {IF_ELSE: ("then_subgraph_index", "else_subgraph_index"), CALL_ONCE_INIT: ("init_subgraph_index",),
               WHILE_LOOP: ("cond_subgraph_index", "body_subgraph_index")}  # by the op's control_flow fact


class TflmFigures(NamedTuple):
    """TFLM's arena for one target: ``tensors_bytes`` the planned tensors alone, ``head_bytes`` with the
    kernels' scratch buffers, ``tail_bytes`` the persistent allocations; ``allocation_peak_bytes`` the
    most ``AllocateTensors`` needs at once before the head is planned (see :func:`tflm_tail`);
    ``unmodelled`` the op types without registered facts (the figures are then low)."""

    tensors_bytes: int
    head_bytes: int
    tail_bytes: int
    allocation_peak_bytes: int = 0
    unmodelled: tuple[str, ...] = ()  # op types without TFLM facts: their options, OpData and scratch are missing

    @property
    def arena_size_bytes(self) -> int:
        """What to pass to ``MicroInterpreter``: the head plus the tail, or the allocation peak when larger."""
        return max(self.head_bytes + self.tail_bytes, self.allocation_peak_bytes)


def tflm_kernels(model: Model, states: Mapping[int, SubgraphShapes], target: TflmTarget = CORTEX_M,
                 failed: dict[tuple[int, int], tuple[str, str]] | None = None) -> dict[tuple[int, int], TflmKernel]:
    """The registered TFLM facts of every op of every subgraph (TFLM initializes and prepares them all):
    ``{(subgraph, op): TflmKernel}``. Ops without facts are left out; so are ops whose facts raise (shapes
    that do not fit them, or a bug in the fact), each named in ``failed``: ``{(subgraph, op): (op type,
    warning)}``."""
    out: dict[tuple[int, int], TflmKernel] = {}
    shape_free: dict[str, TflmKernel] = {}
    table = tflm_kernel_table(target)  # the target's kernel set: CMSIS-NN's kernels over the reference ones
    for sg in model.subgraphs:
        ops = [op for op in sg.operators if op.op_type in table]
        if not ops or sg.index not in states:
            continue
        state = states[sg.index]
        tensors, stored = subgraph_tensors(sg, state), sg.tensors
        for op in ops:
            fn = table[op.op_type]
            if getattr(fn, "shape_free", False):  # the same facts for every op of the type: no context to build
                found = shape_free.get(op.op_type)
                if found is None:
                    try:
                        found = shape_free[op.op_type] = fn(None, target, 0)
                    except Exception as exc:  # any failing fact: a warning, never a silent 0 nor a crash
                        if failed is not None:
                            failed[(sg.index, op.index)] = (op.op_type, fact_failed("TFLM arena facts", op.op_type,
                                                                                   sg.index, op.index, exc))
                        continue
                out[(sg.index, op.index)] = found
                continue
            inputs = op.inputs
            weight = inputs[1] if len(inputs) > 1 and 0 <= inputs[1] < len(stored) else None
            quant = stored[weight].quantization if weight is not None else None
            infos = tensors.infos_of(state, inputs + op.outputs)
            ctx = OpContext(op.op_type, op.options, infos[:len(inputs)], infos[len(inputs):], sg.index, op.index)
            try:
                out[(sg.index, op.index)] = fn(ctx, target, quant.num_scales if quant else 0)
            except Exception as exc:  # any failing fact: a warning, never a silent 0 nor a crash
                if failed is not None:
                    failed[(sg.index, op.index)] = (op.op_type, fact_failed("TFLM arena facts", op.op_type,
                                                                           sg.index, op.index, exc))
                continue
    return out


def _allocator_objects(t: TflmTarget) -> tuple[CLayout, ...]:
    """The objects ``MicroAllocator::Create`` (or ``RecordingMicroAllocator::Create``) places at the end of
    the tail, in order: the arena buffer allocator, the ``GreedyMemoryPlanner``, the allocator itself."""
    # SingleArenaBufferAllocator (arena_allocator/single_arena_buffer_allocator.h): the vtable pointers
    # of its two interfaces, five pointers, the temp checksum (intptr_t) and count
    buffers = c_struct(t, "pp", "ppppp", "p", "i")
    # GreedyMemoryPlanner (memory_planner/greedy_memory_planner.h): vtable, two counts, four array
    # pointers, two entry indices, the offsets pointer, need_to_calculate_offsets_
    planner = c_struct(t, "p", "ii", "pppp", "ii", "p", "b")
    # MicroAllocator (micro_allocator.h): vtable, four pointers, model_is_allocating_, the scratch request
    # count, the scratch head pointer, max_head_buffer_usage_
    allocator = c_struct(t, "p", "pppp", "b", "ppp")
    if t.recording:  # recording_*.h: four size_t counters; a pointer and 7 (8 with compression) x 3 size_t
        buffers = c_struct(t, buffers, "pppp")
        allocator = c_struct(t, allocator, "p", "ppp" * 7, compression="ppp")
    return buffers, planner, allocator


def tflm_tail(model: Model, entry: int, kernels: Mapping[tuple[int, int], TflmKernel],
              target: TflmTarget = CORTEX_M, arena_end: int = 0, planned: int = 0) -> tuple[int, int]:
    """The tail of TFLM's arena (what ``MicroInterpreter::AllocateTensors`` allocates for the interpreter's
    life) and the allocation peak: ``(tail bytes, peak bytes)``.

    Follows micro_allocator.cc and micro_interpreter.cc in order, each allocation placed below the one
    before at its alignment (``SingleArenaBufferAllocator::AllocatePersistentBuffer`` rounds the tail
    pointer down), so the padding is counted as TFLM counts it. ``arena_end``: the arena end's address
    modulo 16 (0: an aligned arena).

    Before the head is planned, the head's end of the arena holds transient data that the tail must
    not reach: the scratch requests (``ScratchBufferRequest``, room for 12 more than made), and while
    each kernel prepares, the temporary ``TfLiteTensor`` structs (with their quantization) of its inputs
    and outputs (``AllocateTempInputTensor``; ``TflmKernel.held`` and ``.then`` when the kernel takes
    some of them, or takes them twice): the kernel's persistent buffers are allocated while they are held. While ``CommitStaticMemoryPlan`` plans, the subgraph offsets, an ``AllocationInfo`` per
    tensor and scratch buffer, and the planner's arrays (``GreedyMemoryPlanner::per_buffer_size``, 40
    bytes per ``planned`` buffer). The peak is the most of those plus the tail at that moment.
    """
    p = target.pointer_bytes
    tail = arena_end
    peak = 0
    request = c_struct(target, "p", "ii")  # ScratchBufferRequest: bytes, node and subgraph indices
    tensor = c_struct(target, c_struct(target, "i", "p"), "ii", "pp", "p", "ii", "b")  # TfLiteTensor (micro build)
    quant = c_struct(target, "pp", "i")  # TfLiteAffineQuantization: scale, zero_point, quantized_dimension

    def temp(at: int, size: int, align: int) -> int:  # AllocateTemp: from the head's end upwards
        return -(-at // align) * align + size

    tensor_size, tensor_align = tensor
    quant_size, quant_align = quant

    def temps_of(sg_index: int, op_index: int, at: int, slots: tuple[str, ...] | None = None) -> int:
        """temp() for each tensor of ``slots`` (TflmKernel.held; None: every input and output), written out."""
        sg = model.subgraphs[sg_index]
        op = sg.operators[op_index]
        stored = sg.tensors
        count = len(stored)
        if slots is None:
            ids = (*op.inputs, *op.outputs)
        else:
            ids = tuple(ends[int(s[1:])] for s in slots
                        for ends in ((op.inputs if s[0] == "i" else op.outputs),) if int(s[1:]) < len(ends))
        for t in ids:
            if 0 <= t < count:
                at = -(-at // tensor_align) * tensor_align + tensor_size
                q = stored[t].quantization
                if q is not None and q.num_scales > 0:
                    at = -(-(-(-at // quant_align) * quant_align + quant_size) // 4) * 4 + 4 + 4 * q.num_scales
        return at

    def alloc(size: int, align: int) -> None:
        nonlocal tail
        tail = (tail - size) // align * align

    for obj in _allocator_objects(target):
        alloc(*obj)
    alloc(2 * p, p)  # StartModelAllocation: MicroBuiltinDataAllocator (vtable, allocator pointer)
    alloc((3 if target.compression else 2) * p * len(model.subgraphs), p)  # SubgraphAllocations per subgraph
    eval_tensor = c_struct(target, "pp", "i")  # TfLiteEvalTensor: data, dims, type
    for sg in model.subgraphs:  # AllocateTfLiteEvalTensors
        alloc(eval_tensor.size * len(sg.tensors), eval_tensor.align)
    node = c_struct(target, "pppppp", "i", "p")  # NodeAndRegistration: TfLiteNode (micro build) + registration
    for sg in model.subgraphs:  # AllocateNodeAndRegistrations
        alloc(node.size * len(sg.operators), node.align)
    keys = sorted(kernels)
    ordered = [kernels[key] for key in keys]
    for k in ordered:  # PrepareNodeAndRegistrationDataFromFlatbuffer: the parsed builtin options
        if k.builtin is not None:
            alloc(*k.builtin)
    for k in ordered:  # InitSubgraphs: each kernel's OpData
        if k.op_data:
            alloc(k.op_data, TFLM_ALIGNMENT)
    requests = 0
    room = _MAX_SCRATCH_PER_OP * request.size
    for key, k in zip(keys, ordered):  # PrepareSubgraphs: the kernels' persistent buffers, their temporary tensors held
        for n in k.prepare:
            tail = (tail - n) // TFLM_ALIGNMENT * TFLM_ALIGNMENT  # alloc(n, TFLM_ALIGNMENT)
        held = requests * request.size + room  # the scratch requests so far, and room for more
        if k.temps:  # the temporaries it holds while it allocates, and those it takes again after
            held = temps_of(*key, held, k.held)
            if k.then:
                held = temps_of(*key, held, k.then)
        if held + arena_end - tail > peak:
            peak = held + arena_end - tail
        requests += len(k.scratch)  # a request of 0 bytes is one too (a handle, a planned buffer)
    if requests:  # FinishModelAllocation: a ScratchBufferHandle (a pointer) per request
        alloc(p * requests, p)
    for sg in model.subgraphs:  # CommitStaticMemoryPlan, AllocateVariables
        for t in [t for t in sg.tensors if t.is_variable]:
            alloc(_tensor_bytes(t), TFLM_ALIGNMENT)
    held = temp((requests + _MAX_SCRATCH_PER_OP) * request.size, p * len(model.subgraphs), p)  # the subgraphs' offsets
    allocation_info = c_struct(target, "pp", "iii", "b")  # AllocationInfo: bytes, output_ptr, lifetime, offset, flag
    held = temp(held, allocation_info.size * (sum(len(sg.tensors) for sg in model.subgraphs) + requests), p)
    peak = max(peak, temp(held, _PLANNER_BYTES_PER_BUFFER * planned, TFLM_ALIGNMENT) + arena_end
               - tail // TFLM_ALIGNMENT * TFLM_ALIGNMENT)
    sg = model.subgraphs[entry]
    for ends in (sg.inputs, sg.outputs):  # AllocateTensors: input_tensors_ / output_tensors_ and their structs
        alloc(p * len(ends), TFLM_ALIGNMENT)
        for t in ends:
            alloc(*tensor)
            q = sg.tensors[t].quantization if t >= 0 else None
            if q is not None and q.num_scales > 0:
                alloc(*quant)
                alloc(4 + 4 * q.num_scales, 4)  # the zero points as a TfLiteIntArray
    return arena_end - tail, peak


def _tensor_bytes(t: Tensor) -> int:
    """A stored tensor's bytes at its stored shape (a variable tensor's size never changes)."""
    return dense_bytes(max(num_elements(t.shape), 0), t.dtype)


def tflm_figures(model: Model, entry: int, states: Mapping[int, SubgraphShapes], sizes: Mapping[int, Sequence[int]],
                 constant: Mapping[int, Sequence[bool]], entry_buffers: list[tuple[int, int, int]] | None = None,
                 target: TflmTarget = CORTEX_M, arena_end: int = 0, warnings: list[str] | None = None) -> TflmFigures:
    """TFLM's head (tensors, then with the kernels' scratch) and tail for ``target``; the arguments as
    :func:`tflm_arena` and :func:`tflm_tail` take them. An op whose TFLM facts raise counts among the
    unmodelled ones, with a line in ``warnings``."""
    failed: dict[tuple[int, int], tuple[str, str]] = {}
    kernels = tflm_kernels(model, states, target, failed)
    scratch = {key: k.scratch for key, k in kernels.items() if k.scratch}
    buffers, requests, steps = tflm_buffers(model, entry, sizes, constant, entry_buffers, scratch)
    if requests:  # the head without and with the scratch: the lifetimes marked once, the shared larger buffers placed once
        tensors, head = first_fit_arenas(greedy_order(list(buffers)), greedy_order(buffers + requests), steps)
    else:
        tensors = head = first_fit_arena(greedy_order(buffers), steps)
    # every tensor without data in the model counts for the planner, whatever its size
    # (micro_allocation_info.cc: needs_allocating; micro_allocator.cc CreatePlan adds each one)
    planned = sum([sum([1 for t, _, c in zip(sg.tensors, sizes[sg.index], constant[sg.index])
                        if not c and not t.is_variable]) for sg in model.subgraphs])
    planned += sum(len(k.scratch) for k in kernels.values())
    tail, peak = tflm_tail(model, entry, kernels, target, arena_end, planned)
    table = tflm_kernel_table(target)
    unmodelled = sorted({op.op_type for sg in model.subgraphs for op in sg.operators if op.op_type not in table}
                        | {op_type for op_type, _ in failed.values()})
    if warnings is not None:
        warnings.extend(line for _, line in failed.values())
    return TflmFigures(tensors, head, tail, peak, tuple(unmodelled))
