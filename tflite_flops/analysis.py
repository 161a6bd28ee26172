"""Model + shapes + registry -> Report.

The walk starts at the entry subgraph and follows control flow:

* WHILE: body × trips, cond × (trips + 1). The trip count is inferred when the loop bound is
  visible (a counter compared with LESS against a known value, stepped by a constant ADD in the
  body); otherwise ``while_trips`` is used and the op is flagged "per iteration".
* IF: both branches are costed; the costlier one counts (an upper bound, flagged).
* CALL_ONCE: its subgraph is init-time work, reported apart from per-inference totals.
* CALL / STABLEHLO_COMPOSITE: the called (decomposition) subgraph counts once per call.

DEQUANTIZE and DENSIFY of a constant tensor run once at preparation time (TFLite caches
the result); they are init-time too, and their outputs count as constant weights downstream.
Subgraphs that nothing reaches are listed with phase ``not_executed``.
"""

from __future__ import annotations

import gc
import logging
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence


from . import __version__
from .completeness import check_strict
from .errors import InputSpecError, ModelFormatError, ShapeError
from .memory import analyze_memory
from .model import Model, Subgraph, load_model
from .ops import lookup
from .ops.registry import (CALLER_OPS, CONTRACTION_OPS, INIT_ON_CONSTANT_OPS, MAX_VALUE_ELEMENTS, SPARSE_WEIGHT_OPS,
                           Cost, OpContext, OpSpec, Shape, join_notes as _join, lookup_value)
from .report import MemorySummary, ModelInfo, OpRecord, new_record, OpTypeSummary, Report, TensorSummary, Totals
from .sparsity import COUNT_ZEROS_AUTO_LIMIT, WeightZeros, weight_inputs
from .shapes import (InputAssumptions, SubgraphShapes, SubgraphTensors, initial_state, input_display_name,
                     normalize_input_shapes, resolve_inputs, step, subgraph_tensors)
from .units import FLOAT_DTYPES

_PRECISION = {"FLOAT32": "float32", "FLOAT16": "float16", "BFLOAT16": "bfloat16", "INT8": "int8",
              "UINT8": "uint8", "INT16": "int16", "INT32": "int32", "INT64": "int64", "BOOL": "bool",
              "FLOAT64": "float64"}
_INT_WEIGHTS = frozenset({"INT8", "UINT8", "INT4", "INT2", "UINT4"})
_PACKED = frozenset({"INT4", "INT2", "UINT4"})  # stored packed: their bytes read are the stored bytes

CostOverride = Callable[[OpContext], Any]
_log = logging.getLogger("tflite_flops")


@dataclass(slots=True)
class _Entry:
    """One op's single-execution cost and how often it runs, accumulated over the walk."""

    subgraph: int
    index: int
    op_type: str
    name: str
    inputs: tuple[tuple[int, ...], ...]
    outputs: tuple[tuple[int, ...], ...]
    cost: Cost
    bytes_read: int
    bytes_written: int
    params: int
    status: str
    formula: str
    note: str
    precision: str
    resolved: bool
    inference: int = 0
    init: int = 0
    weight_nnz: int = 0  # non-zero weight elements, when the weights are sparse or mostly zero
    weight_numel: int = 0
    like: "_Entry | None" = None  # the entry whose figures this one repeats (_Shortcut), if any


@dataclass
class _Walk:
    model: Model
    while_trips: int
    overrides: Mapping[str, CostOverride]
    trust_stored: bool
    count_zeros: bool = True
    entries: dict[tuple[int, int], _Entry] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    assumed: InputAssumptions = field(default_factory=InputAssumptions)  # e.g. batch 1 for a dynamic batch
    param_tensors: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    states: dict[int, SubgraphShapes] = field(default_factory=dict)
    # Contractions whose weights are counted after the walk (sparsity.WeightZeros.fill): reading the
    # weights between ops evicts the walk's own objects from the CPU caches.
    weighted: list[tuple[Subgraph, SubgraphTensors, str, tuple[int, ...], _Entry]] = field(default_factory=list)
    param_buffers: dict[int, int] = field(default_factory=dict)  # data offset -> the subgraph that counted it
    formula_memo: dict[tuple[Any, ...], tuple[Cost, str, str, str]] = field(default_factory=dict)  # _formula_key


Calls = list[tuple[tuple[int, int], int]]  # (op key, executions per execution of the caller)


