"""Cross-check of our shape propagation against the LiteRT interpreter, tensor by tensor.

For every model and every (input shape, batch) case, the interpreter (builtin kernels, default
delegates off) is resized with ``resize_tensor_input`` + ``allocate_tensors`` and then invoked
once on random data, so that tensors whose shape is only known at run time (outputs of
RESHAPE/FILL/... with computed shapes) have their final shape. Then EVERY tensor of subgraph 0
that the model declares is compared with :func:`tflite_flops.analysis.propagated_shapes`. A
mismatch fails.

Skipped, with the reason counted:

* tensors the interpreter adds after the model's own (indices ≥ the model's tensor count:
  kernel scratch buffers such as im2col or the hybrid kernels' quantized copies), which the
  model does not declare and nothing propagates;
* a WHILE output that no op reads and that is not a model output, when it differs: LiteRT does
  not resize a loop variable that the body passes through unchanged, so such a dead output
  keeps its prepared (placeholder) shape while the loop ran on the real one. Nothing is costed
  on it. (Dead outputs that agree are compared like any other tensor.)

Both ``trust_stored=False`` (every op's shape function runs, even where the stored shape is
static) and ``trust_stored=True`` (what ``analyze()`` does) are checked.

The Keras models are built and converted once per module (``tf`` marker). Expected MACs come
from the interpreter's own tensor shapes (``n(out)·K_h·K_w·C_in/G`` per CONV_2D, ...) and from
TensorFlow's op statistics (``tf_reference.tf_macs``), never from our formulas.
"""

from __future__ import annotations

import contextlib
import io
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import tflite_flops
from tflite_flops.reader.load import load_model
from tflite_flops.analysis import propagated_shapes

pytestmark = pytest.mark.runtime

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"

#: How many tensors were compared, per model and case (printed by the last test with -v).
COVERAGE: dict[str, int] = {}


# --------------------------------------------------------------------------------------------
# The interpreter side


