"""TensorFlow's ``tf.lite.Interpreter`` (its native start-up log lines are filtered out)."""

from __future__ import annotations

import os

from . import Loaded, RuntimeAdapter, register


def _load() -> Loaded:
    from ..runtime import quiet_native_stderr

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with quiet_native_stderr():
        import tensorflow as tf

    return Loaded(tf.lite.Interpreter, tf.lite.experimental.OpResolverType, tf.__version__)


register(RuntimeAdapter("tensorflow", "pip install 'tflite_flops[tf]' (tensorflow-cpu)", _load, order=2))
