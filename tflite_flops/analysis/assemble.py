"""The walk's entries -> records, totals and the :class:`~tflite_flops.report.Report`.

The passes over the resolved ops run here, as declared (:data:`PASSES`): each delegate's
placement, the memory plan, and every per-op pass of :mod:`tflite_flops.analysis.figures`.
Each gives per-op figures ``{column name: {op key: value}}`` that :func:`records` puts into the
records: a field of :class:`~tflite_flops.report.OpRecord` where it has one, else its
``figures`` mapping (a declared column, :mod:`tflite_flops.report.columns`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from .._version import __version__
from ..ops.registry import CALLER_OPS
from ..reader.model import Model, Subgraph
from ..targets import HOST
from ..report import lazy
from ..report import (DelegatePlacement, MemorySummary, ModelInfo, OpRecord, OpTypeSummary, Report, TensorSummary,
                      Totals)
from ..ops.placement import DELEGATES, GPU, XNNPACK
from .figures import PASSES as OP_PASSES
from .memory import analyze_memory
from .temporaries import kernel_temporaries
from .placement import SubgraphPlacement, delegate_shapes, place_model, placement_figures
from ..report.columns import DELEGATE_FIELDS
from .shapes import input_display_name
from .walk import Walk
from .xnnpack_memory import xnnpack_memory

OpKey = tuple[int, int]  # (subgraph, op index)
_FIELDS = frozenset(f.name for f in fields(OpRecord)) - {"figures"}


def records(walk: Walk, figures: Mapping[str, Mapping[OpKey, Any]],
            notes: Mapping[OpKey, str] | None = None) -> list[OpRecord]:
    """One record per walked op, in (subgraph, index) order.

    Counts are per inference: an entry's single-execution cost times its executions. ``figures``
    gives the fields that passes over the resolved ops computed (``{"live_bytes": {key: bytes}}``);
    an op a pass did not reach gets None.
    """
    out = []
    make = _record_maker(OpRecord)
    notes = notes or {}
    # the figures of a record field, and the declared columns without one (the record's figures), in their order
    # (a column a pass computes at its first read, report.lazy: every record holds the same DeferredColumn)
    as_fields = [(name, (lambda _key, column=by_op: column) if type(by_op) is lazy.DeferredColumn else by_op.get)
                 for name, by_op in figures.items() if name in _FIELDS]
    as_figures = [(name, by_op.get) for name, by_op in figures.items() if name not in _FIELDS]
    tail = _shared_tail(figures)
    if tail is not None:  # every record field a pass gives is one column shared by all: each record's dict made at once
        as_fields = []
        new, set_attribute = object.__new__, object.__setattr__
    for key in sorted(walk.entries):
        e = walk.entries[key]
        if e.inference:
            phase, mult = "inference", e.inference
        elif e.init:
            phase, mult = "init", e.init
        else:
            phase, mult = "not_executed", 1
        macs = e.cost.macs * mult
        more = notes.get(key)
        values = {
            "subgraph": e.subgraph, "index": e.index, "op_type": e.op_type, "name": e.name, "inputs": e.inputs,
            "outputs": e.outputs, "macs": macs, "flops": e.cost.flops * mult, "bytes_read": e.bytes_read * mult,
            "bytes_written": e.bytes_written * mult, "params": e.params, "status": e.status, "formula": e.formula,
            "note": "; ".join(n for n in (e.note, more) if n) if more else e.note or "", "precision": e.precision,
            "phase": phase,
            "executions": 0 if phase == "not_executed" else mult, "shapes_resolved": e.resolved,
            "effective_macs": macs * e.weight_nnz // e.weight_numel if e.weight_numel else None,
            "weight_density": round(e.weight_nnz / e.weight_numel, 6) if e.weight_numel else None,
            "latency_ms": None}
        for name, get in as_fields:
            values[name] = get(key)
        values["figures"] = {name: get(key) for name, get in as_figures}  # a declared per-op column without a field
        if tail is None:
            out.append(make(values))
        else:
            values.update(tail)
            record = new(OpRecord)
            set_attribute(record, "__dict__", values)
            out.append(record)
    return out


_EXPLICIT = ("subgraph", "index", "op_type", "name", "inputs", "outputs", "macs", "flops", "bytes_read",
             "bytes_written", "params", "status", "formula", "note", "precision", "phase", "executions",
             "shapes_resolved", "effective_macs", "weight_density", "latency_ms", "figures")  # what records() sets


def _shared_tail(figures: Mapping[str, Any]) -> dict[str, Any] | None:
    """What :func:`records` adds to each record's dict after the fields it sets, when every record field of
    ``figures`` is a :class:`~tflite_flops.report.lazy.DeferredColumn` of a lazy field (the analysis' case): the
    other fields at their defaults, then each lazy field's slot with its column or default, in the order
    :func:`_record_maker`'s object gets them (the same dict). None otherwise, or when OpRecord is not made
    by its dict."""
    fields_ = dataclasses.fields(OpRecord)
    if not _by_dict(OpRecord) or not set(_EXPLICIT) <= {f.name for f in fields_}:
        return None
    slots = {f.name: holder.slot for f in fields_
             if type(holder := OpRecord.__dict__.get(f.name)) is lazy.LazyField}
    given = {name: by_op for name, by_op in figures.items() if name in _FIELDS}
    if any(name not in slots or type(by_op) is not lazy.DeferredColumn for name, by_op in given.items()):
        return None
    tail: dict[str, Any] = {}
    for f in fields_:  # the defaults of the fields not set, in field order
        if f.name not in _EXPLICIT and f.name not in slots:
            if f.default is dataclasses.MISSING:
                return None
            tail[f.name] = f.default
    for f in fields_:  # then every lazy field's slot, in field order
        if f.name in slots and f.name not in _EXPLICIT:
            if f.name in given:
                tail[slots[f.name]] = given[f.name]
            elif f.default is not dataclasses.MISSING:
                tail[slots[f.name]] = f.default
            else:
                return None
    return tail


def _by_dict(cls: type) -> bool:
    """Whether an object of the frozen dataclass ``cls`` may be made by handing it its attribute dict
    (:func:`_record_maker`): no ``__post_init__``, no slots, every field in ``__init__``, no descriptor field
    but :class:`~tflite_flops.report.lazy.LazyField`."""
    fields_ = dataclasses.fields(cls)
    return not (hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__
                or any(not f.init or (hasattr(type(cls.__dict__.get(f.name)), "__set__")
                                      and type(cls.__dict__.get(f.name)) is not lazy.LazyField) for f in fields_))


def _record_maker(cls: type) -> Any:
    """``values -> cls(**values)`` for a frozen dataclass: the same object, made without its ``__init__``
    (one ``object.__setattr__`` per field: 80% of making an OpRecord, ~7 µs an op on real models):
    ``values``, completed with the fields it lacks at their defaults (or their factories'), becomes the
    object's attribute dict (so the caller hands over a fresh dict it does not use again; copying ~40
    fields into another dict was most of what was left). ``cls(**values)`` itself for a class with a
    ``__post_init__``, slots or descriptor fields, or when ``values`` names something else."""
    fields = dataclasses.fields(cls)
    names = {f.name for f in fields}
    slots = [(f.name, holder.slot) for f in fields if type(holder := cls.__dict__.get(f.name)) is lazy.LazyField]
    if not _by_dict(cls):
        return lambda values: cls(**values)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not dataclasses.MISSING}
    required = names - defaults.keys() - factories.keys()
    new, set_attribute = object.__new__, object.__setattr__

    def make(values: dict[str, Any]) -> Any:
        keys = values.keys()
        if not (keys == names or required <= keys <= names):
            return cls(**values)  # a missing or unknown field: the constructor says which
        if len(values) < len(names):
            for name, value in defaults.items():
                if name not in values:
                    values[name] = value
            for name, factory in factories.items():  # a field made by a factory (OpRecord.figures), unless given
                if name not in values:
                    values[name] = factory()
        for name, slot in slots:  # a field that may be computed later (report.lazy) lives in its slot
            values[slot] = values.pop(name)
        obj = new(cls)
        set_attribute(obj, "__dict__", values)  # (a frozen dataclass refuses a plain assignment)
        return obj

    return make


def memory(walk: Walk, entry: int, xnnpack: Mapping[int, SubgraphPlacement] | None = None
           ) -> tuple[MemorySummary, dict[str, dict[OpKey, int]]]:
    """The memory pass over the walk's resolved shapes (the subgraphs the runtime runs and their calls),
    and its per-op figures for :func:`records`: the live bytes of every op of those subgraphs, and
    the arena temporaries of the ops whose kernels add some (at the walk's ``threads``).
    ``xnnpack``: XNNPACK's placement of those subgraphs, if the caller has it."""
    model = walk.model
    calls: dict[OpKey, tuple[int, ...]] = {}
    reached = [entry]
    for index in reached:  # grows while it is read: breadth-first over the control-flow calls
        for op in model.subgraphs[index].operators:
            if op.subgraph_refs and op.op_type in CALLER_OPS:
                children = tuple(dict.fromkeys(op.subgraph_refs.values()))
                calls[(index, op.index)] = children
                reached.extend(c for c in children if c not in reached)
    target = walk.settings.target
    # the builtin kernels' temporaries at the walk's threads, or at one where the target's builtin kernels are
    # single-threaded ones whatever the threads (Arm: ruy's CONV_2D)
    kernel_threads = walk.threads if target.cpu.builtin_threaded_kernels else 1
    temporaries = kernel_temporaries(model, walk.states, reached, kernel_threads, walk.warnings)

    def with_xnnpack() -> Any:  # XNNPACK's graph and own memory: when memory.runtime_xnnpack is first read
        placed = xnnpack
        if placed is None or not set(reached) <= set(placed):
            placed = place_model(model, delegate_shapes(XNNPACK, model, walk.states, reached, entry), XNNPACK,
                                 walk.settings.delegate)
        return xnnpack_memory(model, walk.states, placed, reached, walk.threads, target.cpu, walk.settings.delegate)

    summary, live = analyze_memory(model, entry, walk.states, reached, calls, temporaries, walk.threads, with_xnnpack,
                                   target.tflm, walk.warnings)
    summary = lazy.replace(summary, target=target.name)  # the CPU target its LiteRT and XNNPACK figures are for
    arena_temporaries = {key: sum(t.bytes for t in found if not t.persistent) for key, found in temporaries.items()}
    live_bytes = {(sg, i): n for sg, per_op in live.items() for i, n in enumerate(per_op)}
    return summary, {"live_bytes": live_bytes,
                     "temporaries_bytes": {key: arena_temporaries.get(key, 0) for key in live_bytes}}


class _Sha256:
    """The model's SHA-256 computed at the first read of ``ModelInfo.sha256`` (a renderer, to_dict),
    not during the analysis: a 4 GB file takes seconds to hash. Pickling (batch workers) computes it.
    Holds the model's :meth:`~tflite_flops.reader.model.Model.hasher`, not the model: a report does not
    keep the parsed tensors and ops alive."""

    __slots__ = ("hasher",)

    def __init__(self, model: Model) -> None:
        self.hasher = model.hasher()

    def __call__(self) -> str:
        return self.hasher()

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return str, (self(),)


def _warnings(walk: Walk, ops: list[OpRecord], unsupported: Mapping[str, int]) -> list[str]:
    """The walk's warnings, then one line for the uncounted op types, each formula that raised and each
    accelerator-compiled op (never a silent 0)."""
    warnings = list(dict.fromkeys(walk.warnings))
    if unsupported:
        listing = ", ".join(f"{k} ×{v}" for k, v in sorted(unsupported.items()))
        warnings.append(f"{sum(unsupported.values())} op(s) of {len(unsupported)} type(s) not counted: {listing}")
    for o in ops:
        if o.status == "error" and o.phase != "not_executed":  # the traceback under --debug
            warnings.append(f"op {o.subgraph}:{o.index} {o.op_type}: not counted: {o.note}")
    for o in ops:
        if o.status == "opaque" and o.phase == "inference":
            warnings.append(f"op {o.subgraph}:{o.index} {o.op_type}: {o.note}")
    return warnings


@dataclass
class PassInput:
    """What a pass reads: the walk, its entry subgraph, the walked ops' keys, and what earlier passes
    left for later ones (each delegate's placement)."""

    walk: Walk
    entry: int
    keys: list[OpKey]
    placements: dict[str, Mapping[int, SubgraphPlacement]] = field(default_factory=dict)


@dataclass(frozen=True)
class PassResult:
    """What a pass gives the report: per-op figures ``{column: {op key: value}}``, the memory summary,
    delegations, warnings, and lines for the ops' notes."""

    figures: Mapping[str, Mapping[OpKey, Any]] = field(default_factory=dict)
    memory: MemorySummary | None = None
    delegation: Mapping[str, DelegatePlacement] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    notes: Mapping[OpKey, str] = field(default_factory=dict)  # a line for an op's note (a figure not computed)
    # sections left for their first read (report.lazy) that add their lines to the walk's warnings when computed
    warned_later: tuple[lazy.Deferred, ...] = ()


def placement_pass(given: PassInput) -> PassResult:
    """Each delegate's placement of the walked ops: its per-op figures (taken, why kept, partition)
    and its :class:`~tflite_flops.report.DelegatePlacement`."""
    walk, subgraphs = given.walk, sorted({sg_index for sg_index, _ in given.keys})
    found: dict[str, Mapping[OpKey, Any]] = {}
    delegation = {}
    for delegate in DELEGATES:
        placed = place_model(walk.model, delegate_shapes(delegate, walk.model, walk.states, subgraphs, given.entry),
                             delegate, walk.settings.delegate)
        given.placements[delegate] = placed
        rules = walk.settings.delegate.gpu_delegate if delegate == GPU else None  # whose GPU rules
        per_op, delegation[delegate] = placement_figures(placed, given.keys, delegate, rules)
        found.update(per_op)
    return PassResult(figures=found, delegation=delegation)


def memory_pass(given: PassInput) -> PassResult:
    """The memory plan (:func:`memory`) with XNNPACK's placement from :func:`placement_pass`."""
    summary, found = memory(given.walk, given.entry, given.placements.get(XNNPACK))
    tflm = lazy.raw(summary, "tflm_arena_bytes")  # TFLite Micro's arena: its facts that raise add a warning
    return PassResult(figures=found, memory=summary, warned_later=(tflm,) if type(tflm) is lazy.Deferred else ())


def op_passes(given: PassInput) -> PassResult:
    """Every declared per-op pass of :mod:`tflite_flops.analysis.figures`, over every walked op.
    A pass that raises leaves the op's value None and says so in a warning and in the op's note."""
    found: dict[str, dict[OpKey, Any]] = {}
    warnings = []
    notes: dict[OpKey, str] = {}
    for declared in OP_PASSES:
        values = found.setdefault(declared.column, {})
        for key in given.keys:
            e = given.walk.entries[key]
            try:
                values[key] = declared.run(e, given.walk.model)
            except Exception as exc:  # a bug in one figure's pass: that figure of that op is unknown, not 0
                values[key] = None
                why = f"{declared.column} not computed: {type(exc).__name__}: {exc}"
                warnings.append(f"op {e.subgraph}:{e.index} {e.op_type}: {why}")
                notes[key] = "; ".join(n for n in (notes.get(key), why) if n)
    return PassResult(figures=found, warnings=tuple(warnings), notes=notes)


# The passes build_report runs, in order (a later pass may read what an earlier one left in PassInput).
PASSES: tuple[Callable[[PassInput], PassResult], ...] = (placement_pass, memory_pass, op_passes)
# The passes run at the first read of what they give (report.lazy: a per-op field of theirs on any op, the report's
# memory or delegation, its warnings), with the per-op record fields they fill; each runs after the deferred passes
# before it. Such a pass gives no notes (a record's note is made with the record).
DEFERRED: Mapping[Callable[[PassInput], PassResult], tuple[str, ...]] = {
    placement_pass: tuple(name for fields in map(DELEGATE_FIELDS.get, DELEGATES)
                          for name in (fields.taken, fields.reason, fields.partition)),
    memory_pass: ("live_bytes", "temporaries_bytes")}


def _after(earlier: tuple[lazy.Deferred, ...], run: Callable[[PassInput], PassResult], given: PassInput
           ) -> Callable[[], PassResult]:
    """``run(given)`` once the deferred passes ``earlier`` have run (what they leave in ``given``)."""
    def deferred() -> PassResult:
        for before in earlier:
            before.get()
        result = run(given)
        if result.notes:
            raise AssertionError(f"{run.__name__}: a deferred pass gives no notes")
        return result
    return deferred


def _column(result: lazy.Deferred, name: str) -> lazy.DeferredColumn:
    """The per-op figure ``name`` of a deferred pass' result."""
    return lazy.DeferredColumn(lazy.Deferred(lambda: result.get().figures.get(name, {})))


def build_report(walk: Walk, sg: Subgraph, entry: int, spec: Mapping, batch: int | None) -> Report:
    """The Report of one walked entry subgraph: records, totals, per-type summaries, memory, warnings."""
    model = walk.model
    given = PassInput(walk, entry, sorted(walk.entries))
    figures: dict[str, Any] = {}
    notes: dict[OpKey, str] = {}
    results: list[PassResult | lazy.Deferred] = []  # each pass' result in PASSES order, a deferred one's not yet run
    for run in PASSES:
        if run in DEFERRED:
            result: PassResult | lazy.Deferred = lazy.Deferred(_after(
                tuple(r for r in results if type(r) is lazy.Deferred), run, given))
            figures.update({name: _column(result, name) for name in DEFERRED[run]})
        else:
            result = run(given)
            figures.update(result.figures)
            for key, note in result.notes.items():
                notes[key] = "; ".join(n for n in (notes.get(key), note) if n)
        results.append(result)
    ops = records(walk, figures, notes)
    inference = [o for o in ops if o.phase == "inference"]
    init = [o for o in ops if o.phase == "init"]
    unsupported: dict[str, int] = {}
    for o in ops:
        if o.status == "unsupported" and o.phase != "not_executed":
            unsupported[o.op_type] = unsupported.get(o.op_type, 0) + 1
    groups: dict[str, list[OpRecord]] = {}
    for o in inference:
        groups.setdefault(o.op_type, []).append(o)
    by_type = {k: OpTypeSummary.of(g) for k, g in groups.items()}
    by_type = dict(sorted(by_type.items(), key=lambda kv: (-kv[1].flops, kv[0])))
    unresolved = sum(1 for o in inference if not o.shapes_resolved)
    failed = any(o.status == "error" for o in inference)
    opaque = any(o.status == "opaque" for o in inference)
    params, param_bytes = walk.params.totals()
    state = walk.states[entry]

    def tensor(tidx: int) -> TensorSummary:
        t = sg.tensors[tidx]
        return TensorSummary(input_display_name(model, sg, tidx), t.dtype, state.shapes[tidx], t.shape_signature,
                             tidx)

    names = tuple(s.name or next((g.key for g in model.signatures if g.subgraph_index == s.index),
                                 f"subgraph_{s.index}") for s in model.subgraphs)
    info = ModelInfo(path=model.path, size_bytes=model.size_bytes, sha256=_Sha256(model),
                     subgraphs=len(model.subgraphs), operators=sum(len(s.operators) for s in model.subgraphs),
                     description=model.description, signatures=tuple(s.key for s in model.signatures),
                     subgraph_names=names)
    settings = {"input_shapes": {("" if k is None else str(k)): list(v) for k, v in spec.items()},
                "batch": batch, "while_trips": walk.while_trips, "entry_subgraph": entry,
                "count_zeros": walk.count_zeros, **walk.assumed.settings}
    named = walk.settings.target.xnnpack
    if named not in (None, HOST):  # a CPU the user named (--target, or a device profile's): whose model it is
        settings["cpu_target"] = named
    complete = not (unresolved or unsupported or opaque or failed)

    def done() -> list[PassResult]:
        return [r.get() if type(r) is lazy.Deferred else r for r in results]

    def summary() -> MemorySummary | None:
        return next((r.memory for r in reversed(done()) if r.memory is not None), None)

    def delegation() -> dict[str, DelegatePlacement]:
        return {k: v for r in done() for k, v in r.delegation.items()}

    def warnings() -> tuple[str, ...]:  # the lines of the passes and sections not run yet join the walk's first
        for r in done():
            for section in r.warned_later:
                section.get()
        return tuple(_warnings(walk, ops, unsupported) + [w for r in done() for w in r.warnings])

    later = any(type(r) is lazy.Deferred or r.warned_later for r in results)
    return Report(
        tool={"name": "tflite_flops", "version": __version__}, model=info,
        inputs=tuple(tensor(t) for t in sg.inputs), outputs=tuple(tensor(t) for t in sg.outputs),
        totals=Totals.of(inference, params=params, param_bytes=param_bytes, complete=complete,
                         unresolved_ops=unresolved),
        init_totals=Totals.of(init), by_op_type=by_type, ops=tuple(ops), unsupported=unsupported,
        warnings=lazy.Deferred(warnings) if later else warnings(), settings=settings, memory=lazy.Deferred(summary),
        notes=walk.assumed.notes, delegation=lazy.Deferred(delegation))
