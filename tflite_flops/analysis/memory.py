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

TensorFlow Lite Micro's arena is simulated too, with its own lifetime rules, its kernels' scratch
buffers and its tail of persistent structs (:mod:`~tflite_flops.analysis.tflm`). Both planners live in
:mod:`~tflite_flops.analysis.planner`.

The runtime figure (``MemorySummary.runtime``) adds what LiteRT's builtin kernels allocate in
Prepare (:func:`~tflite_flops.analysis.temporaries.kernel_temporaries`, from the facts registered next to the formulas): each
temporary planned in its subgraph's arena at its op, the persistent ones in the persistent arena.
The control-flow kernels' rules (:func:`control_flow_kinds`), dynamic outputs (on the heap) and
LiteRT's lazy planning in runs of ops up to each dynamic-output op are simulated for both figures.

With XNNPACK the same pass plans the graph of kept ops and DELEGATE nodes (:mod:`.xnnpack_memory`).
Not covered: heap buffers (dynamic tensors and temporaries), the interpreter's structures (docs/memory.md).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate, compress
from operator import attrgetter
from typing import Callable, Mapping, NamedTuple, Sequence

from ..reader.model import Model, Subgraph
from ..ops.facts import CASE_BRANCHES, DELEGATE_NODE, DEQUANTIZE_WEIGHTS, IF_ELSE, WHILE_LOOP
from ..ops.facts import facts_of as op_facts
from ..ops.tflm import CORTEX_M, TflmTarget
from ..settings import tflm_target_name
from ..ops.registry import MEMORY_FACTS, Temporary
from ..report import MemorySummary, RuntimeMemory, SubgraphMemory
from ..report.lazy import Deferred
from .interpreter_memory import interpreter_bytes
from .planner import TFLITE_ALIGNMENT, TFLM_ALIGNMENT, align, litert_order, place_buffers
from .shapes import SubgraphShapes, SubgraphTensors, subgraph_tensors, tensor_sizes
from .tflm import tflm_figures
from ..units import dense_bytes, num_elements

_MAX_SHARABLE_INPUTS = 3  # kTfLiteMaxSharableOpInputs
_SCALAR_BYTES = 4  # kScalarTensorBytes: smaller tensors are never written in place
_END = 1 << 62  # "never deallocated" (kNodeNotAssigned)

Delegated = Mapping[int, tuple[Subgraph, Mapping[int, int]]]  # per subgraph: the graph with XNNPACK, kept ops' indices
# Where a tensor lives, as TfLiteAllocationType.
CONSTANT, ARENA, PERSISTENT, PREPARED, NOTHING = "mmap_ro", "arena_rw", "arena_rw_persistent", "persistent_ro", "none"
DYNAMIC = "dynamic"  # kTfLiteDynamic: sized at Eval and malloc'ed, outside the arena



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


class SubgraphUses(NamedTuple):
    """What a subgraph's ops, inputs and outputs say about its tensors: the planners' facts that do
    not depend on shapes, read in one pass over the ops by :func:`subgraph_uses`.

    The lists have one entry per tensor. Ops are counted in TFLM's scopes, where op ``i`` is at
    ``i + 1`` (0 is before the first op); -1 is never.
    """

    inputs: frozenset[int]  # the subgraph's inputs (omitted ones, -1, left out)
    outputs: frozenset[int]  # its outputs
    variables: tuple[int, ...]  # its variable tensors, in index order
    pinned: frozenset[int]  # outputs, variables and inputs: their buffers live to the end of the run
    readers: list[int]  # ArenaPlanner's refcounts_: one per pin and one per read
    last_read: list[int]  # the scope of the last op that reads each tensor
    allocated: dict[int, int]  # tensor -> op index that allocates it: 0 for inputs and variables, else its first writer
    # Ops that may compute their outputs at Prepare: (inputs that must be known by then, outputs
    # that are not subgraph inputs), omitted tensors left out.
    prepare: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    # Ops whose outputs are dynamic unless some inputs are known at Prepare: (those inputs, the outputs).
    dynamic: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    # DEQUANTIZE outputs whose input is not stored in the file (e.g. a DENSIFY output): dequantize.cc
    # Prepare makes the output persistent only when IsConstantTensor(input) (kTfLiteMmapRo); these
    # are dequantized at every run into an arena tensor, even when the analysis folds them at init.
    rederived: frozenset[int]
    # Ops that may write their output in place (an output that is a subgraph output never is): (the
    # output, whether the op changes the data, the input positions whose buffer it may take in the
    # kernel's order, the op's inputs).
    inplace: tuple[tuple[int, bool, tuple[int, ...], tuple[int, ...]], ...]
    # TFLM's lifetimes of the subgraph marked alone from scope 0, as the entry (the inputs at 0, the
    # outputs at len(ops)): the first use of each tensor and its last write; a tensor lives to its
    # last read or last write, whichever is later. None when an op calls a subgraph (TFLM's scopes
    # then nest the callee's ops: they are walked).
    tflm: tuple[list[int], list[int]] | None


