"""Cross-check ``tflite_flops.analyze`` against numbers TensorFlow computes on its own.

Each Keras model is converted with the TFLite converter and analysed by tflite_flops; the
expected MACs come from TensorFlow's per-op "flops" statistics on the frozen TF graph
(``tf_reference.tf_macs``: Conv2D, DepthwiseConv2dNative, MatMul, BatchMatMulV2/V3, halved).
The two must agree EXACTLY. Where TensorFlow's statistics do not count an op the way TFLite
runs it (Conv2DBackpropInput, Conv3D, Einsum, ops inside while loops, dilated VALID convs
lowered through SpaceToBatchND), the expected value is written out by hand in a comment.

Everything here needs TensorFlow (``tf`` marker); tests that also run the LiteRT interpreter
carry the ``runtime`` marker. Each Keras model is built and converted once per module.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path

import pytest

import tflite_flops
import tf_reference as ref

pytestmark = pytest.mark.tf

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


# --------------------------------------------------------------------------------------------
# Model builders (TensorFlow / Keras imported lazily so collection works without them)
# --------------------------------------------------------------------------------------------

def _keras():
    import keras

    return keras


def _sequential(shape, make_layers, seed=0):
    """Functional model: Input(shape, fixed batch) -> layers from ``make_layers(keras.layers)``."""
    keras = _keras()
    keras.utils.set_random_seed(seed)
    inp = keras.Input(shape[1:], batch_size=shape[0])
    x = inp
    for layer in make_layers(keras.layers):
        x = layer(x)
    return keras.Model(inp, x)


def _conv_bn(L):
    # Conv -> BatchNorm -> ReLU; BatchNorm gets its moving statistics at inference and is
    # folded into the CONV_2D weights by the converter.
    return [L.Conv2D(8, 3, padding="same", use_bias=False), L.BatchNormalization(), L.ReLU(),
            L.Conv2D(4, 1), L.BatchNormalization()]


# name -> (input shape incl. batch, layers). Each of these converts to ops whose MACs TF
# counts exactly like TFLite (Conv2D, DepthwiseConv2dNative, MatMul).
HANDCRAFTED = {
    # odd input, SAME padding, stride 2: output ceil(17/2) = 9
    "conv_same_stride2": ((1, 17, 17, 3), lambda L: [L.Conv2D(8, 3, strides=2, padding="same")]),
    # rectangular kernel, VALID, different strides per axis
    "conv_valid_rect": ((1, 17, 19, 3), lambda L: [L.Conv2D(8, (3, 5), strides=(2, 1), padding="valid")]),
    # dilation: TF traces SpaceToBatchND -> Conv2D -> BatchToSpaceND, the converter fuses it
    # back into one dilated CONV_2D. The counts agree when H, W are multiples of the rate.
    "conv_dilated_same": ((1, 16, 16, 3), lambda L: [L.Conv2D(8, 3, dilation_rate=2, padding="same")]),
    "conv_dilated_valid": ((1, 16, 20, 3), lambda L: [L.Conv2D(8, 3, dilation_rate=2, padding="valid")]),
    "conv_batch2": ((2, 12, 12, 4), lambda L: [L.Conv2D(6, 3, padding="same", activation="relu")]),
    "depthwise_mult2": ((1, 16, 16, 4), lambda L: [L.DepthwiseConv2D(3, depth_multiplier=2, padding="same")]),
    "depthwise_stride2_valid": ((1, 15, 15, 6), lambda L: [L.DepthwiseConv2D(5, strides=2, padding="valid")]),
    "separable": ((1, 16, 16, 4), lambda L: [L.SeparableConv2D(8, 3, padding="same", activation="relu")]),
    "separable_mult2": ((1, 12, 12, 3), lambda L: [L.SeparableConv2D(10, 3, depth_multiplier=2, strides=2,
                                                                      padding="same")]),
    # Dense on a rank-3 input: TF reshapes to [5, 12] x [12, 7]; TFLite FULLY_CONNECTED
    "dense_3d": ((1, 5, 12), lambda L: [L.Dense(7)]),
    "dense_stack": ((3, 20), lambda L: [L.Dense(16, activation="relu"), L.Dense(4)]),
    # groups=2: Keras 3 runs it in a jit_compile'd function (stays a StatefulPartitionedCall
    # after freezing; tf_reference descends into it); TFLite CONV_2D with filter [8,3,3,4]
    "grouped_conv": ((1, 8, 8, 8), lambda L: [L.Conv2D(8, 3, groups=2, padding="same")]),
    "conv_bn_folded": ((1, 10, 10, 3), _conv_bn),
    # Conv1D: TF ExpandDims + Conv2D; TFLite RESHAPE + CONV_2D
    "conv1d": ((1, 32, 6), lambda L: [L.Conv1D(12, 5, strides=2, padding="same")]),
}

APPS = {
    # weights=None: random init; MACs do not depend on the values.
    "MobileNet_a025_96": ((1, 96, 96, 3), lambda k: k.applications.MobileNet(
        input_shape=(96, 96, 3), alpha=0.25, weights=None)),
    "MobileNetV2_a035_96": ((1, 96, 96, 3), lambda k: k.applications.MobileNetV2(
        input_shape=(96, 96, 3), alpha=0.35, weights=None)),
    "ResNet50_64": ((1, 64, 64, 3), lambda k: k.applications.ResNet50(
        input_shape=(64, 64, 3), weights=None)),
}


@lru_cache(maxsize=None)
def keras_model(name: str):
    """(model, input shape) for a name of HANDCRAFTED or APPS; built once per session."""
    if name in HANDCRAFTED:
        shape, make_layers = HANDCRAFTED[name]
        return _sequential(shape, make_layers), shape
    shape, make = APPS[name]
    keras = _keras()
    keras.utils.set_random_seed(0)
    return make(keras), shape


@lru_cache(maxsize=None)
def tflite_bytes(name: str, mode: str = "float") -> bytes:
    model, shape = keras_model(name)
    return ref.convert(model, mode, input_shape=shape)


@pytest.fixture(scope="module", autouse=True)
def _clear_caches():
    """Drop the converted models (ResNet50 is ~100 MB as .tflite) when the module is done."""
    yield
    tflite_bytes.cache_clear()
    keras_model.cache_clear()


def _load_make_samples():
    """Import sample_models/make_samples.py (not a package) for its model builders."""
    if "make_samples" in sys.modules:
        return sys.modules["make_samples"]
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_samples"] = module
    spec.loader.exec_module(module)
    return module


def _sample(samples_dir: Path, name: str) -> Path:
    path = samples_dir / name
    assert path.exists(), f"{name} missing; run python sample_models/make_samples.py"  # committed: a failure, not a skip
    return path


def _mac_ops(report):
    return [(op.op_type, op.macs, op.status) for op in report.ops if op.macs]


# --------------------------------------------------------------------------------------------
# Exact agreement with TensorFlow's op statistics
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "MobileNet_a025_96",
    "MobileNetV2_a035_96",
    pytest.param("ResNet50_64", marks=pytest.mark.slow),
])
def test_keras_applications_match_tf(name):
    model, shape = keras_model(name)
    stats = ref.tf_mac_stats(model, shape)
    assert not stats.uncounted, f"TF graph has MAC ops tf_macs does not count: {dict(stats.uncounted)}"
    report = tflite_flops.analyze(tflite_bytes(name))
    assert report.totals.macs == stats.total, (stats.by_type, _mac_ops(report))


@pytest.mark.parametrize("name", list(HANDCRAFTED))
def test_handcrafted_layers_match_tf(name):
    model, shape = keras_model(name)
    stats = ref.tf_mac_stats(model, shape)
    assert stats.total > 0
    assert not stats.uncounted, dict(stats.uncounted)
    report = tflite_flops.analyze(tflite_bytes(name))
    assert report.totals.macs == stats.total, (stats.nodes, _mac_ops(report))


def test_batch_matmul_matches_tf():
    """Two-input keras.ops.matmul -> TF BatchMatMulV2 -> TFLite BATCH_MATMUL (broadcast batch)."""
    keras = _keras()
    a = keras.Input((3, 5, 8), batch_size=2)
    b = keras.Input((1, 8, 4), batch_size=2)  # broadcast over dim 1
    model = keras.Model([a, b], keras.ops.matmul(a, b))
    shapes = [(2, 3, 5, 8), (2, 1, 8, 4)]
    stats = ref.tf_mac_stats(model, shapes)
    # 2·3 (broadcast batch) · 5·4 (M·P) · 8 (K) = 960
    assert stats.total == 960
    report = tflite_flops.analyze(ref.convert(model))
    assert [op.op_type for op in report.ops if op.macs] == ["BATCH_MATMUL"]
    assert report.totals.macs == stats.total


# --------------------------------------------------------------------------------------------
# Ops that TF's statistics do not count like TFLite: expected value written out
# --------------------------------------------------------------------------------------------

def test_conv2d_transpose_same_by_hand():
    model = _sequential((1, 16, 16, 8), lambda L: [L.Conv2DTranspose(4, 3, strides=2, padding="same")])
    report = tflite_flops.analyze(ref.convert(model))
    assert [op.op_type for op in report.ops if op.macs] == ["TRANSPOSE_CONV"]
    # every input pixel scatters a full kernel:
    # 1·16·16·8 (input) · 3·3·4 (kernel · C_out) = 73,728
    assert report.totals.macs == 73_728
    # With SAME padding (out = in·stride) TF's Conv2DBackpropInput statistic agrees:
    # 2·n(out)·n(kernel) / (C_out·s_h·s_w) / 2 = 32·32·4 · 3·3·4·8 / (4·2·2) = 73,728
    assert ref.tf_macs(model, (1, 16, 16, 8), op_types=("Conv2DBackpropInput",)) == 73_728


def test_conv2d_transpose_valid_by_hand():
    model = _sequential((1, 16, 16, 8), lambda L: [L.Conv2DTranspose(4, 3, strides=2, padding="valid")])
    report = tflite_flops.analyze(ref.convert(model))
    # output 33x33x4, but the work is still one kernel per input pixel:
    # 1·16·16·8 (input) · 3·3·4 (kernel · C_out) = 73,728
    # (TF's formula gives 33·33·4 · 3·3·4·8 / (4·2·2) = 78,408, because out != in·stride.)
    assert report.totals.macs == 73_728


def test_conv3d_by_hand():
    model = _sequential((1, 6, 8, 8, 3), lambda L: [L.Conv3D(4, 3, padding="same")])
    report = tflite_flops.analyze(ref.convert(model))
    assert [op.op_type for op in report.ops if op.macs] == ["CONV_3D"]
    # 1·6·8·8·4 (output) · 3·3·3·3 (K_d·K_h·K_w·C_in) = 1,536 · 81 = 124,416
    assert report.totals.macs == 124_416
    # TF registers a Conv3D statistic with the same formula
    assert ref.tf_macs(model, (1, 6, 8, 8, 3), op_types=("Conv3D",)) == 124_416


def test_conv3d_valid_strided_by_hand():
    model = _sequential((1, 7, 9, 9, 2), lambda L: [L.Conv3D(5, (3, 3, 2), strides=(2, 2, 1), padding="valid")])
    report = tflite_flops.analyze(ref.convert(model))
    # output D=(7-3)//2+1=3, H=(9-3)//2+1=4, W=(9-2)//1+1=8, C=5:
    # 1·3·4·8·5 (output) · 3·3·2·2 (K_d·K_h·K_w·C_in) = 480 · 36 = 17,280
    assert report.totals.macs == 17_280


def test_dilated_valid_odd_size_by_hand():
    model = _sequential((1, 17, 17, 3), lambda L: [L.Conv2D(8, 3, dilation_rate=2, padding="valid")])
    report = tflite_flops.analyze(ref.convert(model))
    assert [op.op_type for op in report.ops if op.macs] == ["CONV_2D"]
    # effective kernel 5, output (17-5)+1 = 13:
    # 1·13·13·8 (output) · 3·3·3 (kernel · C_in) = 36,504
    # (TF's graph pads 17 -> 18 for SpaceToBatchND, so its Conv2D statistic counts a 14x14
    #  output: 42,336. The TFLite converter fuses back to a dilated CONV_2D with 13x13.)
    assert report.totals.macs == 36_504


def test_transformer_block_tf_plus_einsum():
    ms = _load_make_samples()
    model = ms.build_transformer()
    shape = (1, ms.SEQ_LEN, ms.D_MODEL)
    stats = ref.tf_mac_stats(model, shape)
    # Keras 3 MultiHeadAttention computes scores and the weighted sum with Einsum, which has no
    # TF statistic. Each is heads · S · S · key_dim = 2 · 16 · 16 · 16 = 8,192 MACs.
    assert stats.uncounted == {"Einsum": 2}
    einsum = 2 * (2 * 16 * 16 * 16)
    # Total by hand: Q,K,V,O projections 4 · 16·32·32 = 65,536; FFN 16·32·64 + 16·64·32 = 65,536;
    # attention 16,384  ->  147,456
    assert stats.total + einsum == 147_456
    report = tflite_flops.analyze(ref.convert(model))
    assert report.totals.macs == stats.total + einsum


def test_lstm_by_hand():
    ms = _load_make_samples()
    model = ms.build_lstm()
    report = tflite_flops.analyze(ref.convert(model))
    assert "WHILE" in {op.op_type for op in report.ops}
    # T=8 steps, 4 gates; each step of a layer: 4H·(I + H) MACs (input and recurrent kernels).
    # layer 1: 8 · 64 · (4 + 16) = 10,240; layer 2: 8 · 64 · (16 + 16) = 16,384;
    # Dense(3): 16 · 3 = 48   ->  26,672
    # (TF's statistics cannot give this: the loop body is one set of nodes whose recurrent
    #  MatMul has an unknown input shape after freezing.)
    assert report.totals.macs == 26_672


def test_a_text_models_embedding_table_counts_in_params_and_is_read_a_row_a_token():
    """Keras' own count of an Embedding -> LSTM -> Dense text model is the reference for params (issue 42: the
    GATHER's table was left out, 49 K of 689 K), and the lookup reads the rows its 64 tokens name."""
    keras = _keras()
    keras.utils.set_random_seed(0)
    tokens = keras.Input((64,), batch_size=1, dtype="int32")
    x = keras.layers.LSTM(64)(keras.layers.Embedding(5_000, 128)(tokens))
    model = keras.Model(tokens, keras.layers.Dense(1)(x))
    # Embedding 5,000·128 = 640,000; LSTM 4·64·(128 + 64 + 1) = 49,408; Dense 64 + 1 = 65: 689,473
    assert model.count_params() == 689_473
    report = tflite_flops.analyze(ref.convert(model))
    # the converter drops the Dense layer's bias (one zero, added to nothing): Keras' count less 1
    assert report.totals.params == model.count_params() - 1 == 689_472
    gather = next(op for op in report.ops if op.op_type == "GATHER" and op.params)
    # 64 int32 ids (256 B) + 64 rows of 128 float32 (32,768 B), not the 2,560,000-byte table
    assert (gather.params, gather.bytes_read) == (640_000, 256 + 64 * 128 * 4)


