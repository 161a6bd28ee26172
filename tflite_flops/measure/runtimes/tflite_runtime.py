"""The standalone ``tflite_runtime`` package."""

from __future__ import annotations

from . import Loaded, RuntimeAdapter, register


def _load() -> Loaded:
    import tflite_runtime
    from tflite_runtime.interpreter import Interpreter, OpResolverType

    return Loaded(Interpreter, OpResolverType, getattr(tflite_runtime, "__version__", "?"))


register(RuntimeAdapter("tflite_runtime", "pip install tflite-runtime", _load, order=1))
