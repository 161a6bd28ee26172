"""Whole-model conditions (latency/cache.py, fit_cache_curve, the cold calibration) and the drift check.

Counted and deterministic: injected timers, hand-made op data, no clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tflite_flops.latency.cache import (OpData, cost_at, cost_per_byte, evictions, model_distances, penalty_us,
                                        per_inference_bytes, state_distances)
from tflite_flops.latency.fit import ColdSample, fit_cache_curve
from tflite_flops.latency.profile import DeviceProfile, Drift, Law, Machine

ROOT = Path(__file__).resolve().parent.parent
MiB = 2**20
CACHES = {"L1d": 48 * 1024, "L2": 1 * MiB, "L3": 32 * MiB}


def test_evictions_come_from_the_cache_sizes():
    assert evictions(CACHES) == (2 * MiB, 16 * MiB, 64 * MiB)
    assert evictions({"L2": MiB}) == (2 * MiB,)
    assert evictions({}) == ()


def test_the_cost_curve_is_zero_near_linear_between_and_flat_past_its_points():
    curve = ((2 * MiB, 0.0, 0.0, 0.0), (16 * MiB, 1.0, 2.0, 4.0), (64 * MiB, 3.0, 4.0, 8.0))
    assert cost_per_byte(curve, 0) == 0.0 and cost_per_byte(curve, MiB) == 0.0
    assert cost_at(curve, 9 * MiB) == pytest.approx((0.5, 1.0, 2.0))
    assert cost_at(curve, 40 * MiB) == pytest.approx((2.0, 3.0, 6.0))
    assert cost_at(curve, 1000 * MiB) == (3.0, 4.0, 8.0)
    assert cost_at((), 5 * MiB) == (0.0, 0.0, 0.0)


def test_reuse_distances_in_a_chain():
    # a -> b -> c, each 1 MiB of weights and 100 bytes of output; a reads the model input (tensor 0)
    a = OpData((0, 0), MiB, ((0, 100),), ((1, 100),))
    b = OpData((0, 1), MiB, ((1, 100),), ((2, 100),))
    c = OpData((0, 2), MiB, ((1, 100), (2, 100)), ((3, 100),))  # reads a's output too: b ran in between
    total = per_inference_bytes([a, b, c])
    assert total == 3 * MiB + 300
    where = model_distances([a, b, c], total)
    # weights: a whole inference; the model input too; outputs: the op's own footprint
    assert where[(0, 0)] == [(MiB, total), (100, total), (100, a.footprint)]
    # b's input was written by a just before: its own bytes, at least b's footprint
    assert where[(0, 1)][1] == (100, b.footprint)
    # c's first input was written by a, then b touched its weights and output: 100 + 1 MiB + 100
    assert where[(0, 2)][1] == (100, max(100 + MiB + 100, c.footprint))
    # the activations' distinct bytes are the arena's when it is known
    assert per_inference_bytes([a, b, c], live_peak=150) == 3 * MiB + 150


def test_a_loop_body_reuses_its_weights_every_trip():
    body = [OpData((1, 0), 1000, ((5, 10),), ((6, 10),), runs=8), OpData((1, 1), 1000, ((6, 10),), ((7, 10),), runs=8)]
    where = model_distances(body, total=100 * MiB)
    assert where[(1, 0)][0] == (1000, 2020)  # the body's weights and outputs, not the model's 100 MiB
    assert state_distances(body, total=100 * MiB) == {(1, 0): 2020, (1, 1): 2020}


def test_the_penalty_counts_only_what_is_further_in_the_model_than_alone():
    curve = ((2 * MiB, 0.0, 0.0, 0.0), (16 * MiB, 1e-6, 2.0, 5.0), (64 * MiB, 2e-5, 10.0, 5.0))  # per byte, op, invoke
    op = OpData((0, 0), 4 * MiB, ((1, MiB),), ((2, MiB),))  # footprint 6 MiB: alone at 6 MiB
    alone_byte, alone_op, _ = cost_at(curve, 6 * MiB)
    in_model = [(4 * MiB, 100 * MiB), (MiB, 6 * MiB), (MiB, 6 * MiB)]  # weights from memory
    assert penalty_us(op, in_model, curve) == pytest.approx(4 * MiB * (2e-5 - alone_byte))
    # the op's own state as far as its weights: the per-op cost there less alone
    assert penalty_us(op, in_model, curve, 100 * MiB) == pytest.approx(4 * MiB * (2e-5 - alone_byte) + 10.0 - alone_op)
    assert penalty_us(op, [(4 * MiB, 6 * MiB)], curve, 6 * MiB) == 0.0  # as warm as alone: nothing more


def test_fit_cache_curve_recovers_the_cost_per_byte_and_leaves_the_harness_constant_out():
    rows = []
    for evict, slope in ((2 * MiB, 0.0), (16 * MiB, 2e-6), (64 * MiB, 2e-5)):
        for size in (10_000, 200_000, MiB, 4 * MiB):
            warm = 5.0 + size * 1e-5
            rows.append(ColdSample(warm, warm + 15.0 + slope * size, evict, size))  # 15 us of state: 10 + 5
        for n in (1, 4, 16):  # the chains: 10 us per invoke, 0.1 us per tiny op, no data
            rows.append(ColdSample(1.0, 1.0 + 10.0 + 0.1 * n, evict, 64 * n, ops=n, chain=True))
    curve, error = fit_cache_curve(rows, start=MiB)
    assert [d for d, *_ in curve] == [MiB, 2 * MiB, 16 * MiB, 64 * MiB] and curve[0] == (MiB, 0.0, 0.0, 0.0)
    assert curve[1][1] == pytest.approx(0.0, abs=1e-9)
    assert curve[2][1] == pytest.approx(2e-6, rel=1e-6) and curve[3][1] == pytest.approx(2e-5, rel=1e-6)
    # per invoke: the chains' intercept; per op: the single ops' constant less it (at least the chains' slope)
    assert all(i == pytest.approx(10.0) and k == pytest.approx(5.0) for _, _, k, i in curve[1:])
    assert error == pytest.approx(0.0, abs=1e-9)
    # without chains the single ops' whole constant is per op
    assert fit_cache_curve([r for r in rows if not r.chain])[0][0][2] == pytest.approx(15.0)
    # data further away never costs less: a noisy lower slope at a larger distance is raised to the previous one
    noisy = [replace(r, cold_us=r.warm_us + 15.0) if r.evict == 64 * MiB else r for r in rows]
    assert fit_cache_curve(noisy)[0][2][1] == pytest.approx(2e-6, rel=1e-6)
    assert fit_cache_curve([]) == ((), None)


def _profile(**kw) -> DeviceProfile:
    machine = Machine("test cpu", 2, "litert", "2.3.0", 1, True, caches=dict(CACHES))
    laws = (Law("ADD", "float32", "xnnpack", {"1": 1.0, "in": 0.001}),)
    return DeviceProfile(machine, laws, invoke_overhead_us=2.0, partition_overhead_us=1.0, source="calibrate", **kw)


def test_the_profile_keeps_caches_curve_and_reference_and_old_profiles_still_load(tmp_path):
    p = _profile(cache_curve=((2 * MiB, 0.0, 1.0, 2.0), (64 * MiB, 2e-5, 3.0, 9.0)), reference={"ADD-x@x": 3.0},
                 cache_curves={"int8": ((64 * MiB, 1e-5, 3.0, 9.0),)})
    path = tmp_path / "p.json"
    p.save(str(path))
    back = DeviceProfile.load(str(path))
    assert back == p and back.machine.caches == CACHES and back.cache_curve == p.cache_curve
    assert back.cache_curves == {"int8": ((64 * MiB, 1e-5, 3.0, 9.0),)}
    assert p.drifted(Drift(True, 2.0)).cache_curves["int8"][0][1:] == pytest.approx((2e-5, 6.0, 18.0))
    # a profile of before (no caches, curve, reference) loads, and its JSON is unchanged by a round trip
    old = json.loads((ROOT / "tests" / "fixtures" / "predict_profile.json").read_text())
    del old["machine"]["caches"], old["machine"]["target"]  # the fixture's machine as profiles of before wrote it
    assert "cache_curve" not in old and "caches" not in old["machine"]
    loaded = DeviceProfile.from_dict(old)
    assert loaded.cache_curve == () and loaded.reference == {} and loaded.machine.caches == {}
    assert DeviceProfile.from_dict(loaded.to_dict()).to_dict() == loaded.to_dict()
    assert "cache_curve" not in loaded.to_dict()


def test_drifted_scales_every_time_and_keeps_the_ranges():
    p = _profile(cache_curve=((64 * MiB, 2e-5, 2.0, 4.0),))
    d = p.drifted(Drift(True, factor=1.5, reference_ms_then=1.0, reference_ms_now=1.5))
    assert d.laws[0].coefficients == {"1": 1.5, "in": pytest.approx(0.0015)}
    assert d.invoke_overhead_us == 3.0 and d.partition_overhead_us == 1.5 and d.cache_curve[0][1:] == pytest.approx((3e-5, 3.0, 6.0))
    assert (d.laws[0].log_low, d.laws[0].log_high) == (p.laws[0].log_low, p.laws[0].log_high)
    same = p.drifted(Drift(False, why="another CPU"))
    assert same.laws == p.laws and same.drift.why == "another CPU"


@pytest.mark.runtime
def test_check_drift_scales_by_the_median_ratio_on_the_same_cpu_only(monkeypatch):
    from tflite_flops.latency import calibrate as cal
    from tflite_flops.latency.suite import reference_points
    from tflite_flops.settings import RuntimeSettings

    points = reference_points()
    then = {p.key: 10.0 * (i + 1) for i, p in enumerate(points)}
    p = _profile(reference=then)
    monkeypatch.setattr(cal, "cpu_model", lambda: "test cpu")
    monkeypatch.setattr(cal, "runtime_version", lambda name: "2.3.0")
    ratios = iter([1.2, 1.1, 1.3, 2.0, 1.25])  # the median of the five: 1.25
    calls = []

    def timer(blob, settings, quick):
        calls.append(quick)
        key = points[len(calls) - 1].key
        return then[key] * next(ratios)

    drift = cal.check_drift(p, RuntimeSettings(), timer=timer)
    assert len(calls) == len(then) and calls == [False] * len(then)  # timed as calibration timed them
    assert drift.applied and drift.factor == pytest.approx(1.25)
    assert drift.reference_ms_then == pytest.approx(sum(then.values()) / 1e3)
    # another CPU: nothing timed, not applied, and why
    monkeypatch.setattr(cal, "cpu_model", lambda: "another cpu")
    calls.clear()
    other = cal.check_drift(p, RuntimeSettings(), timer=timer)
    assert not other.applied and calls == [] and "test cpu" in other.why and "another cpu" in other.why
    # no reference in the profile
    assert "no reference" in cal.check_drift(_profile(), RuntimeSettings(), timer=timer).why

    def missing(name):
        raise cal.RuntimeUnavailableError("not installed")

    monkeypatch.setattr(cal, "cpu_model", lambda: "test cpu")
    monkeypatch.setattr(cal, "runtime_version", missing)
    assert "no litert runtime" in cal.check_drift(p, RuntimeSettings(), timer=timer).why


@pytest.mark.runtime
@pytest.mark.slow
def test_calibrate_times_cold_points_and_the_reference_with_injected_timers(tmp_path):
    from tflite_flops.latency.calibrate import calibrate
    from tflite_flops.latency.suite import cold_points, reference_points, suite
    from tflite_flops.settings import RuntimeSettings

    points = [p for p in suite(quick=True) if p.id.startswith(("FULLY_CONNECTED-float32", "overhead"))]
    warm_calls, cold_calls = [], []

    def timer(blob, settings, quick):
        warm_calls.append(quick)
        return 20.0 + len(blob) / 1000

    def cold_timer(blob, settings, evict):
        cold_calls.append(evict)
        warm = 20.0 + len(blob) / 1000
        return warm, warm + 10.0 + (len(blob) * 1e-5 if evict > 32 * MiB else 0.0)  # from memory: per byte

    reference = reference_points()[:2]
    output = str(tmp_path / "p.json")
    profile, timed = calibrate(output, RuntimeSettings(), quick=True, progress=False, timer=timer, points=points,
                               cold_timer=cold_timer, caches=CACHES, reference=reference)
    cold = [p for p in points if p.delegate and p.family == "FULLY_CONNECTED"][::2]
    chains = [p for p in points if p.delegate and p.family == "overhead"]  # the per-invoke state
    assert cold_points(points) == cold + chains and len(chains) == 5
    assert timed == len(points) and len(cold_calls) == 3 * (len(cold) + len(chains))
    assert sorted(set(cold_calls)) == [2 * MiB, 16 * MiB, 64 * MiB]
    assert warm_calls.count(False) == len(reference)  # the reference is timed as without --quick
    assert set(profile.reference) == {p.key for p in reference}
    assert profile.machine.caches == CACHES
    curve = {d: rest for d, *rest in profile.cache_curve}
    assert curve[MiB] == [0.0, 0.0, 0.0]  # from the L2's capacity
    # the chains' 10 us are per invoke, and the single ops' 10 us nothing more per op
    assert curve[2 * MiB] == pytest.approx([0.0, 0.0, 10.0], abs=1e-6) and curve[64 * MiB][0] > 0
    assert DeviceProfile.load(output) == profile
    # a rerun times nothing again: the cold pairs and the reference come from the side file
    warm_calls.clear(), cold_calls.clear()
    again, timed = calibrate(output, RuntimeSettings(), quick=True, progress=False, timer=timer, points=points,
                             cold_timer=cold_timer, caches=CACHES, reference=reference)
    assert timed == 0 and warm_calls == [] and cold_calls == [] and again.cache_curve == profile.cache_curve


def test_the_reference_is_timed_in_every_pass_and_keeps_their_median(tmp_path):
    # one timing at one moment stood for the whole calibration: two calibrations' references 2.5% apart moved
    # every prediction of the second 2.5% while the models did not move
    from tflite_flops.latency.calibrate import calibrate
    from tflite_flops.latency.suite import reference_points, suite
    from tflite_flops.settings import RuntimeSettings

    points = [p for p in suite(quick=True) if p.id.startswith("ADD-float32")][:2]
    reference = reference_points()[:1]
    speeds = iter([1.00, 1.10, 0.95] * 10)  # the machine in the three passes
    calls = []

    def timer(blob, settings, quick):
        calls.append(quick)
        return 50.0 * next(speeds) if not quick else 5.0

    output = str(tmp_path / "p.json")
    profile, _ = calibrate(output, RuntimeSettings(), quick=True, progress=False, timer=timer, points=points,
                           reference=reference, streams=[], passes=3)
    assert calls.count(False) == 3  # once per pass
    assert profile.reference == {reference[0].key: pytest.approx(50.0)}  # the median of 50, 55 and 47.5


@pytest.mark.runtime
@pytest.mark.slow
def test_calibrate_times_streaming_chains_into_the_cache_curves(tmp_path):
    from tflite_flops.latency.calibrate import calibrate
    from tflite_flops.latency.suite import STREAM, SuitePoint, suite
    from tflite_flops.latency.suite_models import stream
    from tflite_flops.settings import RuntimeSettings

    points = [p for p in suite(quick=True) if p.id.startswith(("FULLY_CONNECTED-float32", "overhead"))]
    # chains of 1, 4 and 8 1x1 convolutions of 64x64 float32 weights (16 KiB each), and 1 and 4 in int8
    streams = [SuitePoint(f"{STREAM}-{prec}-{n}", STREAM, prec, True, True, stream(n, 4, 64, prec))
               for prec, counts in (("float32", (1, 4, 8)), ("int8", (1, 4))) for n in counts]
    per_op = {"float32": 5.0, "int8": 2.0}  # us each op takes alone

    def timer(blob, settings, quick):
        for p in streams:  # each chain: the invoke (about the ADD chains'), its ops alone, 1 us per KiB of weights
            if blob == build_point(p):
                n = int(p.id.rsplit("-", 1)[1])
                weights = n * 64 * 64 * (4 if p.precision == "float32" else 1)
                return 20.0 + n * per_op[p.precision] + (weights / 1024 if n > 1 else 0.0)
        return 20.0 + len(blob) / 1000

    def build_point(p):
        from tflite_flops.latency.suite import build
        from tflite_flops.measure import runtimes
        return build(runtimes.schema_module("litert"), p)

    def cold_timer(blob, settings, evict):
        warm = 20.0 + len(blob) / 1000
        return warm, warm + 1.0

    profile, _ = calibrate(str(tmp_path / "p.json"), RuntimeSettings(), quick=True, progress=False, timer=timer,
                           points=points, cold_timer=cold_timer, caches=CACHES, reference=[], streams=streams)
    # the chains measured 1 us per KiB of weights (1024 us per MiB) beyond their ops alone, at their bytes per
    # inference (give or take the fitted invoke overhead's distance from 20 us, spread over the chain's weights)
    assert "streaming chains" in " ".join(profile.notes)
    assert set(profile.cache_curves) >= {"float32", "int8", "hybrid"}
    assert profile.cache_curves["hybrid"] == profile.cache_curves["int8"]  # dynamic-range weights are int8
    for prec in ("float32", "int8"):
        costs = [b * MiB for _, b, _, _ in profile.cache_curves[prec]]
        assert max(costs) == pytest.approx(1024.0, rel=0.05) and costs == sorted(costs)  # never cheaper further


def test_the_prediction_adds_the_cache_penalty_and_says_so():
    from tflite_flops.analysis import analyze_model
    from tflite_flops.latency.cache import op_data, whole_model_penalties
    from tflite_flops.reader.load import load_model
    from tflite_flops.settings import Settings

    fixture = DeviceProfile.from_dict(json.loads((ROOT / "tests" / "fixtures" / "predict_profile.json").read_text()))
    curve = ((MiB, 1e-3, 1.0, 0.0),)  # 1 ns per byte and 1 us per op at least 1 MiB away (a strong cost, to see it)
    model = load_model(str(ROOT / "sample_models" / "cnn_float.tflite"))
    plain = analyze_model(model, Settings(predict=fixture))
    costed = analyze_model(model, Settings(predict=replace(fixture, cache_curve=curve)))
    assert plain.prediction.cache_ms is None and "cache_ms" not in plain.prediction.to_dict()
    penalties = whole_model_penalties(model, plain.ops, curve)
    expected_ms = sum(penalties[(o.subgraph, o.index)] * o.executions for o in plain.ops
                      if (o.subgraph, o.index) in penalties and o.predicted_ms) / 1e3
    assert costed.prediction.cache_ms == pytest.approx(expected_ms)
    assert costed.prediction.latency_ms == pytest.approx(plain.prediction.latency_ms + expected_ms)
    # the sample is small: its weights are far (a whole inference) only past its own footprint
    data = {d.key: d for d in op_data(model, plain.ops)}
    assert all(v >= 0 for v in penalties.values()) and set(penalties) == set(data)
    # a per-invoke cost: once per invoke, in the overheads, at the model's bytes less at its smallest op's
    from tflite_flops.latency.cache import invoke_penalty_us, per_inference_bytes

    per_invoke = ((MiB, 0.0, 0.0, 5.0),)
    total = per_inference_bytes(list(data.values()), max(o.live_bytes for o in plain.ops if o.live_bytes))
    smallest = min(d.footprint for d in data.values())
    expected_us = 5.0 * (total - smallest) / MiB
    assert invoke_penalty_us(model, plain.ops, per_invoke) == pytest.approx(expected_us) and expected_us > 0
    once = analyze_model(model, Settings(predict=replace(fixture, cache_curve=per_invoke))).prediction
    assert once.overhead_ms == pytest.approx(plain.prediction.overhead_ms + expected_us / 1e3)
    assert once.cache_ms == pytest.approx(expected_us / 1e3) and once.ops_ms == pytest.approx(plain.prediction.ops_ms)


@pytest.mark.runtime
@pytest.mark.slow
def test_analyze_drift_check_scales_the_whole_prediction_and_says_so(monkeypatch):
    import tflite_flops
    from tflite_flops.latency import calibrate as cal
    from tflite_flops.latency.suite import reference_points

    fixture = DeviceProfile.from_dict(json.loads((ROOT / "tests" / "fixtures" / "predict_profile.json").read_text()))
    profile = replace(fixture, reference={p.key: 10.0 for p in reference_points()})
    monkeypatch.setattr(cal, "cpu_model", lambda: fixture.machine.cpu)
    monkeypatch.setattr(cal, "runtime_version", lambda name: "2.3.0")
    calls = []
    monkeypatch.setattr(cal, "time_reference", lambda blob, settings, quick: calls.append(1) or 13.0)  # 1.3x slower now
    model = str(ROOT / "sample_models" / "cnn_float.tflite")
    plain = tflite_flops.analyze(model, predict=profile, force=True).prediction
    assert calls == [] and plain.drift is None and "drift" not in plain.to_dict()
    p = tflite_flops.analyze(model, predict=profile, force=True, drift_check=True).prediction
    assert len(calls) == len(reference_points())
    assert {k: v for k, v in p.drift.items() if k != "cpu_share"} == {
        "applied": True, "factor": pytest.approx(1.3), "reference_ms_then": pytest.approx(0.05),
        "reference_ms_now": pytest.approx(0.065), "why": ""}
    for name in ("latency_ms", "low_ms", "high_ms", "ops_ms", "overhead_ms"):
        assert getattr(p, name) == pytest.approx(getattr(plain, name) * 1.3)
    from tflite_flops.render.prediction import prediction_lines
    from tflite_flops.report import Report  # noqa: F401

    report = tflite_flops.analyze(model, predict=profile, force=True, drift_check=True)
    assert any(line.startswith("drift: ×1.300 applied") for line in prediction_lines(report))


@pytest.mark.slow
def test_drift_check_needs_predict_and_reports_when_it_cannot_run(tmp_path):
    model = str(ROOT / "sample_models" / "cnn_float.tflite")
    r = subprocess.run([sys.executable, "-m", "tflite_flops", "analyze", model, "--drift-check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--predict" in r.stderr
    # the fixture profile has no reference: the prediction is not rescaled and says why
    profile = str(ROOT / "tests" / "fixtures" / "predict_profile.json")
    r = subprocess.run([sys.executable, "-m", "tflite_flops", "analyze", model, "--predict", profile, "--force",
                        "--drift-check", "-f", "json"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    drift = json.loads(r.stdout)["prediction"]["drift"]
    assert drift["applied"] is False and drift["factor"] is None and "no reference" in drift["why"]
    r = subprocess.run([sys.executable, "-m", "tflite_flops", "analyze", model, "--predict", profile, "--force",
                        "--drift-check"], capture_output=True, text=True, cwd=ROOT)
    assert "drift: not applied (the profile has no reference" in r.stdout


def test_a_busy_machine_is_said_with_the_drift():
    from tflite_flops.report.prediction import BUSY_SHARE
    from tflite_flops.render.prediction import drift_lines
    from tflite_flops.report.prediction import Prediction, ProfileInfo

    quiet = Drift(True, 1.0, 0.3, 0.3, cpu_share=0.97)
    busy = Drift(True, 1.0, 0.3, 0.3, cpu_share=BUSY_SHARE / 2)
    assert not quiet.busy and busy.busy and not Drift(True, 1.0).busy  # no share: nothing said
    info = ProfileInfo("cpu", 2, "litert", "2.3.0", 1, True)
    lines = drift_lines(Prediction(1.0, 0.9, 1.1, info, drift=busy.to_dict()))
    assert lines[0].startswith("drift: ×1.000 applied") and "40% of the CPU" in lines[1]
    assert len(drift_lines(Prediction(1.0, 0.9, 1.1, info, drift=quiet.to_dict()))) == 1
    assert drift_lines(Prediction(1.0, 0.9, 1.1, info)) == []


def test_each_precision_is_priced_by_its_own_curve_when_the_profile_has_one():
    from types import SimpleNamespace

    from tflite_flops.latency.cache import whole_model_penalties

    # two ops in one subgraph: a float32 one and an int8 one, each with 1 MiB of weights at a whole inference
    tensors = [SimpleNamespace(dtype=d, is_constant=c) for d, c in
               (("float32", False), ("float32", True), ("float32", False), ("int8", True), ("int8", False))]
    ops = [SimpleNamespace(inputs=[0, 1], outputs=[2]), SimpleNamespace(inputs=[2, 3], outputs=[4])]
    model = SimpleNamespace(subgraphs=[SimpleNamespace(tensors=tensors, operators=ops)])
    rec = [SimpleNamespace(subgraph=0, index=0, phase="inference", executions=1, precision="float32",
                           inputs=((4,), (MiB // 4,)), outputs=((4,),), live_bytes=None),
           SimpleNamespace(subgraph=0, index=1, phase="inference", executions=1, precision="int8",
                           inputs=((4,), (MiB,)), outputs=((4,),), live_bytes=None)]
    # nothing up to an op's own footprint (1 MiB and a few bytes), 1 us per MiB at the model's 2 MiB and past it
    flat = ((MiB + 4096, 0.0, 0.0, 0.0), (2 * MiB, 1e-6, 0.0, 0.0))
    both = whole_model_penalties(model, rec, flat)
    # the first op also reads the model's input (16 bytes, an inference ago); the second its producer's output
    assert both[(0, 0)] == pytest.approx((MiB + 16) * 1e-6) and both[(0, 1)] == pytest.approx(MiB * 1e-6)
    cheaper = ((MiB + 4096, 0.0, 0.0, 0.0), (2 * MiB, 0.5e-6, 0.0, 0.0))
    split = whole_model_penalties(model, rec, flat, {"int8": cheaper})
    assert split[(0, 0)] == both[(0, 0)] and split[(0, 1)] == pytest.approx(0.5 * MiB * 1e-6)
    assert whole_model_penalties(model, rec, ()) == {}


def test_each_precision_s_curve_takes_the_pooled_cost_per_op():
    from tflite_flops.latency.calibrate import shared_state_cost

    pooled = ((MiB, 0.0, 0.0, 0.0), (16 * MiB, 1e-6, 1.0, 2.0), (64 * MiB, 2e-5, 3.0, 9.0))
    own = ((MiB, 0.0, 0.0, 0.0), (16 * MiB, 3e-6, 0.2, 2.5), (40 * MiB, 9e-6, 5.0, 4.0), (64 * MiB, 1e-5, 0.5, 8.0))
    # per byte and per invoke stay the precision's; per op is the pooled curve's at each distance (40 MiB: halfway)
    assert shared_state_cost(own, pooled) == ((MiB, 0.0, 0.0, 0.0), (16 * MiB, 3e-6, 1.0, 2.5),
                                              (40 * MiB, 9e-6, 2.0, 4.0), (64 * MiB, 1e-5, 3.0, 8.0))
