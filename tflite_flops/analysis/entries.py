"""One op's figures from its resolved shapes: cost (the registry's formula), bytes, params and precision.

:func:`cost_entry` is called once per walked op with the op's :class:`~tflite_flops.ops.registry.OpContext`
(shapes already resolved by :func:`~tflite_flops.analysis.shapes.step`). It evaluates the user
override or the registered formula, then reads the op's tensors once for bytes, params and precision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from ..errors import ShapeError
from ..ops import lookup
from ..ops.facts import facts_of
from ..ops.registry import CONTRACTION_OPS, INIT_ON_CONSTANT_OPS, Cost, OpContext, OpSpec, join_notes as _join
from ..reader.model import Model, Subgraph
from ..units import FLOAT_DTYPES
from .shapes import SubgraphShapes, SubgraphTensors

_PRECISION = {"FLOAT32": "float32", "FLOAT16": "float16", "BFLOAT16": "bfloat16", "INT8": "int8",
              "UINT8": "uint8", "INT16": "int16", "INT32": "int32", "INT64": "int64", "BOOL": "bool",
              "FLOAT64": "float64"}
_INT_WEIGHTS = frozenset({"INT8", "UINT8", "INT4", "INT2", "UINT4"})
PACKED = frozenset({"INT4", "INT2", "UINT4"})  # stored packed: their bytes read are the stored bytes

CostOverride = Callable[[OpContext], Any]
_NO_COST = Cost()  # immutable: one shared instance for ops without a cost


@dataclass(slots=True)
class Entry:
    """One op's single-execution figures and how often it runs, accumulated over the walk."""

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


@dataclass
class ParamCount:
    """The stored weight tensors counted as params, each once however many ops (and subgraphs) read it."""

    tensors: dict[tuple[int, int], tuple[int, int]]  # (subgraph, tensor) -> (elements, stored bytes)
    buffers: dict[int, int]  # data offset -> the subgraph that counted it

    def add(self, sg: Subgraph, tensors: SubgraphTensors, indices: Iterable[int]) -> None:
        """Count stored tensors of ``sg``; a buffer that several subgraphs point at (the weights the
        signatures of a generative model share) counts for the first subgraph that reads it only."""
        stored, numel, subgraph = sg.tensors, tensors.numel, sg.index
        for index in indices:
            t = stored[index]
            if not t.data_size or self.buffers.setdefault(t.data_offset, subgraph) == subgraph:
                self.tensors[(subgraph, index)] = (numel[index], t.data_size)

    def totals(self) -> tuple[int, int]:
        """(elements, stored bytes) of every counted tensor."""
        return sum(n for n, _ in self.tensors.values()), sum(b for _, b in self.tensors.values())


def precision(op_type: str, dtype: str | None, weight_dtype: str | None) -> str:
    """An op's precision from the dtype of its activation (``None``: the op has no tensors) and of
    its weight (the first constant operand after the activation of a contraction or custom op)."""
    if dtype is None:
        return "none"
    if weight_dtype is not None:
        if facts_of(op_type).precision_from_weight:
            return _PRECISION.get(weight_dtype, weight_dtype.lower())  # the table, not the int32 ids
        if dtype in FLOAT_DTYPES and weight_dtype in _INT_WEIGHTS:
            return "hybrid"
        if dtype == "INT8" and weight_dtype in PACKED:
            return "int4"
        if dtype == "INT16" and weight_dtype == "INT8":
            return "int16"
    return _PRECISION.get(dtype, dtype.lower())