_IS_VARIABLE = attrgetter("is_variable")
_SUBGRAPH_REFS = attrgetter("subgraph_refs")


def subgraph_uses(sg: Subgraph) -> SubgraphUses:
    """The :class:`SubgraphUses` of ``sg``, in one pass over its ops."""
    ops = sg.operators
    tensors = sg.tensors
    n = len(tensors)
    inputs = frozenset(t for t in sg.inputs if t >= 0)
    outputs = frozenset(t for t in sg.outputs if t >= 0)
    # (most models have no variable: one quick pass first)
    variables = tuple(i for i, t in enumerate(tensors) if t.is_variable) if any(map(_IS_VARIABLE, tensors)) else ()
    readers = [0] * n
    last_read = [-1] * n
    first_use = [-1] * n  # reads do not start a TFLM lifetime, writes do
    last_write = [-1] * n
    allocated = dict.fromkeys((*variables, *inputs), 0)
    for scope, op in enumerate(ops, 1):
        for t in op.inputs:
            if t >= 0:
                readers[t] += 1
                last_read[t] = scope
        for t in op.outputs:
            if t >= 0:
                if first_use[t] < 0:  # the first op that writes t
                    first_use[t] = scope
                    if t not in allocated:
                        allocated[t] = scope - 1
                last_write[t] = scope
    for t in (*outputs, *variables, *inputs):
        readers[t] += 1

    facts_of = dict(MEMORY_FACTS)
    special = [(op, facts_of[op.op_type]) for op in ops if op.op_type in facts_of]
    prepare = tuple((tuple(op.inputs[p] for p in facts.prepare_inputs if p < len(op.inputs) and op.inputs[p] >= 0),
                     tuple(o for o in op.outputs if o >= 0 and o not in inputs))
                    for op, facts in special if facts.prepare_inputs is not None)
    dynamic = tuple((tuple(op.inputs[p] for p in facts.dynamic_unless if p < len(op.inputs) and op.inputs[p] >= 0),
                     tuple(o for o in op.outputs if o >= 0))
                    for op, facts in special if facts.dynamic_unless is not None)
    inplace = tuple((op.outputs[0], not facts.data_unmodified, facts.inplace, op.inputs) for op, facts in special
                    if facts.inplace and op.outputs and op.outputs[0] >= 0 and op.outputs[0] not in outputs)

    tflm = None
    if not any(map(_SUBGRAPH_REFS, ops)):
        end = len(ops)
        for t in inputs:
            first_use[t] = 0
            if last_write[t] < 0:
                last_write[t] = 0
        for t in outputs:
            if first_use[t] < 0:
                first_use[t] = end
            last_write[t] = end
        tflm = (first_use, last_write)
    rederived = frozenset(op.outputs[0] for op in ops if op.inputs and op.outputs
                          and op_facts(op.op_type).weight_unpacking == DEQUANTIZE_WEIGHTS
                          and op.inputs[0] >= 0 and op.outputs[0] >= 0 and not tensors[op.inputs[0]].data_size)
    return SubgraphUses(inputs, outputs, variables, outputs | inputs | frozenset(variables), readers, last_read,
                        allocated, prepare, dynamic, rederived, inplace, tflm)


def allocation_kinds(sg: Subgraph, sizes: Sequence[int], constant: Sequence[bool],
                     init_constant: Sequence[bool], uses: SubgraphUses | None = None) -> list[str]:
    """Where TFLite puts each tensor of ``sg`` (see the module docstring); ``uses``: its :func:`subgraph_uses`."""
    uses = subgraph_uses(sg) if uses is None else uses
    rederived = uses.rederived
    kinds = [CONSTANT if c else NOTHING if not size else PERSISTENT if init and i not in rederived else ARENA
             for i, (_, c, init, size) in enumerate(zip(sg.tensors, constant, init_constant, sizes))]
    _settle_kinds(kinds, uses)
    return kinds  # NOTHING: strings, resources and empty tensors have nothing in the arena


