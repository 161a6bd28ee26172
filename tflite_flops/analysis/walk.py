"""The control-flow walk: every op of every reached subgraph, in order, at its resolved shapes.

The walk starts at the entry subgraph, resolves each op's output shapes
(:func:`~tflite_flops.analysis.shapes.step`), makes its :class:`~tflite_flops.analysis.entries.Entry`
and follows control flow:

* WHILE, STABLEHLO_WHILE: body × trips, cond × (trips + 1). The trip count is inferred when the loop bound is
  visible (a counter compared with LESS against a known value, stepped by a constant ADD in the
  body); otherwise ``while_trips`` is used and the op is flagged "per iteration".
* IF and STABLEHLO_CASE: every branch is costed; the costlier one counts (an upper bound, flagged).
* CALL_ONCE: its subgraph is init-time work, reported apart from per-inference totals.
* CALL / STABLEHLO_COMPOSITE: the called (decomposition) subgraph counts once per call.

Which of these an op is comes from its ``control_flow`` fact (:mod:`tflite_flops.ops.facts`), never from
its op type here.

DEQUANTIZE and DENSIFY of a constant tensor run once at preparation time (TFLite caches
the result); they are init-time too, and their outputs count as constant weights downstream.
Subgraphs that nothing reaches are walked too and listed with phase ``not_executed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InputSpecError, ModelFormatError, ShapeError
from ..ops.facts import (CALL_ONCE_INIT, CALL_SUBGRAPH, CASE_BRANCHES, COUNTER_ABOVE, COUNTER_BELOW, COUNTER_STEP,
                         IF_ELSE, STABLEHLO_LOOP, WHILE_LOOP, facts_of)
from ..ops.registry import CALLER_OPS, INIT_ON_CONSTANT_OPS, SPARSE_WEIGHT_OPS, OpContext, join_notes as _join
from ..reader.bounds import check_call_graph
from ..reader.model import Model, Subgraph, branch_refs
from ..settings import Settings
from .entries import CostOverride, Entry, ParamCount, constant_input0, cost_entry, opaque_note
from .shapes import (InputAssumptions, SubgraphShapes, SubgraphTensors, initial_state, resolve_inputs, step,
                     subgraph_tensors)
from .sparsity import COUNT_ZEROS_AUTO_LIMIT, WeightZeros, weight_inputs

Calls = list[tuple[tuple[int, int], int]]  # (op key, executions per execution of the caller)


@dataclass
class Walk:
    """What one walk of a model gathers: an entry per op, the shapes per subgraph, the params, the warnings.

    Made from the model and the analysis :class:`~tflite_flops.settings.Settings`; the settings the walk and
    the passes after it read are resolved once here: ``while_trips`` (at least 0), ``overrides``,
    ``trust_stored``, ``count_zeros`` (``None`` in the settings: automatic by file size) and ``threads``.
    """

    model: Model
    settings: Settings = field(default_factory=Settings)
    while_trips: int = field(init=False)
    overrides: Mapping[str, CostOverride] = field(init=False)
    trust_stored: bool = field(init=False)
    count_zeros: bool = field(init=False)
    threads: int = field(init=False)  # the interpreter threads the runtime memory figure is for (kernel temporaries)
    entries: dict[tuple[int, int], Entry] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    assumed: InputAssumptions = field(default_factory=InputAssumptions)  # e.g. batch 1 for a dynamic batch
    params: ParamCount = field(default_factory=lambda: ParamCount({}, {}))
    states: dict[int, SubgraphShapes] = field(default_factory=dict)
    # Contractions whose weights are counted after the walk (sparsity.WeightZeros.fill): reading the
    # weights between ops evicts the walk's own objects from the CPU caches.
    weighted: list[tuple[Subgraph, SubgraphTensors, str, tuple[int, ...], Entry]] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.settings
        self.while_trips = max(int(s.while_trips), 0)
        self.overrides = dict(s.cost_overrides or {})
        self.trust_stored = bool(s.trust_stored_shapes)
        # reading every weight costs time on big files: automatic only for small ones
        self.count_zeros = bool(self.model.size_bytes <= COUNT_ZEROS_AUTO_LIMIT if s.count_zeros is None
                                else s.count_zeros)
        self.threads = max(int(s.threads), 1)


def entry_subgraph(model: Model, signature: str | None) -> int:
    """The subgraph a signature key runs (subgraph 0 without a key)."""
    if signature is None:
        return 0
    for sig in model.signatures:
        if sig.key == signature:
            return sig.subgraph_index
    keys = ", ".join(s.key for s in model.signatures) or "none"
    raise ShapeError(f"no signature {signature!r} (signatures: {keys})")


def walk_model(walk: Walk, entry: int, spec: Mapping, batch: int | None) -> None:
    """Resolve the entry inputs, walk from the entry subgraph, count executions, list the rest, count weights."""
    model = walk.model
    if batch is not None and int(batch) < 1:
        raise InputSpecError(f"--batch must be at least 1 (got {batch})")
    if entry:  # the load checked the walk from subgraph 0; a signature's walk starts elsewhere
        check_call_graph(model, entry)
    shapes, resolved, warnings, walk.assumed = resolve_inputs(model, model.subgraphs[entry], spec, batch)
    walk.warnings.extend(warnings)
    inference, init = _walk_subgraph(walk, entry, shapes, resolved, {}, ())
    for key, mult in inference:
        walk.entries[key].inference += mult
    for key, mult in init:
        walk.entries[key].init += mult
    for other in model.subgraphs:  # subgraphs nothing reached: listed, not counted
        if other.index not in walk.states:
            _walk_subgraph(walk, other.index, {}, {}, {}, ())
    zeros = WeightZeros(model, walk.count_zeros)
    zeros.count_batch(walk.weighted)
    for sg, tensors, op_type, weights, op_entry in walk.weighted:
        zeros.fill(sg, tensors, op_type, weights, op_entry)


def _walk_subgraph(walk: Walk, index: int, input_shapes: Mapping[int, tuple[int, ...]],
                   input_resolved: Mapping[int, bool], input_values: Mapping[int, Any],
                   stack: tuple[int, ...]) -> tuple[Calls, Calls]:
    """Cost every op of subgraph ``index``; return (per-inference calls, init-time calls)."""
    if index in stack:
        raise ModelFormatError(f"subgraph {index} calls itself through {' -> '.join(map(str, stack + (index,)))}")
    model = walk.model
    sg = model.subgraphs[index]
    state = initial_state(model, sg)
    for tidx, shape in input_shapes.items():
        state.shapes[tidx] = tuple(shape)
        state.resolved[tidx] = input_resolved.get(tidx, True)
    for tidx, value in input_values.items():
        if value is not None:
            state.values[tidx] = value
    walk.states[index] = state
    tensors = subgraph_tensors(sg, state)
    inference: Calls = []
    init: Calls = []
    for op in sg.operators:
        key = (index, op.index)
        ctx, shape_note = step(sg, state, op.index, walk.trust_stored)
        if shape_note and any(not state.resolved[o] for o in op.outputs if o >= 0):
            walk.warnings.append(f"op {index}:{op.index} {op.op_type}: {shape_note}; its outputs keep the "
                                 "stored shapes, and the ops after it are flagged")
        at_init = op.op_type in INIT_ON_CONSTANT_OPS and constant_input0(ctx)
        if at_init:
            for o in op.outputs:
                state.derived_constant[o] = True
        entry = cost_entry(sg, tensors, state, ctx, shape_note, walk.overrides, walk.params)
        if entry.status == "opaque":
            entry.note = _join(entry.note, opaque_note(model, sg, op))
        if op.op_type in SPARSE_WEIGHT_OPS:  # see Walk.weighted; no later note in this loop is for these types
            walk.weighted.append((sg, tensors, op.op_type, weight_inputs(ctx), entry))
        previous = walk.entries.get(key)
        if previous is not None:  # walked again (e.g. a subgraph also called from an unreached one)
            entry.inference, entry.init = previous.inference, previous.init
        walk.entries[key] = entry
        (init if at_init else inference).append((key, 1))
        if at_init:
            entry.note = _join(entry.note, "runs once at init (constant input, result cached)")
        if op.op_type in CALLER_OPS:
            child_inf, child_init = _control_flow(walk, sg, state, ctx, entry, stack + (index,))
            inference.extend(child_inf)
            init.extend(child_init)
    return inference, init


def _control_flow(walk: Walk, sg: Subgraph, state: SubgraphShapes, ctx: OpContext, entry: Entry,
                  stack: tuple[int, ...]) -> tuple[Calls, Calls]:
    op = sg.operators[ctx.index]
    refs = op.subgraph_refs
    if not refs:
        return [], []
    in_shapes = {pos: state.shapes[t] for pos, t in enumerate(op.inputs) if t >= 0}
    in_resolved = {pos: state.resolved[t] for pos, t in enumerate(op.inputs) if t >= 0}
    in_values = {pos: state.values[t] for pos, t in enumerate(op.inputs) if t >= 0}

    def call(sub: int, skip: int = 0) -> tuple[Calls, Calls]:
        target = walk.model.subgraphs[sub]
        shapes = {t: in_shapes[p + skip] for p, t in enumerate(target.inputs) if p + skip in in_shapes}
        resolved = {t: in_resolved[p + skip] for p, t in enumerate(target.inputs) if p + skip in in_resolved}
        values = {t: in_values[p + skip] for p, t in enumerate(target.inputs) if p + skip in in_values}
        return _walk_subgraph(walk, sub, shapes, resolved, values, stack)

    def outputs_from(sub: int) -> None:
        target = walk.model.subgraphs[sub]
        sub_state = walk.states[sub]
        for o, t in zip(op.outputs, target.outputs):
            if o >= 0:
                state.shapes[o] = sub_state.shapes[t]
                state.resolved[o] = sub_state.resolved[t]

    flow = facts_of(op.op_type).control_flow
    if flow in (WHILE_LOOP, STABLEHLO_LOOP) and "body_subgraph_index" in refs:
        cond, body = refs.get("cond_subgraph_index"), refs["body_subgraph_index"]
        trips = infer_trip_count(walk.model, cond, body, in_values) if cond is not None else None
        if trips is None:
            trips = walk.while_trips
            entry.note = _join(entry.note, f"trip count unknown: body counted {trips}× (--while-trips); "
                                           "costs are per iteration")
            walk.warnings.append(f"{op.op_type} op {sg.index}:{op.index}: loop trip count could not be inferred; "
                                 f"counted {trips} iteration(s) (set --while-trips N)")
        else:
            entry.note = _join(entry.note, f"trip count {trips} inferred from the loop condition")
        inf: Calls = []
        ini: Calls = []
        if cond is not None:
            c_inf, c_init = call(cond)
            inf += [(k, m * (trips + 1)) for k, m in c_inf]
            ini += c_init
        b_inf, b_init = call(body)
        inf += [(k, m * trips) for k, m in b_inf]
        ini += b_init
        for o, i in zip(op.outputs, op.inputs):  # loop-carried shapes are invariant
            if o >= 0 and i >= 0:
                state.shapes[o], state.resolved[o] = state.shapes[i], state.resolved[i]
        return inf, ini
    if flow in (IF_ELSE, CASE_BRANCHES):  # input 0 selects the branch; the others are the branches' inputs
        branches = ([refs[k] for k in ("then_subgraph_index", "else_subgraph_index") if k in refs] if flow == IF_ELSE
                    else branch_refs(refs, "branch_subgraph_indices"))
        if not branches:  # options of another op type (a corrupted file): nothing to walk
            return [], []
        results = [call(b, skip=1) for b in branches]
        costs = [sum(walk.entries[k].cost.flops * m for k, m in r[0]) for r in results]
        pick = max(range(len(results)), key=lambda i: costs[i])
        outputs_from(branches[pick])
        for pos, o in enumerate(op.outputs):  # branches that disagree on a shape leave it unresolved
            outs = [walk.model.subgraphs[b].outputs for b in branches]
            if o >= 0 and len({walk.states[b].shapes[t[pos]] for b, t in zip(branches, outs) if pos < len(t)}) > 1:
                state.resolved[o] = False
        entry.note = _join(entry.note, f"upper bound: the costlier branch (subgraph {branches[pick]}) is counted")
        return results[pick][0], [c for r in results for c in r[1]]
    if flow == CALL_ONCE_INIT and "init_subgraph_index" in refs:
        c_inf, c_init = call(refs["init_subgraph_index"])
        entry.note = _join(entry.note, "its subgraph runs once, at init")
        return [], c_inf + c_init
    if flow == CALL_SUBGRAPH:
        sub = refs.get("subgraph", refs.get("decomposition_subgraph_index"))
        if sub is None:
            return [], []
        result = call(sub)
        outputs_from(sub)
        return result
    return [], []  # bodies of STABLEHLO reduce/sort/scatter: listed as not executed


def infer_trip_count(model: Model, cond: int, body: int, values: Mapping[int, Any]) -> int | None:
    """Trip count of a WHILE loop when its bound is visible, else None.

    Recognises the converter's pattern: in the cond subgraph, ``LESS(x_i, bound)`` where ``x_i``
    is loop variable i and ``bound`` is a loop variable or constant with a known value; in the
    body, loop variable i is updated by ``ADD(x_i, step)`` with a constant step. Several such
    comparisons (joined with LOGICAL_AND) give the smallest trip count.
    """
    csg, bsg = model.subgraphs[cond], model.subgraphs[body]
    cstate = initial_state(model, csg)
    for pos, t in enumerate(csg.inputs):
        if values.get(pos) is not None:
            cstate.values[t] = values[pos]
    cond_pos = {t: p for p, t in enumerate(csg.inputs)}
    body_pos = {t: p for p, t in enumerate(bsg.inputs)}
    trips = []
    for op in csg.operators:
        role = facts_of(op.op_type).loop_counter
        if role not in (COUNTER_BELOW, COUNTER_ABOVE) or len(op.inputs) != 2:
            continue
        a, b = op.inputs if role == COUNTER_BELOW else op.inputs[::-1]
        if a not in cond_pos or cstate.values[b] is None:
            continue
        pos = cond_pos[a]
        start, bound = values.get(pos), cstate.values[b]
        stride = _body_step(model, bsg, body_pos, pos)
        if start is None or stride is None or start.size != 1 or bound.size != 1 or stride <= 0:
            continue
        trips.append(max(0, math.ceil((int(bound.reshape(-1)[0]) - int(start.reshape(-1)[0])) / stride)))
    return min(trips) if trips else None


def _body_step(model: Model, bsg: Subgraph, body_pos: Mapping[int, int], pos: int) -> int | None:
    if pos >= len(bsg.outputs):
        return None
    target = bsg.outputs[pos]
    for op in bsg.operators:
        if target in op.outputs and len(op.inputs) == 2 and facts_of(op.op_type).loop_counter == COUNTER_STEP:
            x, c = op.inputs
            if body_pos.get(c) == pos:
                x, c = c, x
            if body_pos.get(x) != pos:
                return None
            const = model.constant(bsg.tensors[c]) if c >= 0 else None
            return int(const.reshape(-1)[0]) if const is not None and const.size == 1 else None
    return None
