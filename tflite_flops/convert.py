"""Convert a Keras model, a SavedModel directory or a concrete function to .tflite bytes.

``analyze()`` calls this for sources that are not a .tflite path, bytes or a parsed Model,
so that a deployment pipeline can profile what it is about to ship::

    report = tflite_flops.analyze(keras_model, quantization="int8")

TensorFlow is imported lazily, only here, and only for such sources. Without it the call
raises :class:`~tflite_flops.errors.RuntimeUnavailableError` naming the extra to install.

Quantization modes (``tf.lite.TFLiteConverter`` settings):

* ``float``: no optimization (float32 kernels);
* ``dynamic_range``: ``Optimize.DEFAULT``: int8 weights, float activations (hybrid kernels);
* ``fp16``: ``Optimize.DEFAULT`` with float16 as the supported type (float16 weights,
  DEQUANTIZE at init);
* ``int8``: full-integer (``TFLITE_BUILTINS_INT8``, int8 inputs and outputs). It needs a
  representative dataset; without one, uniform random inputs in [-1, 1) are used. Op counts
  and shapes do not depend on the calibration data, accuracy does: pass real samples when
  the converted model itself matters.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from typing import Any, Callable, Iterable, Sequence

from .errors import InputSpecError, ModelLoadError, RuntimeUnavailableError

QUANTIZATION_MODES = ("float", "dynamic_range", "fp16", "int8")
INSTALL_HINT = "pip install 'tflite_flops[tf]'"

RepresentativeData = Callable[[], Iterable[Any]] | Iterable[Any]


def _type_modules(obj: Any) -> list[str]:
    return [f"{c.__module__}.{c.__qualname__}" for c in type(obj).__mro__]


def is_keras_model(obj: Any) -> bool:
    """True for a Keras model (Keras 3, ``tf_keras`` or legacy ``tf.keras``) without importing TensorFlow."""
    for name in _type_modules(obj):
        root = name.split(".")[0]
        if name.endswith(".Model") and (root in ("keras", "tf_keras") or (root == "tensorflow" and ".keras." in name)):
            return True
    return False


def is_concrete_function(obj: Any) -> bool:
    """True for a ``tf.function`` concrete function (``get_concrete_function()``)."""
    return any(n.endswith("ConcreteFunction") for n in (c.__qualname__ for c in type(obj).__mro__))


def is_saved_model_dir(obj: Any) -> bool:
    """True for a directory holding ``saved_model.pb`` (or ``.pbtxt``)."""
    if not isinstance(obj, (str, os.PathLike)):
        return False
    path = os.fspath(obj)
    return os.path.isdir(path) and any(os.path.isfile(os.path.join(path, f))
                                       for f in ("saved_model.pb", "saved_model.pbtxt"))


def needs_conversion(source: Any) -> bool:
    """True when ``analyze()`` must convert ``source`` before reading it."""
    return is_saved_model_dir(source) or is_keras_model(source) or is_concrete_function(source)


def source_name(source: Any) -> str | None:
    """The name a report shows for a source that is converted: the SavedModel directory as given
    (without a trailing slash), the Keras model's name, the concrete function's name."""
    if is_saved_model_dir(source):
        return os.path.normpath(os.fspath(source))
    name = getattr(source, "name", None)
    if isinstance(name, str) and name:
        return name
    return None


def _tf() -> Any:
    from .measure.runtime import quiet_native_stderr

    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        with quiet_native_stderr():
            import tensorflow as tf
    except ImportError:
        raise RuntimeUnavailableError(
            f"converting a Keras model, SavedModel or concrete function needs TensorFlow ({INSTALL_HINT})") from None
    return tf


def _input_shapes(source: Any, kind: str) -> list[tuple[int, ...]]:
    """Static calibration shapes of the inputs (unknown dims become 1)."""
    if kind == "keras":
        specs = [tuple(t.shape) for t in source.inputs]
    elif kind == "concrete":
        args, kwargs = source.structured_input_signature
        specs = [tuple(spec.shape.as_list()) for spec in (*args, *kwargs.values()) if hasattr(spec, "shape")]
    else:
        return []
    return [tuple(int(d) if d is not None and d >= 0 else 1 for d in s) for s in specs]


def _random_representative(shapes: list[tuple[int, ...]], seed: int = 0, samples: int = 8) -> Callable[[], Iterable]:
    import numpy as np

    def gen() -> Iterable[list[Any]]:
        rng = np.random.default_rng(seed)
        for _ in range(samples):
            yield [rng.uniform(-1.0, 1.0, s).astype(np.float32) for s in shapes]

    return gen


def to_tflite(source: Any, quantization: str = "float", representative_data: RepresentativeData | None = None,
              *, signature_keys: Sequence[str] | None = None) -> bytes:
    """Convert ``source`` (Keras model, SavedModel directory, concrete function) to .tflite bytes.

    The project's one conversion recipe: the library (``analyze(keras_model, quantization=...)``), the
    sample models (``sample_models/make_samples.py``), the benchmarks and the tests' reference helper
    convert through it, so that a quantization mode means the same converter settings everywhere.

    Args:
        source: the model to convert.
        quantization: one of :data:`QUANTIZATION_MODES`.
        representative_data: for ``int8``: a generator function (or iterable) yielding lists of input
            arrays, as ``TFLiteConverter.representative_dataset`` expects; random data when omitted.
        signature_keys: for a SavedModel, the signatures to convert, in this order (their subgraphs
            follow it); default: the converter's choice.

    Returns:
        The flatbuffer bytes.

    Raises:
        InputSpecError: an unknown quantization mode or source kind.
        RuntimeUnavailableError: TensorFlow is not installed.
        ModelLoadError: the converter failed.
    """
    if quantization not in QUANTIZATION_MODES:
        raise InputSpecError(f"unknown quantization {quantization!r} (known: {', '.join(QUANTIZATION_MODES)})")
    if is_saved_model_dir(source):
        kind = "saved_model"
    elif is_keras_model(source):
        kind = "keras"
    elif is_concrete_function(source):
        kind = "concrete"
    else:
        raise InputSpecError(f"cannot convert a {type(source).__name__}: expected a Keras model, a SavedModel "
                             "directory or a concrete function")
    tf = _tf()
    if kind == "saved_model":
        keys = {} if signature_keys is None else {"signature_keys": list(signature_keys)}
        conv = tf.lite.TFLiteConverter.from_saved_model(os.fspath(source), **keys)
    elif kind == "keras":
        conv = tf.lite.TFLiteConverter.from_keras_model(source)
    else:
        conv = tf.lite.TFLiteConverter.from_concrete_functions([source])
    if quantization in ("dynamic_range", "fp16", "int8"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if quantization == "fp16":
        conv.target_spec.supported_types = [tf.float16]
    elif quantization == "int8":
        if representative_data is None:
            shapes = _input_shapes(source, kind)
            if not shapes:
                raise InputSpecError("int8 conversion of a SavedModel needs representative_data (a generator of "
                                     "input lists)")
            representative_data = _random_representative(shapes)
        conv.representative_dataset = (representative_data if callable(representative_data)
                                       else (lambda data=representative_data: iter(data)))
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Statistics for quantized inputs")  # int8 in/out: expected
            return bytes(conv.convert())  # (Keras export prints "Saved artifact at ..." on stdout)
    except Exception as exc:  # the converter raises many types (ConverterError, ValueError, ...)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"TFLite conversion ({quantization}) failed: {first}") from exc
