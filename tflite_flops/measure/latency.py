"""Join measured latency with a static Report: whole-model timing, throughput, per-op timing.

The harness never parses flatbuffers; per-op models are cut out by :mod:`tflite_flops.measure.single_op`
and written by :mod:`tflite_flops.measure.model_writer` with the schema module of the runtime in use.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

from .bench import BenchSettings, measure_model, throughput
from ..errors import RuntimeMissingError, RuntimeUnavailableError
from ..report import LatencyStats, Report, Throughput
from .isolate import check_memory, default_time_limit, first_run_limit, run_in_child
from .progress import progress_bar
from .runtime import RuntimeSettings, input_names, input_positions


def add_latency(report: Report, model: str | bytes, runtime: RuntimeSettings, bench: BenchSettings,
                inputs: Mapping[str, Any] | None = None, per_op: bool = False,
                progress: bool = True) -> Report:
    """Measure the model at the report's input shapes and return the report with latency merged in.

    A missing runtime raises RuntimeMissingError. A runtime that cannot load or run the model
    gives ``latency = LatencyStats(skipped=reason)`` and a warning; the static numbers stay.
    """
    try:
        latency = measure_model(model, input_positions(report.inputs), runtime, bench, inputs,
                                progress=progress_bar("timing") if progress else None,
                                input_names=input_names(report.inputs))
    except RuntimeMissingError:
        raise
    except RuntimeUnavailableError as exc:
        return replace(report, latency=LatencyStats(skipped=str(exc), runtime=runtime.runtime),
                       warnings=report.warnings + (f"latency skipped: {exc}",))
    out = report.with_latency(shape_check(report, latency), throughput(report.totals, latency))
    if per_op:
        from .single_op import add_per_op_latency

        try:
            out = add_per_op_latency(out, model, runtime, bench, progress=progress)
        except RuntimeMissingError:
            raise
        except RuntimeUnavailableError as exc:
            out = replace(out, latency=replace(out.latency or LatencyStats(), per_op_skipped=str(exc)),
                          warnings=out.warnings + (f"per-op latency skipped: {exc}",))
    return out


def shape_check(report: Report, latency: LatencyStats) -> LatencyStats:
    """``latency`` plus ``shapes_consistent: false`` and a ``shape_warning`` when the static shapes of the
    timed graph are not all resolved: the runtime (XNNPACK in particular) may still run such a graph,
    but what it ran is not the graph the FLOPs describe."""
    unresolved = getattr(report.totals, "unresolved_ops", 0)
    if not unresolved:
        return latency
    return replace(latency, shapes_consistent=False,
                   shape_warning=(f"timed a graph whose shapes are inconsistent: {unresolved} op(s) keep stored or "
                                  "placeholder shapes at these inputs; the runtime ran it anyway, so this time "
                                  "and the FLOP/s are not those of the counted graph"))


def point_measurer(model: str | bytes, runtime: RuntimeSettings, bench: BenchSettings,
                   inputs: Mapping[str, Any] | None = None
                   ) -> Callable[[Any], tuple[LatencyStats | None, Throughput | None]]:
    """``measure(point) -> (latency, throughput)`` for :func:`tflite_flops.studies.sweep`: a fresh interpreter
    per point (so warm-up follows every resize). A point the runtime cannot run gets ``skipped`` (why)."""

    def measure(point: Any) -> tuple[LatencyStats | None, Throughput | None]:
        report = point.report
        limit = bench.time_limit or default_time_limit(bench.runs, bench.warmup, bench.min_time)
        what = f"the latency measurement of {point.spec.label}"
        check_memory(report, what)
        first = None if bench.time_limit else first_run_limit(report.totals.flops, limit)
        try:
            latency = run_in_child(_measure_point, model, input_positions(report.inputs), runtime, bench, inputs,
                                   f"timing {point.spec.label}", input_names(report.inputs), limit=limit,
                                   what=what, first=first)
        except RuntimeMissingError:
            raise
        except RuntimeUnavailableError as exc:
            return LatencyStats(skipped=str(exc), runtime=runtime.runtime), None
        return shape_check(report, latency), throughput(report.totals, latency)

    return measure


def _measure_point(model: str | bytes, shapes: Mapping[int, tuple[int, ...]], runtime: RuntimeSettings,
                   bench: BenchSettings, inputs: Mapping[str, Any] | None, label: str,
                   names: Mapping[int, Any]) -> LatencyStats:
    """One sweep point's :func:`measure_model`, in the child process that runs the interpreter."""
    return measure_model(model, shapes, runtime, bench, inputs, progress=progress_bar(label), input_names=names)