def _interpreter(model_bytes: bytes, shapes: dict[int, tuple[int, ...]]):
    """A LiteRT interpreter resized to ``shapes`` ({input position: shape}), allocated and invoked."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_content=bytes(model_bytes),
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    details = interp.get_input_details()
    for pos, shape in shapes.items():
        interp.resize_tensor_input(details[pos]["index"], [int(d) for d in shape], strict=False)
    interp.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in interp.get_input_details():
        if np.issubdtype(d["dtype"], np.floating):
            x = rng.uniform(-1, 1, d["shape"]).astype(d["dtype"])
        else:
            x = rng.integers(-8, 8, d["shape"]).astype(d["dtype"])
        interp.set_tensor(d["index"], x)
    interp.invoke()
    return interp


def interpreter_shapes(model_bytes: bytes, shapes: dict[int, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    """{tensor index: shape} of every tensor of subgraph 0, as LiteRT sees them after one invoke."""
    interp = _interpreter(model_bytes, shapes)
    return {int(d["index"]): tuple(int(v) for v in d["shape"]) for d in interp.get_tensor_details()}


def _explicit_shapes(model, spec: dict[int, tuple[int, ...]], batch: int | None) -> dict[int, tuple[int, ...]]:
    """The shapes to give the interpreter: ours, plus the batch applied to the other inputs."""
    out = dict(spec)
    if batch is not None:
        for pos, tidx in enumerate(model.main.inputs):
            if pos not in out:
                out[pos] = (batch,) + tuple(model.main.tensors[tidx].shape[1:])
    return out


def cross_check(label: str, model_bytes: bytes, spec: dict[int, tuple[int, ...]], batch: int | None = None) -> int:
    """Compare every tensor; return how many were compared. Fails on the first listing of mismatches."""
    model = load_model(model_bytes)
    theirs = interpreter_shapes(model_bytes, _explicit_shapes(model, spec, batch))
    n_model = len(model.main.tensors)
    scratch = sum(1 for i in theirs if i >= n_model)  # interpreter-added temporaries: not in the model
    sg = model.main
    read = {i for op in sg.operators for i in op.inputs} | set(sg.outputs)
    dead_loop_outputs = {o for op in sg.operators if op.op_type == "WHILE" for o in op.outputs if o not in read}
    assert set(range(n_model)) <= set(theirs), f"{label}: the interpreter does not list every model tensor"
    tolerated: set[int] = set()
    for trust in (False, True):
        ours = propagated_shapes(model, spec, batch, trust_stored=trust)
        differ = [i for i in range(n_model) if ours[i] != theirs[i]]
        tolerated |= {i for i in differ if i in dead_loop_outputs}
        bad = [(i, sg.tensors[i].name, ours[i], theirs[i]) for i in differ if i not in dead_loop_outputs]
        assert not bad, f"{label} {spec} batch={batch} trust_stored={trust}: (index, name, ours, LiteRT) {bad[:8]}"
    checked = [i for i in range(n_model) if i not in tolerated]
    COVERAGE[f"{label} {spec or ''} batch={batch} (skipped: {scratch} interpreter scratch, "
             f"{len(tolerated)} dead WHILE outputs)"] = len(checked)
    return len(checked)


# --------------------------------------------------------------------------------------------
# Sample models

SAMPLE_CASES = [
    ("fcn_dynamic", {0: (1, 64, 64, 3)}, None),
    ("fcn_dynamic", {0: (1, 128, 128, 3)}, None),
    ("fcn_dynamic", {0: (2, 33, 47, 3)}, None),
    ("fcn_dynamic", {0: (3, 224, 160, 3)}, None),
    ("mlp_dynamic_batch", {}, 1),
    ("mlp_dynamic_batch", {}, 4),
    ("mlp_dynamic_batch", {0: (7, 64)}, None),
    ("transformer_block", {}, None),
    ("transformer_block", {}, 3),
    ("cnn_float", {}, None),
    ("cnn_int8", {}, None),
    ("cnn_dynamic_range", {}, None),
    ("cnn_fp16", {}, None),
    ("lstm", {}, None),
]


@pytest.mark.parametrize("name, spec, batch", SAMPLE_CASES, ids=lambda v: str(v))
def test_sample_model_shapes_match_the_interpreter(name, spec, batch):
    data = (SAMPLES / f"{name}.tflite").read_bytes()
    assert cross_check(name, data, spec, batch) > 0


@pytest.mark.parametrize("name", ["cnn_float", "lstm"])
def test_when_the_interpreter_refuses_a_batch_we_warn(name):
    """These models hard-code batch 1 in a constant (TRANSPOSE_CONV output_shape; the LSTM's
    RESHAPE target): LiteRT refuses batch 3, and our analysis must flag it rather than count it."""
    data = (SAMPLES / f"{name}.tflite").read_bytes()
    with pytest.raises(Exception):
        _interpreter(data, _explicit_shapes(load_model(data), {}, 3))
    report = tflite_flops.analyze(data, batch=3)
    assert any("output shape not derived" in w for w in report.warnings)
    assert any(not o.shapes_resolved for o in report.ops)


# --------------------------------------------------------------------------------------------
# MACs from the interpreter's own shapes


def interpreter_macs(model_bytes: bytes, shapes: dict[int, tuple[int, ...]]) -> int:
    """MACs of the contraction ops of subgraph 0 computed from LiteRT's tensor shapes.

    CONV_2D n(out)·K_h·K_w·filter[3] (filter [C_out, K_h, K_w, C_in/G]); DEPTHWISE_CONV_2D
    n(out)·K_h·K_w; TRANSPOSE_CONV n(input)·K_h·K_w·C_out; FULLY_CONNECTED n(in)·U (weights [U, I]).
    The op list comes from the interpreter's own ops details.
    """
    interp = _interpreter(model_bytes, shapes)
    shape = {int(d["index"]): tuple(int(v) for v in d["shape"]) for d in interp.get_tensor_details()}

    def n(i):
        return int(np.prod(shape[i], dtype=np.int64))

    total = 0
    for op in interp._get_ops_details():
        kind, ins, outs = op["op_name"], list(op["inputs"]), list(op["outputs"])
        if kind == "CONV_2D":
            _, kh, kw, cin_g = shape[ins[1]]
            total += n(outs[0]) * kh * kw * cin_g
        elif kind == "DEPTHWISE_CONV_2D":
            _, kh, kw, _ = shape[ins[1]]
            total += n(outs[0]) * kh * kw
        elif kind == "TRANSPOSE_CONV":
            cout, kh, kw, _ = shape[ins[1]]
            total += n(ins[2]) * kh * kw * cout
        elif kind == "FULLY_CONNECTED":
            units, _ = shape[ins[1]]
            total += n(ins[0]) * units
        elif kind in ("BATCH_MATMUL", "CONV_3D", "CONV_3D_TRANSPOSE"):
            raise AssertionError(f"interpreter_macs does not handle {kind}")
    return total


def test_fcn_macs_4x_and_equal_to_the_interpreter_count():
    data = (SAMPLES / "fcn_dynamic.tflite").read_bytes()
    ours = {s: tflite_flops.analyze(data, input_shapes={"image": (1, s, s, 3)}).totals.macs for s in (64, 128)}
    assert ours[128] == 4 * ours[64]
    for s in (64, 128):
        assert ours[s] == interpreter_macs(data, {0: (1, s, s, 3)})
    # an odd, non-square size too: ceil() rounding in the stride-2 stem
    odd = tflite_flops.analyze(data, input_shapes="2x33x47x3").totals.macs
    assert odd == interpreter_macs(data, {0: (2, 33, 47, 3)})


# --------------------------------------------------------------------------------------------
# Keras models built here (TensorFlow needed)


def _convert_dynamic(model, specs) -> bytes:
    """Convert through a frozen concrete function whose TensorSpecs keep None dims dynamic."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    sig = [tf.TensorSpec(s, tf.float32, name=f"in{i}") for i, s in enumerate(specs)]

    @tf.function(input_signature=sig)
    def serve(*xs):
        return model(xs[0] if len(xs) == 1 else list(xs), training=False)

    frozen = convert_variables_to_constants_v2(serve.get_concrete_function())
    conv = tf.lite.TFLiteConverter.from_concrete_functions([frozen], model)
    with contextlib.redirect_stdout(io.StringIO()):
        return conv.convert()


