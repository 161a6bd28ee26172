"""Timing statistics with an injectable clock (no real time involved)."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_flops.measure.bench import BenchSettings, percentile, summarize_ms, throughput, time_invokes
from tflite_flops.report import LatencyStats, Totals


class FakeClock:
    """A clock that advances only when the fake invoke runs, by a scripted duration."""

    def __init__(self, durations_ns):
        self.now = 0
        self.durations = list(durations_ns)
        self.calls = 0

    def __call__(self) -> int:
        return self.now

    def invoke(self) -> None:
        self.calls += 1
        self.now += self.durations.pop(0) if self.durations else 1_000_000


def test_percentiles_match_numpy():
    values = sorted([3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.3, 5.8, 9.7, 9.3])
    for q in (0, 10, 50, 90, 99, 100):
        assert percentile(values, q) == float(np.percentile(values, q))


def test_summary_of_known_samples():
    s = summarize_ms([1.0, 2.0, 3.0, 4.0])
    # mean 2.5; population std sqrt(((1.5²+0.5²)·2)/4) = sqrt(1.25)
    assert s["mean_ms"] == 2.5 and s["median_ms"] == 2.5
    assert s["std_ms"] == pytest.approx(1.25 ** 0.5)
    assert s["min_ms"] == 1.0 and s["max_ms"] == 4.0
    assert s["cv"] == pytest.approx(1.25 ** 0.5 / 2.5)
    assert s["p90_ms"] == pytest.approx(3.7)  # 1 + 0.9·3 = position 2.7 -> 3 + 0.7·1


def test_warmup_first_and_timed_runs_are_separate():
    # first invoke 9 ms, 4 more warm-up runs of 5 ms, then 3 timed runs of 1, 2, 3 ms
    clock = FakeClock([9_000_000] + [5_000_000] * 4 + [1_000_000, 2_000_000, 3_000_000])
    first, samples = time_invokes(clock.invoke, BenchSettings(runs=3, warmup=5), clock)
    assert first == 9.0
    assert samples == [1.0, 2.0, 3.0]
    assert clock.calls == 5 + 3


def test_min_time_keeps_running_past_runs():
    clock = FakeClock([])  # every invoke takes 1 ms
    _, samples = time_invokes(clock.invoke, BenchSettings(runs=2, warmup=1, min_time=0.010), clock)
    assert len(samples) >= 10  # 10 ms at 1 ms per run, although only 2 runs were asked


def test_throughput_from_the_median():
    totals = Totals(macs=1_000_000, flops=2_100_000,
                    by_precision={"int8": {"macs": 1_000_000, "flops": 2_000_000, "ops": 3},
                                  "float32": {"macs": 0, "flops": 100_000, "ops": 2}})
    tp = throughput(totals, LatencyStats(median_ms=2.0))
    assert tp.inferences_per_s == 500.0
    assert tp.flops_per_s == 2_100_000 / 0.002
    assert tp.macs_per_s == 1_000_000 / 0.002
    assert tp.int_ops_per_s == 2_000_000 / 0.002 and tp.float_flops_per_s == 100_000 / 0.002


@pytest.mark.parametrize("dtype, lo, hi", [(np.float32, -0.5, 0.5), (np.int8, -127, 127), (np.uint8, 0, 254),
                                           (np.int32, 0, 99)])
def test_random_inputs_use_benchmark_model_ranges(dtype, lo, hi):
    from tflite_flops.measure.runtime import random_input

    x = random_input({"shape": [4096], "dtype": dtype, "name": "x"}, np.random.default_rng(0))
    assert x.dtype == dtype and x.shape == (4096,)
    assert x.min() >= lo and x.max() <= hi
    if dtype != np.float32:
        assert x.min() == lo and x.max() == hi  # the whole range is used
    else:
        assert x.max() < hi
