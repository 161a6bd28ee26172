"""Recurrent and embedding builtins: LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM,
RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN, SVDF, EMBEDDING_LOOKUP(_SPARSE).

Tensor layouts follow the TFLite kernels (``lstm.cc`` / ``lstm_shared.h``,
``bidirectional_sequence_lstm.cc``, ``basic_rnn.cc``, ``bidirectional_sequence_rnn.cc``,
``svdf.cc``, ``embedding_lookup.cc``, ``embedding_lookup_sparse.cc``).

The MACs of a recurrent cell are read off its weight tensors: each weight matrix ``W`` is
multiplied with one vector per step, i.e. ``n(W)`` MACs per step and batch row. The number of
(step, batch row) pairs is ``n(input) / n_input``, whatever the layout (time-major or not).
Optional inputs (CIFG, peephole, projection, layer norm, aux input) count only when present.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC
from .facts import register_facts
from .placement import (CATEGORY_DTYPE, CATEGORY_INPUTS, CATEGORY_OPTIONS, CATEGORY_QUANT, CATEGORY_SHAPE, GPU,
                        DelegateOp, gpu_drift_only, gpu_io, gpu_version, reason, register_placement)
from .registry import (FUSED_ACTIVATION_COST, TRANSCENDENTAL, Cost, KernelSetup, OpContext, Shape, Temporary,
                       TensorInfo, join_notes, register, register_temporaries, register_traits, shape_fn)

SIGMOID = TRANSCENDENTAL  # a gate's logistic, as LOGISTIC
LAYER_NORM_PER_ELEM = 7  # mean 1 (add) + variance 3 (sub, mul, add) + normalise 2 (sub, mul) + scale 1 (mul)


def _act_cost(ctx: OpContext, default: str = "TANH") -> tuple[int, str]:
    """Per-element cost of the op's activation (fused_activation_function) and its name."""
    act = str(ctx.opt("fused_activation_function", default) or "NONE")
    return FUSED_ACTIVATION_COST.get(act, 1), act


def _opt_input(ctx: OpContext, i: int) -> TensorInfo | None:
    return ctx.inputs[i] if ctx.has_input(i) else None


@dataclass(frozen=True)
class _LstmCell:
    """One direction of an LSTM, as the kernel sees it (indices of its tensors in the op's inputs)."""

    input_w: tuple[int, int, int, int]  # input_to_{input, forget, cell, output}
    recurrent_w: tuple[int, int, int, int]
    peephole: tuple[int, int, int]  # cell_to_{input, forget, output}
    projection: int
    projection_bias: int
    output_state: int
    cell_state: int
    layer_norm: tuple[int, int, int, int] = (-1, -1, -1, -1)
    aux_w: tuple[int, int, int, int] = (-1, -1, -1, -1)


# UNIDIRECTIONAL_SEQUENCE_LSTM / LSTM (full kernel): 24 inputs (lstm_shared.h).
_FULL = _LstmCell((1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11), 16, 17, 18, 19, (20, 21, 22, 23))
# BIDIRECTIONAL_SEQUENCE_LSTM: 48 inputs (bidirectional_sequence_lstm.cc).
_BI_FW = _LstmCell((1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11), 16, 17, 35, 36, aux_w=(40, 41, 42, 43))
_BI_BW = _LstmCell((18, 19, 20, 21), (22, 23, 24, 25), (26, 27, 28), 33, 34, 37, 38, aux_w=(44, 45, 46, 47))


def _present(ctx: OpContext, idx: tuple[int, ...]) -> list[TensorInfo]:
    return [t for t in (_opt_input(ctx, i) for i in idx if i >= 0) if t is not None]


