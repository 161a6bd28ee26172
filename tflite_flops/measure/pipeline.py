"""Every measurement the library and the CLI add to a static Report, in one place.

:func:`measure_report` is what ``tflite_flops.analyze(..., latency=True, per_op=True, roofline=True)``
and ``analyze --latency --per-op --roofline`` both run, so a deployment pipeline that calls the
library gets the CLI's report.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..errors import RuntimeMissingError, RuntimeUnavailableError
from ..report import Report
from .bench import BenchSettings
from .isolate import check_memory, default_time_limit, first_run_limit, run_in_child
from .latency import add_latency
from .roofline import classify, measure_peaks
from .runtime import RuntimeSettings
from .tokens import measure_signatures, token_roofline


@dataclass(frozen=True)
class Measurements:
    """What to measure: latency (and tokens/s of every signature), per-op latency, the roofline; how.

    ``runtime`` and ``bench`` choose the interpreter (threads, XNNPACK) and the run counts; ``inputs``
    are real input arrays by name (an ``.npz``'s contents) instead of random data.
    """

    latency: bool = False
    per_op: bool = False
    roofline: bool = False
    runtime: RuntimeSettings = RuntimeSettings()
    bench: BenchSettings = BenchSettings()
    inputs: Mapping[str, Any] | None = None


def measure_report(report: Report, model: str | bytes, what: Measurements, progress: bool = True) -> Report:
    """``report`` with what ``what`` asks measured and merged in.

    The interpreter runs in a child process (:func:`tflite_flops.measure.isolate.run_in_child`), where
    everything is measured; the measured report comes back. A runtime that cannot load, prepare or run the
    model leaves the static figures intact: the measurement says ``skipped`` and why, and a warning
    repeats it.

    Raises:
        RuntimeMissingError: the runtime is not installed.
        MeasurementTimeout: the measurement ran past ``what.bench.time_limit`` (by default scaled to the
            runs, ``min_time`` and the ops and signatures timed, and the model's first run limited to
            :func:`~tflite_flops.measure.isolate.first_run_limit`): a model that never ends.
        MeasurementTooLarge: the static analysis shows the run needs more memory than this process may
            still allocate (:func:`~tflite_flops.measure.isolate.check_memory`); nothing is run.
    """
    if not (what.latency or what.per_op or what.roofline):
        return report
    b = what.bench
    timed = (len(report.ops) if what.per_op else 0) + (len(report.signatures or ()) if what.latency else 0)
    limit = b.time_limit or default_time_limit(b.runs, b.warmup, b.min_time, timed + (2 if what.roofline else 0))
    runs = what.latency or what.per_op
    if runs:
        check_memory(report)
    first = first_run_limit(report.totals.flops, limit) if runs and not b.time_limit else None
    return run_in_child(measure_here, report, model, what, progress, limit=limit, what="the latency measurement",
                        first=first)


def measure_here(report: Report, model: str | bytes, what: Measurements, progress: bool = True) -> Report:
    """:func:`measure_report`'s work, in this process (the child's side)."""
    if what.latency or what.per_op:
        report = add_latency(report, model, what.runtime, what.bench, what.inputs, per_op=what.per_op,
                             progress=progress)
    if what.latency and report.signatures:
        report = measure_signatures(report, model, what.runtime, what.bench)
    if what.roofline:
        try:
            peaks = measure_peaks(what.runtime)
        except RuntimeMissingError:
            raise
        except RuntimeUnavailableError as exc:
            return replace(report, warnings=report.warnings + (f"roofline skipped: {exc}",))
        report = classify(report, peaks)
        if report.signatures:
            report = token_roofline(report, peaks.peak_bytes_per_s)
    return report