def _settle_kinds(kinds: list[str], uses: SubgraphUses) -> list[int]:
    """Turns the arena tensors that are variables into persistent ones, the outputs that ops
    compute at Prepare into prepared ones, and the outputs whose shape is known only at Eval into
    dynamic ones; returns the tensors that left the arena."""
    moved = []
    for t in uses.variables:
        if t < len(kinds) and kinds[t] == ARENA:
            kinds[t] = PERSISTENT
            moved.append(t)
    for needed, outs in uses.prepare:  # in op order: a prepared output makes the next op's input known
        if all(kinds[t] == CONSTANT or kinds[t] == PREPARED for t in needed):
            for o in outs:
                if kinds[o] == ARENA:
                    kinds[o] = PREPARED
                    moved.append(o)
    for needed, outs in uses.dynamic:
        if not all(kinds[t] == CONSTANT or kinds[t] == PREPARED for t in needed):
            for o in outs:
                if kinds[o] == ARENA:
                    kinds[o] = DYNAMIC
                    moved.append(o)
    return moved


def _sizes_and_kinds(sg: Subgraph, state: SubgraphShapes, walked: SubgraphTensors, uses: SubgraphUses,
                     tflm: bool = False) -> tuple[list[int], list[str], int, list[tuple[int, int, int]] | None]:
    """:func:`tensor_sizes` (constants 0) and :func:`allocation_kinds` of a walked subgraph, the
    activations' total (every arena tensor at its own 64-byte-aligned place), and with ``tflm`` (the
    entry, if it calls no subgraph) TFLM's buffers as :func:`~.tflm.tflm_arena` takes them: one
    pass over the tensors that are not constant, where the public functions take three."""
    tensors, shapes, init = sg.tensors, state.shapes, state.derived_constant
    constant, numel, stored = walked.constant, walked.numel, walked.stored
    n = min(len(tensors), len(shapes), len(constant), len(numel), len(stored), len(init))
    sizes = [0] * n
    kinds = [CONSTANT] * n
    total = 0
    buffers = add = None
    if tflm and uses.tflm is not None:
        buffers = []
        add = buffers.append
        first_use, last_write = uses.tflm
        last_read, variables = uses.last_read, uses.variables
    for i, c in zip(range(n), constant):
        if c:
            continue
        shape = shapes[i]
        size = dense_bytes(numel[i] if shape is stored[i] else num_elements(shape), tensors[i].dtype)
        if not size:
            kinds[i] = NOTHING
            continue
        sizes[i] = size
        if init[i] and not (uses.rederived and i in uses.rederived):
            kinds[i] = PERSISTENT
        else:
            kinds[i] = ARENA
            total += -(-size // TFLITE_ALIGNMENT) * TFLITE_ALIGNMENT
        if add is not None and not (variables and i in variables):  # TFLM plans no variable
            read, write = last_read[i], last_write[i]
            add((-(-size // TFLM_ALIGNMENT) * TFLM_ALIGNMENT, first_use[i] + 1, (read if read > write else write) + 1))
    for t in _settle_kinds(kinds, uses):
        total -= -(-sizes[t] // TFLITE_ALIGNMENT) * TFLITE_ALIGNMENT
    return sizes, kinds, total, buffers


def plan_subgraph(sg: Subgraph, sizes: Sequence[int], kinds: Sequence[str],
                  uses: SubgraphUses | None = None) -> SubgraphPlan:
    """TFLite's ArenaPlanner on one subgraph: in-place sharing, lifetimes, best-fit placement.

    ``uses``: the subgraph's :func:`subgraph_uses`, if the caller has it.
    """
    plan = _arena_plan(sg, sizes, kinds, subgraph_uses(sg) if uses is None else uses)
    arena = [*plan.whole, *plan.tensors]
    return SubgraphPlan(sg.index, tuple(sizes), tuple(kinds), plan.shared,
                        {**dict.fromkeys(plan.whole, 0), **dict(zip(plan.tensors, plan.firsts))},
                        {**dict.fromkeys(plan.whole, _END), **dict(zip(plan.tensors, plan.lasts))},
                        dict(zip(arena, plan.offsets)), plan.arena_bytes, plan.persistent_bytes, plan.live,
                        plan.activations_total_bytes)


class _ArenaPlan(NamedTuple):
    """:func:`_arena_plan`'s result: a :class:`SubgraphPlan` with its mappings still apart."""

    shared: dict[int, int]
    whole: list[int]  # the whole-run buffers, by index
    tensors: tuple[int, ...]  # the other buffers in placement order ...
    firsts: tuple[int, ...]  # ... the op that allocates each one ...
    lasts: tuple[int, ...]  # ... the last op that reads it (_END: never freed)
    offsets: list[int]  # offset of every buffer: the whole-run ones, then the others
    arena_bytes: int
    persistent_bytes: int
    live: tuple[int, ...]
    activations_total_bytes: int
    pinned_bytes: int  # bytes of the whole-run buffers


def _arena_plan(sg: Subgraph, sizes: Sequence[int], kinds: Sequence[str], uses: SubgraphUses,
                total: int | None = None, temporaries: Sequence[tuple[int, int, bool]] = ()) -> _ArenaPlan:
    """:func:`plan_subgraph`, without building the mappings (the memory summary needs none);
    ``total``: the activations' total, if the caller has it. ``temporaries``: the kernels' buffers,
    ``(op, bytes, persistent)`` in the order Prepare adds them; each gets the next tensor index after
    the model's, as ``AddTensors`` gives it."""
    ops = sg.operators
    readers, last_read, pinned = uses.readers, uses.last_read, uses.pinned

    # IdentifyInPlaceTensors: an op writes its output into the first of its sharable inputs (in the
    # kernel's order, among the first three) that is not a subgraph input, unless the op changes the
    # data and the input differs in size, is 4 bytes or less or is read elsewhere; an input of
    # another kind than the output must be an arena one. The share is then refused when the op
    # changes the data and the buffer's owner is read more than once, and CalculateAllocations drops
    # a share whose buffer is not an arena one of the same size. So only arena outputs are ever
    # shared, and only with arena inputs: the others are skipped at once.
    #
    # The shares are found when the planner is made (PlanAllocations), after the ops up to the first
    # one with a dynamic output were prepared (Subgraph::PrepareOpsAndTensors): a later op's dynamic
    # output is still an arena tensor then, and may be shared. CalculateAllocations drops that share
    # once the op's Prepare made it dynamic, but the reference counts stay as planned: the reads of
    # the output were counted on the dynamic tensor, so the output's own buffer is never freed.
    # (A Keras bidirectional LSTM's RESHAPEs of the later WHILE loops' outputs.)
    inputs = uses.inputs
    stops = ([op.index for op in ops if any(0 <= t < len(kinds) and kinds[t] == DYNAMIC for t in op.outputs)]
             if DYNAMIC in kinds else [])
    allocated = uses.allocated
    late = (lambda t: kinds[t] == DYNAMIC and allocated.get(t, 0) > stops[0]) if stops else None
    shared: dict[int, int] = {}
    dropped: dict[int, int] = {}  # output -> the tensor it was to share with, share dropped: never freed
    root: dict[int, int] = {}  # the tensor whose buffer a shared tensor uses
    for out, changed, positions, op_inputs in uses.inplace:
        size = sizes[out]
        if kinds[out] != ARENA or (changed and size <= _SCALAR_BYTES):
            continue
        sharable = min(_MAX_SHARABLE_INPUTS, len(op_inputs))
        for p in positions:
            if p < sharable:
                t = op_inputs[p]
                if (t >= 0 and (kinds[t] == ARENA or (late is not None and late(t))) and t not in inputs
                        and (not changed or (sizes[t] == size and readers[t] <= 1))):
                    break
        else:
            continue
        base = root.get(t, t)
        if changed and readers[base] > 1:
            continue
        if kinds[base] == ARENA and sizes[base] == size:
            shared[out] = root[out] = base
        elif kinds[base] == DYNAMIC:
            dropped[out] = root[out] = base

    # A buffer is freed after the last read of any tensor using it (its reference count reaches 0
    # there), unless it is pinned. (last_read counts scopes: op i at i + 1.)
    extended: dict[int, int] = {}  # buffer -> last read of the tensors sharing it, when later than its own
    for out, base in shared.items():
        read = last_read[out] - 1
        if base in pinned or read < 0:
            continue
        current = extended.get(base, last_read[base] - 1)
        if current < 0 or read > current:
            extended[base] = read

    # Whole-run buffers first (by index); then by size, largest first; ties by allocation op, then index.
    # (persistent buffers are laid out in the same order, apart: sorting them alone keeps it)
    steps = max(len(ops), 1)
    end = steps - 1
    whole: list[int] = []
    # LiteRT plans lazily (Subgraph::PrepareOpsAndTensors): it prepares and allocates the ops up to
    # the first one with a dynamic output, and the next run of ops only after that op has run, each
    # run's buffers sorted among themselves and placed around the earlier runs' live buffers
    # (ArenaPlanner::ExecuteAllocations(first, last)). A buffer's run: the dynamic-output ops before it.
    rest: list[tuple[int, int, int, int, int, int, int]] = []  # (run, -size, first, tensor, size, last, last step)
    kept: list[tuple[int, int, int, int]] = []
    for t, first in uses.allocated.items():
        if t in shared:
            continue
        kind = kinds[t]
        if kind != ARENA and kind != PERSISTENT:
            continue
        size = sizes[t]
        if t in pinned or t in dropped:
            last = _END
        else:
            last = extended[t] if t in extended else last_read[t] - 1
            if last < 0:
                last = _END
        if kind == PERSISTENT:
            kept.append((0, 0, 0, t) if first == 0 and last == _END else (1, -size, first, t))
        elif size:
            if first == 0 and last == _END:
                whole.append(t)
            else:
                rest.append((bisect_left(stops, first) if stops else 0, -size, first, t, size, last,
                             last if last < end else end))
    # ExecuteAllocations: a temporary is allocated and freed at its op (alloc_node_ = dealloc_node_);
    # it joins the size order of the other buffers (CreateTensorAllocationVector). A persistent one
    # goes to the persistent arena, where nothing is ever freed.
    extra: dict[int, int] = {}
    for k, (op, size, is_persistent) in enumerate(temporaries, len(sizes)):
        if not size:
            continue
        extra[k] = size
        if is_persistent:
            kept.append((1, -size, op, k))
        else:
            rest.append((bisect_left(stops, op) if stops else 0, -size, op, k, size, op, op if op < end else end))
    whole.sort()
    rest.sort()
    if any(a[:3] == b[:3] for a, b in zip(rest, rest[1:])):  # equal sizes at one op: LiteRT's order
        others = {t: (first == 0 and (t in pinned or t in shared or t in dropped), sizes[t], first)
                  for t, first in uses.allocated.items() if kinds[t] in (ARENA, PERSISTENT) and sizes[t]}
        outputs = [[o for o in op.outputs if o >= 0 and not (kinds[o] == NOTHING and sizes[o])] for op in ops]
        rest = litert_order(rest, outputs, [*uses.variables, *(t for t in sg.inputs if t >= 0)],
                            temporaries, len(sizes), stops, others)
    persistent = 0
    for *_, t in sorted(kept):
        persistent = align(persistent, TFLITE_ALIGNMENT) + (sizes[t] if t < len(sizes) else extra[t])

    # Every whole-run buffer overlaps every other buffer: they lie end to end from offset 0 (each
    # at the aligned end of the one before), and the others are placed above them.
    offsets = []
    top = 0
    for t in whole:
        at = -(-top // TFLITE_ALIGNMENT) * TFLITE_ALIGNMENT
        offsets.append(at)
        top = at + sizes[t]
    _, _, firsts, tensors, lengths, lasts, his = zip(*rest) if rest else ((),) * 7
    placed, arena_bytes = place_buffers(zip(lengths, firsts, his), steps, TFLITE_ALIGNMENT, floor=top)
    offsets += placed
    pinned_bytes = sum([sizes[t] for t in whole])
    delta = [0] * (steps + 1)  # live bytes per op by differences: +size at first, -size after last
    delta[0] = pinned_bytes  # the whole-run buffers, alive from the first op to the last
    for size, lo, hi in zip(lengths, firsts, his):
        delta[lo] += size
        delta[hi + 1] -= size
    delta.pop()
    live = tuple(accumulate(delta))[:len(ops)]
    if total is None:
        total = sum([-(-size // TFLITE_ALIGNMENT) * TFLITE_ALIGNMENT for size, kind in zip(sizes, kinds)
                     if kind == ARENA])
    return _ArenaPlan(shared, whole, tensors, firsts, lasts, offsets, arena_bytes, persistent, live, total,
                      pinned_bytes)


def _node_reads(uses: SubgraphUses, t: int) -> int:
    """``Subgraph::GetInputTensorsCount`` of tensor ``t``: reads by ops, plus one if it is a subgraph output."""
    pins = (t in uses.inputs) + (t in uses.outputs) + (t in uses.variables)
    return uses.readers[t] - pins + (t in uses.outputs)


def control_flow_kinds(model: Model, reached: Sequence[int], calls: Mapping[tuple[int, int], Sequence[int]],
                       kinds: Mapping[int, list[str]], states: Mapping[int, SubgraphShapes]) -> set[int]:
    """Applies the control-flow kernels' rules (see :func:`_control_flow_kinds`) to the
    :func:`allocation_kinds` of every reached subgraph, in place; returns the subgraphs changed.

    ``calls``: ``(subgraph, op) -> subgraphs the op runs``, as :func:`analyze_memory` takes it.
    """
    settled = {index: (subgraph_uses(model.subgraphs[index]), kinds[index], None) for index in reached}
    return _control_flow_kinds(model, reached, calls, settled, states)


def _control_flow_kinds(model: Model, reached: Sequence[int], calls: Mapping[tuple[int, int], Sequence[int]],
                        settled: Mapping[int, tuple[SubgraphUses, list[str], int | None]],
                        states: Mapping[int, SubgraphShapes]) -> set[int]:
    """The control-flow kernels' rules on where tensors live (tflite/kernels/while.cc and if.cc
    ``Prepare``), applied to ``settled``'s kinds, callees before their callers; returns the
    subgraphs whose kinds changed.

    * ``Subgraph::RemoveUnusedInputs``: a WHILE cond's or an IF or STABLEHLO_CASE branch's input
      that no op reads and that is not an output gets no bytes.
    * The inputs of a WHILE body and of an IF or STABLEHLO_CASE branch are ``kTfLiteCustom``: they point into the
      caller's buffers, nothing in their own arena.
    * A WHILE output whose body input is passed through unchanged (body input i = body output i)
      and that nothing in the caller reads is never allocated, if the WHILE is prepared before the
      caller's planner is made (no op before it has a dynamic output): once the caller is planned,
      dropping the output from the node no longer takes it out of the plan, and it stays in the
      arena, never freed, even when the body is dynamic (it left the node before the WHILE made its
      outputs dynamic).
    * When a body (or a branch) has dynamic tensors, or returns a shape other than it was given
      (IF, STABLEHLO_CASE: when the branches' output shapes differ), the op's outputs are ``kTfLiteDynamic``: on
      the heap, and the caller's later ops are planned at run time.
    """
    position = {index: i for i, index in enumerate(reached)}
    changed: set[int] = set()
    for (index, op_index), _ in sorted(calls.items(), key=lambda kv: (-position.get(kv[0][0], -1), kv[0][1])):
        if index not in settled:
            continue
        sg = model.subgraphs[index]
        op = sg.operators[op_index]
        refs = op.subgraph_refs
        uses, kinds, _ = settled[index]
        flow = op_facts(op.op_type).control_flow
        if flow == WHILE_LOOP:
            cond, body = refs.get("cond_subgraph_index"), refs.get("body_subgraph_index")
            pruned, custom = (cond,), (body,)
        elif flow == IF_ELSE:
            pruned = custom = (refs.get("then_subgraph_index"), refs.get("else_subgraph_index"))
            body = None
        elif flow == CASE_BRANCHES:  # stablehlo_case.cc Prepare: its branches as IF's
            pruned = custom = tuple(v for k, v in sorted(refs.items()) if k.startswith("branch_subgraph_indices"))
            body = None
        else:
            continue
        if any(c not in settled for c in (*pruned, *custom)):
            continue
        for c in pruned:
            c_uses, c_kinds, _ = settled[c]
            for t in c_uses.inputs:
                if _node_reads(c_uses, t) == 0 and c_kinds[t] in (ARENA, PERSISTENT):
                    c_kinds[t] = NOTHING
                    changed.add(c)
        dynamic = False
        for c in custom:
            c_uses, c_kinds, _ = settled[c]
            for t in c_uses.inputs:
                if c_kinds[t] in (ARENA, PERSISTENT):
                    c_kinds[t] = NOTHING
                    changed.add(c)
            dynamic = dynamic or DYNAMIC in c_kinds
        callee = model.subgraphs
        if body is not None:
            b = callee[body]
            shapes = states[body].shapes
            for i, o in zip(b.inputs, b.outputs):
                if i >= 0 and o >= 0 and shapes[i] != shapes[o] and (shapes[i][:1] or (0,))[0] + (shapes[o][:1] or (0,))[0] != 1:
                    dynamic = True
        else:
            then, *others = (callee[c] for c in custom)
            dynamic = dynamic or any(states[then.index].shapes[a] != states[other.index].shapes[b] for other in others
                                     for a, b in zip(then.outputs, other.outputs) if a >= 0 and b >= 0)
        planned = any(0 <= t < len(kinds) and kinds[t] == DYNAMIC for prior in sg.operators[:op_index]
                      for t in prior.outputs)  # a lazy step: PlanAllocations has run already
        for i, o in enumerate(op.outputs):
            if o < 0 or kinds[o] != ARENA:
                continue
            if (body is not None and i < len(callee[body].inputs) and i < len(callee[body].outputs)
                    and callee[body].inputs[i] == callee[body].outputs[i] and _node_reads(uses, o) == 0):
                if planned:  # dropped from the node before SetTensorToDynamic: planned in the arena
                    continue
                kinds[o] = NOTHING
            elif dynamic:
                kinds[o] = DYNAMIC
            else:
                continue
            changed.add(index)
    return changed


def analyze_memory(model: Model, entry: int, states: Mapping[int, SubgraphShapes], reached: Sequence[int],
                   calls: Mapping[tuple[int, int], Sequence[int]],
                   temporaries: Mapping[tuple[int, int], Sequence[Temporary]] | None = None, threads: int = 1,
                   xnnpack: Callable[[], tuple[Delegated, tuple[int, int, int]]] | None = None,
                   tflm_target: TflmTarget = CORTEX_M, warnings: list[str] | None = None
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
        temporaries: :func:`kernel_temporaries` (at ``threads`` threads): with it, the summary's
            ``runtime`` plans them among the tensors as LiteRT does.
        xnnpack: gives, per subgraph, the graph as LiteRT runs it once XNNPACK replaced its partitions by
            DELEGATE nodes and ``{op index: index in it}`` of the kept ops (:mod:`.xnnpack_memory`), and
            XNNPACK's own memory (workspace, packed weights, structures): the summary's ``runtime_xnnpack``.
        tflm_target: the TFLite Micro build its arena is sized for (``Settings.target.tflm``).
        warnings: where a per-op fact that raises (TFLM's) adds its line.

    The ``tflm_*`` figures and ``runtime_xnnpack`` are :class:`~tflite_flops.report.lazy.Deferred`: computed
    (``xnnpack`` called, the TFLM lines added to ``warnings``) when first read.

    Returns:
        The :class:`MemorySummary` and ``{subgraph: live bytes of each op}`` for the reached subgraphs.
    """
    constant: dict[int, Sequence[bool]] = {}
    sizes: dict[int, list[int]] = {}
    plans: dict[int, _ArenaPlan] = {}
    entry_buffers = None  # TFLM's buffers of an entry that calls no subgraph, made with its sizes
    runtime_plans: dict[int, _ArenaPlan] = {}
    owned: dict[int, tuple[list[str], list[tuple[int, int, bool]]]] = {}  # each subgraph's kinds and temporaries
    settled: dict[int, tuple[SubgraphUses, list[str], int | None]] = {}  # uses, kinds and total of each reached subgraph
    runs = set(reached)
    for sg in model.subgraphs:
        index, state = sg.index, states[sg.index]
        walked = subgraph_tensors(sg, state)
        constant[index] = walked.constant
        if index in runs:
            uses = subgraph_uses(sg)
            sizes[index], kinds, total, buffers = _sizes_and_kinds(sg, state, walked, uses, tflm=index == entry)
            settled[index] = (uses, kinds, total)
            if index == entry:
                entry_buffers = buffers
        else:  # a subgraph the runtime never runs: TFLM plans its tensors all the same
            sizes[index] = tensor_sizes(sg, state.shapes, walked.constant, walked.numel, walked.stored)
    changed = _control_flow_kinds(model, reached, calls, settled, states)
    for index in reached:
        sg = model.subgraphs[index]
        uses, kinds, total = settled[index]
        if index in changed:
            total = None  # tensors left the arena: counted again
        plans[index] = _arena_plan(sg, sizes[index], kinds, uses, total)
        if temporaries is not None:
            own = [(op, t.bytes, t.persistent) for (i, op), found in sorted(temporaries.items()) if i == index
                   for t in found]
            runtime_plans[index] = _arena_plan(sg, sizes[index], kinds, uses, total, own) if own else plans[index]
            owned[index] = (kinds, own)
    plans = {index: plans[index] for index in reached}  # in the order the runtime reaches them

    def delegated_plans(delegated: Delegated) -> dict[int, _ArenaPlan]:
        """The arenas of the reached subgraphs as LiteRT plans them with XNNPACK's partitions."""
        out = {}
        for index, (kinds, own) in owned.items():
            sg = model.subgraphs[index]  # a DELEGATE node's outputs are arena tensors: no kernel of theirs ran Prepare
            view, kept = delegated.get(index, (sg, {i: i for i in range(len(sg.operators))}))
            node_outputs = {t for op in view.operators if op.op_type == DELEGATE_NODE for t in op.outputs}
            moved = [ARENA if t in node_outputs and k in (PERSISTENT, PREPARED, DYNAMIC) else k
                     for t, k in enumerate(kinds)]
            own = [(kept[op], b, p) for op, b, p in own if op in kept]
            out[index] = _arena_plan(view, sizes[index], moved, subgraph_uses(view), None, own)
        return out

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
        best, where = plan.pinned_bytes, None
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
    peak = None  # type: ignore[assignment]  # a recursive closure: its cycle would keep the plans alive
    weights = _weights_bytes(model, reached, constant)
    subgraphs = []
    for index in reached:
        plan = plans[index]
        own_peak = max(plan.live, default=plan.pinned_bytes)
        own_op = f"{index}:{plan.live.index(own_peak)}" if plan.live else None
        subgraphs.append(SubgraphMemory(
            subgraph=index, name=model.subgraphs[index].name, buffers=len(plan.offsets),
            shared_tensors=len(plan.shared), activations_total_bytes=plan.activations_total_bytes,
            peak_live_bytes=own_peak, peak_op=own_op, arena_bytes=plan.arena_bytes,
            persistent_bytes=plan.persistent_bytes))
    def runtime_memory(on: bool, by_subgraph: Mapping[int, _ArenaPlan], extra: tuple[int, int, int] | None,
                       delegated: Delegated | None) -> RuntimeMemory | None:
        """LiteRT's memory with XNNPACK off, or on (its kept ops' temporaries only, its own bytes apart)."""
        arena_temporaries = [sum(t.bytes for t in found if not t.persistent) for (i, op), found in
                             (temporaries.items() if temporaries and by_subgraph else ())
                             if not on or i not in delegated or op in delegated[i][1]]  # type: ignore[operator]
        arena = sum(by_subgraph[i].arena_bytes for i in reached) if by_subgraph else 0
        persistent = sum(by_subgraph[i].persistent_bytes for i in reached) if by_subgraph else 0
        own = sum(extra) if extra is not None else None
        parts = dict(zip(("delegate_workspace_bytes", "delegate_weights_bytes", "delegate_structures_bytes"),
                         extra or ()))
        return None if not by_subgraph else RuntimeMemory(
            threads=threads, xnnpack=on, arena_bytes=arena, temporaries_bytes=max(arena_temporaries, default=0),
            persistent_arena_bytes=persistent, delegate_bytes=own, total_bytes=arena + persistent + (own or 0),
            **parts)

    def with_xnnpack() -> RuntimeMemory | None:
        """``runtime_xnnpack``: the arenas as LiteRT plans them with XNNPACK's partitions, and its own bytes."""
        if xnnpack is None or temporaries is None:
            return None
        given, extra = xnnpack()
        return runtime_memory(True, delegated_plans(given), extra, given)

    head = Deferred(lambda: tflm_figures(model, entry, states, sizes, constant, entry_buffers, tflm_target,
                                         warnings=warnings))
    summary = MemorySummary(
        activations_total_bytes=sum(s.activations_total_bytes for s in subgraphs),
        peak_live_bytes=peak_bytes, peak_op=peak_op,
        arena_bytes=sum(s.arena_bytes for s in subgraphs),
        persistent_arena_bytes=sum(s.persistent_bytes for s in subgraphs),
        tflm_arena_bytes=Deferred(lambda: head.get().tensors_bytes),
        tflm_head_bytes=Deferred(lambda: head.get().head_bytes), tflm_tail_bytes=Deferred(lambda: head.get().tail_bytes),
        tflm_arena_size_bytes=Deferred(lambda: head.get().arena_size_bytes),
        tflm_allocation_peak_bytes=Deferred(lambda: head.get().allocation_peak_bytes),
        tflm_pointer_bytes=tflm_target.pointer_bytes, tflm_unmodelled_ops=Deferred(lambda: head.get().unmodelled),
        tflm_target=tflm_target_name(tflm_target),
        weights_bytes=weights, subgraphs=tuple(subgraphs), interpreter_bytes=interpreter_bytes(model),
        complete=all(all(states[i].resolved) for i in reached), runtime=runtime_memory(False, runtime_plans, None, None),
        runtime_xnnpack=Deferred(with_xnnpack))
    return summary, {index: plan.live for index, plan in plans.items()}


def _weights_bytes(model: Model, reached: Sequence[int], constant: Mapping[int, Sequence[bool]]) -> int:
    """Bytes of the constant buffers the reached subgraphs use, as stored, each buffer once."""
    seen: dict[int, int] = {}
    for index in reached:
        seen.update({t.buffer: t.data_size for t in compress(model.subgraphs[index].tensors, constant[index])})
    return sum(seen.values())