# One LSTM direction over S = T·B (step, batch row) pairs, g gates (4, or 3 with CIFG = no
# input gate weights), n_c cells, n_o outputs (n_o = n_c without projection):
#   MACs  = S · [Σ n(input→gate W) + Σ n(recurrent W) + Σ n(aux W) + Σ n(peephole) + n(projection W)]
#         = S · [g·n_c·(n_in + n_o) + g·n_c·n_aux + p·n_c + n_o·n_c]
#   FLOPs = 2·MACs + S · [ g·n_c                 gate biases
#                        + (g−1)·64·n_c          sigmoid on the input/forget/output gates
#                        + 2·act·n_c             cell-gate activation and act(c) (act = 64 for TANH)
#                        + 3·n_c                 c = f⊙c + i⊙g
#                        + n_c                   h = o⊙act(c)
#                        + [CIFG] n_c            i = 1 − f
#                        + [layer norm] 7·g·n_c
#                        + [cell_clip] 2·n_c + [proj bias] n_o + [proj_clip] 2·n_o ]
def _lstm_direction(ctx: OpContext, cell: _LstmCell, n_rows: int, act: int) -> tuple[int, int, list[str]]:
    """(MACs, FLOPs, notes) of one LSTM direction over ``n_rows`` (step, batch row) pairs."""
    forget_w = ctx.input(cell.input_w[1])
    if forget_w.rank != 2:
        raise ShapeError(f"{ctx.op_type}: input_to_forget weights {forget_w.shape}, expected [n_cell, n_input]")
    n_cell = forget_w.shape[0]
    rec = ctx.input(cell.recurrent_w[1])
    if rec.rank != 2 and not (rec.rank == 1 and ctx.opt("diagonal_recurrent_tensors", False)):
        raise ShapeError(f"{ctx.op_type}: recurrent_to_forget weights {rec.shape}, expected [n_cell, n_output]")
    n_out = rec.shape[-1] if rec.rank == 2 else n_cell
    cifg = not ctx.has_input(cell.input_w[0])
    gates = 3 if cifg else 4
    weights = _present(ctx, cell.input_w) + _present(ctx, cell.recurrent_w) + _present(ctx, cell.aux_w)
    peep = _present(ctx, cell.peephole)
    proj = _opt_input(ctx, cell.projection)
    layer_norm = _present(ctx, cell.layer_norm)
    per_row = sum(t.n for t in weights) + sum(t.n for t in peep) + (proj.n if proj is not None else 0)
    if proj is not None and proj.shape and proj.shape[0] != n_out:
        raise ShapeError(f"{ctx.op_type}: projection weights {proj.shape} do not give n_output {n_out}")
    elem = (gates * n_cell + (gates - 1) * SIGMOID * n_cell + 2 * act * n_cell + 4 * n_cell
            + (n_cell if cifg else 0) + LAYER_NORM_PER_ELEM * n_cell * len(layer_norm))
    if float(ctx.opt("cell_clip", 0.0) or 0.0) > 0:
        elem += 2 * n_cell
    if proj is not None:
        elem += n_out if ctx.has_input(cell.projection_bias) else 0
        if float(ctx.opt("proj_clip", 0.0) or 0.0) > 0:
            elem += 2 * n_out
    macs = n_rows * per_row
    notes = [v for v, on in (("CIFG", cifg), (f"peephole ×{len(peep)}", peep), ("projection", proj is not None),
                             ("layer norm", layer_norm), ("aux input", _present(ctx, cell.aux_w))) if on]
    return macs, FLOPS_PER_MAC * macs + n_rows * elem, notes


def _rows(ctx: OpContext, input_index: int, n_input: int) -> int:
    x = ctx.input(input_index)
    if n_input <= 0 or x.n % n_input:
        raise ShapeError(f"{ctx.op_type}: input {x.shape} is not a multiple of n_input {n_input}")
    return x.n // n_input


def _out_bytes(ctx: OpContext) -> int:
    return sum(t.nbytes for t in ctx.outputs if t is not None)


def _state_bytes(ctx: OpContext, indices: tuple[int, ...]) -> int:
    return sum(t.nbytes for t in _present(ctx, indices))


