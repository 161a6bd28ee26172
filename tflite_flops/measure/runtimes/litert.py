"""LiteRT (``ai_edge_litert``), the default runtime."""

from __future__ import annotations

from typing import Any

from . import Loaded, RuntimeAdapter, register


def _load() -> Loaded:
    import ai_edge_litert
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    return Loaded(Interpreter, OpResolverType, getattr(ai_edge_litert, "__version__", "?"))


def _schema() -> Any:
    from ai_edge_litert import schema_py_generated

    return schema_py_generated


register(RuntimeAdapter("litert", "pip install 'tflite_flops[runtime]' (ai-edge-litert)", _load, order=0,
                        schema=_schema))
