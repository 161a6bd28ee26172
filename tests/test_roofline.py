"""Roofline classification (pure, with given peaks) and the measured probes (runtime)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops.report import Roofline
from tflite_flops.measure.roofline import classify

CNN = Path(__file__).resolve().parent.parent / "sample_models" / "cnn_float.tflite"


def test_classify_with_given_peaks():
    report = tflite_flops.analyze(CNN)
    # a machine of 100 GFLOP/s and 10 GB/s: ridge at 10 FLOP/byte
    peaks = Roofline(peak_flops_per_s=100e9, peak_bytes_per_s=10e9, ridge_intensity=10.0)
    stem = report.ops[0]  # CONV_2D 3x3x3 -> 16, 229,376 FLOPs over 14,080 + 16,384 bytes
    timed = replace(report, ops=(replace(stem, latency_ms=0.01),) + report.ops[1:])
    out = classify(timed, peaks)
    row = next(r for r in out.roofline.ops if r.index == 0)
    assert row.intensity == pytest.approx(229_376 / (14_080 + 16_384))  # 7.53 FLOP/byte < ridge
    assert row.bound == "memory"
    assert row.roof_flops_per_s == pytest.approx(row.intensity * 10e9)
    assert row.achieved_flops_per_s == pytest.approx(229_376 / 1e-5)
    assert row.fraction_of_roof == pytest.approx(row.achieved_flops_per_s / row.roof_flops_per_s)
    counts = out.roofline.counts
    assert counts.compute + counts.memory == len(out.roofline.ops)
    assert tflite_flops.Report.from_json(out.to_json()) == out


@pytest.mark.runtime
@pytest.mark.slow
def test_measured_peaks_are_positive_and_classify():
    from tflite_flops.measure.bench import BenchSettings
    from tflite_flops.measure.roofline import measure_peaks
    from tflite_flops.measure.runtime import RuntimeSettings

    peaks = measure_peaks(RuntimeSettings("litert", 1, True), BenchSettings(runs=3, warmup=1))
    assert peaks.peak_flops_per_s > 1e8 and peaks.peak_bytes_per_s > 1e7
    out = classify(tflite_flops.analyze(CNN), peaks)
    assert {r.bound for r in out.roofline.ops} <= {"compute", "memory"}


def test_above_roof_is_explained_and_counts_agree_with_the_table():
    """Issue 12: 'of roof' above 100% (cache-resident data) is marked and explained; header counts add up."""
    from tflite_flops.render import render
    from tflite_flops.render.formats.table import render_table

    report = tflite_flops.analyze(CNN)
    peaks = Roofline(peak_flops_per_s=100e9, peak_bytes_per_s=10e9, ridge_intensity=10.0)
    add = next(o for o in report.ops if o.op_type == "ADD")  # 4,096 FLOPs over 3 · 16 KiB: 0.083 FLOP/byte
    ops = tuple(replace(o, latency_ms=1e-5) if o is add else replace(o, latency_ms=1.0) for o in report.ops)
    out = classify(replace(report, ops=ops), peaks)
    row = next(r for r in out.roofline.ops if r.op_type == "ADD")
    # roof 0.0833 · 10 GB/s = 833 MFLOP/s; achieved 4,096 / 10 ns = 409.6 GFLOP/s
    assert row.fraction_of_roof > 1 and row.above_roof is True
    assert out.roofline.above_roof == 1 and "CPU caches" in out.roofline.above_roof_note
    assert sum(r.above_roof for r in out.roofline.ops) == 1
    table = render_table(out, top=4)
    counts = out.roofline.counts
    n = len(out.roofline.ops)
    assert f"{counts.compute} compute-bound op(s), {counts.memory} memory-bound, of {n}; the 4 fastest" in table
    lines = table[table.index("Roofline ("):].splitlines()
    shown = [line for line in lines[4:8]]
    head = lines[1]
    listed_memory = sum(" memory " in line for line in shown)
    assert f"({4 - listed_memory} compute, {listed_memory} memory)" in head
    assert any(line.rstrip().endswith("%*") and " ADD " in line for line in shown)
    assert "* 1 op(s) above 100% of roof: the op's data stays in the CPU caches" in table
    assert "above the roof" in render(out, "html")
    assert tflite_flops.Report.from_json(out.to_json()) == out
