"""Latency prediction (``analyze --predict``): per-op times from a device profile's laws, the fusions of
XNNPACK's subgraph optimizer, the whole-model sum and range, the configuration check, the report.

Every profile here is built by hand (``DeviceProfile`` / ``Law``), never by timing: the expected
times are the laws' arithmetic, written next to them.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import cli_process
import tflite_flops
from profile_helpers import installed_version as _installed_version
from tflite_builder import build_model
from tflite_flops.analysis import analyze_model
from tflite_flops.analysis.placement import xnnpack_placer
from tflite_flops.latency.profile import DeviceProfile, Law, Machine, ProfileError
from tflite_flops.latency.predict import fused_ops
from tflite_flops.reader.load import load_model
from tflite_flops.errors import ProfileMismatchError, RuntimeUnavailableError
from tflite_flops.report import Report
from tflite_flops.settings import Settings

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
PAD, CONV_2D, RELU, RESHAPE, FULLY_CONNECTED, RELU_0_TO_1, TANH = 34, 3, 19, 22, 9, 152, 28
INT32 = 2
LOW, HIGH = math.log(0.9), math.log(1.25)  # every law's residual quantiles: measured/predicted from 0.9 to 1.25


def chain_model() -> bytes:
    """x[1,8,8,4] -> PAD(H, W by 1) -> CONV_2D 3x3 VALID, 8 filters -> RELU -> RESHAPE [1,512]
    -> FULLY_CONNECTED 10 -> RELU_0_TO_1 (XNNPACK has no kernel) -> TANH -> y[1,10].

    XNNPACK takes every op but RELU_0_TO_1: partition 0 holds ops 0-4, partition 1 op 6.
    """
    pads = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)
    w = np.full((8, 3, 3, 4), 0.01, np.float32)
    fw = np.full((10, 512), 0.01, np.float32)
    tensors = [
        {"name": "x", "shape": [1, 8, 8, 4]},  # 0
        {"name": "pads", "shape": [4, 2], "type": INT32, "buffer": 1},  # 1
        {"name": "xp", "shape": [1, 10, 10, 4]},  # 2
        {"name": "w", "shape": [8, 3, 3, 4], "buffer": 2},  # 3
        {"name": "b", "shape": [8], "buffer": 3},  # 4
        {"name": "conv", "shape": [1, 8, 8, 8]},  # 5
        {"name": "relu", "shape": [1, 8, 8, 8]},  # 6
        {"name": "new_shape", "shape": [2], "type": INT32, "buffer": 4},  # 7
        {"name": "flat", "shape": [1, 512]},  # 8
        {"name": "fw", "shape": [10, 512], "buffer": 5},  # 9
        {"name": "fb", "shape": [10], "buffer": 6},  # 10
        {"name": "fc", "shape": [1, 10]},  # 11
        {"name": "clip", "shape": [1, 10]},  # 12
        {"name": "y", "shape": [1, 10]},  # 13
    ]
    ops = [
        {"opcode": 0, "inputs": [0, 1], "outputs": [2]},
        {"opcode": 1, "inputs": [2, 3, 4], "outputs": [5],
         "options": ("Conv2DOptions", {"padding": 1, "stride_w": 1, "stride_h": 1})},  # padding 1 = VALID
        {"opcode": 2, "inputs": [5], "outputs": [6]},
        {"opcode": 3, "inputs": [6, 7], "outputs": [8]},
        {"opcode": 4, "inputs": [8, 9, 10], "outputs": [11], "options": ("FullyConnectedOptions", {})},
        {"opcode": 5, "inputs": [11], "outputs": [12]},
        {"opcode": 6, "inputs": [12], "outputs": [13]},
    ]
    sg = {"tensors": tensors, "operators": ops, "inputs": [0], "outputs": [13], "name": "main"}
    buffers = [None, pads.tobytes(), w.tobytes(), np.zeros(8, np.float32).tobytes(),
               np.array([1, 512], np.int32).tobytes(), fw.tobytes(), np.zeros(10, np.float32).tobytes()]
    return build_model([sg], [PAD, CONV_2D, RELU, RESHAPE, FULLY_CONNECTED, RELU_0_TO_1, TANH], buffers=buffers)


def law(family: str, placement: str, **coefficients: float) -> Law:
    coefficients = {("1" if k == "one" else k): v for k, v in coefficients.items()}
    return Law(family, "float32", placement, coefficients, log_low=LOW, log_high=HIGH, points=10)


def profile(xnnpack: bool = True, threads: int = 1, version: str | None = None, laws=None) -> DeviceProfile:
    place = "xnnpack" if xnnpack else "builtin"
    if laws is None:
        laws = (law("CONV_2D", place, one=2.0, macs=0.001), law("FULLY_CONNECTED", place, one=1.0, macs=0.002),
                law("RELU_0_TO_1", "builtin", one=0.5, out=0.01), law("TANH", place, one=0.25, out=0.05),
                law("*", place, one=100.0))  # PAD, RELU, RESHAPE: 100 µs each unless fused
    machine = Machine("test cpu", 2, "ai_edge_litert", version or _installed_version(), threads, xnnpack)
    return DeviceProfile(machine, tuple(laws), invoke_overhead_us=10.0, partition_overhead_us=3.0,
                         created="2026-11-27T00:00:00+00:00", source="calibrate")


@pytest.fixture(scope="module")
def predicted() -> Report:
    return analyze_model(chain_model(), Settings(predict=profile()))


def ms(report: Report) -> dict[str, float | None]:
    return {o.op_type: o.predicted_ms for o in report.ops}


def test_the_placement_the_test_relies_on(predicted):
    assert [o.xnnpack for o in predicted.ops] == [True] * 5 + [False, True]
    assert [o.xnnpack_partition for o in predicted.ops] == [0] * 5 + [None, 1]
    assert [o.macs for o in predicted.ops if o.macs] == [18432, 5120]  # 1·8·8·8 · 3·3·4; 1·10·512


def test_per_op_predictions_follow_the_laws(predicted):
    got = ms(predicted)
    assert got["CONV_2D"] == pytest.approx((2.0 + 0.001 * 18432) / 1000)  # 2 + 18.432 = 20.432 µs
    assert got["FULLY_CONNECTED"] == pytest.approx((1.0 + 0.002 * 5120) / 1000)  # 1 + 10.24 = 11.24 µs
    assert got["RELU_0_TO_1"] == pytest.approx((0.5 + 0.01 * 10) / 1000)  # builtin: 0.5 + 0.1 = 0.6 µs
    assert got["TANH"] == pytest.approx((0.25 + 0.05 * 10) / 1000)  # 0.25 + 0.5 = 0.75 µs


def test_fused_ops_cost_nothing_inside_their_partition(predicted):
    # PAD folds into the VALID conv, RELU merges into the conv's clamp, RESHAPE runs in place: their
    # generic law (100 µs) is not used.
    assert [ms(predicted)[k] for k in ("PAD", "RELU", "RESHAPE")] == [0.0, 0.0, 0.0]
    assert predicted.prediction.ops_fused == 3


def test_the_whole_model_is_the_ops_plus_the_overheads(predicted):
    p = predicted.prediction
    ops_us = 20.432 + 11.24 + 0.6 + 0.75  # = 33.022
    overhead_us = 10.0 + 2 * 3.0  # one invoke, two partitions: 16
    assert p.partitions == 2
    assert p.ops_ms == pytest.approx(sum(o.predicted_ms or 0 for o in predicted.ops)) == pytest.approx(ops_us / 1000)
    assert p.overhead_ms == pytest.approx(overhead_us / 1000)
    assert p.latency_ms == pytest.approx((ops_us + overhead_us) / 1000)  # 49.022 µs
    # the range: every op's quantiles summed (0.9 and 1.25 of 33.022), the overheads exact
    assert p.low_ms == pytest.approx((0.9 * ops_us + overhead_us) / 1000)  # 45.7198 µs
    assert p.high_ms == pytest.approx((1.25 * ops_us + overhead_us) / 1000)  # 57.2775 µs
    assert p.complete and not p.ops_not_predicted and p.placement == "xnnpack"


def test_predictions_are_deterministic():
    a = analyze_model(chain_model(), Settings(predict=profile()))
    b = analyze_model(chain_model(), Settings(predict=profile()))
    assert a.to_json() == b.to_json()


def test_without_xnnpack_every_op_is_builtin_and_nothing_fuses():
    r = analyze_model(chain_model(), Settings(predict=profile(xnnpack=False)))
    got = ms(r)
    assert [got[k] for k in ("PAD", "RELU", "RESHAPE")] == [pytest.approx(0.1)] * 3  # the generic 100 µs each
    assert r.prediction.partitions == 0 and r.prediction.ops_fused == 0 and r.prediction.placement == "builtin"
    assert r.prediction.latency_ms == pytest.approx((20.432 + 11.24 + 0.6 + 0.75 + 300 + 10) / 1000)


def test_a_clamp_with_a_second_reader_or_a_producer_outside_its_partition_is_not_fused():
    # The RELU of the chain model, but its input also a model output: a second consumer, so it stays.
    data = chain_model()
    model = load_model(data)
    sg = model.subgraphs[0]
    r = analyze_model(data)
    assert set(fused_ops(model, r.ops)) == {(0, 0), (0, 2), (0, 3)}
    two_readers = replace(model, subgraphs=(replace(sg, outputs=(13, 5)),))
    assert (0, 2) not in fused_ops(two_readers, r.ops)  # tensor 5 (the conv's output) is also an output
    # a RELU whose producer is not in a partition (the kept op) is not fused either
    kept = tuple(replace(o, xnnpack=False, xnnpack_partition=None) if o.index == 1 else o for o in r.ops)
    assert (0, 2) not in fused_ops(model, kept) and (0, 0) not in fused_ops(model, kept)


def test_an_op_without_a_law_is_not_predicted_warned_once_and_the_prediction_is_partial():
    only_conv = profile(laws=(law("CONV_2D", "xnnpack", one=2.0, macs=0.001),))
    r = analyze_model(chain_model(), Settings(predict=only_conv))
    p = r.prediction
    assert ms(r)["CONV_2D"] == pytest.approx(0.020432)
    assert ms(r)["FULLY_CONNECTED"] is None and ms(r)["TANH"] is None  # never a silent 0
    assert not p.complete and p.ops_not_predicted == {"FULLY_CONNECTED": 1, "RELU_0_TO_1": 1, "TANH": 1}
    lines = [w for w in r.warnings if w.startswith("prediction partial")]
    assert len(lines) == 3 and all(sum(t in w for w in lines) == 1 for t in p.ops_not_predicted)
    assert p.latency_ms == pytest.approx((20.432 + 16) / 1000)  # what was predicted, said to be partial


def test_a_stand_in_law_is_noted():
    r = analyze_model(chain_model(), Settings(predict=profile(laws=(law("*", "xnnpack", one=1.0), law("*", "builtin", one=2.0)))))
    assert r.prediction.complete and r.prediction.ops_fallback == 4  # CONV_2D, FULLY_CONNECTED, TANH, RELU_0_TO_1
    assert any(n.startswith("prediction: 4 op(s) predicted by a stand-in law") for n in r.notes)


def test_init_time_ops_are_not_predicted():
    r = analyze_model(SAMPLES / "cnn_fp16.tflite", Settings(predict=profile(laws=(law("*", "xnnpack", one=1.0),
                                                                          law("*", "builtin", one=1.0)))))
    init = [o for o in r.ops if o.phase != "inference"]
    assert init and all(o.predicted_ms is None for o in init)
    assert all(o.predicted_ms is not None for o in r.ops if o.phase == "inference")


def test_json_round_trip_and_additive_keys(predicted):
    d = json.loads(predicted.to_json())
    assert list(d["prediction"])[:4] == ["latency_ms", "low_ms", "high_ms", "profile"]
    assert d["prediction"]["profile"]["threads"] == 1 and d["prediction"]["profile"]["source"] == "calibrate"
    assert d["ops"][1]["predicted_ms"] == pytest.approx(0.020432)
    assert Report.from_dict(d) == predicted
    plain = json.loads(analyze_model(chain_model()).to_json())
    assert "prediction" not in plain and all("predicted_ms" not in o for o in plain["ops"])


def test_library_refuses_a_foreign_profile_and_force_passes():
    with pytest.raises(ProfileMismatchError, match="4 thread"):
        tflite_flops.analyze(chain_model(), predict=profile(threads=4))
    with pytest.raises(ProfileMismatchError, match="XNNPACK off"):
        tflite_flops.analyze(chain_model(), predict=profile(xnnpack=False))
    r = tflite_flops.analyze(chain_model(), predict=profile(threads=4), force=True)
    assert "4 thread" in r.prediction.forced and any(w.startswith("prediction forced") for w in r.warnings)
    assert tflite_flops.analyze(chain_model(), threads=4, predict=profile(threads=4)).prediction.forced is None


def test_the_runtime_version_is_the_installed_ones(monkeypatch):
    import tflite_flops.measure.runtime as runtime

    monkeypatch.setattr(runtime, "runtime_version", lambda name: "9.9.9")
    with pytest.raises(ProfileMismatchError, match="9.9.9"):
        tflite_flops.analyze(chain_model(), predict=profile(version="1.0.0"))
    assert tflite_flops.analyze(chain_model(), predict=profile(version="9.9.9")).prediction.forced is None

    def missing(name):
        raise RuntimeUnavailableError("not installed")

    monkeypatch.setattr(runtime, "runtime_version", missing)  # no runtime: threads and XNNPACK still checked
    r = tflite_flops.analyze(chain_model(), predict=profile(version="1.0.0"))
    assert r.prediction is not None and any("was not compared" in n for n in r.notes)
    with pytest.raises(ProfileMismatchError):
        tflite_flops.analyze(chain_model(), predict=profile(version="1.0.0", threads=2))


def test_a_missing_or_corrupt_profile_is_one_error(tmp_path):
    with pytest.raises(ProfileError, match="no such device profile"):
        tflite_flops.analyze(chain_model(), predict=tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{\"format\": \"tflite_flops.device_profile\", \"version\": 1}")
    with pytest.raises(ProfileError, match="malformed"):
        tflite_flops.analyze(chain_model(), predict=tmp_path / "bad.json")


def _cli_profile(tmp_path, **kw) -> str:
    path = tmp_path / "profile.json"
    profile(**kw).save(str(path))
    return str(path)


def test_cli_refuses_a_foreign_profile_with_one_line(tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(chain_model())
    path = _cli_profile(tmp_path, threads=2)
    r = cli_process.run(["analyze", str(model), "--predict", path])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and r.stderr.startswith("error: device profile made at 2 thread(s)")
    assert "Traceback" not in r.stderr
    r = cli_process.run(["analyze", str(model), "--predict", path, "--force", "-f", "json"])
    assert r.returncode == 0 and "prediction forced" in r.stderr
    assert json.loads(r.stdout)["prediction"]["forced"].startswith("device profile made at 2 thread(s)")
    r = cli_process.run(["analyze", str(model), "--predict", path, "--threads", "2", "-f", "json"])
    assert r.returncode == 0 and json.loads(r.stdout)["prediction"]["forced"] is None
    r = cli_process.run(["analyze", str(model), "--predict", str(tmp_path / "missing.json")])
    assert r.returncode == 1 and r.stderr.strip() == f"error: {tmp_path / 'missing.json'}: no such device profile"


def test_cli_and_library_give_the_same_report(tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(chain_model())
    path = _cli_profile(tmp_path)
    r = cli_process.run(["analyze", str(model), "--predict", path, "-f", "json"])
    assert r.returncode == 0
    assert Report.from_json(r.stdout) == tflite_flops.analyze(str(model), predict=path)


def test_the_fixture_profile_predicts_a_sample():
    # tests/fixtures/predict_profile.json, hand-written; cnn_float: its RELU (op 8) after a TRANSPOSE_CONV
    # merges into it, every other op gets a law (CONV_2D's own, the unary group's, the generic ones).
    r = analyze_model(SAMPLES / "cnn_float.tflite", Settings(predict=DeviceProfile.load(str(FIXTURES / "predict_profile.json"))))
    assert r.prediction.complete and r.prediction.ops_fused == 1
    assert r.ops[8].op_type == "RELU" and r.ops[8].predicted_ms == 0.0
    assert r.ops[0].predicted_ms == pytest.approx((2.0 + 0.001 * r.ops[0].macs) / 1000)  # 2 + 110.592 µs


def test_sweep_carries_every_points_prediction():
    from tflite_flops.render.sweep import render_sweep
    from tflite_flops.studies.sweep import sweep

    p = profile(laws=(law("*", "xnnpack", one=1.0, bytes=0.001), law("*", "builtin", one=2.0, bytes=0.001)))
    result = sweep(SAMPLES / "fcn_dynamic.tflite", ["image=1x32x32x3", "image=1x64x64x3"], settings=Settings(predict=p))
    small, big = (pt.prediction for pt in result.points)
    assert small.latency_ms < big.latency_ms  # more bytes at 4x the pixels, the same laws
    assert result.points[0].report.prediction == small
    d = result.to_dict()["points"][1]["prediction"]
    assert d == {"latency_ms": big.latency_ms, "low_ms": big.low_ms, "high_ms": big.high_ms, "complete": True,
                 "range_rate": None, "low_confidence_ms": big.low_confidence_ms,
                 "low_confidence_share": big.low_confidence_share, "flags": list(big.flags)}
    assert f"{big.latency_ms:.3f}" in render_sweep(result, "table")
    assert render_sweep(result, "csv").splitlines()[0].endswith("predicted_ms,predicted_low_ms,predicted_high_ms,"
                                                                "predicted_low_confidence_share,predicted_flags")
    plain = sweep(SAMPLES / "fcn_dynamic.tflite", ["image=1x32x32x3", "image=1x64x64x3"])
    assert "prediction" not in plain.to_dict()["points"][0] and "predicted" not in render_sweep(plain, "table")


def test_compare_carries_both_predictions(tmp_path):
    from tflite_flops.report.compare import compare_reports

    a = analyze_model(chain_model(), Settings(predict=profile()))
    b = analyze_model(chain_model(), Settings(predict=profile(xnnpack=False)))
    c = compare_reports(a, b)
    (row,) = [m for m in c.totals if m.key == "prediction.latency_ms"]
    assert (row.a, row.b) == (a.prediction.latency_ms, b.prediction.latency_ms)
    assert c.to_dict()["ops"][0]["a"]["predicted_ms"] == 0.0  # the PAD folded into the conv on XNNPACK
    assert not [m for m in compare_reports(analyze_model(chain_model()), a).totals if m.a is None and m.b is None]
    # the CLI: --predict on both sides
    model = tmp_path / "m.tflite"
    model.write_bytes(chain_model())
    r = cli_process.run(["compare", str(model), str(model), "--predict", _cli_profile(tmp_path)])
    assert r.returncode == 0 and "Predicted latency" in r.stdout


@pytest.mark.slow
@pytest.mark.runtime
def test_predicted_against_measured_end_to_end(tmp_path):
    import ai_edge_litert  # noqa: F401  (a runtime test imports its package: CI fails, never skips)

    model = tmp_path / "m.tflite"
    model.write_bytes(chain_model())
    args = ["analyze", str(model), "--predict", _cli_profile(tmp_path), "--latency", "--per-op", "--runs", "3",
            "--warmup", "1"]
    r = cli_process.run(args + ["-f", "json"], timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["latency"]["median_ms"] > 0 and d["prediction"]["latency_ms"] == pytest.approx(0.049022)
    both = [o for o in d["ops"] if o["predicted_ms"] is not None and o["latency_ms"] is not None]
    assert len(both) == 7  # every op timed in isolation and predicted
    r = cli_process.run(args, timeout=300)
    assert r.returncode == 0 and "measured median" in r.stdout and "measured ms" in r.stdout


def test_strict_refuses_a_partial_prediction():
    from tflite_flops.errors import UnsupportedOpError
    from tflite_flops.report.completeness import check_strict

    check_strict(analyze_model(chain_model(), Settings(predict=profile())))  # complete: nothing to refuse
    with pytest.raises(UnsupportedOpError, match="prediction is partial: FULLY_CONNECTED ×1"):
        check_strict(analyze_model(chain_model(), Settings(predict=profile(laws=(law("CONV_2D", "xnnpack", one=1.0),)))))


def conv_then(second: int, scalar: bool = False) -> bytes:
    """x[1,4,4,2] -> CONV_2D 1x1 (SAME) -> ADD(conv, conv) -> the op ``second`` (of the ADD's output when
    ``second`` is RELU after an ADD, else of the conv's), with a constant scalar 0.0 as its second input."""
    maximum = 55
    tensors = [{"name": "x", "shape": [1, 4, 4, 2]}, {"name": "w", "shape": [2, 1, 1, 2], "buffer": 1},
               {"name": "b", "shape": [2], "buffer": 2}, {"name": "c", "shape": [1, 4, 4, 2]},
               {"name": "zero", "shape": [], "buffer": 3}, {"name": "y", "shape": [1, 4, 4, 2]},
               {"name": "s", "shape": [1, 4, 4, 2]}]
    conv = {"opcode": 0, "inputs": [0, 1, 2], "outputs": [3], "options": ("Conv2DOptions", {"padding": 0, "stride_w": 1, "stride_h": 1})}
    if second == maximum:
        ops = [conv, {"opcode": 1, "inputs": [3, 4] if scalar else [3, 3], "outputs": [5]}]
        codes, out = [CONV_2D, maximum], 5
    else:  # RELU after an ADD: the ADD (a binary node) has no clamp to merge into
        ops = [conv, {"opcode": 1, "inputs": [3, 3], "outputs": [6]}, {"opcode": 2, "inputs": [6], "outputs": [5]}]
        codes, out = [CONV_2D, 0, RELU], 5
    sg = {"tensors": tensors, "operators": ops, "inputs": [0], "outputs": [out], "name": "main"}
    buffers = [None, np.ones((2, 1, 1, 2), np.float32).tobytes(), np.zeros(2, np.float32).tobytes(),
               np.zeros(1, np.float32).tobytes()]
    return build_model([sg], codes, buffers=buffers)


def test_maximum_with_a_constant_scalar_is_a_clamp_and_merges():
    data = conv_then(55, scalar=True)  # MAXIMUM(conv, 0.0): optimize_common_subgraphs_min_max_to_clamp
    r = analyze_model(data)
    assert [o.xnnpack for o in r.ops] == [True, True]
    assert list(fused_ops(load_model(data), r.ops)) == [(0, 1)]
    two_tensors = conv_then(55)  # MAXIMUM(conv, conv): no constant, no clamp
    assert fused_ops(load_model(two_tensors), analyze_model(two_tensors).ops) == {}


def test_a_relu_after_an_add_stays():
    data = conv_then(RELU)
    r = analyze_model(data)
    assert [o.op_type for o in r.ops] == ["CONV_2D", "ADD", "RELU"] and all(o.xnnpack for o in r.ops)
    assert fused_ops(load_model(data), r.ops) == {}


def test_model_explorer_colours_the_predicted_times(predicted):
    from tflite_flops.errors import OutputFormatError
    from tflite_flops.render.formats.model_explorer import node_data

    results = node_data(predicted, "predicted_ms")["main"]["results"]
    assert results["conv"]["value"] == pytest.approx(0.020432) and results["relu"]["value"] == 0.0
    with pytest.raises(OutputFormatError, match="needs a prediction"):
        node_data(analyze_model(chain_model()), "predicted_ms")


@pytest.mark.runtime
def test_a_while_is_predicted_by_its_law_with_its_trips_and_its_body_ops_per_trip():
    import ai_edge_litert  # noqa: F401

    from tflite_flops.latency.predict import while_trips
    from tflite_flops.measure import runtimes
    from tflite_flops.latency.suite import LOOP, SuitePoint, build, loop

    blob = build(runtimes.schema_module("litert"), SuitePoint(f"{LOOP}-3x8", LOOP, "float32", False, False, loop(3, 8)))
    model = load_model(blob)
    report = analyze_model(blob)
    assert while_trips(model, report.ops) == {(0, 0): 3}
    laws = (law("WHILE", "builtin", one=1.5, trips=0.1, copied=0.001), law("*", "builtin", one=2.0))
    out = analyze_model(blob, Settings(predict=profile(xnnpack=False, laws=laws)))
    got = {(o.subgraph, o.index, o.op_type): o.predicted_ms for o in out.ops}
    # the WHILE: 1.5 + 0.1 x 3 trips + 0.001 x (3 trips x (1 + 8) loop-variable elements = 27) = 1.827 us
    assert math.isclose(got[(0, 0, "WHILE")], 1.827e-3)
    # the cond's LESS runs 3 + 1 times, the body's ADDs 3 times, each 2 us by the generic law
    assert math.isclose(got[(1, 0, "LESS")], 8e-3) and math.isclose(got[(2, 0, "ADD")], 6e-3)
    # the whole: 1.827 + 8 + 6 + 6 + the 10 us per-invoke overhead (no partition without XNNPACK)
    assert math.isclose(out.prediction.latency_ms, (1.827 + 8 + 6 + 6 + 10) * 1e-3)


@pytest.mark.runtime
@pytest.mark.parametrize("xnnpack", [True, False])
def test_a_loop_whose_body_changes_shape_every_trip_pays_its_re_preparation(samples_dir, xnnpack):
    import ai_edge_litert  # noqa: F401

    from tflite_flops.latency.predict import loop_reprepare
    from tflite_flops.measure import runtimes
    from tflite_flops.latency.suite import LOOP, SuitePoint, build, growing_loop, loop

    fb = runtimes.schema_module("litert")
    # The suite's growing loop of 8 MULs: its SLICEs (the rows before and after the counter) change shape
    # every trip; with XNNPACK the partition of the MULs and the CONCATENATION runs after them: 8 + 1 ops
    # reshaped every trip. The trivial loop has no such op.
    blob = build(fb, SuitePoint(f"{LOOP}-growing-8", LOOP, "float32", xnnpack, False, growing_loop(8)))
    model, report = load_model(blob), analyze_model(blob)
    assert loop_reprepare(model, report.ops, xnnpack, xnnpack_placer(model)) == {(0, 0): (1, 9 if xnnpack else 0)}
    if xnnpack:  # the prediction places no graph itself: the analysis's placement is needed
        with pytest.raises(ValueError, match="placement of the loop bodies is needed"):
            loop_reprepare(model, report.ops, xnnpack)
    plain = build(fb, SuitePoint(f"{LOOP}-3x8", LOOP, "float32", False, False, loop(3, 8)))
    assert loop_reprepare(load_model(plain), analyze_model(plain).ops, xnnpack) == {}
    # the LSTM sample: its first loop builds the layer's output sequence that way (17 ops in the body's
    # partition after its SLICEs), its second loop does not
    lstm = str(samples_dir / "lstm.tflite")
    parsed = load_model(lstm)
    assert loop_reprepare(parsed, analyze_model(lstm).ops, xnnpack, xnnpack_placer(parsed)) == {
        (0, 1): (1, 17 if xnnpack else 0)}
    # the WHILE law's terms: 8 trips x (2 us a growing trip + 0.05 us a reshaped op x 9) = 19.6 us on top of
    # 1.5 + 0.1 x 8 trips + 0.001 x (8 trips x (1 + 16 + 128) loop-variable elements = 1,160) = 3.46 us
    place = "xnnpack" if xnnpack else "builtin"
    laws = (law("WHILE", "builtin", one=1.5, trips=0.1, copied=0.001, growing_trips=2.0, reshaped=0.05),
            law("*", "builtin", one=2.0), law("*", place, one=2.0))
    out = analyze_model(blob, Settings(predict=profile(xnnpack=xnnpack, laws=laws)))
    (got,) = [o.predicted_ms for o in out.ops if o.op_type == "WHILE"]
    assert math.isclose(got, (3.46 + 8 * (2.0 + 0.05 * (9 if xnnpack else 0))) * 1e-3)