def _convert_fn(fn, specs) -> bytes:
    import tensorflow as tf

    sig = [tf.TensorSpec(s, tf.float32, name=f"in{i}") for i, s in enumerate(specs)]
    f = tf.function(fn, input_signature=sig)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f)
    with contextlib.redirect_stdout(io.StringIO()):
        return conv.convert()


def _fcn(keras, tf):
    """Dynamic N, H, W: strided/dilated/separable/transposed convs, pads, pools, a resize whose size
    is computed from SHAPE, a squeeze-excite style MEAN(keep_dims)·x, and a VALID branch."""
    L = keras.layers

    class Resize2x(L.Layer):
        def call(self, x):
            return tf.image.resize(x, tf.shape(x)[1:3] * 2, method="bilinear")

        def compute_output_shape(self, s):
            return (s[0], None, None, s[3])

    inp = keras.Input((None, None, 3))
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)
    a = L.Conv2D(8, 3, padding="same", dilation_rate=2)(x)  # SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND
    b = L.DepthwiseConv2D(3, padding="same")(x)
    x = L.Add()([a, b])
    y = L.SeparableConv2D(16, 3, strides=2, padding="valid")(x)
    y = L.ZeroPadding2D(((1, 0), (2, 1)))(y)
    y = L.AveragePooling2D(2, padding="same")(y)
    y = L.Conv2DTranspose(8, 3, strides=2, padding="same")(y)  # output_shape computed from SHAPE
    y = Resize2x()(y)
    z = L.Conv2D(8, 5, strides=3, padding="valid")(x)
    z = L.MaxPooling2D(3, strides=2, padding="valid")(z)
    g = L.GlobalAveragePooling2D(keepdims=True)(y)
    y = L.Multiply()([y, g])
    return keras.Model(inp, [L.Conv2D(4, 1)(y), z])


