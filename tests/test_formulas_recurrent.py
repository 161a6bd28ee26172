"""Hand-derived tests of the recurrent and embedding formulas (tflite_flops/ops/recurrent.py).

Each op is built by hand (an OpContext with the kernel's tensor layout); the expected numbers
are worked out in the comments, never taken from the formulas under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from tflite_flops.errors import ShapeError
from tflite_flops.ops import lookup, lookup_shape
from tflite_flops.ops.registry import OpContext, TensorInfo


def t(shape, dtype="FLOAT32", const=False, value=None, index=0) -> TensorInfo:
    return TensorInfo(index, "", dtype, tuple(shape), is_constant=const,
                      value=None if value is None else np.asarray(value))


def w(*shape, dtype="FLOAT32") -> TensorInfo:
    return t(shape, dtype, const=True)


def ctx(op_type, inputs, outputs, **options) -> OpContext:
    return OpContext(op_type, options, tuple(inputs), tuple(outputs))


def cost(c: OpContext):
    return lookup(c.op_type).cost(c)


def lstm_inputs(n_in, n_cell, n_out=None, batch=1, cifg=False, peephole=(), projection=False,
                layer_norm=(), x_shape=None):
    """The 24 inputs of (UNIDIRECTIONAL_SEQUENCE_)LSTM (lstm_shared.h); None = omitted."""
    n_out = n_out or n_cell
    ins = [None] * 24
    ins[0] = t(x_shape or (batch, n_in))
    for i in (1, 2, 3, 4):
        ins[i] = w(n_cell, n_in)
    for i in (5, 6, 7, 8):
        ins[i] = w(n_cell, n_out)
    if cifg:
        ins[1] = ins[5] = None
    for i in peephole:  # 9 cell_to_input, 10 cell_to_forget, 11 cell_to_output
        ins[i] = w(n_cell)
    for i in (12, 13, 14, 15):
        ins[i] = w(n_cell)
    if cifg:
        ins[12] = None
    if projection:
        ins[16], ins[17] = w(n_out, n_cell), w(n_out)
    ins[18] = t((batch, n_out))
    ins[19] = t((batch, n_cell))
    for i in layer_norm:  # 20..23
        ins[i] = w(n_cell)
    return ins


def test_unidirectional_lstm_plain():
    # batch 2, 5 steps, n_input 3, n_cell = n_output 4: rows = 2·5 = 10
    ins = lstm_inputs(3, 4, batch=2, x_shape=(2, 5, 3))
    c = cost(ctx("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [t((2, 5, 4))], fused_activation_function="TANH"))
    # MACs = 10 · 4·4·(3+4) = 10 · (48 input + 64 recurrent) = 1,120 (= T·B·4·H·(I+H))
    assert c.macs == 1120
    # per row: bias 4·4 = 16, sigmoids 3·64·4 = 768, tanh ×2: 2·64·4 = 512, c/h update 4·4 = 16
    # -> 1,312 per row; FLOPs = 2·1,120 + 10·1,312 = 15,360
    assert c.flops == 15360


def test_lstm_cifg_peephole_projection_layer_norm():
    # 1 batch × 2 steps, n_input 3, n_cell 4, n_output 2 (projection [2, 4] + bias),
    # CIFG (no input gate), peephole cell_to_forget/cell_to_output, layer norm on 3 gates.
    ins = lstm_inputs(3, 4, n_out=2, cifg=True, peephole=(10, 11), projection=True, layer_norm=(21, 22, 23),
                      x_shape=(2, 1, 3))
    c = cost(ctx("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [t((2, 1, 2))], fused_activation_function="TANH"))
    # per row MACs: input 3·(4·3) = 36, recurrent 3·(4·2) = 24, peephole 2·4 = 8, projection 2·4 = 8 -> 76
    # rows = 2 -> MACs = 152
    assert c.macs == 152
    # per row FLOPs: bias 3·4 = 12, sigmoids 2·64·4 = 512, tanh 2·64·4 = 512, update 4·4 = 16,
    # CIFG 1−f 4, layer norm 7·4·3 = 84, projection bias 2 -> 1,142; FLOPs = 2·152 + 2·1,142 = 2,588
    assert c.flops == 2588
    assert "CIFG" in c.note and "projection" in c.note and "layer norm" in c.note


def test_single_step_lstm_and_clip():
    # LSTM (op 16): x [3, 5], n_cell 6: rows 3; cell_clip > 0 adds 2·n_cell per row
    ins = lstm_inputs(5, 6, batch=3)
    c = cost(ctx("LSTM", ins, [t((3, 6))], fused_activation_function="TANH", cell_clip=10.0))
    # MACs = 3 · 4·6·(5+6) = 792
    assert c.macs == 792
    # per row: 24 + 3·64·6 (1,152) + 2·64·6 (768) + 4·6 (24) + clip 2·6 (12) = 1,980
    # FLOPs = 1,584 + 3·1,980 = 7,524
    assert c.flops == 7524


def test_basic_lstm_kernel():
    # kernel_type BASIC: x [2, 3], prev_activation [2, 4], weights [16, 7], biases [16], prev_state [2, 4]
    ins = [t((2, 3)), t((2, 4)), w(16, 7), w(16), t((2, 4))]
    c = cost(ctx("LSTM", ins, [t((2, 4)), t((2, 4)), t((2, 7)), t((2, 16))], kernel_type="BASIC"))
    # MACs = 2 rows · 16·7 = 224
    assert c.macs == 224
    # per row: bias 16 + 3·64·4 (768) + 2·64·4 (512) + 4·4 (16) = 1,312; FLOPs = 448 + 2,624 = 3,072
    assert c.flops == 3072


def test_bidirectional_lstm_different_sizes():
    # 48 inputs; x [T=3, B=2, I=3]; forward n_cell 4, backward n_cell 5 (no projection)
    ins = [None] * 48
    ins[0] = t((3, 2, 3))
    for i in range(1, 5):
        ins[i] = w(4, 3)
    for i in range(5, 9):
        ins[i] = w(4, 4)
    for i in range(12, 16):
        ins[i] = w(4)
    for i in range(18, 22):
        ins[i] = w(5, 3)
    for i in range(22, 26):
        ins[i] = w(5, 5)
    for i in range(29, 33):
        ins[i] = w(5)
    ins[35], ins[36], ins[37], ins[38] = t((2, 4)), t((2, 4)), t((2, 5)), t((2, 5))
    c = cost(ctx("BIDIRECTIONAL_SEQUENCE_LSTM", ins, [t((3, 2, 4)), t((3, 2, 5))],
                 fused_activation_function="TANH"))
    # rows = 6; fw 4·4·3 + 4·4·4 = 112; bw 4·5·3 + 4·5·5 = 160 -> MACs = 6·272 = 1,632
    assert c.macs == 1632
    # FLOPs: fw per row 16 + 768 + 512 + 16 = 1,312; bw per row 20 + 960 + 640 + 20 = 1,640
    # = 2·1,632 + 6·(1,312 + 1,640) = 3,264 + 17,712 = 20,976
    assert c.flops == 20976
    shape = lookup_shape("BIDIRECTIONAL_SEQUENCE_LSTM")(ctx("BIDIRECTIONAL_SEQUENCE_LSTM", ins,
                                                            [t((3, 2, 4)), t((3, 2, 5))]))
    assert list(shape) == [(3, 2, 4), (3, 2, 5)]


def test_sequence_rnn():
    # x [T=4, B=2, I=3], weights [5, 3], recurrent [5, 5], bias [5], state [2, 5], TANH
    ins = [t((4, 2, 3)), w(5, 3), w(5, 5), w(5), t((2, 5))]
    c = cost(ctx("UNIDIRECTIONAL_SEQUENCE_RNN", ins, [t((4, 2, 5))], fused_activation_function="TANH",
                 time_major=True))
    # MACs = 8 rows · 5·(3+5) = 320; FLOPs = 640 + 8·5·(1 bias + 64 tanh) = 640 + 2,600 = 3,240
    assert (c.macs, c.flops) == (320, 3240)
    assert lookup_shape("UNIDIRECTIONAL_SEQUENCE_RNN")(ctx("UNIDIRECTIONAL_SEQUENCE_RNN", ins, [t((4, 2, 5))])) \
        == [(4, 2, 5)]


def test_rnn_single_step_relu():
    # RNN: x [2, 3], weights [4, 3], recurrent [4, 4], bias [4], state [2, 4], RELU (1/elem)
    ins = [t((2, 3)), w(4, 3), w(4, 4), w(4), t((2, 4))]
    c = cost(ctx("RNN", ins, [t((2, 4))], fused_activation_function="RELU"))
    # MACs = 2·4·(3+4) = 56; FLOPs = 112 + 2·4·(1+1) = 128
    assert (c.macs, c.flops) == (56, 128)


def test_bidirectional_rnn_with_aux_weights():
    # x [T=2, B=1, I=3]; fw U=4, bw U=2; aux input [2, 1, 6] with fw aux [4, 6], bw aux [2, 6]; act NONE
    ins = [t((2, 1, 3)), w(4, 3), w(4, 4), w(4), t((1, 4)), w(2, 3), w(2, 2), w(2), t((1, 2)),
           t((2, 1, 6)), w(4, 6), w(2, 6)]
    c = cost(ctx("BIDIRECTIONAL_SEQUENCE_RNN", ins, [t((2, 1, 4)), t((2, 1, 2))],
                 fused_activation_function="NONE"))
    # rows 2; fw 12 + 16 + 24 = 52, bw 6 + 4 + 12 = 22 -> MACs = 2·74 = 148
    # FLOPs = 296 + 2·(4 + 2) bias = 308
    assert (c.macs, c.flops) == (148, 308)


def test_svdf():
    # x [2, 10], weights_feature [8, 10], weights_time [8, 6], bias [4], state [2, 48]; rank 2 -> 4 units
    ins = [t((2, 10)), w(8, 10), w(8, 6), w(4), t((2, 48))]
    c = cost(ctx("SVDF", ins, [t((2, 4))], rank=2, fused_activation_function="RELU"))
    # MACs = 2 · 8·(10 + 6) = 256; FLOPs = 512 + 2·4·((2−1) + 1 bias + 1 relu) = 536
    assert (c.macs, c.flops) == (256, 536)
    assert lookup_shape("SVDF")(ctx("SVDF", ins, [t((2, 4))], rank=2)) == [(2, 4)]
    with pytest.raises(ShapeError):
        cost(ctx("SVDF", ins, [t((2, 4))], rank=3))  # 8 filters are not a multiple of rank 3


def test_embedding_lookup_bytes_and_dequantize():
    ids, table = t((3,), "INT32"), w(10, 4)
    c = cost(ctx("EMBEDDING_LOOKUP", [ids, table], [t((3, 4))]))
    # no arithmetic; reads 3 ids (12 B) + 3 rows of 4 floats (48 B) = 60 B
    assert (c.macs, c.flops, c.bytes_read) == (0, 0, 60)
    c8 = cost(ctx("EMBEDDING_LOOKUP", [ids, w(10, 4, dtype="INT8")], [t((3, 4))]))
    # an int8 table dequantized into a float output: 1 mul per output element = 12
    assert c8.flops == 12 and c8.bytes_read == 12 + 3 * 4
    assert lookup_shape("EMBEDDING_LOOKUP")(ctx("EMBEDDING_LOOKUP", [ids, table], [t((3, 4))])) == [(3, 4)]


def test_embedding_lookup_sparse():
    # 5 lookups into params [10, 4]; dense_shape [3, 2] -> output [3, 4]
    ins = [t((5,), "INT32"), t((5, 2), "INT32"), t((2,), "INT32", const=True, value=[3, 2]), t((5,)), w(10, 4)]
    out = [t((3, 4))]
    c = cost(ctx("EMBEDDING_LOOKUP_SPARSE", ins, out, combiner="SQRTN"))
    # MACs = 5 lookups · 4 = 20; SQRTN: 2·5 (squares) + 2·12 (sqrt + divide per output) = 34
    # FLOPs = 40 + 34 = 74
    assert (c.macs, c.flops) == (20, 74)
    assert cost(ctx("EMBEDDING_LOOKUP_SPARSE", ins, out, combiner="SUM")).flops == 40
    assert lookup_shape("EMBEDDING_LOOKUP_SPARSE")(ctx("EMBEDDING_LOOKUP_SPARSE", ins, out)) == [(3, 4)]


def test_lstm_rejects_bad_weights():
    ins = lstm_inputs(3, 4, batch=2, x_shape=(2, 5, 3))
    ins[2] = w(4, 3, 1)
    with pytest.raises(ShapeError):
        cost(ctx("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [t((2, 5, 4))]))
    ins = lstm_inputs(3, 4, batch=2, x_shape=(2, 5, 2))  # 20 input elements not a multiple of... 3
    with pytest.raises(ShapeError):
        cost(ctx("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [t((2, 5, 4))]))


@pytest.mark.parametrize("w_type, precision", [(0, "float32"), (9, "hybrid")])
def test_sequence_lstm_in_a_model(w_type, precision):
    """An UNIDIRECTIONAL_SEQUENCE_LSTM read from a flatbuffer: options decoded, omitted inputs (-1)."""
    from tflite_builder import build_model

    import tflite_flops

    # x [B=2, T=5, I=3], n_cell 4; tensors: 0 x, 1-8 weight matrices, 9-12 gate biases, 13/14 states,
    # 15 output; op inputs follow the 24-input layout with -1 for the omitted ones
    n_in, n_cell = 3, 4
    tensors = [{"shape": [2, 5, n_in]}]
    inputs = [0]
    buffers = [None]
    for rows, cols in [(n_cell, n_in)] * 4 + [(n_cell, n_cell)] * 4:
        buffers.append(np.ones((rows, cols), np.int8 if w_type else np.float32).tobytes())
        tensors.append({"shape": [rows, cols], "type": w_type, "buffer": len(buffers) - 1,
                        "quant": {"scale": [0.1]} if w_type else None})
        inputs.append(len(tensors) - 1)
    inputs += [-1, -1, -1]  # no peephole
    for _ in range(4):
        buffers.append(np.zeros(n_cell, np.float32).tobytes())
        tensors.append({"shape": [n_cell], "buffer": len(buffers) - 1})
        inputs.append(len(tensors) - 1)
    inputs += [-1, -1]  # no projection
    tensors += [{"shape": [2, n_cell]}, {"shape": [2, n_cell]}, {"shape": [2, 5, n_cell]}]
    inputs += [len(tensors) - 3, len(tensors) - 2]
    inputs += [-1, -1, -1, -1]  # no layer norm
    sg = {"tensors": tensors, "inputs": [0], "outputs": [len(tensors) - 1],
          "operators": [{"opcode": 0, "inputs": inputs, "outputs": [len(tensors) - 1],
                         "options": ("UnidirectionalSequenceLSTMOptions",
                                     {"fused_activation_function": 4, "time_major": False})}]}
    report = tflite_flops.analyze(build_model([sg], [44], buffers=buffers))
    (op,) = report.ops
    assert op.op_type == "UNIDIRECTIONAL_SEQUENCE_LSTM" and op.status == "ok"
    # as test_unidirectional_lstm_plain: 10 rows · 4·4·(3+4) = 1,120 MACs, 15,360 FLOPs
    assert (op.macs, op.flops) == (1120, 15360)
    assert op.precision == precision
    assert "act TANH" in op.note