# --------------------------------------------------------------------------------------------
# Quantized conversions keep the MAC count
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["int8", "dynamic_range", "fp16"])
def test_quantized_conversions_same_macs(mode):
    name = "MobileNetV2_a035_96"
    float_macs = tflite_flops.analyze(tflite_bytes(name)).totals.macs
    report = tflite_flops.analyze(tflite_bytes(name, mode))
    assert report.totals.macs == float_macs
    model, shape = keras_model(name)
    assert report.totals.macs == ref.tf_macs(model, shape)


def test_sample_cnn_variants(samples_dir):
    ms = _load_make_samples()
    types = ref.MAC_OP_TYPES + ("Conv2DBackpropInput",)  # its Conv2DTranspose uses SAME padding
    expected = ref.tf_macs(ms.build_cnn(), ms.CNN_SHAPE, op_types=types)
    # stem 16·16·16·27 = 110,592; depthwise 16·16·16·9 = 36,864; 1x1 16·16·16·16 = 65,536;
    # branch 8·8·8·144 = 73,728; transposed 8·8·24 · 3·3·8 = 110,592; Dense 8·10 = 80
    assert expected == 397_392
    for variant in ("float", "int8", "dynamic_range", "fp16"):
        report = tflite_flops.analyze(_sample(samples_dir, f"cnn_{variant}.tflite"))
        assert report.totals.macs == expected, variant


