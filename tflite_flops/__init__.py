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
"""

from ._version import __version__
from .analysis import infer_trip_count
from .api import analyze
from .errors import (InputSpecError, ModelFormatError, ModelLoadError, OutputFormatError, RuntimeUnavailableError,
                     ShapeError, TfliteFlopsError, UnsupportedOpError)
from .ops import Cost, OpContext, register_cost, register_shape, supported_ops
from .reader.load import load_model
from .reader.model import Model
from .report import OpRecord, Report, Totals


def __getattr__(name: str):  # PEP 562: ``tflite_flops.sweep`` is loaded when first used, not by every CLI run
    if name == "sweep":
        from .studies.sweep import sweep

        return sweep
    raise AttributeError(f"module 'tflite_flops' has no attribute {name!r}")

__all__ = [
    "analyze", "infer_trip_count", "load_model", "Model", "Report", "OpRecord", "Totals", "Cost", "OpContext",
    "register_cost", "register_shape", "supported_ops", "TfliteFlopsError", "ModelLoadError", "ModelFormatError", "ShapeError",
    "InputSpecError", "UnsupportedOpError", "RuntimeUnavailableError", "OutputFormatError", "__version__",
    "sweep",
]
