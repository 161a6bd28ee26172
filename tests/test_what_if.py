"""The what-if of other precisions (studies/what_if.py): cnn_float rewritten in memory as the converter writes
fp16, dynamic-range and full int8 is held to the twins make_samples.py converted from the same Keras model."""

from __future__ import annotations

from pathlib import Path

import pytest

import cli_process
import tflite_flops
from tflite_flops.analysis import analyze_model
from tflite_flops.latency.profile import DeviceProfile
from tflite_flops.reader.load import load_model
from tflite_flops.render import render
from tflite_flops.report import Report
from tflite_flops.settings import Settings
from tflite_flops.studies.what_if import DYNAMIC_RANGE_MIN_ELEMENTS, applicable, rewrite

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
PROFILE = ROOT / "tests" / "fixtures" / "predict_profile.json"
TWINS = {"fp16": "cnn_fp16", "dynamic_range": "cnn_dynamic_range", "int8": "cnn_int8"}


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings(predict=DeviceProfile.load(str(PROFILE)))


@pytest.fixture(scope="module")
def cnn_float():
    return load_model(SAMPLES / "cnn_float.tflite")


def _placement(report: Report) -> dict[str, tuple[int, int, int]]:
    return {k: (d.delegated_ops, d.kept_ops, d.partitions) for k, d in report.delegation.items()}


@pytest.mark.parametrize("variant", sorted(TWINS))
def test_the_what_if_is_the_twin(variant, settings, cnn_float):
    """Same ops (type, precision, phase), same placement per op and per delegate, same predicted time."""
    what_if = analyze_model(rewrite(cnn_float, variant, settings), settings)
    twin = analyze_model(SAMPLES / f"{TWINS[variant]}.tflite", settings)
    assert [(o.op_type, o.precision, o.phase) for o in what_if.ops] == [(o.op_type, o.precision, o.phase)
                                                                       for o in twin.ops]
    assert [o.xnnpack for o in what_if.ops] == [o.xnnpack for o in twin.ops]
    assert _placement(what_if) == _placement(twin)
    assert what_if.prediction.latency_ms == pytest.approx(twin.prediction.latency_ms, rel=0.15)
    assert what_if.memory.weights_bytes == twin.memory.weights_bytes


def test_which_weights_dynamic_range_quantizes(settings, cnn_float):
    """The converter's threshold: weights of at least 1,024 values become int8 per output channel."""
    model = rewrite(cnn_float, "dynamic_range", settings)
    int8 = sorted(t.shape for t in model.main.tensors if t.dtype == "INT8")
    # 8·3·3·16 = 1,152 and 8·3·3·24 = 1,728 are quantized;
    # 16·3·3·3 = 432, 16·1·1·16 = 256, 3·3·16 = 144 and 10·8 = 80 stay float32
    assert DYNAMIC_RANGE_MIN_ELEMENTS == 1024
    assert int8 == [(8, 3, 3, 16), (8, 3, 3, 24)]
    assert {t.quantization.num_scales for t in model.main.tensors if t.dtype == "INT8"} == {8}  # one per channel
    # one version per op type, as the converter writes it: every CONV_2D at its hybrid kernel's 5 once one is
    # hybrid (its float ones too), the DEPTHWISE_CONV_2D (no weights quantized) left at 1; the twin's versions
    twin = load_model(SAMPLES / "cnn_dynamic_range.tflite")
    assert [op.version for op in model.main.operators] == [op.version for op in twin.main.operators]


def test_fp16_dequantizes_every_float_constant(settings, cnn_float):
    """9 float32 constants (5 filters or weights, 4 biases: the FC has none) -> 9 DEQUANTIZE ops, run at init."""
    report = analyze_model(rewrite(cnn_float, "fp16", settings), settings)
    dequantize = [o for o in report.ops if o.op_type == "DEQUANTIZE"]
    assert len(dequantize) == 9 and {o.phase for o in dequantize} == {"init"}
    assert len(report.ops) == 12 + 9


