"""Precision: quantized variants keep the float MACs, totals split by precision, init-time work
(fp16 DEQUANTIZE, DENSIFY) excluded from per-inference totals, and sparse / mostly-zero weights.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import tflite_flops

from tflite_builder import FULLY_CONNECTED, INT8, build_model

INT16, INT4, DENSIFY = 7, 17, 124

# sample_models/cnn_float.tflite: 397,392 MACs (see test_cli.py / test_crosscheck_tf.py)
CNN_MACS = 397392


@pytest.fixture(scope="module")
def cnn(samples_dir):
    return {mode: tflite_flops.analyze(samples_dir / f"cnn_{mode}.tflite")
            for mode in ("float", "int8", "dynamic_range", "fp16")}


def test_quantized_variants_keep_the_float_macs(cnn):
    assert {mode: r.totals.macs for mode, r in cnn.items()} == dict.fromkeys(cnn, CNN_MACS)


def test_precision_split(cnn):
    assert set(cnn["float"].totals.by_precision) == {"float32"}
    # full int8: every MAC is an int8 MAC
    assert cnn["int8"].totals.by_precision["int8"]["macs"] == CNN_MACS
    assert "float32" not in cnn["int8"].totals.by_precision
    # dynamic range: the big weights are int8 with float activations (hybrid); small ones stay float
    split = cnn["dynamic_range"].totals.by_precision
    assert split["hybrid"]["macs"] > 0 and split["hybrid"]["macs"] + split["float32"]["macs"] == CNN_MACS
    for report in cnn.values():
        by = report.totals.by_precision
        assert sum(v["macs"] for v in by.values()) == report.totals.macs
        assert sum(v["flops"] for v in by.values()) == report.totals.flops


def test_fp16_weights_are_init_time(cnn):
    fp16, flt = cnn["fp16"], cnn["float"]
    assert abs(fp16.totals.flops - flt.totals.flops) <= 0.01 * flt.totals.flops
    deq = [o for o in fp16.ops if o.op_type == "DEQUANTIZE"]
    assert deq and all(o.phase == "init" for o in deq)
    assert fp16.init_totals.flops == sum(o.flops for o in deq) > 0
    assert "DEQUANTIZE" not in fp16.by_op_type
    # the convs compute in float32 on the dequantized weights
    assert set(fp16.totals.by_precision) == {"float32"}


def test_quantize_dequantize_cost_per_element(cnn):
    q = [o for o in cnn["int8"].ops if o.op_type in ("QUANTIZE", "DEQUANTIZE") and o.phase == "inference"]
    for o in q:
        n = int(np.prod(o.outputs[0]))
        assert o.flops == 2 * n  # scale multiply + zero-point add per element


def _fc(x_type: int, w_type: int, w_bytes: bytes, w_shape=(3, 4), sparsity=None) -> bytes:
    sg = {"tensors": [{"shape": [1, w_shape[1]], "type": x_type},
                      {"shape": list(w_shape), "type": w_type, "buffer": 1,
                       "quant": {"scale": [0.1]} if w_type != 0 else None, "sparsity": sparsity},
                      {"shape": [1, w_shape[0]], "type": x_type}],
          "operators": [{"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]}], "inputs": [0], "outputs": [2]}
    return build_model([sg], [FULLY_CONNECTED], buffers=[None, w_bytes])


@pytest.mark.parametrize("x_type, w_type, w_bytes, precision", [
    (0, INT8, bytes(range(1, 13)), "hybrid"),  # float activations, int8 weights
    (INT8, INT8, bytes(range(1, 13)), "int8"),
    (INT16, INT8, bytes(range(1, 13)), "int16"),  # 16x8
    (INT8, INT4, bytes(range(1, 7)), "int4"),  # 12 packed 4-bit weights in 6 bytes
])
def test_precision_of_hand_built_fc(x_type, w_type, w_bytes, precision):
    report = tflite_flops.analyze(_fc(x_type, w_type, w_bytes))
    (op,) = report.ops
    assert op.precision == precision and op.macs == 12  # 1·3·4
    assert report.totals.by_precision[precision]["macs"] == 12


# ---------------------------------------------------------------------------------------------
# Sparsity


def test_mostly_zero_dense_weights():
    w = np.zeros((4, 8), np.float32)
    w[0, :3] = 1.0
    w[2, 5:] = 2.0  # 6 non-zeros of 32
    (op,) = tflite_flops.analyze(_fc(0, 0, w.tobytes(), (4, 8))).ops
    # dense MACs 1·4·8 = 32; effective 32 · 6/32 = 6
    assert (op.macs, op.effective_macs, op.weight_density) == (32, 6, 0.1875)
    assert "mostly-zero" in op.note


def test_zero_counting_can_be_turned_off():
    w = np.zeros((4, 8), np.float32)
    w[0, :3] = 1.0
    report = tflite_flops.analyze(_fc(0, 0, w.tobytes(), (4, 8)), count_zeros=False)
    assert report.ops[0].effective_macs is None  # weights were not read
    assert report.settings["count_zeros"] is False
    assert report.totals.effective_macs == report.totals.macs == 32


def test_dense_weights_with_few_zeros_are_not_reported():
    w = np.ones((4, 8), np.float32)
    w[:, :3] = 0.0  # 37.5 % zeros: below the 50 % threshold
    (op,) = tflite_flops.analyze(_fc(0, 0, w.tobytes(), (4, 8))).ops
    assert op.effective_macs is None and op.weight_density is None


def test_a_weight_counted_to_half_is_counted_whole_when_its_op_may_be_mostly_zero():
    """Zero counting stops at half of a dense weight (it cannot be mostly zero then); an op whose other
    weight is nearly all zeros still gets the exact density: BATCH_MATMUL of two constants."""
    a = np.ones((1, 64, 64), np.float32)  # dense: counting stops after its first 2,048 non-zeros
    b = np.zeros((1, 64, 256), np.float32)
    b[0, 0, :100] = 3.0  # 100 non-zeros of 16,384
    sg = {"tensors": [{"shape": [1, 64, 64], "buffer": 1}, {"shape": [1, 64, 256], "buffer": 2},
                      {"shape": [1, 64, 256]}],
          "operators": [{"opcode": 0, "inputs": [0, 1], "outputs": [2]}], "inputs": [], "outputs": [2]}
    (op,) = tflite_flops.analyze(build_model([sg], [126], buffers=[None, a.tobytes(), b.tobytes()])).ops  # BATCH_MATMUL
    # MACs 64·256·64 = 1,048,576; non-zeros 4,096 + 100 = 4,196 of 4,096 + 16,384 = 20,480
    assert op.macs == 1_048_576
    assert op.weight_density == round(4_196 / 20_480, 6)
    assert op.effective_macs == 1_048_576 * 4_196 // 20_480  # 214,835


def test_dense_weights_are_read_to_half_only(monkeypatch):
    """A dense weight is known not to be mostly zero once half of it is found non-zero: the rest is not read."""
    from tflite_flops.reader import model as model_module

    seen = []
    real = np.count_nonzero
    monkeypatch.setattr(model_module.np, "count_nonzero", lambda x, *a, **k: seen.append(x.size) or real(x, *a, **k))
    w = np.ones((256, 64), np.float32)  # 16,384 non-zeros
    (op,) = tflite_flops.analyze(_fc(0, 0, w.tobytes(), (256, 64))).ops
    assert op.weight_density is None
    assert sum(n for n in seen if n > 64) == 8_192  # the weight's 16,384 / 2 (small calls: the reader's own)


def _csr(rows: list[list[int]], n_cols: int) -> dict:
    """SparsityParameters of a [len(rows), n_cols] matrix: dim 0 dense, dim 1 CSR."""
    segments = np.cumsum([0] + [len(r) for r in rows]).tolist()
    indices = [c for r in rows for c in r]
    return {"traversal_order": [0, 1], "dims": [(0, len(rows), None, None), (1, n_cols, segments, indices)]}


def test_sparse_weights_through_densify_are_init_time():
    # weights [4, 8] with 6 stored values: row 0 cols 1, 5; row 1 col 0; row 3 cols 2, 3, 7
    sparsity = _csr([[1, 5], [0], [], [2, 3, 7]], 8)
    values = np.arange(1, 7, dtype=np.float32).tobytes()
    sg = {"tensors": [{"shape": [1, 8]}, {"shape": [4, 8], "buffer": 1, "sparsity": sparsity},
                      {"shape": [4, 8]}, {"shape": [1, 4]}],
          "operators": [{"opcode": 1, "inputs": [1], "outputs": [2]},
                        {"opcode": 0, "inputs": [0, 2, -1], "outputs": [3]}],
          "inputs": [0], "outputs": [3]}
    report = tflite_flops.analyze(build_model([sg], [FULLY_CONNECTED, DENSIFY], buffers=[None, values]))
    densify, fc = report.ops
    assert densify.phase == "init" and fc.phase == "inference"
    # dense 1·4·8 = 32 MACs; 6 of 32 weights stored -> density 0.1875, effective 6
    assert (fc.macs, fc.effective_macs, fc.weight_density) == (32, 6, 0.1875)
    assert "sparse-encoded" in fc.note
    assert report.totals.macs == 32


def test_sparse_weights_read_directly_by_the_kernel():
    sparsity = _csr([[0, 1], [], [4], [7]], 8)  # 4 stored int8 values
    (op,) = tflite_flops.analyze(_fc(INT8, INT8, bytes([1, 2, 3, 4]), (4, 8), sparsity)).ops
    assert (op.macs, op.effective_macs, op.weight_density) == (32, 4, 0.125)
    assert op.bytes_read == 8 + 4  # input 1·8 int8 = 8 B + the 4 stored weight bytes (not 32 dense)


@pytest.fixture(scope="module")
def pruned_dense():
    """A Keras Dense(128) on 64 features with 90 % of its kernel zeroed, converted twice."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    inp = keras.Input((64,), batch_size=2)
    layer = keras.layers.Dense(128)
    model = keras.Model(inp, keras.layers.Dense(10)(layer(inp)))
    kernel, bias = layer.get_weights()
    mask = np.random.default_rng(0).random(kernel.shape) < 0.1
    layer.set_weights([kernel * mask, bias + 1.0])
    out = {"nnz": int(mask.sum())}
    for name, opts in (("dense", []), ("sparse", [tf.lite.Optimize.EXPERIMENTAL_SPARSITY])):
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        conv.optimizations = opts
        with contextlib.redirect_stdout(io.StringIO()):
            out[name] = conv.convert()
    return out


@pytest.mark.tf
@pytest.mark.parametrize("variant", ["dense", "sparse"])
def test_pruned_keras_dense(pruned_dense, variant):
    nnz = pruned_dense["nnz"]
    report = tflite_flops.analyze(pruned_dense[variant])
    big = [o for o in report.ops if o.op_type == "FULLY_CONNECTED" and o.macs == 2 * 64 * 128]
    assert len(big) == 1
    (op,) = big
    # dense MACs 2·64·128 = 16,384; effective = batch 2 · non-zero weights
    assert op.effective_macs == 2 * nnz
    assert op.weight_density == pytest.approx(nnz / (64 * 128), abs=1e-6)
    assert report.totals.macs == 2 * 64 * 128 + 2 * 128 * 10
    if variant == "sparse":
        assert any(o.op_type == "DENSIFY" and o.phase == "init" for o in report.ops)