# --------------------------------------------------------------------------------------------
# Dynamic shapes: sample models with -1 in the signature, given concrete shapes
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("batch", [1, 5])
def test_mlp_dynamic_batch(samples_dir, batch):
    ms = _load_make_samples()
    report = tflite_flops.analyze(_sample(samples_dir, "mlp_dynamic_batch.tflite"), batch=batch)
    expected = ref.tf_macs(ms.build_mlp(), (batch, ms.MLP_FEATURES))
    # batch · (64·128 + 128·64 + 64·10) = batch · 17,024
    assert expected == batch * 17_024
    assert report.totals.macs == expected


@pytest.mark.parametrize("shape", [(1, 32, 32, 3), (2, 48, 40, 3), (1, 37, 23, 3)])
def test_fcn_dynamic_hw(samples_dir, shape):
    ms = _load_make_samples()
    report = tflite_flops.analyze(_sample(samples_dir, "fcn_dynamic.tflite"), input_shapes={0: shape})
    assert report.totals.macs == ref.tf_macs(ms.build_fcn(), shape)


@pytest.mark.runtime
@pytest.mark.parametrize("name, shapes", [
    ("fcn_dynamic.tflite", {0: (2, 48, 40, 3)}),
    ("fcn_dynamic.tflite", {0: (1, 37, 23, 3)}),
    ("mlp_dynamic_batch.tflite", {0: (7, 64)}),
    ("cnn_float.tflite", {}),
    ("transformer_block.tflite", {}),
])
def test_output_shapes_match_interpreter(samples_dir, name, shapes):
    """Every subgraph-0 op's output shapes equal what LiteRT computes after resizing."""
    import tflite

    data = _sample(samples_dir, name).read_bytes()
    interp = ref.interpreter_shapes(data, shapes)
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    report = tflite_flops.analyze(data, input_shapes=shapes or None)
    checked = 0
    for op in report.ops:
        if op.subgraph != 0:
            continue
        outputs = sg.Operators(op.index).OutputsAsNumpy().tolist()
        expected = tuple(interp[t] for t in outputs)
        assert tuple(tuple(s) for s in op.outputs) == expected, (op.index, op.op_type)
        checked += 1
    assert checked == sg.OperatorsLength()
