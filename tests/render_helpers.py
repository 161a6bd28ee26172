"""Reports for renderer tests: a sample model's report, a hostile one and one with measured data."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import tflite_flops
from tflite_flops.report import LatencyStats, Report, Roofline, TensorSummary, Throughput
from tflite_flops.studies.sweep import PointSpec, PointTotals, SweepPoint, SweepResult

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
HOSTILE = "<script>alert(1)</script>"
HOSTILE_ALT = "\"'><img src=x onerror=alert(2)>&amp;</script><!--"


# the CPU target of the reports the renderer tests read figures off: a fixed one, never this machine's (as the
# golden outputs'), so that XNNPACK's bytes in them are the same on every host (AVX2, AVX-512, AMX)
REPORT_TARGET = "x86-avx512"


def sample_report(name: str = "cnn_float.tflite") -> Report:
    """The static report of a bundled sample model, for :data:`REPORT_TARGET`."""
    return tflite_flops.analyze(SAMPLES / name, target=REPORT_TARGET)


def hostile_report() -> Report:
    """A real report whose every model-derived string is hostile markup."""
    r = sample_report()
    ops = tuple(dataclasses.replace(o, name=f"{HOSTILE}{i}{HOSTILE_ALT}", note=HOSTILE_ALT)
                for i, o in enumerate(r.ops))
    model = dataclasses.replace(r.model, description=HOSTILE, path=f"models/{HOSTILE}.tflite",
                                signatures=(HOSTILE_ALT,), subgraph_names=(HOSTILE,))
    inputs = tuple(TensorSummary(HOSTILE, t.dtype, t.shape, t.shape_signature, t.index) for t in r.inputs)
    return dataclasses.replace(r, ops=ops, model=model, inputs=inputs, warnings=(HOSTILE, HOSTILE_ALT),
                               unsupported={HOSTILE: 1})


LATENCY = {"runtime": "litert", "runtime_version": "2.3.0", "threads": 1, "xnnpack": True, "runs": 50,
           "init_ms": 3.2, "first_ms": 0.9, "mean_ms": 0.21, "std_ms": 0.01, "min_ms": 0.19, "median_ms": 0.2,
           "p90_ms": 0.23, "p99_ms": 0.3, "max_ms": 0.4, "cv": 0.05}
THROUGHPUT = {"flops_per_s": 4.1e9, "macs_per_s": 2.0e9, "inferences_per_s": 5000.0}
ROOFLINE = {"peak_flops_per_s": 5e10, "peak_bytes_per_s": 1.2e10, "ridge_intensity": 5e10 / 1.2e10}


def measured_report() -> Report:
    """A sample report with latency, throughput, per-op latency and roofline peaks filled in (made up)."""
    r = sample_report()
    ops = tuple(dataclasses.replace(o, latency_ms=0.001 + o.flops / 4e9 * 1e3) if o.phase == "inference" else o
                for o in r.ops)
    from tflite_flops.measure.roofline import classify

    timed = dataclasses.replace(r, ops=ops, latency=LatencyStats(**LATENCY),
                                throughput=Throughput(**THROUGHPUT))
    return classify(timed, Roofline(**ROOFLINE))  # fills report.roofline: peaks + per-op intensity and bound


PREDICT_PROFILE = Path(__file__).resolve().parent / "fixtures" / "predict_profile.json"


def predicted_report() -> Report:
    """The measured report, also predicted with the hand-written fixture profile (predicted against measured)."""
    from tflite_flops.analysis import analyze_model
    from tflite_flops.latency.profile import DeviceProfile
    from tflite_flops.settings import Settings

    predicted = analyze_model(SAMPLES / "cnn_float.tflite", Settings(predict=DeviceProfile.load(str(PREDICT_PROFILE))))
    measured = measured_report()
    ops = tuple(dataclasses.replace(m, predicted_ms=p.predicted_ms, figures={**m.figures, **p.figures})
                for m, p in zip(measured.ops, predicted.ops))
    return dataclasses.replace(measured, ops=ops, prediction=predicted.prediction,
                               notes=measured.notes + predicted.notes)


def sweep_data() -> SweepResult:
    """A measured sweep of three square images (made up), without a fit."""
    points = []
    for n in (16, 32, 64):
        flops = 829_216 * (n // 16) ** 2
        ms = 0.2 * (n // 16) ** 2
        totals = PointTotals(macs=flops // 2, flops=flops, flops_by_precision={"float32": flops}, params=0,
                             param_bytes=0, activation_bytes=0, bytes_read=0)
        points.append(SweepPoint(PointSpec({"image": (1, n, n, 3)}), {"image": (1, n, n, 3)}, totals, True,
                                 latency=LatencyStats(median_ms=ms), throughput=Throughput(flops_per_s=flops / (ms / 1e3))))
    return SweepResult("model.tflite", tuple(points), None)
