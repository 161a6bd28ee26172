"""What the prediction adds for whole-model conditions (issue 29): XNNPACK's 8-bit lookup-table chains,
the broadcast rows of a binary op, float16 weights packed as float32, and the streaming chains' cost of
weights read from memory. Hand-derived arithmetic in the comments; the timings that found each rule are in
docs/predict.md and benchmarks/predict_fusions.py (tests never assert on time)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from fusion_models import swish_model
from tflite_builder import FLOAT32
from tflite_flops.analysis import analyze_model
from tflite_flops.latency.cache import cost_at, op_data, with_stream_costs
from tflite_flops.latency.fit import StreamSample, stream_costs
from tflite_flops.latency.predict import fused_ops
from tflite_flops.latency.features import broadcast_rows
from tflite_flops.reader.load import load_model

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
MIB = 2**20


def _fused(data: bytes) -> dict:
    return fused_ops(load_model(data), analyze_model(data).ops)


def test_an_int8_swish_is_one_lookup_table():
    # LOGISTIC (op 0) then MUL(x, sigmoid(x)) (op 1): the MUL is a function of x alone, folded into the table
    fused = _fused(swish_model("swish"))
    assert list(fused) == [(0, 1)] and "lookup table with LOGISTIC op 0:0" in fused[(0, 1)]
    # a constant scalar operand is a unary function too: MUL(x, 0.5) -> LOGISTIC -> MUL(x', sigmoid(x'))
    # starts a chain at the first MUL, whose output has two readers: that chain is one op; the LOGISTIC's is two
    assert list(_fused(swish_model("scaled"))) == [(0, 2)]


@pytest.mark.parametrize("kind", ["logistic", "swish_two_readers", "other_operand"])
def test_what_is_not_one_lookup_table(kind):
    # one op alone; the sigmoid read twice (num_consumers 2); MUL(x2, sigmoid(x)) with x2 another input
    assert _fused(swish_model(kind)) == {}


def test_float_chains_are_not_tables():
    assert _fused(swish_model("swish", FLOAT32)) == {}  # the chain's input must be 8-bit


def _op(op_type: str, a: tuple, b: tuple, out: tuple) -> SimpleNamespace:
    return SimpleNamespace(op_type=op_type, inputs=(a, b), outputs=(out,))


def test_broadcast_rows_count_the_inner_loop_calls():
    # [1,160,160,3] - [1,1,1,3]: the dims 160, 160 broadcast the second operand alike (merged: 25,600), the
    # channels do not: 25,600 calls of 3 elements
    assert broadcast_rows(_op("SUB", (1, 160, 160, 3), (1, 1, 1, 3), (1, 160, 160, 3))) == 25600
    # [1,56,56,32] * [1,56,56,1]: 3,136 calls of 32 elements (the last dim broadcasts)
    assert broadcast_rows(_op("MUL", (1, 56, 56, 32), (1, 56, 56, 1), (1, 56, 56, 32))) == 3136
    # same shapes, a scalar operand, a rank-2 operand against rank 3: one pattern, one call
    assert broadcast_rows(_op("ADD", (1, 8, 8, 4), (1, 8, 8, 4), (1, 8, 8, 4))) == 0
    assert broadcast_rows(_op("MUL", (1, 8, 8, 4), (), (1, 8, 8, 4))) == 0
    # [1,16,32] * [1,1,32]: 16 calls of 32; not a binary op: 0
    assert broadcast_rows(_op("MUL", (1, 16, 32), (32,), (1, 16, 32))) == 16
    assert broadcast_rows(_op("CONV_2D", (1, 8, 8, 4), (4, 1, 1, 4), (1, 8, 8, 4))) == 0


def test_float16_weights_count_as_the_float32_weights_xnnpack_packs():
    # cnn_fp16 is cnn_float with its weights stored as float16 behind DEQUANTIZE ops run at preparation: in
    # a whole model every op reads the same bytes of weights from the same distance
    def weights(name: str) -> list[int]:
        data = (SAMPLES / name).read_bytes()
        model, ops = load_model(data), analyze_model(data).ops
        return [d.weights for d in op_data(model, ops)]
    assert weights("cnn_fp16.tflite") == weights("cnn_float.tflite") and sum(weights("cnn_float.tflite")) > 0


def test_streaming_chains_give_the_cost_per_byte_at_their_distance():
    curve = ((MIB, 0.0, 0.0, 0.0), (64 * MIB, 2e-6, 0.0, 0.0))  # 2 us/MiB at 64 MiB, linear from 1 MiB
    w = 4 * MIB
    rows = [StreamSample("float32", 1, w, w + 1000, w + 1000, 170.0),  # one op alone: 170 us, invoke 2 us
            StreamSample("float32", 8, w, w + 1000, 8 * w + 1000, 2.0 + 8 * 168.0 + 448.0),  # 448 us more
            StreamSample("int8", 1, w, w + 1000, w + 1000, 50.0)]  # no chain in int8: no point
    got = stream_costs(rows, curve, invoke_us=2.0)
    assert list(got) == ["float32"] and len(got["float32"]) == 1
    distance, per_byte = got["float32"][0]
    # 448 us over 8 x 4 MiB = 14 us/MiB, plus the curve's cost at one op's footprint (4 MiB: 3/63 x 2 us/MiB)
    assert distance == 8 * w + 1000
    assert per_byte * MIB == pytest.approx(14.0 + cost_at(curve, w + 1000)[0] * MIB)
    merged = with_stream_costs(curve, got["float32"])
    assert [d for d, *_ in merged] == [MIB, 8 * w + 1000, 64 * MIB]
    # the curve never gets cheaper further away: the 64 MiB point is raised to the chain's cost
    assert merged[2][1] == merged[1][1] == per_byte and math.isclose(merged[0][1], 0.0)
    assert with_stream_costs(curve, []) == curve


def _pad_conv(hybrid: bool) -> bytes:
    """x[1,16,16,3] -> PAD 3 (spatial) -> CONV_2D 7x7 VALID, 8 filters: float32 weights, or int8 (dynamic range)."""
    import numpy as np
    from tflite_builder import INT8, INT32, build_model

    w = {"name": "w", "shape": [8, 7, 7, 3], "buffer": 2}
    if hybrid:
        w.update(type=INT8, quant={"scale": [0.01] * 8, "zero_point": [0] * 8, "axis": 0})
    tensors = [{"name": "x", "shape": [1, 16, 16, 3]}, {"name": "pads", "shape": [4, 2], "type": INT32, "buffer": 1},
               {"name": "xp", "shape": [1, 22, 22, 3]}, w, {"name": "b", "shape": [8], "buffer": 3},
               {"name": "y", "shape": [1, 16, 16, 8]}]
    ops = [{"opcode": 0, "inputs": [0, 1], "outputs": [2]},
           {"opcode": 1, "inputs": [2, 3, 4], "outputs": [5],
            "options": ("Conv2DOptions", {"padding": 1, "stride_w": 1, "stride_h": 1})}]
    weights = np.ones((8, 7, 7, 3), np.int8 if hybrid else np.float32).tobytes()
    buffers = [None, np.array([[0, 0], [3, 3], [3, 3], [0, 0]], np.int32).tobytes(), weights,
               np.zeros(8, np.float32).tobytes()]
    sg = {"tensors": tensors, "operators": ops, "inputs": [0], "outputs": [5], "name": "main"}
    return build_model([sg], [34, 3], buffers=buffers)  # PAD, CONV_2D



def test_a_zero_pad_does_not_fold_into_a_dynamic_range_convolution():
    # float32: the PAD folds into the VALID convolution; dynamic range: the delegate's convert node (the input's
    # dynamic quantization) sits between them and the PAD runs (386 us against 251 us for the conv alone, above)
    assert list(_fused(_pad_conv(hybrid=False))) == [(0, 0)]
    data = _pad_conv(hybrid=True)
    assert [o.precision for o in analyze_model(data).ops] == ["float32", "hybrid"]
    assert _fused(data) == {}


def _add(activation: int) -> bytes:
    """x + y, [1,4,4,8] each, with fused activation ``activation`` (0 NONE, 1 RELU)."""
    from tflite_builder import build_model

    tensors = [{"name": n, "shape": [1, 4, 4, 8]} for n in ("x", "y", "z")]
    ops = [{"opcode": 0, "inputs": [0, 1], "outputs": [2],
            "options": ("AddOptions", {"fused_activation_function": activation})}]
    return build_model([{"tensors": tensors, "operators": ops, "inputs": [0, 1], "outputs": [2], "name": "main"}], [0])


def test_a_fused_activation_counts_the_output_once_more():
    from tflite_flops.latency.predict import fused_activations
    from tflite_flops.latency.features import op_features

    for activation, expected in ((1, 128.0), (0, 0.0)):  # RELU: the clamp pass over 1*4*4*8 = 128 elements
        data = _add(activation)
        model, ops = load_model(data), analyze_model(data).ops
        activated = fused_activations(model, ops)
        features = op_features(ops[0], "xnnpack", activated=(0, 0) in activated)
        assert features.values["act_out"] == expected and features.values["out"] == 128.0
