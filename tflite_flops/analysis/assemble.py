"""The walk's entries -> records, totals and the :class:`~tflite_flops.report.Report`.

A per-op figure computed by a pass over the resolved ops (the memory pass's live bytes today)
reaches the records here, as one field each: :func:`records` takes ``{field: {op key: value}}``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from .._version import __version__
from ..ops.registry import CALLER_OPS
from ..reader.model import Model, Subgraph
from ..report import MemorySummary, ModelInfo, OpRecord, OpTypeSummary, Report, TensorSummary, Totals
from ..ops.placement import DELEGATES, XNNPACK
from .memory import analyze_memory
from .temporaries import kernel_temporaries
from .placement import SubgraphPlacement, delegate_shapes, place_model, placement_figures
from .shapes import input_display_name
from .walk import Walk
from .xnnpack_memory import xnnpack_memory

OpKey = tuple[int, int]  # (subgraph, op index)


def records(walk: Walk, figures: Mapping[str, Mapping[OpKey, Any]]) -> list[OpRecord]:
    """One record per walked op, in (subgraph, index) order.

    Counts are per inference: an entry's single-execution cost times its executions. ``figures``
    gives the fields that passes over the resolved ops computed (``{"live_bytes": {key: bytes}}``);
    an op a pass did not reach gets None.
    """
    out = []
    make = _record_maker(OpRecord)
    for key in sorted(walk.entries):
        e = walk.entries[key]
        if e.inference:
            phase, mult = "inference", e.inference
        elif e.init:
            phase, mult = "init", e.init
        else:
            phase, mult = "not_executed", 1
        macs = e.cost.macs * mult
        values = {
            "subgraph": e.subgraph, "index": e.index, "op_type": e.op_type, "name": e.name, "inputs": e.inputs,
            "outputs": e.outputs, "macs": macs, "flops": e.cost.flops * mult, "bytes_read": e.bytes_read * mult,
            "bytes_written": e.bytes_written * mult, "params": e.params, "status": e.status, "formula": e.formula,
            "note": e.note, "precision": e.precision, "phase": phase,
            "executions": 0 if phase == "not_executed" else mult, "shapes_resolved": e.resolved,
            "effective_macs": macs * e.weight_nnz // e.weight_numel if e.weight_numel else None,
            "weight_density": round(e.weight_nnz / e.weight_numel, 6) if e.weight_numel else None,
            "latency_ms": None}
        for name, by_op in figures.items():
            values[name] = by_op.get(key)
        out.append(make(values))
    return out


def _record_maker(cls: type) -> Any:
    """``values -> cls(**values)`` for a frozen dataclass: the same object, made without its ``__init__``
    (one ``object.__setattr__`` per field: 80% of making an OpRecord, ~7 µs an op on real models),
    the fields ``values`` lacks at their defaults; ``cls(**values)`` itself for a class with a
    ``__post_init__``, slots, default factories or descriptor fields, or when ``values`` names
    something else."""
    fields = dataclasses.fields(cls)
    names = {f.name for f in fields}
    if (hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__
            or any(f.default_factory is not dataclasses.MISSING or not f.init
                   or hasattr(type(cls.__dict__.get(f.name)), "__set__") for f in fields)):
        return lambda values: cls(**values)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    required = names - defaults.keys()
    new = object.__new__

    def make(values: dict[str, Any]) -> Any:
        keys = values.keys()
        if not (keys == names or required <= keys <= names):
            return cls(**values)  # a missing or unknown field: the constructor says which
        obj = new(cls)
        obj.__dict__.update(defaults)
        obj.__dict__.update(values)
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
    temporaries = kernel_temporaries(model, walk.states, reached, walk.threads)
    if xnnpack is None or not set(reached) <= set(xnnpack):
        xnnpack = place_model(model, delegate_shapes(XNNPACK, model, walk.states, reached, entry), XNNPACK)
    views, delegate_bytes = xnnpack_memory(model, walk.states, xnnpack, reached, walk.threads)
    summary, live = analyze_memory(model, entry, walk.states, reached, calls, temporaries, walk.threads, views,
                                   delegate_bytes)
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


def build_report(walk: Walk, sg: Subgraph, entry: int, spec: Mapping, batch: int | None) -> Report:
    """The Report of one walked entry subgraph: records, totals, per-type summaries, memory, warnings."""
    model = walk.model
    delegation = {}
    keys = sorted(walk.entries)
    subgraphs = sorted({sg_index for sg_index, _ in keys})
    placements = {delegate: place_model(model, delegate_shapes(delegate, model, walk.states, subgraphs, entry), delegate)
                  for delegate in DELEGATES}
    summary, figures = memory(walk, entry, placements.get(XNNPACK))
    for delegate, placed in placements.items():
        per_op, delegation[delegate] = placement_figures(placed, keys, delegate)
        figures.update(per_op)
    ops = records(walk, figures)
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
    complete = not (unresolved or unsupported or opaque or failed)
    return Report(
        tool={"name": "tflite_flops", "version": __version__}, model=info,
        inputs=tuple(tensor(t) for t in sg.inputs), outputs=tuple(tensor(t) for t in sg.outputs),
        totals=Totals.of(inference, params=params, param_bytes=param_bytes, complete=complete,
                         unresolved_ops=unresolved),
        init_totals=Totals.of(init), by_op_type=by_type, ops=tuple(ops), unsupported=unsupported,
        warnings=tuple(_warnings(walk, ops, unsupported)), settings=settings, memory=summary,
        notes=walk.assumed.notes, delegation=delegation)
