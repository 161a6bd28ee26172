"""Hand-derived tests of the custom-op formulas (tflite_flops/ops/custom.py), and custom ops read
from in-memory models (FlexBuffer options, MediaPipe's raw struct options, unknown custom ops).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from flatbuffers import flexbuffers

import tflite_flops
from tflite_flops.ops import Cost, lookup, lookup_shape, register_cost
from tflite_flops.ops import registry
from tflite_flops.ops.registry import OpContext, TensorInfo

from tflite_builder import CUSTOM, build_model


def t(shape, dtype="FLOAT32", const=False) -> TensorInfo:
    return TensorInfo(0, "", dtype, tuple(shape), is_constant=const)


def ctx(op_type, inputs, outputs, **options) -> OpContext:
    return OpContext(op_type, options, tuple(inputs), tuple(outputs))


def cost(c: OpContext):
    return lookup(c.op_type).cost(c)


def test_detection_postprocess_fast_nms():
    # 100 anchors, 2 classes (+ background), at most 10 detections, float inputs
    ins = [t((1, 100, 4)), t((1, 100, 3)), t((100, 4), const=True)]
    outs = [t((1, 10, 4)), t((1, 10)), t((1, 10)), t((1,))]
    c = cost(ctx("CUSTOM:TFLite_Detection_PostProcess", ins, outs, num_classes=2, max_detections=10,
                 max_classes_per_detection=1))
    # decode 80·100 = 8,000; class max 100·2 = 200; threshold 100; sort 100·⌈log2 100⌉ = 700;
    # IoU 19·100·10 = 19,000 -> 28,000
    assert (c.macs, c.flops) == (0, 28000)
    assert "ESTIMATE" in c.note
    shape = lookup_shape("CUSTOM:TFLite_Detection_PostProcess")(
        ctx("CUSTOM:TFLite_Detection_PostProcess", ins, outs, max_detections=10, max_classes_per_detection=1))
    assert shape == [(1, 10, 4), (1, 10), (1, 10), (1,)]


def test_detection_postprocess_regular_nms_quantized():
    # uint8 inputs (dequantized 2/elem), 8 anchors, 3 classes, regular NMS with 2 detections per class
    ins = [t((1, 8, 4), "UINT8"), t((1, 8, 4), "UINT8"), t((8, 4), const=True)]
    outs = [t((1, 5, 4)), t((1, 5)), t((1, 5)), t((1,))]
    c = cost(ctx("CUSTOM:TFLite_Detection_PostProcess", ins, outs, num_classes=3, max_detections=5,
                 use_regular_nms=True, detections_per_class=2))
    # decode 80·8 = 640; dequantize 2·(32 + 32) = 128;
    # per class: 8 + 8·3 + 19·8·2 = 8 + 24 + 304 = 336, ×3 = 1,008; merge sort 6·⌈log2 6⌉ = 18
    # -> 640 + 128 + 1,008 + 18 = 1,794
    assert c.flops == 1794


def test_convolution2d_transpose_bias():
    ins = [t((1, 8, 8, 16)), t((32, 3, 3, 16), const=True), t((32,), const=True)]
    outs = [t((1, 16, 16, 32))]
    c = cost(ctx("CUSTOM:Convolution2DTransposeBias", ins, outs, raw_int32=(1, 2, 2)))
    # MACs = n(input) 1,024 · 3·3 · 32 = 294,912; FLOPs = 589,824 + bias 16·16·32 = 598,016
    assert (c.macs, c.flops) == (294912, 598016)
    shape_fn = lookup_shape("CUSTOM:Convolution2DTransposeBias")
    assert shape_fn(ctx("", ins, outs, raw_int32=(1, 2, 2))) == [(1, 16, 16, 32)]  # SAME: 8·2
    assert shape_fn(ctx("", ins, outs, raw_int32=(2, 2, 2))) == [(1, 17, 17, 32)]  # VALID: 7·2 + 3


def test_max_pooling_with_argmax():
    # VALID, stride 2, filter 2×2 (TfLitePoolParams: padding 2, stride_w, stride_h, filter_w, filter_h, act)
    ins, outs = [t((1, 8, 8, 4))], [t((1, 4, 4, 4)), t((1, 4, 4, 4), "INT64")]
    c = cost(ctx("CUSTOM:MaxPoolingWithArgmax2D", ins, outs, raw_int32=(2, 2, 2, 2, 2, 0)))
    # 2·2 compares × 64 outputs = 256
    assert c.flops == 256
    assert lookup_shape("CUSTOM:MaxPoolingWithArgmax2D")(
        ctx("CUSTOM:MaxPoolingWithArgmax2D", ins, outs, raw_int32=(2, 2, 2, 2, 2, 0))) == [(1, 4, 4, 4)] * 2
    # options unreadable: window taken from the shapes (8/4 = 2), flagged
    c2 = cost(ctx("CUSTOM:MaxPoolingWithArgmax2D", ins, outs))
    assert c2.flops == 256 and "assumed" in c2.note


def test_max_unpooling_is_zero_with_shape():
    assert lookup("CUSTOM:MaxUnpooling2D").status == "zero"
    ins = [t((1, 4, 4, 8)), t((1, 4, 4, 8), "INT64")]
    assert lookup_shape("CUSTOM:MaxUnpooling2D")(
        ctx("CUSTOM:MaxUnpooling2D", ins, [t((1, 8, 8, 8))], raw_int32=(1, 2, 2, 2, 2, 0))) == [(1, 8, 8, 8)]


def test_transform_tensor_bilinear():
    ins = [t((1, 64, 64, 3)), t((1, 1, 4, 4))]
    c = cost(ctx("CUSTOM:TransformTensorBilinear", ins, [t((1, 16, 16, 3))]))
    # 7 · 768 elements = 5,376 + 16 · 256 pixels = 4,096 -> 9,472
    assert c.flops == 9472
    assert lookup_shape("CUSTOM:TransformTensorBilinear")(
        ctx("", ins, [], output_size=(16, 16))) == [(1, 16, 16, 3)]


def test_transform_landmarks():
    c = cost(ctx("CUSTOM:TransformLandmarks", [t((1, 1, 468, 3)), t((1, 1, 4, 4))], [t((1, 1, 468, 3))]))
    # MACs = 4·468 = 1,872; FLOPs = 3,744 + 2·468 (translation) + 468 (z scale) = 5,148
    assert (c.macs, c.flops) == (1872, 5148)


def test_landmarks_to_transform_matrix():
    c = cost(ctx("CUSTOM:Landmarks2TransformMatrix", [t((1, 1404))], [t((1, 1, 4, 4))],
                 subset_idxs=(33, 133, 362, 263, 1, 4)))
    # 3 point pairs: 16·3 = 48 + atan2/sin/cos 3·32 = 96 + matrices 48 -> 192
    assert c.flops == 192 and "ESTIMATE" in c.note


def test_unidirectional_sequence_gru():
    # x [T=3, B=2, I=4], h [2, 5], gate_weight [10, 9], gate_bias [10], candidate_weight [5, 9], bias [5]
    ins = [t((3, 2, 4)), t((2, 5)), t((10, 9), const=True), t((10,), const=True), t((5, 9), const=True),
           t((5,), const=True)]
    c = cost(ctx("CUSTOM:UNIDIRECTIONAL_SEQUENCE_GRU", ins, [t((3, 2, 5)), t((2, 5))]))
    # rows 6; MACs = 6 · (90 + 45) = 810 (= T·B·3·O·(I+O) = 6·3·5·9)
    assert c.macs == 810
    # per row: 5·(3 bias + 3·64 (2 sigmoid + tanh) + 1 (r⊙h) + 3 (h')) = 5·199 = 995
    # FLOPs = 1,620 + 6·995 = 7,590
    assert c.flops == 7590
    assert lookup_shape("CUSTOM:UNIDIRECTIONAL_SEQUENCE_GRU")(
        ctx("", ins, [t((3, 2, 5)), t((2, 5))])) == [(3, 2, 5), (2, 5)]


# ---------------------------------------------------------------------------------------------
# In-memory models.


def _one_custom_op(name: str, tensors, inputs, outputs, custom_options: bytes, buffers=None) -> bytes:
    sg = {"tensors": tensors, "inputs": [i for i in inputs if not tensors[i].get("buffer")], "outputs": outputs,
          "operators": [{"opcode": 0, "inputs": inputs, "outputs": outputs, "custom_options": custom_options}]}
    return build_model([sg], [{"builtin": CUSTOM, "custom": name}], buffers=buffers)


def test_mediapipe_raw_struct_options_are_read():
    # TfLitePoolParams as MediaPipe writes it: padding VALID(2), stride 2×2, filter 3×3, no activation
    raw = struct.pack("<10i", 2, 2, 2, 3, 3, 0, 0, 0, 0, 0)
    data = _one_custom_op("MaxPoolingWithArgmax2D",
                          [{"shape": [1, 9, 9, 4], "shape_signature": [1, -1, -1, 4]},
                           {"shape": [1, 4, 4, 4], "shape_signature": [1, -1, -1, 4]},
                           {"shape": [1, 4, 4, 4], "shape_signature": [1, -1, -1, 4], "type": 2}],
                          [0], [1, 2], raw)
    report = tflite_flops.analyze(data)
    op = report.ops[0]
    assert op.op_type == "CUSTOM:MaxPoolingWithArgmax2D" and op.status == "ok"
    # 3·3 taps × 64 outputs = 576
    assert op.flops == 576
    assert report.unsupported == {}
    # a new input size propagates through the shape function: 17×17 -> VALID (17−3)/2 + 1 = 8
    bigger = tflite_flops.analyze(data, input_shapes={0: (1, 17, 17, 4)})
    assert bigger.ops[0].outputs[0] == (1, 8, 8, 4) and bigger.ops[0].flops == 9 * 8 * 8 * 4


def test_detection_postprocess_flexbuffer_options():
    fbb = flexbuffers.Builder()
    with fbb.Map():
        fbb.Int("max_detections", 10)
        fbb.Int("max_classes_per_detection", 1)
        fbb.Int("num_classes", 2)
        fbb.Float("nms_iou_threshold", 0.5)
        fbb.Bool("use_regular_nms", False)
    anchors = np.zeros((100, 4), np.float32)
    tensors = [{"shape": [1, 100, 4]}, {"shape": [1, 100, 3]}, {"shape": [100, 4], "buffer": 1},
               {"shape": [1, 10, 4]}, {"shape": [1, 10]}, {"shape": [1, 10]}, {"shape": [1]}]
    data = _one_custom_op("TFLite_Detection_PostProcess", tensors, [0, 1, 2], [3, 4, 5, 6], bytes(fbb.Finish()),
                          buffers=[None, anchors.tobytes()])
    op = tflite_flops.analyze(data).ops[0]
    assert op.status == "ok" and op.flops == 28000  # as test_detection_postprocess_fast_nms
    assert "ESTIMATE" in op.note


def test_unknown_custom_op_stays_unsupported_and_can_be_overridden():
    data = _one_custom_op("MySecretOp", [{"shape": [1, 8]}, {"shape": [1, 8]}], [0], [1], b"")
    report = tflite_flops.analyze(data)
    assert report.unsupported == {"CUSTOM:MySecretOp": 1} and report.ops[0].status == "unsupported"
    # the library's override hook, per analysis
    report = tflite_flops.analyze(data, cost_overrides={"CUSTOM:MySecretOp": lambda c: Cost(8, 16)})
    assert (report.totals.macs, report.totals.flops) == (8, 16) and not report.unsupported


def test_register_cost_for_a_custom_op(monkeypatch):
    name = "CUSTOM:MyRegisteredTestOp"
    # register into a copy of the registry, restored after the test (no leak into other tests)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @register_cost(name, "FLOPs = 3·n(out)")
    def _mine(c):
        return Cost(0, 3 * c.output(0).n)

    data = _one_custom_op("MyRegisteredTestOp", [{"shape": [1, 8]}, {"shape": [1, 8]}], [0], [1], b"")
    assert tflite_flops.analyze(data).totals.flops == 24  # 3 · 8


@pytest.mark.parametrize("name", ["TFLite_Detection_PostProcess", "Convolution2DTransposeBias",
                                  "MaxPoolingWithArgmax2D", "MaxUnpooling2D", "TransformTensorBilinear",
                                  "TransformLandmarks", "Landmarks2TransformMatrix", "UNIDIRECTIONAL_SEQUENCE_GRU"])
def test_production_custom_ops_are_registered(name):
    spec = lookup(f"CUSTOM:{name}")
    assert spec is not None and spec.status in ("ok", "zero")


def test_a_buggy_formula_is_an_error_not_an_unsupported_op(monkeypatch):
    name = "CUSTOM:MyBuggyTestOp"
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @register_cost(name, "FLOPs = n(out) / 0")
    def _buggy(c):
        return Cost(0, c.output(0).n // 0)  # ZeroDivisionError: a bug in the formula

    data = _one_custom_op("MyBuggyTestOp", [{"shape": [1, 8]}, {"shape": [1, 8]}], [0], [1], b"")
    report = tflite_flops.analyze(data)
    op = report.ops[0]
    assert op.status == "error" and not report.unsupported
    assert "ZeroDivisionError" in op.note
    assert report.totals.complete is False
    assert any("ZeroDivisionError" in w for w in report.warnings)
    with pytest.raises(tflite_flops.UnsupportedOpError, match="formula raised"):
        tflite_flops.analyze(data, strict=True)
    # the CLI's --strict (checked on the printed report) and the partial-totals line say it too
    from tflite_flops.report.completeness import partial_note, strict_problems

    assert strict_problems(report) == ["1 op(s) not counted because their cost formula raised"]
    assert "1 op(s) whose cost formula raised" in partial_note(report)


def test_register_shape_propagates_to_the_next_op(monkeypatch):
    name = "CUSTOM:MyShapedTestOp"
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_SHAPES", dict(registry._SHAPES))

    @tflite_flops.register_cost(name, "FLOPs = n(out)")
    def _cost(c):
        return Cost(0, c.output(0).n)

    @tflite_flops.register_shape(name)
    def _shape(c):
        x = c.input(0).shape
        return [x[:-1] + (2 * x[-1],)]  # doubles the last dim

    # the custom op [1, 4] -> [1, 8], then RELU [1, 8] -> [1, 8]
    tensors = [{"shape": [1, 4], "shape_signature": [-1, 4]}, {"shape": [1, 8], "shape_signature": [-1, 8]},
               {"shape": [1, 8], "shape_signature": [-1, 8]}]
    sg = {"tensors": tensors, "inputs": [0], "outputs": [2],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1]}, {"opcode": 1, "inputs": [1], "outputs": [2]}]}
    data = build_model([sg], [{"builtin": CUSTOM, "custom": "MyShapedTestOp"}, 19])  # 19: RELU
    report = tflite_flops.analyze(data, batch=3)
    custom, relu = report.ops
    assert custom.outputs == ((3, 8),) and relu.inputs == ((3, 8),) and relu.outputs == ((3, 8),)
    assert custom.flops == 24 and relu.flops == 24  # 3 · 8 each