def test_static_shape_folds_the_shape_arithmetic():
    """fcn_dynamic (input [-1, -1, -1, 3]) at 1x64x64x3: SHAPE, SLICE and MUL (the resize's size) fold into a
    constant, as a static conversion folds them; no tensor stays dynamic, and XNNPACK takes all 8 ops in 1
    partition where it kept the 3 shape ops and the resize (whose size was computed) off."""
    settings = Settings(input_shapes="1x64x64x3")
    model = load_model(SAMPLES / "fcn_dynamic.tflite")
    assert "static_shape" in applicable(model)
    static = rewrite(model, "static_shape", settings)
    assert not any(t.is_dynamic for t in static.main.tensors if any(t.index in op.inputs + op.outputs
                                                                     for op in static.main.operators))
    before, after = analyze_model(model, settings), analyze_model(static, settings)
    folded = ("SHAPE", "SLICE", "MUL")
    assert [o.op_type for o in after.ops] == [o.op_type for o in before.ops if o.op_type not in folded]
    assert (after.delegation["xnnpack"].delegated_ops, after.delegation["xnnpack"].partitions) == (8, 1)
    assert before.totals.macs == after.totals.macs
    # the constants only the folded ops read are gone, the resize's size is one: 6,392 bytes of weights, what
    # a static conversion of the same Keras model (make_samples.build_fcn, [1, 64, 64, 3], TensorFlow 2.21)
    # stores, with the same 8 ops, all on XNNPACK and the GPU delegate in one partition each
    assert after.memory.weights_bytes == 6392
    assert (after.delegation["gpu"].delegated_ops, after.delegation["gpu"].partitions) == (8, 1)


def test_variants_that_apply():
    assert applicable(load_model(SAMPLES / "cnn_float.tflite")) == ("fp16", "dynamic_range", "int8")
    assert applicable(load_model(SAMPLES / "cnn_int8.tflite")) == ()
    assert applicable(load_model(SAMPLES / "cnn_fp16.tflite")) == ()
    assert applicable(load_model(SAMPLES / "fcn_dynamic.tflite"))[-1] == "static_shape"


def test_analyze_what_if_rows_round_trip_and_render():
    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite", predict=PROFILE, what_if=True)
    rows = {w.variant: w for w in report.what_if}
    assert list(rows) == ["fp16", "dynamic_range", "int8"]
    twin = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite", predict=PROFILE)
    assert rows["int8"].predicted_ms == pytest.approx(twin.prediction.latency_ms)
    assert (rows["int8"].xnnpack_delegated, rows["int8"].xnnpack_partitions) == (10, 2)
    assert any(c.startswith("time ") for c in rows["int8"].changes)
    assert [w.to_dict() for w in Report.from_json(report.to_json()).what_if] == [w.to_dict() for w in report.what_if]
    for fmt in ("table", "md", "html"):
        assert "What if you convert it" in render(report, fmt)
    assert "what_if" not in tflite_flops.analyze(SAMPLES / "cnn_float.tflite", predict=PROFILE).to_dict()


