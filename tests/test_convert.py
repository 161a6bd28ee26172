"""analyze() on a Keras model, a SavedModel directory and a concrete function (convert.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tflite_flops
from render_helpers import SAMPLES
from tflite_flops.convert import QUANTIZATION_MODES, is_concrete_function, is_keras_model, needs_conversion, to_tflite
from tflite_flops.errors import InputSpecError, RuntimeUnavailableError

# The tiny model: Conv2D(8, 3×3, valid) on 1×16×16×3, Flatten, Dense(4).
#   conv:  1·14·14·8 · 3·3·3 = 42,336 MACs
#   dense: 1 · (14·14·8) · 4 = 1568·4 = 6,272 MACs
TINY_MACS = 42_336 + 6_272  # = 48,608


@pytest.fixture(scope="module")
def tiny():
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    return tf.keras.Sequential([tf.keras.Input((16, 16, 3), batch_size=1), tf.keras.layers.Conv2D(8, 3),
                                tf.keras.layers.Flatten(), tf.keras.layers.Dense(4)])


@pytest.mark.tf
def test_keras_model_matches_a_manual_conversion(tiny):
    import tensorflow as tf

    manual = tf.lite.TFLiteConverter.from_keras_model(tiny).convert()
    direct = tflite_flops.analyze(tiny)
    assert direct.totals.macs == tflite_flops.analyze(manual).totals.macs == TINY_MACS
    assert direct.totals.flops == tflite_flops.analyze(manual).totals.flops
    assert set(direct.totals.by_precision) == {"float32"}


@pytest.mark.tf
@pytest.mark.parametrize("mode", ["int8", "dynamic_range", "fp16"])
def test_quantization_modes(tiny, mode):
    report = tflite_flops.analyze(tiny, quantization=mode)
    assert report.totals.macs == TINY_MACS  # quantization does not change the arithmetic
    precisions = set(report.totals.by_precision)
    if mode == "int8":
        assert precisions == {"int8"} and report.inputs[0].dtype == "INT8"
    elif mode == "dynamic_range":
        assert "hybrid" in precisions and report.inputs[0].dtype == "FLOAT32"
    else:  # float16 weights are dequantized once, at init
        assert precisions == {"float32"}
        assert any(o.op_type == "DEQUANTIZE" and o.phase == "init" for o in report.ops)


@pytest.mark.tf
def test_int8_with_representative_data(tiny):
    import numpy as np

    def data():
        for _ in range(4):
            yield [np.full((1, 16, 16, 3), 0.5, np.float32)]

    report = tflite_flops.analyze(to_tflite(tiny, "int8", representative_data=data))
    assert report.totals.macs == TINY_MACS and set(report.totals.by_precision) == {"int8"}


@pytest.mark.tf
def test_saved_model_directory(tiny, tmp_path):
    import tensorflow as tf

    path = tmp_path / "saved"
    tf.saved_model.save(tiny, str(path))
    assert needs_conversion(path) and needs_conversion(str(path))
    assert tflite_flops.analyze(str(path)).totals.macs == TINY_MACS


@pytest.mark.tf
def test_concrete_function():
    import tensorflow as tf

    w = tf.constant(tf.ones([8, 4]))

    @tf.function(input_signature=[tf.TensorSpec([2, 8], tf.float32)])
    def f(x):
        return tf.matmul(x, w)

    cf = f.get_concrete_function()
    assert is_concrete_function(cf) and not is_keras_model(cf)
    assert tflite_flops.analyze(cf).totals.macs == 2 * 8 * 4  # = 64
    assert tflite_flops.analyze(cf, quantization="int8").totals.macs == 64


def test_bad_quantization_arguments():
    with pytest.raises(InputSpecError, match="only|applies"):
        tflite_flops.analyze(SAMPLES / "cnn_float.tflite", quantization="int8")
    with pytest.raises(InputSpecError, match="unknown quantization"):
        to_tflite(object(), "int4")
    with pytest.raises(InputSpecError, match="cannot convert"):
        to_tflite(object(), "float")
    assert QUANTIZATION_MODES == ("float", "dynamic_range", "fp16", "int8")


class _FakeKerasModel:
    """Looks like a Keras model by its class path, without TensorFlow."""


_FakeKerasModel.__module__ = "keras.src.models.model"
_FakeKerasModel.__qualname__ = _FakeKerasModel.__name__ = "Model"


def test_clear_error_without_tensorflow(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # makes `import tensorflow` fail
    fake = _FakeKerasModel()
    assert is_keras_model(fake) and needs_conversion(fake)
    with pytest.raises(RuntimeUnavailableError, match=r"pip install 'tflite_flops\[tf\]'"):
        tflite_flops.analyze(fake)


def test_plain_sources_are_not_converted(tmp_path):
    assert not needs_conversion(str(SAMPLES / "cnn_float.tflite"))
    assert not needs_conversion(b"TFL3")
    assert not needs_conversion(tmp_path)  # a directory without saved_model.pb


@pytest.mark.slow
def test_static_analysis_does_not_import_tensorflow():
    code = ("import sys, tflite_flops; tflite_flops.analyze(sys.argv[1]); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'ai_edge_litert')]; "
            "sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code, str(SAMPLES / "cnn_float.tflite")], timeout=60)
    assert proc.returncode == 0


@pytest.mark.tf
def test_converted_sources_keep_their_name(tiny, tmp_path):
    """Issue 12: a SavedModel directory or a Keras model is reported by name, not as '<bytes>' / null."""
    import json

    import tensorflow as tf

    path = tmp_path / "my_saved"
    tf.saved_model.save(tiny, str(path))
    assert tflite_flops.analyze(str(path) + "/").model.path == str(path)
    assert tflite_flops.analyze(tiny).model.path == tiny.name
    r = subprocess.run([sys.executable, "-m", "tflite_flops", "analyze", str(path)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].endswith("— my_saved") and "<bytes>" not in r.stdout
    assert "I0000" not in r.stderr and "absl" not in r.stderr  # TensorFlow's import log lines stay hidden
    j = subprocess.run([sys.executable, "-m", "tflite_flops", "analyze", str(path), "-f", "json"],
                       capture_output=True, text=True, timeout=300)
    assert json.loads(j.stdout)["model"]["path"] == str(path)