def _dense3d(keras, tf):
    """Dynamic batch; Dense on a 3-D input (Tensordot: SHAPE/GATHER/REDUCE_PROD/RESHAPE) and a
    reshape computed from tf.shape."""
    L = keras.layers
    inp = keras.Input((10, 12))
    x = L.Dense(16, activation="relu")(inp)
    x = L.Dense(8)(x)
    x = L.Lambda(lambda v: tf.reshape(v, [tf.shape(v)[0], -1]))(x)
    x = L.Reshape((5, 16))(x)
    x = L.Flatten()(x)
    return keras.Model(inp, L.Dense(3)(x))


def _transformer(keras, tf, seq=12):
    """LayerNorm, MultiHeadAttention, GELU MLP, residuals; dynamic batch (and sequence if seq is None)."""
    L = keras.layers
    inp = keras.Input((seq, 32))
    h = L.MultiHeadAttention(num_heads=4, key_dim=8)(L.LayerNormalization()(inp), L.LayerNormalization()(inp))
    x = L.Add()([inp, h])
    h = L.Dense(64, activation="gelu")(L.LayerNormalization()(x))
    x = L.Add()([x, L.Dense(32)(h)])
    return keras.Model(inp, L.GlobalAveragePooling1D()(x))


def _shape_zoo(x):
    """Shape ops around a dynamic [N, H, W, 4] input (plain TF ops, converted as builtins)."""
    import tensorflow as tf

    a = x[..., 1:3]
    b = x[:, tf.newaxis, :, ::2]
    b = tf.reduce_mean(b[..., 0], axis=[2], keepdims=True)
    hw = tf.stack([tf.shape(x)[1], tf.shape(x)[2]])
    r = tf.image.resize(x, tf.cast(tf.cast(hw, tf.float32) * 1.5, tf.int32), method="nearest")
    s1, s2 = tf.split(x, 2, axis=3)
    u = tf.unstack(x[..., :2], axis=3)
    g = tf.gather(x[:, 0, 0, :], tf.zeros([tf.shape(x)[0], 3], tf.int32), batch_dims=1)
    rng = tf.cast(tf.range(tf.shape(x)[2]), tf.float32)
    f = tf.fill(tf.shape(x)[:2], 2.0)
    bt = tf.broadcast_to(x[:, :1, :1, :], tf.shape(x))
    t = tf.tile(x, [1, 1, 2, 1])
    p = tf.pad(x, [[0, 0], [1, 2], [3, 0], [0, 0]], mode="REFLECT")
    c = tf.concat([s1, s2, a], axis=-1)
    e = tf.expand_dims(tf.squeeze(x[:, :, :1, :], axis=2), -1)
    z = tf.nn.softmax(tf.reshape(x, [-1, tf.shape(x)[1] * tf.shape(x)[2], 4]), axis=-1)
    return [a, b, r, u[0], u[1], g, rng, f, bt, t, tf.reverse(x, axis=[1]), p, c, e, tf.argmax(x, axis=-1),
            tf.transpose(x, [0, 3, 1, 2]), tf.slice(x, [0, 1, 1, 0], [-1, 2, -1, 2]), z,
            tf.reduce_max(x, axis=[1, 2]), tf.nn.space_to_depth(x[:, :4, :4, :], 2)]


