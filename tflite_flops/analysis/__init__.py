"""Model + shapes + registry -> Report: the static analysis.

Data flows one way through these modules:

* :mod:`~tflite_flops.analysis.shapes`: input shapes from the user, propagation op by op;
* :mod:`~tflite_flops.analysis.walk`: the control-flow walk (WHILE trips, IF, CALL_ONCE, init-time ops);
* :mod:`~tflite_flops.analysis.entries`: one op's cost, bytes, params and precision at its resolved shapes;
* :mod:`~tflite_flops.analysis.sparsity`: zero counting of weights (effective MACs);
* :mod:`~tflite_flops.analysis.memory`: tensor lifetimes and the TFLite / TFLite Micro arenas;
* :mod:`~tflite_flops.analysis.assemble`: records, totals (``Totals.of``) and the Report;
* :mod:`~tflite_flops.analysis.run`: the entry points below (with a device profile in the settings, the
  prediction of :mod:`tflite_flops.latency.predict`, on the same layer).

One entry per analysis: the studies of several entries (every signature, a bundle's sections) are in
:mod:`tflite_flops.studies`, and :func:`tflite_flops.analyze` composes them.

A new per-op figure is one pass over the resolved ops that returns ``{(subgraph, op): value}``, one
field on :class:`~tflite_flops.report.OpRecord`, and the renderers that read it
(:func:`~tflite_flops.analysis.assemble.records` joins them).
"""

from .run import analyze_entry, analyze_model, propagated_shapes, resolve_shapes, unresolved_tensors
from .walk import infer_trip_count

__all__ = ["analyze_model", "analyze_entry", "resolve_shapes", "propagated_shapes", "unresolved_tensors",
           "infer_trip_count"]