def analyze(source: str | os.PathLike | bytes | bytearray | Model | Any, input_shapes: Any = None,
            batch: int | None = None, *, strict: bool = False, while_trips: int = 1,
            signature: str | None = None, cost_overrides: Mapping[str, CostOverride] | None = None,
            trust_stored_shapes: bool = True, quantization: str | None = None,
            count_zeros: bool | None = None, all_signatures: bool = False, prefill: str | None = None,
            decode: str | None = None) -> Report:
    """Analyze a TFLite model: per-op MACs, FLOPs, bytes and params, and totals.

    Args:
        source: a .tflite path, the model's bytes, or an already parsed :class:`Model`; also a Keras
            model, a SavedModel directory or a concrete function, converted first (needs TensorFlow).
        input_shapes: shapes of the entry subgraph's inputs: a mapping ``{name_or_index: shape}``,
            or spec strings (``"x=1x224x224x3"``, ``"0=1x224x224x3"``, a bare ``"1x224x224x3"``).
        batch: sets the leading dim of every input whose batch dim is dynamic or 1.
        strict: raise when the report has what ``--strict`` refuses
            (:func:`tflite_flops.completeness.strict_findings`: ops not counted, partial totals).
        while_trips: trip count of WHILE loops whose bound cannot be inferred.
        signature: analyze the subgraph of this signature key instead of subgraph 0.
        cost_overrides: ``{op_type: fn(ctx) -> Cost | int | (macs, flops)}``, used before the registry.
        trust_stored_shapes: keep the converter's stored shapes where inputs are unchanged and static.
        count_zeros: read dense constant weights to find mostly-zero (pruned) ones and report their
            effective MACs. ``None`` (default) does so for files up to 64 MiB only, so that a big
            model's weight pages are not touched unless asked; sparse-encoded weights are always seen.
        quantization: conversion mode for such sources: float (default), int8, dynamic_range, fp16.
        all_signatures: also analyze every signature and put their totals (and, for prefill/decode
            signatures, the per-token figures) in ``report.signatures``; see :mod:`tflite_flops.generative`.
        prefill, decode: with ``all_signatures``, the keys of the prefill and decode signatures
            (default: detected by name and by the token-count input dim).

    Returns:
        The :class:`Report`.

    Raises:
        ModelLoadError, ModelFormatError: the model cannot be read.
        ShapeError, InputSpecError: the input shapes do not fit the model.
        UnsupportedOpError, ShapeError: ``strict`` and the report has a problem ``--strict`` refuses
            (:func:`tflite_flops.completeness.check_strict`).
    """
    from .convert import needs_conversion, source_name, to_tflite  # TensorFlow is imported only to convert

    name = None
    if needs_conversion(source):
        name = source_name(source)  # the converted bytes have no path: keep the directory or model name
        source = to_tflite(source, quantization or "float")
    elif quantization is not None:
        raise InputSpecError("quantization= applies to a Keras model, SavedModel or concrete function, not a .tflite")
    with _collector_paused():
        model = source if isinstance(source, Model) else load_model(source)
        settings = {"while_trips": while_trips, "cost_overrides": cost_overrides,
                    "trust_stored_shapes": trust_stored_shapes, "count_zeros": count_zeros}
        report = analyze_entry(model, signature, input_shapes, batch, **settings)[0]
        if name is not None and report.model.path is None:
            report = replace(report, model=replace(report.model, path=name))
        if all_signatures:
            from .generative import add_signatures

            report = add_signatures(report, model, analyze_entry, prefill=prefill, decode=decode, **settings)
        elif prefill is not None or decode is not None:
            raise InputSpecError("prefill= / decode= name signatures of all_signatures=True (--all-signatures)")
        del model  # freed now, before the collector runs again: the report keeps only its hasher
    if strict:
        check_strict(report)  # the CLI's --strict applies the same function to the printed report
    return report


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while one analysis runs, if it was on.

    Reading and walking a model allocate tens of thousands of small tuples and records that
    reference counting frees; the collector's generational passes over them (and over the model
    they join) find nothing to free. Any cycle is collected after.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def analyze_entry(model: Model, signature: str | None, input_shapes: Any, batch: int | None, *,
                  while_trips: int, cost_overrides: Mapping[str, CostOverride] | None, trust_stored_shapes: bool,
                  count_zeros: bool | None) -> tuple[Report, _Walk]:
    """The report of one entry (subgraph 0 or a signature's subgraph) and the walk that made it.

    :func:`analyze` without the conversion and the signature summaries; the walk tells
    :mod:`tflite_flops.generative` which weights each signature reads.
    """
    entry = _entry_subgraph(model, signature)
    spec = normalize_input_shapes(input_shapes)
    if count_zeros is None:  # reading every weight costs time on big files: automatic only for small ones
        count_zeros = model.size_bytes <= COUNT_ZEROS_AUTO_LIMIT
    walk = _Walk(model, max(int(while_trips), 0), dict(cost_overrides or {}), trust_stored_shapes,
                 bool(count_zeros))
    _walk_model(walk, entry, spec, batch)
    return _build_report(walk, model, model.subgraphs[entry], entry, spec, batch), walk


def resolve_shapes(source: str | os.PathLike | bytes | Model, input_shapes: Any = None, batch: int | None = None, *,
                   trust_stored_shapes: bool = True, while_trips: int = 1,
                   signature: str | None = None) -> dict[int, SubgraphShapes]:
    """The shapes (and folded small values) of every tensor, per reached subgraph, as ``analyze()`` sees them.

    Same walk as :func:`analyze` (input resolution, propagation, control flow), without the report;
    tests compare it with an interpreter's own shapes. Arguments as for :func:`analyze`.
    """
    model = source if isinstance(source, Model) else load_model(source)
    walk = _Walk(model, max(int(while_trips), 0), {}, trust_stored_shapes, count_zeros=False)
    _walk_model(walk, _entry_subgraph(model, signature), normalize_input_shapes(input_shapes), batch)
    return walk.states


# ---------------------------------------------------------------------------------------------
# Whole-subgraph propagation (the public view of what the walk computes op by op).

