"""Per-op latency: every op of the entry subgraph is cut out into a single-op model and timed.

A single-op model keeps the op's options, tensor shapes (as resolved for this run), dtypes,
quantization and constant buffers. Its inputs get the real activations of one run of the whole
model (captured with ``experimental_preserve_all_tensors`` on the builtin kernels), so ops such as
GATHER see valid indices. The models are written by :mod:`tflite_flops.measure.model_writer` with the
schema module of the runtime in use (see :func:`tflite_flops.measure.runtimes.schema_module`).

The sum of isolated times differs from the whole-model time: XNNPACK fuses and repacks across
ops, and an isolated op loses the cache reuse of its neighbours (while paying its own call
overhead). The report prints both and this explanation.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from . import model_writer, runtimes
from .bench import BenchSettings, summarize_ms, time_invokes
from ..errors import RuntimeUnavailableError
from ..ops.registry import NOT_ISOLATED_OPS
from .progress import progress_bar
from ..report import LatencyStats, OpRecord, Report
from .runtime import (RuntimeSettings, fill_inputs, input_positions, make_interpreter, resize_and_allocate,
                      runtime_message)


GAP_EXPLANATION = ("isolated op times do not add up to the whole model: XNNPACK fuses and repacks across ops, "
                   "an isolated op loses the cache reuse of its neighbours, and each isolated invoke pays its own "
                   "call overhead")


def capture_activations(model: str | bytes, shapes: dict[int, tuple[int, ...]], runtime: RuntimeSettings
                        ) -> dict[int, np.ndarray]:
    """Run the whole model once on the builtin kernels and keep every tensor of subgraph 0."""
    interpreter_settings = replace(runtime, xnnpack=False)
    interp = make_interpreter(model, interpreter_settings, preserve_all_tensors=True)
    resize_and_allocate(interp, shapes)
    fill_inputs(interp)
    try:
        interp.invoke()
    except (ValueError, RuntimeError) as exc:
        raise RuntimeUnavailableError("the builtin kernels (without XNNPACK) failed in invoke() while capturing "
                                      f"activations: {runtime_message(exc)}") from exc
    values = {}
    for detail in interp.get_tensor_details():
        try:
            values[int(detail["index"])] = np.array(interp.get_tensor(detail["index"]))
        except ValueError:
            continue  # tensors without data (e.g. released or not allocated)
    return values


def _record_shapes(op: Any, record: OpRecord) -> dict[int, tuple[int, ...]]:
    """The shapes this run resolved for the op's tensors: original tensor index -> shape."""
    shapes = dict(zip([i for i in op.inputs if i >= 0], record.inputs))
    shapes.update(zip([o for o in op.outputs if o >= 0], record.outputs))
    return shapes


def add_per_op_latency(report: Report, model: str | bytes, runtime: RuntimeSettings, bench: BenchSettings,
                       progress: bool = True) -> Report:
    """Time every op of the entry subgraph in isolation; fill ``OpRecord.latency_ms`` and a summary."""
    fb = runtimes.schema_module(runtime.runtime)
    data = bytes(model) if isinstance(model, (bytes, bytearray)) else open(model, "rb").read()
    model_obj = model_writer.read_model(fb, data)
    entry = int(report.settings.get("entry_subgraph", 0))
    if entry != 0:
        raise RuntimeUnavailableError("per-op timing supports the primary subgraph only")
    activations = capture_activations(data, input_positions(report.inputs), runtime)
    records = list(report.ops)
    reasons: dict[int, str] = {}
    targets = [i for i, r in enumerate(records) if r.subgraph == 0]
    show = progress_bar("per-op") if progress else None
    for done, pos in enumerate(targets, 1):
        rec = records[pos]
        reason = NOT_ISOLATED_OPS.get(rec.op_type)
        if reason is None and any(sg_t.isVariable for sg_t in (model_obj.subgraphs[0].tensors[i]
                                                               for i in model_obj.subgraphs[0].operators[rec.index].inputs
                                                               if i >= 0)):
            reason = "stateful (variable input)"
        if reason is None:
            try:
                blob, graph_inputs = model_writer.single_op_model(fb, model_obj, rec.index, _record_shapes(
                    model_obj.subgraphs[0].operators[rec.index], rec))
                interp = make_interpreter(blob, runtime)
                interp.allocate_tensors()
                for detail, old in zip(interp.get_input_details(), graph_inputs):
                    value = activations.get(old)
                    if value is None or tuple(value.shape) != tuple(detail["shape"]):
                        value = np.zeros(detail["shape"], dtype=detail["dtype"])
                    interp.set_tensor(detail["index"], value.astype(detail["dtype"], copy=False))
                _, samples = time_invokes(interp.invoke, bench)
                records[pos] = replace(rec, latency_ms=summarize_ms(samples)["median_ms"])
            except (RuntimeUnavailableError, ValueError, RuntimeError) as exc:
                reason = f"could not be isolated: {runtime_message(exc)}"
        if reason is not None:
            reasons[pos] = reason
            records[pos] = replace(rec, note="; ".join(n for n in (rec.note, f"not timed: {reason}") if n))
        if show is not None:
            show(done, len(targets))
    timed = [r for r in records if r.latency_ms is not None]
    per_op_sum = sum(r.latency_ms for r in timed)  # type: ignore[misc]
    whole = report.latency or LatencyStats()
    latency = replace(whole, per_op_sum_ms=per_op_sum, per_op_timed=len(timed), per_op_not_timed=len(reasons),
                      per_op_vs_whole=(per_op_sum / whole.median_ms) if whole.median_ms else None,
                      per_op_note=GAP_EXPLANATION)
    return replace(report, ops=tuple(records), latency=latency)
