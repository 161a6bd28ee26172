"""Timing harness and statistics: warm-up, timed ``invoke()`` runs, robust statistics, throughput.

Only ``invoke()`` is inside the timed region (``time.perf_counter_ns`` before and after); input
setting happens once, before warm-up. The loop keeps running until both ``runs`` and
``min_time`` are reached, as benchmark_model does. The clock is injectable for tests.
"""

from __future__ import annotations

import math
import os
import platform
import resource
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..errors import RuntimeUnavailableError
from ..report import LatencyStats, Throughput
from ..report.measured import MIN_SPREAD_RUNS, cpu_share, noise
from .isolate import first_run_done
from .runtime import (RuntimeSettings, cpu_model, fill_inputs, make_interpreter, resize_and_allocate,
                      runtime_message, runtime_version)
from ..units import FLOAT_PRECISIONS

Clock = Callable[[], int]


@dataclass(frozen=True)
class BenchSettings:
    """How long to measure, and the time limit past which the measurement is stopped (seconds; None: the
    default of :func:`tflite_flops.measure.isolate.default_time_limit`, scaled to the runs and ``min_time``)."""

    runs: int = 50
    warmup: int = 5
    min_time: float = 0.0  # seconds
    time_limit: float | None = None  # seconds


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (``numpy.percentile``, method ``linear``) of sorted values, q in [0, 100]."""
    if not sorted_values:
        return float("nan")
    import numpy as np

    return float(np.percentile(sorted_values, q, method="linear"))


def summarize_ms(samples_ms: Sequence[float]) -> dict[str, float]:
    """mean, std (population, as benchmark_model), min, median, p90, p99, max and the coefficient of variation."""
    s = sorted(samples_ms)
    n = len(s)
    mean = sum(s) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in s) / n)
    return {"mean_ms": mean, "std_ms": std, "min_ms": s[0], "median_ms": percentile(s, 50),
            "p90_ms": percentile(s, 90), "p99_ms": percentile(s, 99), "max_ms": s[-1],
            "cv": std / mean if mean else 0.0}


def time_invokes(invoke: Callable[[], Any], settings: BenchSettings, clock: Clock = time.perf_counter_ns,
                 progress: Callable[[int, int], None] | None = None) -> tuple[float, list[float]]:
    """Run warm-up then timed invokes. Returns (first invoke ms, timed samples in ms)."""
    t0 = clock()
    invoke()
    first_ms = (clock() - t0) / 1e6
    for _ in range(max(settings.warmup - 1, 0)):
        invoke()
    samples_ns: list[int] = []
    deadline = clock() + int(settings.min_time * 1e9)
    target = max(settings.runs, 1)
    append = samples_ns.append
    while len(samples_ns) < target or clock() < deadline:
        start = clock()
        invoke()
        append(clock() - start)
        if progress is not None:
            progress(len(samples_ns), target)
    return first_ms, [ns / 1e6 for ns in samples_ns]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return peak_rss_bytes() / (1024 * 1024)


def rss_bytes() -> int | None:
    """Resident set size of this process now, in bytes (``/proc/self/statm``); None where there is none."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far, in bytes (``getrusage``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def _peak_added(peak_before: int, now_before: int | None, *readings: int | None) -> int | None:
    """How far the process's high-water mark rose above its RSS before the load; when it did not rise
    above an earlier peak (the model's own is then hidden under it), the largest of ``readings``."""
    if now_before is None:
        return None
    peak = peak_rss_bytes()
    seen = [r for r in readings if r is not None]
    return max(peak - now_before, *seen) if peak > peak_before else max(seen, default=None)