def _lstm_basic(ctx: OpContext) -> Cost:
    """LSTM kernel_type BASIC: 5 inputs (input, prev_activation, weights [4·n, I+n], biases, prev_state)."""
    w = ctx.input(2)
    if w.rank != 2 or w.shape[0] % 4:
        raise ShapeError(f"LSTM (basic): weights {w.shape}, expected [4·n_cell, n_input + n_cell]")
    n_cell = w.shape[0] // 4
    rows = _rows(ctx, 0, w.shape[1] - n_cell)
    macs = rows * w.n
    # per row: 4·n bias + 3 sigmoids + 2 tanh + 3 (cell update) + 1 (h = o⊙tanh(c))
    elem = 4 * n_cell + 3 * SIGMOID * n_cell + 2 * TRANSCENDENTAL * n_cell + 4 * n_cell
    return Cost(macs, FLOPS_PER_MAC * macs + rows * elem, note="basic LSTM kernel")


register_traits(["LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM"], contraction=True)


@register(["LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM"],
          "MACs = T·B·Σn(W) (= T·B·g·Nc·(Ni+No) [+aux, peephole, projection]); "
          "FLOPs = 2·MACs + T·B·(gate biases, 64/sigmoid, 2·act, cell update, layer norm 7/elem)",
          reference="onnx-tool LSTM (GEMM term); kernel structure (lstm.cc)",
          note="MACs from the weight tensors present (CIFG, peephole, projection, layer norm); W adds the state")
def lstm(ctx: OpContext) -> Cost:
    """A (sequence) LSTM with optional CIFG, peephole, projection, layer norm."""
    if ctx.op_type == "LSTM" and str(ctx.opt("kernel_type", "FULL")) == "BASIC":
        return _lstm_basic(ctx)
    act, act_name = _act_cost(ctx)
    rows = _rows(ctx, 0, ctx.input(_FULL.input_w[1]).shape[-1])
    macs, flops, notes = _lstm_direction(ctx, _FULL, rows, act)
    return Cost(macs, flops, bytes_written=_out_bytes(ctx)
                + _state_bytes(ctx, (_FULL.output_state, _FULL.cell_state)),
                note=join_notes(*notes, f"act {act_name} {act}/elem", f"{rows} step·batch rows"))


@register("BIDIRECTIONAL_SEQUENCE_LSTM", "MACs = forward LSTM + backward LSTM (each T·B·Σn(W)); FLOPs likewise",
          reference="onnx-tool LSTM (GEMM term, ×2 directions); kernel structure",
          note="each direction as LSTM, with aux-input weights when present; W adds the states")
def bidirectional_lstm(ctx: OpContext) -> Cost:
    """Forward + backward LSTM over the same sequence."""
    act, act_name = _act_cost(ctx)
    rows = _rows(ctx, 0, ctx.input(_BI_FW.input_w[1]).shape[-1])
    fw_macs, fw_flops, fw_notes = _lstm_direction(ctx, _BI_FW, rows, act)
    bw_macs, bw_flops, bw_notes = _lstm_direction(ctx, _BI_BW, rows, act)
    state = _state_bytes(ctx, (35, 36, 37, 38))
    return Cost(fw_macs + bw_macs, fw_flops + bw_flops,
                bytes_written=_out_bytes(ctx) + state,
                note=join_notes("fw: " + ", ".join(fw_notes) if fw_notes else "",
                                "bw: " + ", ".join(bw_notes) if bw_notes else "", f"act {act_name} {act}/elem"))


def _lstm_output_shapes(ctx: OpContext, n_out_fw: int, n_out_bw: int | None) -> list[Shape]:
    x = ctx.input(0).shape
    if len(x) != 3:
        raise ShapeError(f"{ctx.op_type}: input {x}, expected rank 3")
    if n_out_bw is None:
        return [x[:2] + (n_out_fw,)]
    if ctx.opt("merge_outputs", False):
        return [x[:2] + (n_out_fw + n_out_bw,)]
    return [x[:2] + (n_out_fw,), x[:2] + (n_out_bw,)]