def propagated_shapes(model: "Model | str | bytes", input_shapes: object = None, batch: int | None = None,
                      trust_stored: bool = False, subgraph: int = 0) -> dict[int, Shape]:
    """Shape of every tensor of a subgraph after propagating the given input shapes.

    This is the same machinery the analysis uses (:func:`~tflite_flops.shapes.step` op by op), exposed so that
    tests and tools can compare it with an interpreter's own shapes.

    Args:
        model: a parsed :class:`Model`, a .tflite path, or its bytes.
        input_shapes: as for ``analyze()``: ``{name_or_index: shape}`` or spec strings.
        batch: the leading dim of every input whose batch dim is dynamic or 1.
        trust_stored: keep stored shapes where nothing changed (default False: every op's
            shape function runs, so the result checks them against the converter's shapes).
        subgraph: the entry subgraph.

    Returns:
        ``{tensor_index: shape}`` for every tensor of the subgraph.

    Raises:
        ShapeError, InputSpecError: the input shapes do not fit the model.
    """
    state = _entry_state(model, input_shapes, batch, trust_stored, subgraph)
    return dict(enumerate(state.shapes))


def unresolved_tensors(model: "Model | str | bytes", input_shapes: object = None, batch: int | None = None,
                       trust_stored: bool = False, subgraph: int = 0) -> list[int]:
    """Indices of the tensors whose shape could not be derived (they keep their stored placeholder)."""
    state = _entry_state(model, input_shapes, batch, trust_stored, subgraph)
    return [i for i, ok in enumerate(state.resolved) if not ok]


def _entry_state(model: "Model | str | bytes", input_shapes: object, batch: int | None, trust_stored: bool,
                 subgraph: int) -> SubgraphShapes:
    """The entry subgraph's shapes after the same walk as ``analyze()`` (control flow included)."""
    if subgraph == 0:
        return resolve_shapes(model, input_shapes, batch, trust_stored_shapes=trust_stored)[0]
    parsed = model if isinstance(model, Model) else load_model(model)  # type: ignore[arg-type]
    key = next((sig.key for sig in parsed.signatures if sig.subgraph_index == subgraph), None)
    if key is None:
        raise ShapeError(f"subgraph {subgraph} is not the entry of any signature")
    return resolve_shapes(parsed, input_shapes, batch, trust_stored_shapes=trust_stored, signature=key)[subgraph]


def _walk_model(walk: _Walk, entry: int, spec: Mapping, batch: int | None) -> None:
    """Resolve the entry inputs, walk from the entry subgraph, count executions, list the rest, count weights."""
    model = walk.model
    if batch is not None and int(batch) < 1:
        raise InputSpecError(f"--batch must be at least 1 (got {batch})")
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


def _entry_subgraph(model: Model, signature: str | None) -> int:
    if signature is None:
        return 0
    for sig in model.signatures:
        if sig.key == signature:
            return sig.subgraph_index
    keys = ", ".join(s.key for s in model.signatures) or "none"
    raise ShapeError(f"no signature {signature!r} (signatures: {keys})")