def test_cli_what_if():
    proc = cli_process.run(["analyze", str(SAMPLES / "cnn_float.tflite"), "--predict", str(PROFILE), "--what-if"],
                           cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "What if you convert it" in proc.stdout and "full int8" in proc.stdout


@pytest.mark.slow
def test_compare_shows_the_what_if_beside_the_twin():
    """compare float int8 --predict: A's full-int8 what-if beside B's own prediction, the same time and placement."""
    proc = cli_process.run(["compare", str(SAMPLES / "cnn_float.tflite"), str(SAMPLES / "cnn_int8.tflite"),
                            "--predict", str(PROFILE), "--format", "json"], cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    import json

    rows = json.loads(proc.stdout)["what_if"]
    a, b = rows["a_predicted"], rows["b"]
    assert a["variant"] == b["variant"] == "int8"
    for key in ("predicted_ms", "xnnpack_delegated", "xnnpack_partitions", "gpu_delegated", "gpu_partitions", "ops"):
        assert a[key] == b[key], key
    plain = cli_process.run(["compare", str(SAMPLES / "cnn_float.tflite"), str(SAMPLES / "cnn_int8.tflite"),
                             "--format", "json"], cwd=ROOT)
    assert "what_if" not in json.loads(plain.stdout)  # without a profile: unchanged


def _embedding_model() -> bytes:
    """ids[1,8] (int32) -> GATHER(table[2000, 16]) -> [1, 8, 16] -> FULLY_CONNECTED(W[4, 16]) -> [1, 8, 4]."""
    import numpy as np
    from tflite_builder import FULLY_CONNECTED, build_model

    gather, int32 = 36, 2  # BuiltinOperator.GATHER, TensorType.INT32
    table = np.ones((2000, 16), np.float32)
    w = np.ones((4, 16), np.float32)
    sg = {"tensors": [{"name": "ids", "shape": [1, 8], "type": int32},
                      {"name": "table", "shape": [2000, 16], "buffer": 1},
                      {"name": "rows", "shape": [1, 8, 16]},
                      {"name": "w", "shape": [4, 16], "buffer": 2},
                      {"name": "y", "shape": [1, 8, 4]}],
          "operators": [{"opcode": 0, "inputs": [1, 0], "outputs": [2]},
                        {"opcode": 1, "inputs": [2, 3, -1], "outputs": [4],
                         "options": ("FullyConnectedOptions", {"keep_num_dims": True})}],
          "inputs": [0], "outputs": [4], "name": "main"}
    return build_model([sg], [gather, FULLY_CONNECTED], buffers=[None, table.tobytes(), w.tobytes()])


def test_dynamic_range_embedding_table():
    """The table (2000·16 = 32,000 values >= 1,024) is int8 with one scale, GATHER reads it in int8 (version 2)
    and a DEQUANTIZE after it gives the FULLY_CONNECTED float32; the FC's 4·16 = 64 weights stay float32."""
    model = load_model(_embedding_model())
    main = rewrite(model, "dynamic_range", Settings()).main
    assert [(op.op_type, op.version) for op in main.operators] == [("GATHER", 2), ("DEQUANTIZE", 2),
                                                                    ("FULLY_CONNECTED", 1)]
    table = main.tensors[main.operators[0].inputs[0]]
    assert (table.dtype, table.quantization.kind, table.data_size) == ("INT8", "per_tensor", 2000 * 16)
    assert main.tensors[main.operators[0].outputs[0]].dtype == "INT8"
    assert main.operators[2].inputs[0] == main.operators[1].outputs[0]
    assert main.tensors[main.operators[2].inputs[1]].dtype == "FLOAT32"


def _cast_model() -> bytes:
    """ids[1,8] (float32) -> CAST -> int32 -> GATHER(table[2000, 16]) -> [1, 8, 16]: a Keras Embedding of float ids."""
    import numpy as np
    from tflite_builder import build_model

    cast, gather, int32 = 53, 36, 2  # BuiltinOperator.CAST, GATHER; TensorType.INT32
    sg = {"tensors": [{"name": "ids", "shape": [1, 8]}, {"name": "ids_int", "shape": [1, 8], "type": int32},
                      {"name": "table", "shape": [2000, 16], "buffer": 1}, {"name": "rows", "shape": [1, 8, 16]}],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1]},
                        {"opcode": 1, "inputs": [2, 1], "outputs": [3]}],
          "inputs": [0], "outputs": [3], "name": "main"}
    return build_model([sg], [cast, gather], buffers=[None, np.ones((2000, 16), np.float32).tobytes()])


def test_full_int8_leaves_cast_float():
    """The int8 input is dequantized before the CAST (the converter quantizes no CAST); the GATHER and its table
    are int8, and so is the output."""
    main = rewrite(load_model(_cast_model()), "int8", Settings()).main
    assert [op.op_type for op in main.operators] == ["DEQUANTIZE", "CAST", "GATHER"]
    dequantize, cast, gather = main.operators
    assert [main.tensors[i].dtype for i in (*dequantize.inputs, *dequantize.outputs)] == ["INT8", "FLOAT32"]
    assert cast.inputs == dequantize.outputs
    assert [main.tensors[i].dtype for i in gather.inputs + gather.outputs] == ["INT8", "INT32", "INT8"]