def formula_cost(spec: OpSpec | None, override: CostOverride | None, ctx: OpContext,
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
        if spec.status == "opaque":  # the note is completed with what the file tells (opaque_note)
            return _NO_COST, "opaque", "opaque: compiled for an accelerator", note
        cost = spec.cost(ctx) if spec.cost is not None else _NO_COST
        return cost, "ok", spec.formula, _join(note, cost.note)
    except ShapeError as exc:
        return _NO_COST, "unsupported", "no formula", _join(note, f"cost unknown: {exc}")
    except Exception as exc:  # a bug in the formula, not an unsupported op
        kind = "cost override" if override is not None else "cost formula"
        import logging  # only when a formula raised: not on every run

        logging.getLogger("tflite_flops").debug("%s of %s raised", kind, ctx.op_type, exc_info=exc)
        return _NO_COST, "error", "formula error", _join(note, f"{kind} of {ctx.op_type} raised "
                                                              f"{type(exc).__name__}: {exc}")


def cost_entry(sg: Subgraph, tensors: SubgraphTensors, state: SubgraphShapes, ctx: OpContext, shape_note: str,
               overrides: Mapping[str, CostOverride], params: ParamCount) -> Entry:
    """The op's cost, then its bytes, params and precision in one pass over its tensors.

    Default bytes: every input read (sparse or packed constants as stored), every output written;
    ``bytes_model`` "alias" writes nothing, "metadata" reads nothing. Params: the float or
    quantized constant inputs of ops that compute, recorded in ``params`` as stored tensors.
    """
    op_type = ctx.op_type
    spec: OpSpec | None = lookup(op_type)
    cost, status, formula, note = formula_cost(spec, overrides.get(op_type), ctx, shape_note)
    if state.formula_errors and ctx.index in state.formula_errors and status != "error":
        status, formula = "error", "formula error"  # the note already says which function raised
        if shape_note != state.formula_errors[ctx.index]:
            note = _join(note, state.formula_errors[ctx.index])
    bytes_model = spec.bytes_model if spec is not None else "io"
    count_params = status != "zero"
    # A row lookup (GATHER, EMBEDDING_LOOKUP) reads the table's rows that its ids name, one table element per
    # output element, and a stored table is the model's weights (an embedding), whatever the op costs.
    lookup_rows = facts_of(op_type).row_lookup
    table_pos = lookup_rows[0] if lookup_rows is not None else -1
    out_n = ctx.outputs[0].n if ctx.outputs and ctx.outputs[0] is not None else 0
    want_weight = op_type in CONTRACTION_OPS or op_type.startswith("CUSTOM:")
    resolved, derived, constant, stored_tensors = state.resolved, state.derived_constant, tensors.constant, sg.tensors
    read = written = n_params = 0
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
        if pos == table_pos:
            read += t.nbytes * min(out_n, t.n) // t.n if t.n else 0  # at most the whole table
        if not t.is_constant:
            if pos != table_pos:
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
        if pos == table_pos:
            pass  # its rows, above
        elif constant[i] and (stored.sparsity is not None or stored.dtype in PACKED):
            read += stored.data_size  # sparse or packed (int4) weights are read as stored
        else:
            read += t.nbytes
        if not count_params and pos != table_pos:
            continue
        if derived[i]:  # made from a constant at init: its stored source is the tensor counted in the totals
            n_params += t.n
        elif stored.dtype in FLOAT_DTYPES or stored.quantization is not None:
            n_params += t.n
            params.add(sg, tensors, (i,))
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
    if op_type in INIT_ON_CONSTANT_OPS and constant_input0(ctx):
        params.add(sg, tensors, (ctx.inputs[0].index,))
    if not all_resolved:
        note = _join(note, "placeholder shapes (dynamic dims unresolved)")
    out0 = ctx.outputs[0] if ctx.outputs else None
    if act is None:
        act = first or out0
    kind = precision(op_type, act.dtype if act is not None else None, weight.dtype if weight is not None else None)
    return Entry(sg.index, ctx.index, op_type, out0.name if out0 is not None else "", tuple(in_shapes),
                 tuple(out_shapes), cost, read, written, n_params, status, formula, note, kind, all_resolved)


def opaque_note(model: Model, sg: Subgraph, op: Any) -> str:
    """What the file tells about an accelerator-compiled op (see :mod:`tflite_flops.ops.accelerator`)."""
    from ..ops.accelerator import opaque_note as describe

    spec = lookup(op.op_type)
    consts = [sg.tensors[i].data_size for i in op.inputs if i >= 0 and sg.tensors[i].data_size]
    return describe(spec.note if spec is not None else op.op_type, op.custom_options[1], op.options,
                    (len(consts), sum(consts)))


def constant_input0(ctx: OpContext) -> bool:
    """True when input 0 is present and constant (DEQUANTIZE / DENSIFY of a weight: init-time work)."""
    return bool(ctx.inputs) and ctx.inputs[0] is not None and ctx.inputs[0].is_constant


def _as_cost(value: Any) -> Cost:
    if isinstance(value, Cost):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return Cost(int(value[0]), int(value[1]))
    return Cost(0, int(value))