def _n_output(ctx: OpContext, cell: _LstmCell) -> int:
    proj = _opt_input(ctx, cell.projection)
    if proj is not None:
        return proj.shape[0]
    return ctx.input(cell.recurrent_w[1]).shape[-1]


@shape_fn("UNIDIRECTIONAL_SEQUENCE_LSTM")
def _ulstm_shape(ctx: OpContext) -> list[Shape]:
    return _lstm_output_shapes(ctx, _n_output(ctx, _FULL), None)


@shape_fn("BIDIRECTIONAL_SEQUENCE_LSTM")
def _bilstm_shape(ctx: OpContext) -> list[Shape]:
    shapes = _lstm_output_shapes(ctx, _n_output(ctx, _BI_FW), _n_output(ctx, _BI_BW))
    return shapes[:len(ctx.outputs)] if len(ctx.outputs) < len(shapes) else shapes


@shape_fn("LSTM")
def _lstm_shape(ctx: OpContext) -> list[Shape]:
    if str(ctx.opt("kernel_type", "FULL")) == "BASIC":
        raise ShapeError("LSTM (basic): output shapes are taken from the model")
    b = ctx.input(0).shape[0]
    return [(b, _n_output(ctx, _FULL))] + [t.shape if t is not None else () for t in ctx.outputs[1:]]


# ---------------------------------------------------------------------------------------------
# Basic RNN: h = act(W·x + R·h + b) (kernel_utils::RnnBatchStep).
# MACs = T·B · (n(W) + n(R)) [+ n(aux W)] = T·B·U·(I + U); FLOPs = 2·MACs + T·B·U·(1 bias + act).


def _rnn_direction(ctx: OpContext, w: int, r: int, bias: int, aux_w: int, rows: int, act: int) -> tuple[int, int]:
    weights, rec = ctx.input(w), ctx.input(r)
    if weights.rank != 2 or rec.rank != 2:
        raise ShapeError(f"{ctx.op_type}: weights {weights.shape} / recurrent {rec.shape}, expected rank 2")
    units = weights.shape[0]
    aux = _opt_input(ctx, aux_w) if aux_w >= 0 else None
    macs = rows * (weights.n + rec.n + (aux.n if aux is not None else 0))
    bias_flops = units if ctx.has_input(bias) else 0
    return macs, FLOPS_PER_MAC * macs + rows * (bias_flops + act * units)


register_traits(["RNN", "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_RNN"], contraction=True)


@register(["RNN", "UNIDIRECTIONAL_SEQUENCE_RNN"], "MACs = T·B·U·(I+U); FLOPs = 2·MACs + T·B·U·(1 + act)",
          reference="kernel structure (basic_rnn.cc); onnx-tool RNN GEMM term", note="W adds the hidden state")
def rnn(ctx: OpContext) -> Cost:
    """A basic (sequence) RNN cell."""
    act, act_name = _act_cost(ctx, "NONE")
    rows = _rows(ctx, 0, ctx.input(1).shape[-1])
    macs, flops = _rnn_direction(ctx, 1, 2, 3, -1, rows, act)
    return Cost(macs, flops, bytes_written=_out_bytes(ctx) + _state_bytes(ctx, (4,)),
                note=join_notes(f"act {act_name} {act}/elem", f"{rows} step·batch rows"))


@register("BIDIRECTIONAL_SEQUENCE_RNN", "MACs = fw + bw RNN (each T·B·U·(I+U) [+aux]); FLOPs likewise",
          reference="kernel structure (bidirectional_sequence_rnn.cc)", note="W adds the hidden states")
def bidirectional_rnn(ctx: OpContext) -> Cost:
    """Forward + backward basic RNN (inputs: 1-4 fw, 5-8 bw, 9 aux input, 10/11 aux weights)."""
    act, act_name = _act_cost(ctx, "NONE")
    rows = _rows(ctx, 0, ctx.input(1).shape[-1])
    fw = _rnn_direction(ctx, 1, 2, 3, 10, rows, act)
    bw = _rnn_direction(ctx, 5, 6, 7, 11, rows, act)
    return Cost(fw[0] + bw[0], fw[1] + bw[1],
                bytes_written=_out_bytes(ctx) + _state_bytes(ctx, (4, 8)),
                note=f"act {act_name} {act}/elem")


