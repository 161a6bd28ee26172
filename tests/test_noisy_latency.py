"""A measured latency carries its spread and the process's CPU share, a noisy one is flagged in every output, and a
gate never passes or fails silently on it (issue 43)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops.latency.profile import Drift
from tflite_flops.render import render
from tflite_flops.render.batch import rows_csv, rows_table
from tflite_flops.report import LatencyStats
from tflite_flops.report.budget import check_budget
from tflite_flops.report.measured import NOISY_SPREAD, cpu_share, noise

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


def test_the_cpu_share_and_the_rule_of_noise():
    assert cpu_share(1.0, 0.5, 1) == 0.5  # half a second of CPU in a second: half the core
    assert cpu_share(1.0, 1.6, 2) == 0.8  # 1.6 s of CPU over 2 threads' second
    assert cpu_share(1.0, 1.3, 1) == 1.0  # a thread pool's helpers: at most the whole
    assert cpu_share(0.05, 0.05, 1) is None  # too short a window to say anything
    assert noise(0.05, 0.97) is None
    assert "the slowest tenth of the runs are 40% over the median" in noise(0.40, 0.97)
    assert "this process had 45% of the CPU per thread" in noise(None, 0.45)
    assert noise(NOISY_SPREAD, None) is None  # at the threshold: steady
    # the drift check's "busy" is the same rule on the same evidence
    assert Drift(True, cpu_share=0.45).busy and not Drift(True, cpu_share=0.97).busy


@pytest.fixture(scope="module")
def noisy():
    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    lat = LatencyStats(runtime="litert", threads=1, xnnpack=True, runs=50, median_ms=1.65, p90_ms=7.62, min_ms=1.5,
                       spread=(7.62 - 1.65) / 1.65, cpu_share=0.41, noisy=noise((7.62 - 1.65) / 1.65, 0.41))
    return dataclasses.replace(report, latency=lat)


@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_a_noisy_measurement_is_flagged_in_every_output(noisy, fmt):
    out = render(noisy, fmt)
    assert "NOISY measurement" in out and "41% of the CPU per thread" in out
    assert "spread +362% (p90 over the median)" in out and "CPU share 41% per thread" in out


def test_the_json_and_batch_carry_the_spread_share_and_why(noisy):
    d = json.loads(render(noisy, "json"))["latency"]
    assert d["cpu_share"] == 0.41 and d["spread"] == pytest.approx(3.618, abs=1e-3) and "41%" in d["noisy"]
    from tflite_flops.studies.batch import COLUMNS

    assert {"latency_spread", "latency_cpu_share", "latency_noisy"} <= set(COLUMNS)
    row = {c: "" for c in COLUMNS} | {"model": "m.tflite", "status": "ok", "macs": 1, "flops": 2, "params": 3,
                                       "latency_median_ms": 1.65, "latency_noisy": noisy.latency.noisy}
    assert "1.650 NOISY" in rows_table([row]) and "41% of the CPU" in rows_csv([row])


def test_a_gate_on_a_noisy_measurement_fails_with_a_line_that_says_so(noisy):
    # 1.65 ms is within 10 ms, but the run cannot tell: neither a silent pass nor a silent fail
    got = check_budget(noisy, max_latency_ms=10)
    assert len(got) == 1 and "was measured NOISY" in got[0] and "neither pass nor fail the limit 10 ms" in got[0]
    steady = dataclasses.replace(noisy, latency=dataclasses.replace(noisy.latency, noisy=None))
    assert check_budget(steady, max_latency_ms=10) == []


@pytest.mark.runtime
@pytest.mark.slow
def test_a_real_measurement_reports_its_spread_and_cpu_share():
    from tflite_flops.measure.bench import BenchSettings, measure_model
    from tflite_flops.measure.runtime import RuntimeSettings

    lat = measure_model(str(SAMPLES / "cnn_float.tflite"), {}, RuntimeSettings(), BenchSettings(runs=20, warmup=2,
                                                                                               min_time=0.3))
    assert lat.spread is not None and lat.spread >= 0 and 0 < lat.cpu_share <= 1
    assert (lat.noisy is None) == (noise(lat.spread, lat.cpu_share) is None)


@pytest.mark.parametrize("second, code, said", [(None, 0, "measuring once more"), ("still busy", 3, "NOISY")])
def test_analyze_measures_once_more_when_its_gate_meets_a_noisy_measurement(second, code, said, monkeypatch,
                                                                            capsys):
    from tflite_flops import api
    from tflite_flops.cli import main

    static = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    calls = []

    def analyze(model, **kw):
        calls.append(kw["latency"])
        why = "this process had 41% of the CPU per thread" if len(calls) == 1 else second
        return dataclasses.replace(static, latency=LatencyStats(runtime="litert", runs=50, median_ms=1.0,
                                                                 p90_ms=1.1, noisy=why))

    monkeypatch.setattr(api, "analyze", analyze)
    assert main(["analyze", str(SAMPLES / "cnn_float.tflite"), "--max-latency-ms", "10"]) == code
    assert calls == [True, True]  # measured twice, never more
    assert said in capsys.readouterr().err
