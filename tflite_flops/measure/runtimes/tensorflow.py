"""TensorFlow's ``tf.lite.Interpreter`` (its native start-up log lines are filtered out)."""

from __future__ import annotations

import contextlib
import importlib
import os
from typing import Any, Iterator

from . import Loaded, RuntimeAdapter, register


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Import TensorFlow without its native start-up log lines."""
    from ..runtime import quiet_native_stderr

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with quiet_native_stderr():
        yield


def _load() -> Loaded:
    with _quiet():
        import tensorflow as tf

    return Loaded(tf.lite.Interpreter, tf.lite.experimental.OpResolverType, tf.__version__)


def _schema() -> Any:
    with _quiet():  # ``tensorflow.lite`` is an API alias: the real module is imported by its full name
        return importlib.import_module("tensorflow.lite.python.schema_py_generated")


register(RuntimeAdapter("tensorflow", "pip install 'tflite_flops[tf]' (tensorflow-cpu)", _load, order=2,
                        schema=_schema))