@shape_fn("RNN")
def _rnn_shape(ctx: OpContext) -> list[Shape]:
    b = ctx.input(0).shape[0]
    return [(b, ctx.input(1).shape[0])] * len(ctx.outputs)


@shape_fn("UNIDIRECTIONAL_SEQUENCE_RNN")
def _urnn_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    return [x[:-1] + (ctx.input(1).shape[0],)]


@shape_fn("BIDIRECTIONAL_SEQUENCE_RNN")
def _birnn_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    fw, bw = ctx.input(1).shape[0], ctx.input(5).shape[0]
    if ctx.opt("merge_outputs", False):
        return [x[:-1] + (fw + bw,)]
    return [x[:-1] + (fw,), x[:-1] + (bw,)][:max(len(ctx.outputs), 1)]


register_traits("SVDF", contraction=True)


# ---------------------------------------------------------------------------------------------
# SVDF (svdf.cc, reference/svdf.h): inputs 0 x [B, I], 1 weights_feature [F, I], 2 weights_time
# [F, M], 3 bias [U] (optional), 4 state [B, F·M]; F = U·rank.
#   feature projection: B·F·I MACs; time filtering: B·F·M MACs (one dot product per filter);
#   rank reduction: B·U·(rank−1) adds; bias B·U; activation B·U·act. The state shift is a copy.
@register("SVDF", "MACs = B·F·(I + M); FLOPs = 2·MACs + B·U·(rank−1) + B·U bias + act",
          reference="kernel structure (reference/svdf.h)", note="W adds the state")
def svdf(ctx: OpContext) -> Cost:
    """Singular value decomposition filter."""
    feat, time = ctx.input(1), ctx.input(2)
    if feat.rank != 2 or time.rank != 2 or feat.shape[0] != time.shape[0]:
        raise ShapeError(f"SVDF: weights_feature {feat.shape} / weights_time {time.shape} do not fit")
    filters, n_input = feat.shape
    memory = time.shape[1]
    rank = max(int(ctx.opt("rank", 1) or 1), 1)
    if filters % rank:
        raise ShapeError(f"SVDF: {filters} filters are not a multiple of rank {rank}")
    units = filters // rank
    batch = _rows(ctx, 0, n_input)
    macs = batch * filters * (n_input + memory)
    act, act_name = _act_cost(ctx, "NONE")
    extra = batch * units * ((rank - 1) + (1 if ctx.has_input(3) else 0) + act)
    return Cost(macs, FLOPS_PER_MAC * macs + extra,
                bytes_written=_out_bytes(ctx) + _state_bytes(ctx, (4,)),
                note=join_notes(f"rank {rank}", f"act {act_name} {act}/elem" if act else ""))


