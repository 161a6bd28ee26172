"""Roofline classification (pure, with given peaks) and the measured probes (runtime)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops.roofline import classify

CNN = Path(__file__).resolve().parent.parent / "sample_models" / "cnn_float.tflite"


def test_classify_with_given_peaks():
    report = tflite_flops.analyze(CNN)
    # a machine of 100 GFLOP/s and 10 GB/s: ridge at 10 FLOP/byte
    peaks = {"peak_flops_per_s": 100e9, "peak_bytes_per_s": 10e9, "ridge_intensity": 10.0}
    stem = report.ops[0]  # CONV_2D 3x3x3 -> 16, 229,376 FLOPs over 14,080 + 16,384 bytes
    timed = replace(report, ops=(replace(stem, latency_ms=0.01),) + report.ops[1:])
    out = classify(timed, peaks)
    row = next(r for r in out.roofline["ops"] if r["index"] == 0)
    assert row["intensity"] == pytest.approx(229_376 / (14_080 + 16_384))  # 7.53 FLOP/byte < ridge
    assert row["bound"] == "memory"
    assert row["roof_flops_per_s"] == pytest.approx(row["intensity"] * 10e9)
    assert row["achieved_flops_per_s"] == pytest.approx(229_376 / 1e-5)
    assert row["fraction_of_roof"] == pytest.approx(row["achieved_flops_per_s"] / row["roof_flops_per_s"])
    counts = out.roofline["counts"]
    assert counts["compute"] + counts["memory"] == len(out.roofline["ops"])
    assert tflite_flops.Report.from_json(out.to_json()) == out


@pytest.mark.runtime
def test_measured_peaks_are_positive_and_classify():
    from tflite_flops.bench import BenchSettings
    from tflite_flops.roofline import measure_peaks
    from tflite_flops.runtime import RuntimeSettings

    peaks = measure_peaks(RuntimeSettings("litert", 1, True), BenchSettings(runs=3, warmup=1))
    assert peaks["peak_flops_per_s"] > 1e8 and peaks["peak_bytes_per_s"] > 1e7
    out = classify(tflite_flops.analyze(CNN), peaks)
    assert {r["bound"] for r in out.roofline["ops"]} <= {"compute", "memory"}