def measure_model(model: str | bytes, input_shapes: Mapping[int, tuple[int, ...]], runtime: RuntimeSettings,
                  bench: BenchSettings, inputs: Mapping[str, Any] | None = None, clock: Clock = time.perf_counter_ns,
                  progress: Callable[[int, int], None] | None = None,
                  input_names: Mapping[int, Sequence[str]] | None = None) -> LatencyStats:
    """Load, resize to ``input_shapes`` (by input position), allocate, fill and time a model.

    ``input_names`` adds names ``inputs`` may use per input position (the report's names).
    Returns the report's ``latency``: the statistics plus the environment.
    Raises RuntimeUnavailableError when the runtime is missing or cannot load, prepare or run the
    model (a kernel failing inside ``invoke()`` included), or ``inputs`` do not fit the inputs.
    """
    version = runtime_version(runtime.runtime)  # the runtime's import is not the model's memory
    rss_before = peak_rss_mb()
    peak_before, now_before = peak_rss_bytes(), rss_bytes()
    t0 = clock()
    interpreter = make_interpreter(model, runtime)
    resize_and_allocate(interpreter, input_shapes)
    init_ms = (clock() - t0) / 1e6
    loaded = rss_bytes()
    try:
        fill_inputs(interpreter, inputs, names=input_names)
    except (ValueError, TypeError) as exc:
        raise RuntimeUnavailableError(f"the runtime rejects the input data: {runtime_message(exc)}") from exc
    first_rss: list[int | None] = []

    def invoke() -> None:  # the RSS once the first invoke is done (lazy planning, XNNPACK's first run)
        interpreter.invoke()
        if not first_rss:
            first_rss.append(rss_bytes())
            first_run_done()  # the parent's limit on the first run (a WHILE that never ends) is met

    wall, cpu = time.perf_counter(), time.process_time()
    try:
        first_ms, samples = time_invokes(invoke, bench, clock, progress)
    except (ValueError, RuntimeError) as exc:
        raise RuntimeUnavailableError(f"the {runtime.runtime} runtime failed in invoke(): {runtime_message(exc)}") from exc
    share = cpu_share(time.perf_counter() - wall, time.process_time() - cpu, runtime.threads)
    stats = summarize_ms(samples)
    spread = ((stats["p90_ms"] - stats["median_ms"]) / stats["median_ms"]
              if stats["median_ms"] > 0 and len(samples) >= MIN_SPREAD_RUNS else None)
    load_added = None if loaded is None or now_before is None else loaded - now_before
    first_added = None if not first_rss or first_rss[0] is None or now_before is None else first_rss[0] - now_before
    shapes = [list(int(d) for d in det["shape"]) for det in interpreter.get_input_details()]
    return LatencyStats(
        runtime=runtime.runtime, runtime_version=version,
        threads=runtime.threads, xnnpack=runtime.xnnpack, runs=len(samples), warmup=bench.warmup,
        init_ms=init_ms, first_ms=first_ms, **stats, spread=spread, cpu_share=share, noisy=noise(spread, share),
        peak_rss_added_mb=max(peak_rss_mb() - rss_before, 0.0),
        rss_load_bytes=load_added, rss_first_invoke_bytes=first_added,
        rss_peak_bytes=_peak_added(peak_before, now_before, load_added, first_added),
        input_shapes=tuple(tuple(s) for s in shapes), cpu=cpu_model(), python=platform.python_version())


def throughput(totals: Any, latency: LatencyStats) -> Throughput:
    """FLOP/s, MAC/s and inferences/s from the median latency; float FLOP/s and integer OP/s apart
    (no rate at all when the median is 0)."""
    seconds = latency.median_ms / 1e3
    if seconds <= 0:
        return Throughput()
    by_prec = totals.by_precision
    float_flops = sum(v["flops"] for k, v in by_prec.items() if k in FLOAT_PRECISIONS)
    int_ops = sum(v["flops"] for k, v in by_prec.items() if k not in FLOAT_PRECISIONS)
    return Throughput(flops_per_s=totals.flops / seconds, macs_per_s=totals.macs / seconds,
                      inferences_per_s=1.0 / seconds, float_flops_per_s=float_flops / seconds,
                      int_ops_per_s=int_ops / seconds)