@shape_fn("SVDF")
def _svdf_shape(ctx: OpContext) -> list[Shape]:
    rank = max(int(ctx.opt("rank", 1) or 1), 1)
    b = ctx.input(0).shape[0]
    return [(b, ctx.input(1).shape[0] // rank)] + [t.shape if t is not None else () for t in ctx.outputs[1:]]


register_traits("EMBEDDING_LOOKUP", contraction=True)
register_facts("EMBEDDING_LOOKUP", precision_from_weight=True,  # the table's precision, not the int32 ids'
               row_lookup=(1, 0))  # reads the rows of table (input 1) that the ids (input 0) name


# ---------------------------------------------------------------------------------------------
# EMBEDDING_LOOKUP: inputs 0 ids [N], 1 table [V, D…]; output [N, D…]. A row copy per id: no
# arithmetic, except that an 8-bit table with a float output is dequantized (1 mul per element).
# Bytes read: the ids and only the N selected rows.
@register("EMBEDDING_LOOKUP", "FLOPs = 0 (row copy); n(out) when an int8/uint8 table is dequantized",
          reference="onnx-tool Gather (0)", note="bytes: R = ids + the selected rows only")
def embedding_lookup(ctx: OpContext) -> Cost:
    """Gather rows of an embedding table."""
    ids, table, out = ctx.input(0), ctx.input(1), ctx.output(0)
    if table.rank < 1:
        raise ShapeError(f"EMBEDDING_LOOKUP: table {table.shape} needs rank >= 1")
    rows = table.shape[0] or 1
    row_bytes = table.nbytes // rows
    dequant = table.dtype in ("INT8", "UINT8", "INT4") and out.dtype in ("FLOAT32", "FLOAT16")
    return Cost(0, out.n if dequant else 0, bytes_read=ids.nbytes + ids.n * row_bytes,
                note="8-bit table dequantized 1/elem" if dequant else "")


@shape_fn("EMBEDDING_LOOKUP")
def _embedding_shape(ctx: OpContext) -> list[Shape]:
    return [(ctx.input(0).n,) + ctx.input(1).shape[1:]]


# EMBEDDING_LOOKUP_SPARSE: inputs 0 ids [N], 1 indices [N, R], 2 dense_shape [R], 3 weights [N],
# 4 params [V, D…]. Each lookup adds weight·row into its output row: N·D MACs (D = Π params dims
# after the first). Combiner MEAN: N weight adds + 1 divide per output element; SQRTN: N (mul +
# add) for the sum of squares, 1 sqrt per output row (counted 1/elem) + 1 divide per output element.
@register("EMBEDDING_LOOKUP_SPARSE", "MACs = N·D (weighted row sum); FLOPs = 2·MACs + combiner",
          reference="kernel structure (embedding_lookup_sparse.cc)",
          note="bytes: R = ids, indices, shape, weights + the selected rows only")
def embedding_lookup_sparse(ctx: OpContext) -> Cost:
    """Weighted sum of embedding rows per sparse segment."""
    ids, params, out = ctx.input(0), ctx.input(4), ctx.output(0)
    if params.rank < 1 or not params.shape[0]:
        raise ShapeError(f"EMBEDDING_LOOKUP_SPARSE: params {params.shape} needs rank >= 1")
    dim = params.n // params.shape[0]
    macs = ids.n * dim
    combiner = str(ctx.opt("combiner", "SUM"))
    extra = {"SUM": 0, "MEAN": ids.n + out.n, "SQRTN": 2 * ids.n + 2 * out.n}.get(combiner, 0)
    row_bytes = params.nbytes // params.shape[0]
    read = sum(t.nbytes for t in ctx.present_inputs[:4]) + ids.n * row_bytes
    return Cost(macs, FLOPS_PER_MAC * macs + extra, bytes_read=read, note=f"combiner {combiner}")


@shape_fn("EMBEDDING_LOOKUP_SPARSE")
def _embedding_sparse_shape(ctx: OpContext) -> list[Shape]:
    dense = ctx.input(2).value
    if dense is None:
        raise ShapeError("EMBEDDING_LOOKUP_SPARSE: dense_shape is not a known constant")
    dims = [int(d) for d in dense.reshape(-1).tolist()]
    return [tuple(dims[:-1]) + ctx.input(4).shape[1:]]


# ---- GPU delegate placement (model_builder.cc LSTMOperationParser, gpu_compatibility.cc
# CheckGpuDelegateCompatibility) --------------------------------------------------------------------------------

@register_placement(GPU, "EMBEDDING_LOOKUP", source="ml_drift_delegate/tflite/model_builder.cc "
                                                    "EmbeddingLookupOperationParser::IsSupported, gpu_compatibility.cc "
                                                    "CheckGpuDelegateCompatibility")
def _gpu_embedding_lookup(op: DelegateOp) -> str | None:
    """ML Drift only: two inputs (1-D ids, a table of rank 2 or more), one output of the table's rank and
    row shape; a float32 table, or int8/int4 with quantization."""
    found = gpu_drift_only(op)
    if found:
        return found
    if len(op.inputs) != 2 or len(op.outputs) != 1 or any(t is None for t in op.inputs):
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (2 and 1)")
    ids, table = op.inputs
    y = op.outputs[0]
    if ids.rank != 1:
        return reason(CATEGORY_SHAPE, f"ids have rank {ids.rank} (the GPU delegate wants 1)")
    if table.rank < 2 or y.rank != table.rank or y.shape[1:] != table.shape[1:]:
        return reason(CATEGORY_SHAPE, f"table {list(table.shape)} and output {list(y.shape)}")
    if table.dtype not in ("FLOAT32", "INT8", "INT4"):
        return reason(CATEGORY_DTYPE, f"table is {table.dtype} (FLOAT32, INT8 or INT4)")
    if table.dtype != "FLOAT32" and table.quantization is None:
        return reason(CATEGORY_QUANT, f"{table.dtype} table without quantization")
    return None


@register_placement(GPU, "LSTM", source="model_builder.cc LSTMOperationParser::IsSupported, gpu_compatibility.cc "
                                        "CheckGpuDelegateCompatibility")
def _gpu_lstm(op: DelegateOp) -> str | None:
    """Up to v4. Full kernel: 20 or 24 inputs, one output, sigmoid or tanh activation. Basic kernel:
    three runtime and two constant inputs, four outputs, the last output's depth a multiple of 4, tanh,
    no cell or projection clip."""
    found = gpu_version(op, 4)
    if found:
        return found
    act = op.opt("fused_activation_function", "NONE")
    if op.opt("kernel_type", "FULL") in ("BASIC", 1):
        found = gpu_io(op, 3, 4, consts=2)
        if found:
            return found
        last = op.outputs[3]
        if last.rank and last.shape[-1] % 4:
            return reason(CATEGORY_SHAPE, f"activation depth {last.shape[-1]} is not a multiple of 4")
        if act != "TANH":
            return reason(CATEGORY_OPTIONS, f"fused activation {act} (the basic kernel takes TANH only)")
        for clip in ("cell_clip", "proj_clip"):
            if float(op.opt(clip, 0.0) or 0.0) != 0.0:
                return reason(CATEGORY_OPTIONS, f"{clip} {op.opt(clip)} (the GPU delegate wants 0)")
        return None
    if len(op.inputs) not in (20, 24):
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (the GPU delegate wants 20 or 24)")
    if len(op.outputs) != 1:
        return reason(CATEGORY_INPUTS, f"{len(op.outputs)} outputs (the GPU delegate wants 1)")
    if act not in ("TANH", "SIGMOID"):
        return reason(CATEGORY_OPTIONS, f"fused activation {act} (the GPU delegate takes sigmoid or tanh)")
    return None


# UNIDIRECTIONAL_SEQUENCE_LSTM with a float input: one scratch buffer of the input's dtype,
# n_batch × (n_cell·5 + 16), or n_cell·4 + 16 with CIFG (no input gate weights): the gates and
# ruy's accumulation slack. n_batch is the input's dim 1 when time-major, else dim 0; n_cell the
# rows of input_to_output_weights (input 4). The hybrid kernel's further buffers (quantized
# input and states, scaling factors, …) and the integer kernel's are not listed.
@register_temporaries("UNIDIRECTIONAL_SEQUENCE_LSTM")
def _ulstm_temporaries(ctx: OpContext, setup: KernelSetup) -> tuple[Temporary, ...]:
    """LiteRT's UNIDIRECTIONAL_SEQUENCE_LSTM temporaries (float kernel)."""
    x, w = ctx.input(0), ctx.input(4)
    if x.dtype != "FLOAT32":  # the integer kernel's six temporaries are not listed
        return ()
    n_batch = x.shape[1] if ctx.opt("time_major", False) else x.shape[0]
    width = w.shape[0] * (4 if not ctx.has_input(1) else 5) + 16
    source = "tflite/kernels/unidirectional_sequence_lstm.cc Prepare"
    return (Temporary("scratch_buffer", 4 * n_batch * width, False, source),)