def _cond(x):
    """An IF whose branches reshape with a computed shape: output shapes come from the branch subgraphs."""
    import tensorflow as tf

    flat = tf.reshape(x, [tf.shape(x)[0], -1])
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.nn.relu(tf.reshape(x, [tf.shape(x)[0], -1])) * 2.0,
                lambda: flat + 1.0)
    return tf.reduce_mean(y, axis=-1)


def _rnn(keras):
    """LSTM -> Conv1D -> GRU -> Dense over a dynamic sequence length (batch 1): two WHILE loops whose
    trip count is the sequence length, read from SHAPE."""
    L = keras.layers
    inp = keras.Input((None, 6))
    x = L.LSTM(16, return_sequences=True)(inp)
    x = L.Conv1D(8, 3, padding="same")(x)
    return keras.Model(inp, L.Dense(2)(L.GRU(8)(x)))


@lru_cache(maxsize=None)
def keras_model(name: str):
    """(Keras model or None, .tflite bytes) of a test model, built and converted once."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    if name == "fcn":
        m = _fcn(keras, tf)
        return m, _convert_dynamic(m, [[None, None, None, 3]])
    if name == "dense3d":
        m = _dense3d(keras, tf)
        return m, _convert_dynamic(m, [[None, 10, 12]])
    if name == "transformer":
        m = _transformer(keras, tf)
        return m, _convert_dynamic(m, [[None, 12, 32]])
    if name == "transformer_dynamic_seq":
        m = _transformer(keras, tf, seq=None)
        return m, _convert_dynamic(m, [[None, None, 32]])
    if name == "mobilenet_v3_small":
        m = keras.applications.MobileNetV3Small(input_shape=(None, None, 3), weights=None, include_top=False)
        return m, _convert_dynamic(m, [[None, None, None, 3]])
    if name == "mobilenet_v3_small_minimalistic":
        m = keras.applications.MobileNetV3Small(input_shape=(None, None, 3), weights=None, include_top=False,
                                                minimalistic=True)
        return m, _convert_dynamic(m, [[None, None, None, 3]])
    if name == "mobilenet_v3_large":
        m = keras.applications.MobileNetV3Large(input_shape=(None, None, 3), weights=None, include_top=True)
        return m, _convert_dynamic(m, [[None, None, None, 3]])
    if name == "shape_zoo":
        return None, _convert_fn(_shape_zoo, [[None, None, None, 4]])
    if name == "rnn":
        m = _rnn(keras)
        return m, _convert_dynamic(m, [[1, None, 6]])
    if name == "cond":
        return None, _convert_fn(_cond, [[None, None, 4]])
    raise KeyError(name)


@pytest.fixture(scope="module", autouse=True)
def _drop_models():
    yield
    keras_model.cache_clear()


KERAS_CASES = [
    ("fcn", {0: (1, 64, 64, 3)}, None),
    ("fcn", {0: (2, 61, 97, 3)}, None),
    ("fcn", {0: (1, 128, 96, 3)}, None),
    ("dense3d", {}, 1),
    ("dense3d", {}, 5),
    ("dense3d", {0: (3, 10, 12)}, None),
    ("transformer", {}, 1),
    ("transformer", {}, 4),
    ("transformer_dynamic_seq", {0: (1, 7, 32)}, None),
    ("transformer_dynamic_seq", {0: (3, 20, 32)}, None),
    ("mobilenet_v3_small", {0: (1, 224, 224, 3)}, None),
    ("mobilenet_v3_small", {0: (2, 96, 128, 3)}, None),
    ("mobilenet_v3_small", {0: (1, 75, 75, 3)}, None),
    ("mobilenet_v3_small_minimalistic", {0: (1, 160, 160, 3)}, None),
    ("shape_zoo", {0: (1, 6, 8, 4)}, None),
    ("shape_zoo", {0: (3, 5, 7, 4)}, None),
    ("rnn", {0: (1, 5, 6)}, None),
    ("rnn", {0: (1, 11, 6)}, None),
    ("cond", {0: (2, 5, 4)}, None),
    ("cond", {0: (1, 3, 4)}, None),
]


@pytest.mark.tf
@pytest.mark.parametrize("name, spec, batch", KERAS_CASES, ids=lambda v: str(v))
def test_keras_model_shapes_match_the_interpreter(name, spec, batch):
    _, data = keras_model(name)
    assert cross_check(name, data, spec, batch) > 0


@pytest.mark.tf
def test_keras_fcn_macs_equal_the_interpreter_count():
    _, data = keras_model("fcn")
    for spec in ((1, 64, 64, 3), (2, 61, 97, 3), (1, 128, 128, 3)):
        report = tflite_flops.analyze(data, input_shapes=[spec])
        assert not report.warnings, report.warnings
        assert report.totals.macs == interpreter_macs(data, {0: spec}), spec


@pytest.mark.tf
def test_rnn_macs_follow_the_sequence_length():
    # Per time step: LSTM(16) on 6 features: 6·64 + 16·64 = 1,408; Conv1D(8, k=3) on 16 channels:
    # 8·3·16 = 384; GRU(8) on 8 features: 8·24 + 8·24 = 384. Dense 8->2 once: 16.
    # MACs = T·(1,408 + 384 + 384) + 16 = 2,176·T + 16. (TensorFlow's statistics count a loop
    # body once, so they cannot serve here.)
    _, data = keras_model("rnn")
    for steps in (5, 11):
        report = tflite_flops.analyze(data, input_shapes=f"1x{steps}x6")
        assert report.totals.macs == 2_176 * steps + 16  # 10,896 and 23,952
        assert not report.warnings, report.warnings


@pytest.mark.tf
def test_mobilenet_v3_small_dynamic_matches_tensorflow_statistics():
    import tf_reference as ref

    model, data = keras_model("mobilenet_v3_small")
    placeholder = tflite_flops.analyze(data)
    assert any("dynamic dims [0, 1, 2]" in w for w in placeholder.warnings)
    at224 = tflite_flops.analyze(data, input_shapes="1x224x224x3")
    assert not at224.warnings
    assert at224.totals.macs == ref.tf_macs(model, (1, 224, 224, 3))  # 54,896,576 with TF 2.21 / Keras 3
    assert at224.totals.macs > 50 * placeholder.totals.macs  # the placeholder [1,1,1,3] counts ~0.9 M
    # --batch 4 on the batch-agnostic model: exactly 4x
    assert tflite_flops.analyze(data, input_shapes="4x224x224x3").totals.macs == 4 * at224.totals.macs
    at160 = tflite_flops.analyze(data, input_shapes="1x160x192x3").totals.macs
    assert at160 == ref.tf_macs(model, (1, 160, 192, 3))


@pytest.mark.tf
@pytest.mark.slow
def test_mobilenet_v3_large_dynamic_matches_tensorflow_statistics():
    import tf_reference as ref

    model, data = keras_model("mobilenet_v3_large")
    placeholder = tflite_flops.analyze(data).totals.macs  # about 5 M: the converter's [1,1,1,3]
    macs = tflite_flops.analyze(data, input_shapes="1x224x224x3").totals.macs
    assert macs == ref.tf_macs(model, (1, 224, 224, 3))  # 216,589,760 with TF 2.21 / Keras 3
    assert placeholder < 10_000_000 < 200_000_000 < macs
    cross_check("mobilenet_v3_large", data, {0: (2, 97, 131, 3)})


def test_zz_coverage_summary(capsys, request):
    """Not a check: prints how many tensors were compared (with -v)."""
    if request.config.getoption("verbose") < 1:
        return
    with capsys.disabled():
        total = sum(COVERAGE.values())
        print(f"\nshape cross-check: {total} tensor shapes compared over {len(COVERAGE)} cases")
        for k, v in COVERAGE.items():
            print(f"  {v:4d}  {k}")