def _walk_subgraph(walk: _Walk, index: int, input_shapes: Mapping[int, tuple[int, ...]],
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
    entries, weighted = walk.entries, walk.weighted
    shortcut = _Shortcut(walk, sg, state, tensors) if walk.trust_stored else None
    for op in sg.operators:
        key = (index, op.index)
        if shortcut is not None:
            taken = shortcut.take(op)
            if taken is not None:  # an op like one walked before: nothing to propagate, same figures
                entry, weights = taken
                previous = entries.get(key)
                if previous is not None:
                    entry.inference, entry.init = previous.inference, previous.init
                entries[key] = entry
                inference.append((key, 1))
                if weights is not None:
                    weighted.append((sg, tensors, op.op_type, weights, entry))
                continue
        ctx, shape_note = step(sg, state, op.index, walk.trust_stored)
        if shape_note and any(not state.resolved[o] for o in op.outputs if o >= 0):
            walk.warnings.append(f"op {index}:{op.index} {op.op_type}: {shape_note}; its outputs keep the "
                                 "stored shapes, and the ops after it are flagged")
        const_input = op.op_type in INIT_ON_CONSTANT_OPS and _constant_input0(ctx)
        if const_input:
            for o in op.outputs:
                state.derived_constant[o] = True
        entry, counted = _cost_entry(walk, sg, tensors, state, ctx, shape_note)
        if entry.status == "opaque":
            entry.note = _join(entry.note, _opaque_note(walk.model, sg, op))
        weights = weight_inputs(ctx) if op.op_type in SPARSE_WEIGHT_OPS else None
        if weights is not None:  # see _Walk.weighted; no later note in this loop is for these types
            weighted.append((sg, tensors, op.op_type, weights, entry))
        previous = entries.get(key)
        if previous is not None:  # walked again (e.g. a subgraph also called from an unreached one)
            entry.inference, entry.init = previous.inference, previous.init
        entries[key] = entry
        (init if const_input else inference).append((key, 1))
        if const_input:
            entry.note = _join(entry.note, "runs once at init (constant input, result cached)")
        if op.op_type in CALLER_OPS:
            if shortcut is not None:
                shortcut.flush()  # the params counted so far, before the called subgraphs count theirs
            child_inf, child_init = _control_flow(walk, sg, state, ctx, entry, stack + (index,))
            inference.extend(child_inf)
            init.extend(child_init)
        if shortcut is not None:
            shortcut.learn(op, entry, counted, weights)
    if shortcut is not None:
        shortcut.flush()
    return inference, init


_SHAREABLE = frozenset({"ok", "zero", "unsupported"})  # not "error" (a note per op) nor "opaque" (the file's note)


@dataclass(slots=True)
class _Template:
    """The figures of an op that every op with the same :meth:`_Shortcut.take` key shares, and the
    input positions of its counted params and of its weights (None: not a sparse-weight op)."""

    entry: _Entry
    params: tuple[int, ...]
    weights: tuple[int, ...] | None


class _Shortcut:
    """The walk of ops that need no shape work, by repeating an earlier op's figures.

    With ``trust_stored`` and every tensor of an op at its stored, static and resolved shape, with
    no folded value (and not made from a constant at init), :func:`~tflite_flops.shapes.step`
    changes nothing, and everything :func:`_cost_entry` reports is a function of the op type, its
    options and its tensors' dtype, stored shape, constness, quantization (and the stored size of
    sparse or packed constants): the formula's inputs of :func:`_formula_key`, and the bytes,
    params and precision computed from the same facts. Such ops with equal facts get the first
    one's figures; its name, index and which weight tensors it counts stay its own.

    Excluded, and walked by ``step`` and ``_cost_entry`` as before: control flow, init-time ops,
    accelerator-compiled ops, user formulas and overrides, ops whose outputs would be folded to
    values, and results that carry a per-op note (formula errors).
    """

    __slots__ = ("walk", "sg", "state", "tensors", "kinds", "usable", "big", "types", "templates", "pending",
                 "params")

    def __init__(self, walk: _Walk, sg: Subgraph, state: SubgraphShapes, tensors: SubgraphTensors) -> None:
        self.walk, self.sg, self.state, self.tensors = walk, sg, state, tensors
        constant = tensors.constant
        ids: dict[tuple[Any, ...], int] = {}
        facts = [(t.dtype, t.shape, c, t.quantization is not None,
                  t.data_size if c and (t.sparsity is not None or t.dtype in _PACKED) else 0)  # stored size
                 for t, c in zip(sg.tensors, constant)]
        self.kinds = [ids.setdefault(f, len(ids)) for f in facts]  # equal facts, equal kind
        self.kinds.append(-1)  # index -1 (an omitted optional tensor) reads the last item
        # The kind of every tensor in its plain state (see _plain), None for the others.
        self.usable: list[int | None] = [
            kind if resolved and static and value is None and not derived and (shape is stored or shape == stored)
            else None for kind, resolved, static, value, derived, shape, stored in zip(
                self.kinds, state.resolved, tensors.static, state.values, state.derived_constant, state.shapes,
                tensors.stored)]
        self.usable.append(-1)
        self.big = [n > MAX_VALUE_ELEMENTS for n in tensors.numel]  # never folded (shapes._all_small)
        self.big.append(True)
        self.types: dict[str, tuple[bool, bool]] = {}  # op type -> (may be shared, has a value function)
        self.templates: dict[tuple[Any, ...], _Template] = {}
        self.pending: tuple[Any, ...] | None = None  # the key of the op take() left to step, if it may be shared
        # Params of the taken ops, counted by flush() in one batch before the walk leaves the subgraph
        # (the first subgraph to count a shared buffer keeps it, so the order between subgraphs counts).
        self.params: list[int] = []

    def _plain(self, i: int) -> bool:
        """Tensor ``i`` is at its stored, static, resolved shape, has no folded value and is not made at init."""
        state, tensors = self.state, self.tensors
        shape, stored = state.shapes[i], tensors.stored[i]
        return (state.resolved[i] and tensors.static[i] and state.values[i] is None and not state.derived_constant[i]
                and (shape is stored or shape == stored))

    def _type(self, op_type: str) -> tuple[bool, bool]:
        spec = lookup(op_type)
        shareable = (op_type not in CALLER_OPS and op_type not in INIT_ON_CONSTANT_OPS
                     and op_type not in self.walk.overrides
                     and (spec is None or (spec.status != "opaque" and spec.reference != "user")))
        facts = self.types[op_type] = (shareable, lookup_value(op_type) is not None)
        return facts

    def take(self, op: Any) -> tuple[_Entry, tuple[int, ...] | None] | None:
        """``op``'s entry and weights (:func:`~tflite_flops.sparsity.weight_inputs`) from the template
        of an earlier op of its kind, its params counted as that op's were (at :meth:`flush`); None
        when ``op`` must be walked by ``step`` (then :meth:`learn` is told what that gave)."""
        self.pending = None
        index, op_type, _, _, inputs, outputs, _, options, _, _, _ = op  # one unpacking: called per op
        facts = self.types.get(op_type)
        if facts is None:
            facts = self._type(op_type)
        if not facts[0]:
            return None
        usable = self.usable.__getitem__
        ins = tuple(map(usable, inputs))
        if None in ins:
            return None
        outs = tuple(map(usable, outputs))
        if None in outs:
            return None
        if facts[1] and not any(map(self.big.__getitem__, outputs)):  # step would fold its values
            return None
        key = (op_type, id(options), ins, outs)
        template = self.templates.get(key)
        if template is None:
            self.pending = key
            return None
        sg, first = self.sg, template.entry
        if template.params:
            self.params.extend(map(inputs.__getitem__, template.params))
        out0 = outputs[0] if outputs else -1
        entry = _Entry(sg.index, index, op_type, sg.tensors[out0].name if out0 >= 0 else "", first.inputs,
                       first.outputs, first.cost, first.bytes_read, first.bytes_written, first.params, first.status,
                       first.formula, first.note, first.precision, True, like=first)
        weights = template.weights
        return entry, (None if weights is None else tuple(map(inputs.__getitem__, weights)))

    def flush(self) -> None:
        """Count the params of the ops taken since the last flush (:func:`_count_param_tensors`)."""
        if self.params:
            _count_param_tensors(self.walk, self.sg, self.tensors, self.params)
            self.params.clear()

    def learn(self, op: Any, entry: _Entry, counted: Sequence[int], weights: tuple[int, ...] | None) -> None:
        """After ``step`` walked ``op``: keep its figures as the template of its kind when :meth:`take`
        found none (``counted``: positions of the params it counted), and re-read the state of its
        outputs, which ``step`` or control flow may have changed."""
        if self.pending is not None and entry.status in _SHAREABLE:
            position = {t: p for p, t in reversed(list(enumerate(op.inputs)))}.__getitem__
            self.templates[self.pending] = _Template(entry, tuple(counted),
                                                     None if weights is None else tuple(map(position, weights)))
        usable, kinds = self.usable, self.kinds
        for i in op.outputs:
            if i >= 0:
                usable[i] = kinds[i] if self._plain(i) else None


def _control_flow(walk: _Walk, sg: Subgraph, state: SubgraphShapes, ctx: OpContext, entry: _Entry,
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

    kind = op.op_type
    if kind in ("WHILE", "STABLEHLO_WHILE") and "body_subgraph_index" in refs:
        cond, body = refs.get("cond_subgraph_index"), refs["body_subgraph_index"]
        trips = infer_trip_count(walk.model, cond, body, in_values) if cond is not None else None
        if trips is None:
            trips = walk.while_trips
            entry.note = _join(entry.note, f"trip count unknown: body counted {trips}× (--while-trips); "
                                           "costs are per iteration")
            walk.warnings.append(f"WHILE op {sg.index}:{op.index}: loop trip count could not be inferred; "
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
    if kind == "IF":
        branches = [refs[k] for k in ("then_subgraph_index", "else_subgraph_index") if k in refs]
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
    if kind == "CALL_ONCE" and "init_subgraph_index" in refs:
        c_inf, c_init = call(refs["init_subgraph_index"])
        entry.note = _join(entry.note, "its subgraph runs once, at init")
        return [], c_inf + c_init
    if kind in ("CALL", "STABLEHLO_COMPOSITE"):
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
        if op.op_type not in ("LESS", "GREATER") or len(op.inputs) != 2:
            continue
        a, b = op.inputs if op.op_type == "LESS" else op.inputs[::-1]
        if a not in cond_pos or cstate.values[b] is None:
            continue
        pos = cond_pos[a]
        start, bound = values.get(pos), cstate.values[b]
        step = _body_step(model, bsg, body_pos, pos)
        if start is None or step is None or start.size != 1 or bound.size != 1 or step <= 0:
            continue
        trips.append(max(0, math.ceil((int(bound.reshape(-1)[0]) - int(start.reshape(-1)[0])) / step)))
    return min(trips) if trips else None


def _body_step(model: Model, bsg: Subgraph, body_pos: Mapping[int, int], pos: int) -> int | None:
    if pos >= len(bsg.outputs):
        return None
    target = bsg.outputs[pos]
    for op in bsg.operators:
        if op.op_type == "ADD" and target in op.outputs and len(op.inputs) == 2:
            x, c = op.inputs
            if body_pos.get(c) == pos:
                x, c = c, x
            if body_pos.get(x) != pos:
                return None
            const = model.constant(bsg.tensors[c]) if c >= 0 else None
            return int(const.reshape(-1)[0]) if const is not None and const.size == 1 else None
    return None


def _precision(op_type: str, dtype: str | None, weight_dtype: str | None) -> str:
    """An op's precision from the dtype of its activation (``None``: the op has no tensors) and of
    its weight (the first constant operand after the activation of a contraction or custom op)."""
    if dtype is None:
        return "none"
    if weight_dtype is not None:
        if op_type == "EMBEDDING_LOOKUP":
            return _PRECISION.get(weight_dtype, weight_dtype.lower())  # the table, not the int32 ids
        if dtype in FLOAT_DTYPES and weight_dtype in _INT_WEIGHTS:
            return "hybrid"
        if dtype == "INT8" and weight_dtype in _PACKED:
            return "int4"
        if dtype == "INT16" and weight_dtype == "INT8":
            return "int16"
    return _PRECISION.get(dtype, dtype.lower())


_NO_COST = Cost()  # immutable: one shared instance for ops without a cost


def _formula_cost(spec: OpSpec | None, override: CostOverride | None, ctx: OpContext,
                  note: str) -> tuple[Cost, str, str, str]:
    """(cost, status, formula, note) of one op: the user override, else the registry entry."""
    try:
        if override is not None:
            return _as_cost(override(ctx)), "ok", "user override", note
        if spec is None:
            return _NO_COST, "unsupported", "no formula", _join(note, f"no cost formula for {ctx.op_type}: not counted")
        if spec.status == "not_costed":
            return _NO_COST, "unsupported", "not costed", _join(note, spec.note)
        if spec.status == "zero":
            return _NO_COST, "zero", "0", _join(note, spec.note)
        if spec.status == "opaque":  # the note is completed with what the file tells (_opaque_note)
            return _NO_COST, "opaque", "opaque: compiled for an accelerator", note
        cost = spec.cost(ctx) if spec.cost is not None else _NO_COST
        return cost, "ok", spec.formula, _join(note, cost.note)
    except ShapeError as exc:
        return _NO_COST, "unsupported", "no formula", _join(note, f"cost unknown: {exc}")
    except Exception as exc:  # a bug in the formula, not an unsupported op
        kind = "cost override" if override is not None else "cost formula"
        _log.debug("%s of %s raised", kind, ctx.op_type, exc_info=exc)
        return _NO_COST, "error", "formula error", _join(note, f"{kind} of {ctx.op_type} raised "
                                                              f"{type(exc).__name__}: {exc}")


def _formula_key(spec: OpSpec, ctx: OpContext) -> tuple[Any, ...] | None:
    """What a built-in formula's result depends on: the op's options and its tensors' dtype, shape,
    constness and quantization, but not their indices or names; None when a tensor has values.

    Real models repeat layers: ops with equal keys share one evaluation of the formula, which must
    be a pure function of these (docs/contributing.md). User formulas (``register_cost``,
    overrides) are always called.
    """
    key = [spec, id(ctx.options)]  # the options mapping lives as long as the model; equal options share one
    for tensors in (ctx.inputs, ctx.outputs):
        for t in tensors:
            if t is None:
                key.append(None)
            elif t.value is not None:
                return None  # values are arrays: such ops are not shared
            else:
                key.append(t[2:6])  # (dtype, shape, is_constant, quantized)
        key.append(len(tensors))
    return tuple(key)


def _cost_entry(walk: _Walk, sg: Subgraph, tensors: SubgraphTensors, state: SubgraphShapes, ctx: OpContext,
                shape_note: str) -> tuple[_Entry, list[int]]:
    """The op's cost, then its bytes, params, precision, shapes and resolution in one pass over its tensors,
    and the positions of the inputs it counted as stored params (:func:`_count_param_tensors`).

    Default bytes: every input read (sparse or packed constants as stored), every output written;
    ``bytes_model`` "alias" writes nothing, "metadata" reads nothing. Params: the float or
    quantized constant inputs of ops that compute (see :func:`_count_param_tensors`).
    """
    op_type = ctx.op_type
    spec: OpSpec | None = lookup(op_type)
    override = walk.overrides.get(op_type) if walk.overrides else None
    memo_key = known = None
    if override is None and spec is not None and spec.cost is not None and spec.reference != "user" and not shape_note:
        memo_key = _formula_key(spec, ctx)
        try:
            known = walk.formula_memo.get(memo_key)
        except TypeError:  # a shape given as something unhashable: evaluated, not shared
            memo_key = None
    if known is not None:
        cost, status, formula, note = known
    else:
        cost, status, formula, note = _formula_cost(spec, override, ctx, shape_note)
        if memo_key is not None and status == "ok":
            walk.formula_memo[memo_key] = (cost, status, formula, note)
    if state.formula_errors and ctx.index in state.formula_errors and status != "error":
        status, formula = "error", "formula error"  # the note already says which function raised
        if shape_note != state.formula_errors[ctx.index]:
            note = _join(note, state.formula_errors[ctx.index])
    bytes_model = spec.bytes_model if spec is not None else "io"
    count_params = status != "zero"
    want_weight = op_type in CONTRACTION_OPS or op_type.startswith("CUSTOM:")
    resolved, derived, constant, stored_tensors = state.resolved, state.derived_constant, tensors.constant, sg.tensors
    read = written = params = 0
    counted: list[int] = []
    all_resolved = True
    act = first = weight = None  # precision: the first non-constant input, else the first input, else output 0
    in_shapes = []
    for pos, t in enumerate(ctx.inputs):
        if t is None:
            continue
        i = t.index
        in_shapes.append(t.shape)
        if not resolved[i]:
            all_resolved = False
        if not t.is_constant:
            read += t.nbytes
            if act is None:
                act = t
            continue
        if first is None:
            first = t
        if pos and weight is None and want_weight:
            # the first constant operand after the activation: conv/FC weights, an LSTM's first present
            # gate weights (CIFG models omit input 1), a GRU's gate weights
            weight = t
        stored = stored_tensors[i]
        if constant[i] and (stored.sparsity is not None or stored.dtype in _PACKED):
            read += stored.data_size  # sparse or packed (int4) weights are read as stored
        else:
            read += t.nbytes
        if not count_params:
            continue
        if derived[i]:  # made from a constant at init: its stored source is the tensor counted in the totals
            params += t.n
        elif stored.dtype in FLOAT_DTYPES or stored.quantization is not None:
            params += t.n
            counted.append(pos)
            _count_param_tensors(walk, sg, tensors, (i,))
    out_shapes = []
    for t in ctx.outputs:
        if t is not None:
            out_shapes.append(t.shape)
            written += t.nbytes
            if not resolved[t.index]:
                all_resolved = False
    if cost.bytes_read is not None:
        read = cost.bytes_read
    elif bytes_model != "io":
        read = 0
    if cost.bytes_written is not None:
        written = cost.bytes_written
    elif bytes_model == "alias":
        written = 0
    if op_type in INIT_ON_CONSTANT_OPS and _constant_input0(ctx):
        _count_param_tensors(walk, sg, tensors, (ctx.inputs[0].index,))
    if not all_resolved:
        note = _join(note, "placeholder shapes (dynamic dims unresolved)")
    out0 = ctx.outputs[0] if ctx.outputs else None
    if act is None:
        act = first or out0
    precision = _precision(op_type, act.dtype if act is not None else None, weight.dtype if weight is not None else None)
    return _Entry(sg.index, ctx.index, op_type, out0.name if out0 is not None else "", tuple(in_shapes),
                  tuple(out_shapes), cost, read, written, params, status, formula, note, precision,
                  all_resolved), counted


def _opaque_note(model: Model, sg: Subgraph, op: Any) -> str:
    """What the file tells about an accelerator-compiled op (see :mod:`tflite_flops.ops.accelerator`)."""
    from .ops.accelerator import opaque_note

    spec = lookup(op.op_type)
    consts = [sg.tensors[i].data_size for i in op.inputs if i >= 0 and sg.tensors[i].data_size]
    return opaque_note(spec.note if spec is not None else op.op_type, op.custom_options[1], op.options,
                       (len(consts), sum(consts)))


def _constant_input0(ctx: OpContext) -> bool:
    """True when input 0 is present and constant (DEQUANTIZE / DENSIFY of a weight: init-time work)."""
    return bool(ctx.inputs) and ctx.inputs[0] is not None and ctx.inputs[0].is_constant


def _count_param_tensors(walk: _Walk, sg: Subgraph, tensors: SubgraphTensors, indices: Iterable[int]) -> None:
    """Record stored weight tensors (elements and bytes as stored), each once however many ops read it.

    A buffer that tensors of several subgraphs point at (the weights that the signatures of a
    generative model share) is counted for the first subgraph that reads it only.
    """
    stored, numel, subgraph = sg.tensors, tensors.numel, sg.index
    buffers, counted = walk.param_buffers, walk.param_tensors
    for index in indices:
        t = stored[index]
        if not t.data_size or buffers.setdefault(t.data_offset, subgraph) == subgraph:
            counted[(subgraph, index)] = (numel[index], t.data_size)


def _as_cost(value: Any) -> Cost:
    if isinstance(value, Cost):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return Cost(int(value[0]), int(value[1]))
    return Cost(0, int(value))


def _memory(walk: _Walk, entry: int) -> tuple[MemorySummary, dict[int, tuple[int, ...]]]:
    """The memory pass over the walk's resolved shapes: the subgraphs the runtime runs and their calls."""
    model = walk.model
    calls: dict[tuple[int, int], tuple[int, ...]] = {}
    reached = [entry]
    for index in reached:  # grows while it is read: breadth-first over the control-flow calls
        for op in model.subgraphs[index].operators:
            if op.subgraph_refs and op.op_type in CALLER_OPS:
                children = tuple(dict.fromkeys(op.subgraph_refs.values()))
                calls[(index, op.index)] = children
                reached.extend(c for c in children if c not in reached)
    return analyze_memory(model, entry, walk.states, reached, calls)


def _records(walk: _Walk, live: Mapping[int, Sequence[int]]) -> tuple[list[OpRecord], list[int]]:
    """One record per walked op, in (subgraph, index) order, and how many records each stands for in sums;
    ``live``: the memory pass's live bytes by subgraph.

    The record of an op that repeats another's figures (``_Entry.like``) copies the values of the
    first record made for that kind, when phase, executions and note match and no weight density
    was measured: only its subgraph, index, name and live bytes are its own. Such a copy stands
    for 0 records in sums and the record it copies for one more: every field a sum reads is equal.
    """
    out = []
    weights: list[int] = []
    bases: dict[int, tuple[dict[str, Any], str, int, str, int]] = {}  # id(like) -> (values, phase, executions,
    # note, position of the record copied)
    for key in sorted(walk.entries):
        e = walk.entries[key]
        subgraph_live = live.get(e.subgraph)
        if e.inference:
            phase, mult = "inference", e.inference
        elif e.init:
            phase, mult = "init", e.init
        else:
            phase, mult = "not_executed", 1
        like = e.like if not e.weight_numel else None
        if like is not None:
            base = bases.get(id(like))
            if base is not None and base[1] == phase and base[2] == mult and base[3] is e.note:
                values = base[0].copy()
                values["subgraph"], values["index"], values["name"] = e.subgraph, e.index, e.name
                values["live_bytes"] = subgraph_live[e.index] if subgraph_live is not None else None
                out.append(new_record(values))
                weights.append(0)
                weights[base[4]] += 1
                continue
        macs = e.cost.macs * mult
        values = {
            "subgraph": e.subgraph, "index": e.index, "op_type": e.op_type, "name": e.name, "inputs": e.inputs,
            "outputs": e.outputs, "macs": macs, "flops": e.cost.flops * mult, "bytes_read": e.bytes_read * mult,
            "bytes_written": e.bytes_written * mult, "params": e.params, "status": e.status, "formula": e.formula,
            "note": e.note, "precision": e.precision, "phase": phase,
            "executions": 0 if phase == "not_executed" else mult, "shapes_resolved": e.resolved,
            "effective_macs": macs * e.weight_nnz // e.weight_numel if e.weight_numel else None,
            "weight_density": round(e.weight_nnz / e.weight_numel, 6) if e.weight_numel else None,
            "latency_ms": None, "live_bytes": subgraph_live[e.index] if subgraph_live is not None else None}
        if like is not None:
            bases[id(like)] = (values, phase, mult, e.note, len(out))
        out.append(new_record(values))
        weights.append(1)
    return out, weights


_Weighted = list[tuple[OpRecord, int]]  # records and how many records each stands for (see _records)


def _precision_split(ops: _Weighted) -> dict[str, dict[str, int]]:
    """{precision: {"macs", "flops", "ops"}} over the ops that do arithmetic."""
    split: dict[str, dict[str, int]] = {}
    for o, n in ops:
        if o.macs or o.flops:
            slot = split.get(o.precision)
            if slot is None:
                slot = split[o.precision] = {"macs": 0, "flops": 0, "ops": 0}
            slot["macs"] += o.macs * n
            slot["flops"] += o.flops * n
            slot["ops"] += n
    return split


def _sums(ops: _Weighted) -> tuple[int, int, int, int, int, int]:
    """(macs, flops, bytes_read, bytes_written, params, effective_macs) summed over ``ops``, in one pass."""
    macs = flops = read = written = params = effective = 0
    for o, n in ops:
        macs += o.macs * n
        flops += o.flops * n
        read += o.bytes_read * n
        written += o.bytes_written * n
        params += o.params * n
        effective += (o.macs if o.effective_macs is None else o.effective_macs) * n
    return macs, flops, read, written, params, effective


def _totals(ops: _Weighted, params: int = 0, param_bytes: int = 0, complete: bool = True,
            unresolved_ops: int = 0) -> Totals:
    macs, flops, read, written, _, effective = _sums(ops)
    return Totals(macs=macs, flops=flops, params=params, param_bytes=param_bytes, bytes_read=read,
                  bytes_written=written, by_precision=_precision_split(ops), effective_macs=effective,
                  opaque_ops=sum(n for o, n in ops if o.status == "opaque"), complete=complete,
                  unresolved_ops=unresolved_ops)


def _type_summary(ops: _Weighted) -> OpTypeSummary:
    macs, flops, read, written, params, _ = _sums(ops)
    return OpTypeSummary(count=sum(n for _, n in ops), macs=macs, flops=flops, bytes_read=read,
                         bytes_written=written, params=params, by_precision=_precision_split(ops))


class _Sha256:
    """The model's SHA-256 computed at the first read of ``ModelInfo.sha256`` (a renderer, to_dict),
    not during the analysis: a 4 GB file takes seconds to hash. Pickling (batch workers) computes it.
    Holds the model's :meth:`~tflite_flops.model.Model.hasher`, not the model: a report does not
    keep the parsed tensors and ops alive."""

    __slots__ = ("hasher",)

    def __init__(self, model: Model) -> None:
        self.hasher = model.hasher()

    def __call__(self) -> str:
        return self.hasher()

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return str, (self(),)


def _build_report(walk: _Walk, model: Model, sg: Subgraph, entry: int, spec: Mapping, batch: int | None) -> Report:
    memory, live = _memory(walk, entry)
    records, weights = _records(walk, live)
    inference: _Weighted = []
    init: _Weighted = []
    groups: dict[str, _Weighted] = {}  # the inference ops by type
    unsupported: dict[str, int] = {}
    opaque: list[OpRecord] = []
    errors: list[OpRecord] = []
    for o, n in zip(records, weights):  # one pass: phases, groups and unsupported types
        if not n:
            continue  # a copy: counted by the record it copies
        if o.phase == "inference":
            inference.append((o, n))
            group = groups.get(o.op_type)
            if group is None:
                group = groups[o.op_type] = []
            group.append((o, n))
        elif o.phase == "init":
            init.append((o, n))
        else:
            continue
        if o.status == "unsupported":
            unsupported[o.op_type] = unsupported.get(o.op_type, 0) + n
        elif o.status == "opaque" and o.phase == "inference":
            opaque.append(o)  # (never copied: one warning per op)
        elif o.status == "error":
            errors.append(o)
    params = param_bytes = 0
    for n, size in walk.param_tensors.values():
        params += n
        param_bytes += size
    by_type = {k: _type_summary(g) for k, g in groups.items()}
    by_type = dict(sorted(by_type.items(), key=lambda kv: (-kv[1].flops, kv[0])))
    warnings = list(dict.fromkeys(walk.warnings))
    if unsupported:
        n_ops = sum(unsupported.values())
        listing = ", ".join(f"{k} ×{v}" for k, v in sorted(unsupported.items()))
        warnings.append(f"{n_ops} op(s) of {len(unsupported)} type(s) not counted: {listing}")
    for o in errors:  # a formula that raised: one line each (the traceback under --debug)
        warnings.append(f"op {o.subgraph}:{o.index} {o.op_type}: not counted: {o.note}")
    for o in opaque:  # accelerator-compiled ops: one line each, never a silent 0
        warnings.append(f"op {o.subgraph}:{o.index} {o.op_type}: {o.note}")
    unresolved = sum(n for o, n in inference if not o.shapes_resolved)
    failed = any(o.phase == "inference" for o in errors)
    state = walk.states[entry]

    def summary(tidx: int) -> TensorSummary:
        t = sg.tensors[tidx]
        return TensorSummary(input_display_name(model, sg, tidx), t.dtype, state.shapes[tidx], t.shape_signature,
                             tidx)

    info = ModelInfo(path=model.path, size_bytes=model.size_bytes, sha256=_Sha256(model),
                     subgraphs=len(model.subgraphs), operators=sum(len(s.operators) for s in model.subgraphs),
                     description=model.description, signatures=tuple(s.key for s in model.signatures),
                     subgraph_names=tuple(s.name or next((g.key for g in model.signatures if g.subgraph_index == s.index),
                                                         f"subgraph_{s.index}") for s in model.subgraphs))
    settings = {"input_shapes": {("" if k is None else str(k)): list(v) for k, v in spec.items()},
                "batch": batch, "while_trips": walk.while_trips, "entry_subgraph": entry,
                "count_zeros": walk.count_zeros, **walk.assumed.settings}
    return Report(
        tool={"name": "tflite_flops", "version": __version__}, model=info,
        inputs=tuple(summary(t) for t in sg.inputs), outputs=tuple(summary(t) for t in sg.outputs),
        totals=_totals(inference, params, param_bytes, not (unresolved or unsupported or opaque or failed), unresolved),
        init_totals=_totals(init),
        by_op_type=by_type, ops=tuple(records), unsupported=unsupported, warnings=tuple(warnings),
        settings=settings, memory=memory, notes=walk.assumed.notes)
