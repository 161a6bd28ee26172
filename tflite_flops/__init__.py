"""tflite_flops: FLOPs, MACs, bytes, params and latency of TensorFlow Lite / LiteRT models.

Library use::

    import tflite_flops
    from tflite_flops.render import write
    report = tflite_flops.analyze("model.tflite", input_shapes={"input": (1, 224, 224, 3)})
    print(report.totals.macs, report.totals.flops)
    write(report, "ops.csv")  # the format from the extension, as -o
    timed = tflite_flops.analyze("model.tflite", latency=True, per_op=True, roofline=True)  # as the CLI's options

Static analysis needs only numpy, flatbuffers and the ``tflite`` schema bindings; it never
imports TensorFlow or LiteRT.

The names below are loaded when first used (PEP 562), not by ``import tflite_flops``: a run of
the command line imports what its command needs and nothing else, and it sets up the process
(:func:`tflite_flops.cli.console`) before numpy is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

# public name -> the module that defines it
_NAMES = {
    "analyze": ".api", "infer_trip_count": ".analysis", "load_model": ".reader.load", "Model": ".reader.model",
    "Report": ".report", "OpRecord": ".report", "Totals": ".report", "sweep": ".studies.sweep",
    "Cost": ".ops", "OpContext": ".ops", "register_cost": ".ops", "register_shape": ".ops", "supported_ops": ".ops",
    **{name: ".errors" for name in ("TfliteFlopsError", "ModelLoadError", "ModelFormatError", "ShapeError",
                                    "InputSpecError", "UnsupportedOpError", "RuntimeUnavailableError",
                                    "OutputFormatError")},
}

if TYPE_CHECKING:  # what a type checker and an IDE see: the same names, imported at once
    from .analysis import infer_trip_count
    from .api import analyze
    from .errors import (InputSpecError, ModelFormatError, ModelLoadError, OutputFormatError, RuntimeUnavailableError,
                         ShapeError, TfliteFlopsError, UnsupportedOpError)
    from .ops import Cost, OpContext, register_cost, register_shape, supported_ops
    from .reader.load import load_model
    from .reader.model import Model
    from .report import OpRecord, Report, Totals
    from .studies.sweep import sweep


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'tflite_flops' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES))


__all__ = [
    "analyze", "infer_trip_count", "load_model", "Model", "Report", "OpRecord", "Totals", "Cost", "OpContext",
    "register_cost", "register_shape", "supported_ops", "TfliteFlopsError", "ModelLoadError", "ModelFormatError", "ShapeError",
    "InputSpecError", "UnsupportedOpError", "RuntimeUnavailableError", "OutputFormatError", "__version__",
    "sweep",
]
