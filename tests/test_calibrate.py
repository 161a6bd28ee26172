"""Calibration (issue 22): the suite's coverage, the law fit, the profile, resuming, the phone pack. No clock:
timing is injected, except in the one end-to-end run marked slow. The checks that build the whole suite (its
coverage, the exported pack) are slow too: the quick lane keeps the fit, the profile and resuming."""

from __future__ import annotations

import collections
import json
import math
import os
import subprocess
from pathlib import Path

import cli_process
import numpy as np
import pytest

from tflite_flops.latency.profile import DeviceProfile, Machine, OpFeatures
from tflite_flops.latency.fit import Sample, fit_law, fit_laws, fit_overheads, nnls

ROOT = Path(__file__).resolve().parent.parent
MACHINE = Machine(cpu="test cpu", cores=2, runtime="litert", runtime_version="9.9", threads=1, xnnpack=True)


def run(*args: str) -> subprocess.CompletedProcess:
    return cli_process.run(args, cwd=ROOT, timeout=300)


def _conv(macs: float, inp: float, out: float, params: float) -> dict[str, float]:
    return {"1": 1.0, "macs": macs, "in": inp, "out": out, "params": params}


def test_nnls_matches_the_unconstrained_solution_when_it_is_non_negative_and_clips_otherwise():
    a = np.random.default_rng(1).uniform(0, 1, (30, 3))
    assert np.allclose(nnls(a, a @ np.array([2.0, 0.5, 1.0])), [2.0, 0.5, 1.0])
    # b = -a[:,0] + 3 a[:,1]: the best non-negative fit drops column 0 (its coefficient would be negative)
    x = nnls(a, -a[:, 0] + 3 * a[:, 1])
    assert x[0] == 0.0 and (x >= 0).all()


def test_the_fit_recovers_known_coefficients_from_synthetic_points():
    # time = 2 us + 0.001 us/MAC + 0.004 us/output element, plus a 1.5 us overhead in every measurement
    rng = np.random.default_rng(0)
    rows = []
    for i in range(24):
        macs, inp, out, params = (float(v) for v in (rng.integers(1e3, 1e7), rng.integers(10, 1e5),
                                                     rng.integers(10, 1e5), rng.integers(10, 1e4)))
        t = 2.0 + 0.001 * macs + 0.004 * out
        rows.append(Sample(OpFeatures("DEPTHWISE_CONV_2D", "float32", "xnnpack", _conv(macs, inp, out, params)),
                           t + 1.5, 1.5))
    law = fit_law("DEPTHWISE_CONV_2D", "float32", "xnnpack", rows)
    assert law.coefficients["1"] == pytest.approx(2.0, rel=1e-6)
    assert law.coefficients["macs"] == pytest.approx(0.001, rel=1e-6)
    assert law.coefficients["out"] == pytest.approx(0.004, rel=1e-6)
    assert law.coefficients.get("in", 0.0) == pytest.approx(0.0, abs=1e-9)
    assert law.points == 24 and law.median_abs_error == pytest.approx(0.0, abs=1e-9)


def test_a_law_whose_op_part_is_below_the_noise_keeps_a_range_a_profile_can_hold(tmp_path):
    # int32 shape arithmetic as a calibration of 2026-12-08 timed it: about 1 us, all of it the overhead, and the
    # op's part (measured less overhead) from 0 to 0.5 us: the law prices it at thousandths of a microsecond, and the
    # op part's error quantiles came out at ln 11.4; the profile's schema holds |ln| <= 10 (LOG_RANGE_MAX)
    from tflite_flops.latency.profile import DeviceProfile
    from tflite_flops.latency.profile_schema import LOG_RANGE_MAX

    rows = []
    for i, n in enumerate((4.0, 8.0, 16.0, 2.0, 4.0, 8.0, 1.0, 4.0, 2.0, 16.0, 8.0, 4.0)):
        rows.append(Sample(OpFeatures("RESHAPE", "int32", "builtin", {"1": 0.0, "in": n, "out": n}),
                           1.0 + (0.5 if i % 3 == 0 else 0.0) + 1e-5 * n, 1.0))
    law = fit_law("layout", "int32", "builtin", rows)
    assert -LOG_RANGE_MAX <= law.log_low <= law.log_high <= LOG_RANGE_MAX
    profile = DeviceProfile(machine=MACHINE, laws=(law,), invoke_overhead_us=1.0, partition_overhead_us=0.0)
    profile.save(str(tmp_path / "p.json"))
    assert DeviceProfile.load(str(tmp_path / "p.json")).laws[0].log_high == law.log_high  # the tool reads it back


def test_an_outlier_is_dropped_and_the_law_keeps_the_rest():
    rows = [Sample(OpFeatures("ADD", "float32", "xnnpack", {"1": 1.0, "in": n, "out": n / 2}), 1.0 + 0.01 * n, 0.0)
            for n in (100.0, 400.0, 1600.0, 6400.0, 25600.0, 102400.0, 200.0, 800.0)]
    rows.append(Sample(OpFeatures("ADD", "float32", "xnnpack", {"1": 1.0, "in": 3200.0, "out": 1600.0}), 330.0, 0.0))
    law = fit_law("ADD", "float32", "xnnpack", rows)
    assert law.points == 8  # 3200 elements should take 33 us, not 330
    assert law.median_abs_error < 1e-6


def test_overheads_from_the_chains():
    # builtin chain: 3 us + 0.5 us per op; delegate chain: 3 + 2 us (partition) + 0.1 us per op
    builtin = [(n, 3.0 + 0.5 * n) for n in (1, 2, 4, 8, 16)]
    delegate = [(n, 5.0 + 0.1 * n) for n in (1, 2, 4, 8, 16)]
    invoke, partition = fit_overheads(builtin, delegate)
    assert invoke == pytest.approx(3.0) and partition == pytest.approx(2.0)


def test_group_and_generic_laws_and_the_profile_round_trip(tmp_path):
    rows = [Sample(OpFeatures(op, "float32", "xnnpack", {"1": 1.0, "in": n, "out": n}), 1 + 0.002 * n, 0.5)
            for op in ("ADD", "MUL") for n in (100.0, 1000.0, 10000.0, 50000.0, 300.0)]
    laws = fit_laws(rows)
    keys = {law.key for law in laws}
    assert {("ADD", "float32", "xnnpack"), ("MUL", "float32", "xnnpack"), ("binary", "float32", "xnnpack"),
            ("*", "float32", "xnnpack")} <= keys
    profile = DeviceProfile(machine=MACHINE, laws=laws, invoke_overhead_us=0.5, partition_overhead_us=0.25,
                            created="2026-01-01T00:00:00+00:00", source="calibrate", notes=("n",))
    path = str(tmp_path / "p.json")
    profile.save(path)
    again = DeviceProfile.load(path)
    assert again == profile
    # SUB has no law of its own: the binary group's law stands in, and says so
    sub = OpFeatures("SUB", "float32", "xnnpack", {"1": 1.0, "in": 1000.0, "out": 1000.0})
    assert again.law_for(sub).family == "binary" and again.fallback(sub) == "group binary"



@pytest.mark.runtime
@pytest.mark.slow
def test_the_suite_covers_every_family_precision_and_placement_it_claims():
    import ai_edge_litert  # noqa: F401  (the schema module the models are written with)

    from tflite_flops.measure import runtimes
    from tflite_flops.latency.calibrate import analyse
    from tflite_flops.latency.suite import LOOP, OVERHEAD, build, suite

    fb = runtimes.schema_module("litert")
    keys: collections.Counter = collections.Counter()
    points = suite(quick=True)
    for p in points:
        if p.family in (OVERHEAD, LOOP):
            continue
        a = analyse(p, build(fb, p))
        # one op per inference (a float16 weight's DEQUANTIZE runs at init), after its lead's op for a point with one
        assert a.ops == 1 + bool(p.lead), p.key
        keys[a.features[-1].key] += 1
    families = {k[0] for k in keys}
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL", "TRANSPOSE_CONV", "ADD", "MUL",
               "LOGISTIC", "HARD_SWISH", "GELU", "MAX_POOL_2D", "AVERAGE_POOL_2D", "MEAN", "SOFTMAX",
               "CONCATENATION", "RESHAPE", "TRANSPOSE", "PAD", "STRIDED_SLICE", "GATHER", "QUANTIZE"):
        assert op in families, op
    for op in ("CONV_2D", "FULLY_CONNECTED"):
        for prec in ("float32", "hybrid", "int8"):
            assert keys[(op, prec, "xnnpack")] >= 2, (op, prec)
            assert keys[(op, prec, "builtin")] >= 1, (op, prec)
    # ops XNNPACK refuses are calibrated where they run: int8 SOFTMAX on the builtin kernels
    assert keys[("SOFTMAX", "int8", "builtin")] >= 1 and keys[("SOFTMAX", "int8", "xnnpack")] == 0
    assert len({p.key for p in points}) == len(points)  # keys are unique: they key the side file and the pack


def test_the_while_law_is_the_loop_points_less_the_invoke_and_their_cond_and_body_ops():
    from tflite_flops.latency.profile import Law
    from tflite_flops.latency.calibrate import Analysed, loop_laws
    from tflite_flops.latency.suite import LOOP, SuitePoint

    # Loop points of T trips over E loop-variable elements; the cond's LESS runs T + 1 times at 0.05 us
    # (its law), the WHILE's own cost is 1.5 + 0.1 T + 0.0001 T E us, the invoke 0.5 us. For T = 4,
    # E = 1025: 0.5 + 5 x 0.05 + (1.5 + 0.4 + 0.0001 x 4100 = 2.31) = 3.06 us measured.
    less = Law("LESS", "int32", "builtin", {"1": 0.05})
    analysed, medians = [], {}
    for trips in (1, 4, 16, 64):
        for elements in (5, 1025, 16385):
            point = SuitePoint(f"{LOOP}-{trips}x{elements}", LOOP, "float32", True, True, lambda w: ([], []))
            loop = OpFeatures(LOOP, "float32", "builtin", {"1": 1.0, "trips": trips, "copied": trips * elements})
            cond = OpFeatures("LESS", "int32", "builtin", {"1": 1.0, "in": 2.0, "out": 1.0})
            analysed.append(Analysed(point, (loop, cond), 0, 2, (1, trips + 1)))
            medians[point.key] = 0.5 + (trips + 1) * 0.05 + 1.5 + 0.1 * trips + 0.0001 * trips * elements
    assert math.isclose(medians[f"{LOOP}-4x1025@x"], 3.06)
    (fitted,) = loop_laws(analysed, medians, (less,), invoke_us=0.5)
    assert fitted.key == (LOOP, "float32", "builtin") and fitted.points == 12
    for name, value in {"1": 1.5, "trips": 0.1, "copied": 0.0001}.items():
        assert math.isclose(fitted.coefficients[name], value, rel_tol=1e-6), name
    # points of other families, or not timed, feed no WHILE law
    assert loop_laws(analysed, {}, (less,), invoke_us=0.5) == ()
    # a LESS law of 10 us a run already accounts for more than every point's time (T = 1, E = 5:
    # 0.5 + 2 x 0.05 + 1.5 + 0.1 + 0.0005 = 2.2005 us measured < 2 x 10 us): no WHILE law, not one at 0
    dear = Law("LESS", "int32", "builtin", {"1": 10.0})
    assert loop_laws(analysed, medians, (dear,), invoke_us=0.5) == ()
    # with loops whose bodies change shape every trip (8 trips, re-preparing 2, 9 or 33 delegated ops a
    # trip), at 1.2 us a growing trip and 0.04 us a reshaped op: the law gets those two coefficients too
    for ops in (2, 9, 33):
        point = SuitePoint(f"{LOOP}-growing-{ops}", LOOP, "float32", True, True, lambda w: ([], []))
        loop = OpFeatures(LOOP, "float32", "builtin", {"1": 1.0, "trips": 8, "copied": 8 * 145,
                                                       "growing_trips": 8, "reshaped": 8 * ops})
        cond = OpFeatures("LESS", "int32", "builtin", {"1": 1.0, "in": 2.0, "out": 1.0})
        analysed.append(Analysed(point, (loop, cond), 0, 2, (1, 9)))
        medians[point.key] = 0.5 + 9 * 0.05 + 1.5 + 0.8 + 0.0001 * 8 * 145 + 8 * (1.2 + 0.04 * ops)
    (fitted,) = loop_laws(analysed, medians, (less,), invoke_us=0.5)
    for name, value in {"1": 1.5, "trips": 0.1, "copied": 0.0001, "growing_trips": 1.2, "reshaped": 0.04}.items():
        assert math.isclose(fitted.coefficients[name], value, rel_tol=1e-6), name


@pytest.mark.runtime
def test_a_loop_point_runs_its_trips_in_the_runtime_and_the_walk_counts_them():
    import ai_edge_litert  # noqa: F401

    from tflite_flops.measure import runtimes
    from tflite_flops.latency.calibrate import analyse
    from tflite_flops.latency.suite import LOOP, build, suite
    from tflite_flops.measure.runtime import RuntimeSettings, make_interpreter

    fb = runtimes.schema_module("litert")
    (point,) = [p for p in suite(quick=True) if p.id == f"{LOOP}-4x4"]
    blob = build(fb, point)
    # the runtime: the body adds 0.5 to the loop variable every trip, so 4 trips add 2.0
    interpreter = make_interpreter(blob, RuntimeSettings(xnnpack=False))
    interpreter.allocate_tensors()
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    assert np.allclose(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]), x + 2.0)
    # the analysis: WHILE once, with 4 trips over its 1 + 4 loop-variable elements (20 copied); the cond
    # runs 4 + 1 times, the body's two ADDs 4 times
    a = analyse(point, blob)
    kinds = [(f.family, runs) for f, runs in zip(a.features, a.runs)]
    assert kinds == [("WHILE", 1), ("LESS", 5), ("ADD", 4), ("ADD", 4)]
    assert a.features[0].values["trips"] == 4.0 and a.features[0].values["copied"] == 20.0
    assert all(f.values["trips"] == 0.0 for f in a.features[1:])


@pytest.mark.runtime
def test_a_rerun_times_only_the_points_the_side_file_lacks(tmp_path):
    import ai_edge_litert  # noqa: F401

    from tflite_flops.latency.calibrate import append_side, calibrate, configuration, side_path
    from tflite_flops.latency.suite import suite
    from tflite_flops.measure.runtime import RuntimeSettings

    points = [p for p in suite(quick=True) if p.id.startswith(("ADD-float32", "overhead"))]
    runtime = RuntimeSettings()
    output = str(tmp_path / "p.json")
    half = points[: len(points) // 2]
    for p in half:
        append_side(side_path(output), configuration(runtime), p.key, 10.0)
    with open(side_path(output), "a", encoding="utf-8") as f:
        f.write('{"format": "tflite_flops.calibration_poi')  # a line cut short by an interruption
    calls = []

    def fake_timer(blob, settings, quick):
        calls.append(settings.xnnpack)
        return 12.0 + len(blob) % 7

    profile, timed = calibrate(output, runtime, quick=True, progress=False, timer=fake_timer, points=points)
    assert timed == len(calls) == len(points) - len(half)
    assert os.path.exists(output) and DeviceProfile.load(output) == profile
    # a third run times nothing
    calls.clear()
    _, timed = calibrate(output, runtime, quick=True, progress=False, timer=fake_timer, points=points)
    assert timed == 0 and calls == []


def test_a_foreign_or_incomplete_pack_is_refused_in_one_line(tmp_path):
    r = run("calibrate", "--import", str(tmp_path), "-o", str(tmp_path / "p.json"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "not a calibration pack" in r.stderr
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "something else"}))
    r = run("calibrate", "--import", str(tmp_path), "-o", str(tmp_path / "p.json"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "not a tflite_flops calibration pack" in r.stderr


def test_a_bad_profile_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tflite_flops.device_profile", "version": 7}')
    r = run("analyze", str(ROOT / "sample_models" / "cnn_float.tflite"), "--predict", str(bad))
    assert r.returncode != 0 and r.stderr.count("\n") == 1 and "version" in r.stderr


@pytest.mark.runtime
@pytest.mark.slow
def test_export_pack_writes_runnable_models_and_a_script_naming_each_and_import_reads_the_profiles(tmp_path):
    from ai_edge_litert.interpreter import Interpreter

    from tflite_flops.analysis import analyze_model
    from tflite_flops.latency.pack import import_pack
    from tflite_flops.measure.runtime import fill_inputs

    pack = tmp_path / "pack"
    r = run("calibrate", "--export-pack", str(pack), "--quick")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((pack / "manifest.json").read_text())
    script = (pack / "run_calibration.sh").read_text()
    assert "--enable_op_profiling=true" in script and "--op_profiling_output_mode=csv" in script
    for entry in manifest["points"]:  # each run named: its outputs' stem, its model, XNNPACK on or off
        assert f"run {Path(entry['log']).stem} {Path(entry['model']).stem} {str(entry['delegate']).lower()}" in script
    for entry in manifest["points"][:: max(len(manifest["points"]) // 12, 1)]:
        data = (pack / entry["model"]).read_bytes()
        assert analyze_model(data).ops  # our reader
        interp = Interpreter(model_content=data)  # LiteRT
        interp.allocate_tensors()
        fill_inputs(interp)  # random inputs in the ranges benchmark_model uses (a GATHER's indices in range)
        interp.invoke()
    # a phone's CSV op profiles for the overhead chains and the ADD points (hand-written: 1 us + 1 ns per input element)
    header = ("Operator-wise Profiling Info for Regular Benchmark Runs:\n" + "=" * 30 + " Run Order " + "=" * 30 +
              "\nnode type, start, first, avg_ms, %, cdf%, mem KB, times called, name\n")
    written = 0
    for entry in manifest["points"]:
        if not entry["id"].startswith(("ADD-float32", "overhead")):
            continue
        report = analyze_model((pack / entry["model"]).read_bytes())
        ops = [o for o in report.ops if o.phase == "inference"]
        avg_ms = sum(1.0 + 0.001 * sum(math.prod(s) for s in o.inputs) for o in ops) / 1e3
        node = "TfLiteXNNPackDelegate" if entry["delegate"] else ops[0].op_type
        (pack / entry["profile"]).parent.mkdir(exist_ok=True)
        (pack / entry["profile"]).write_text(header + f"{node}, 0, {avg_ms}, {avg_ms}, 100%, 100%, 0, 1, out\n")
        written += 1
    profile = import_pack(str(pack), device="phone")
    assert profile.source == "import" and profile.machine.cpu == "phone"
    add = next(law for law in profile.laws if law.key == ("ADD", "float32", "xnnpack"))
    assert add.points >= 3 and add.median_abs_error < 0.05
    assert written < len(manifest["points"]) and any("without an output" in n for n in profile.notes)
    # the device's profile predicts without --force: its runtime is the device's, not one installed here;
    # threads and XNNPACK are still checked
    from tflite_flops.api import load_profile
    from tflite_flops.errors import ProfileMismatchError

    check = load_profile(profile)
    assert check.forced is None and "imported from phone" in check.note
    with pytest.raises(ProfileMismatchError, match="thread"):
        load_profile(profile, threads=4)


@pytest.mark.slow
@pytest.mark.runtime
def test_calibrate_end_to_end_on_a_small_subset(tmp_path):
    import ai_edge_litert  # noqa: F401

    from tflite_flops.latency.calibrate import calibrate
    from tflite_flops.latency.suite import suite
    from tflite_flops.measure.runtime import RuntimeSettings

    points = [p for p in suite(quick=True) if p.id.startswith(("CONV_2D-float32", "ADD-float32", "overhead"))]
    profile, timed = calibrate(str(tmp_path / "p.json"), RuntimeSettings(), quick=True, progress=False, points=points)
    assert timed == len(points)
    conv = next(law for law in profile.laws if law.key == ("CONV_2D", "float32", "xnnpack"))
    assert conv.points >= 3 and conv.coefficients
    assert profile.machine.runtime == "litert" and profile.invoke_overhead_us > 0


def test_an_unwritable_output_is_one_line(tmp_path):
    missing = tmp_path / "no" / "such" / "p.json"
    r = run("calibrate", "--quick", "-o", str(missing))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: cannot write ")


def test_conv_features_count_the_output_channel_tiles():
    from types import SimpleNamespace

    from tflite_flops.latency.features import op_features
    from tflite_flops.latency.profile import CHANNEL_TILE, law_features

    assert CHANNEL_TILE == 16
    # 3x3 CONV_2D on 8x8x16 to 8 channels, SAME: 8 x 8 x 8 outputs x 9 x 16 = 73,728 MACs; the microkernel
    # computes a tile of 16 output channels, 147,456 MACs; the taps are 73,728 / 16 input channels = 4,608
    conv = SimpleNamespace(op_type="CONV_2D", precision="float32", macs=73_728, flops=147_456, bytes_read=0,
                           bytes_written=0, params=1_160,
                           inputs=((1, 8, 8, 16), (8, 3, 3, 16), (8,)), outputs=((1, 8, 8, 8),), executions=1)
    f = op_features(conv, "xnnpack").values
    assert f["macs"] == 73_728.0 and f["tiled_macs"] == 147_456.0 and f["taps"] == 4_608.0
    # 24 channels: two tiles, 32 channels' worth: 73,728 x 3 = 221,184 MACs -> x 32 / 24 = 294,912
    wider = SimpleNamespace(**{**vars(conv), "macs": 221_184, "inputs": ((1, 8, 8, 16), (24, 3, 3, 16), (24,))})
    assert op_features(wider, "xnnpack").values["tiled_macs"] == 294_912.0
    # other ops have none
    add = SimpleNamespace(**{**vars(conv), "op_type": "ADD", "macs": 0})
    assert op_features(add, "xnnpack").values["tiled_macs"] == 0.0
    assert "tiled_macs" in law_features("TRANSPOSE_CONV") and "tiled_macs" not in law_features("ADD")
    # on the builtin kernels (or without a CPU target) the CONV_2D law's GEMM features are the tiled MACs and taps
    f = op_features(conv, "builtin").values
    assert (f["gemm_macs"], f["tile_taps"], f["narrow_macs"]) == (f["tiled_macs"], f["taps"], 0.0)


def test_conv_gemm_features_follow_xnnpack_s_tiles():
    from types import SimpleNamespace

    from tflite_flops.latency.features import conv_kernel, op_features
    from tflite_flops.latency.kernels import cpu_target, gemm_rows
    from tflite_flops.latency.profile import law_features

    cpu = cpu_target("x86-avx512")  # f32 7x32 (nr2 7x16 below 32 channels), qs8 7x16c8
    assert {"gemm_macs", "narrow_macs", "tile_taps"} <= set(law_features("CONV_2D"))

    def conv(x, w, y, precision="float32"):
        macs = y[1] * y[2] * y[3] * w[1] * w[2] * w[3]
        return SimpleNamespace(op_type="CONV_2D", precision=precision, macs=macs, flops=2 * macs, bytes_read=0,
                               bytes_written=0, params=w[0] * w[1] * w[2] * w[3] + w[0],
                               inputs=(x, w, (w[0],)), outputs=(y,), executions=1)

    # the one-row kernel only for one or two rows: 2 rows cost 2 x (3 x 33 + 32) = 262 by it, 3 x 39 + 224 = 341 by 7x32
    assert [gemm_rows(n, 7, 32) for n in (1, 2, 3, 16, 4096)] == [1, 1, 7, 7, 7]
    # RegNetX's 1x1 layer on 4x4x368 -> 368: 16 pixels in 3 tiles of 7 rows (21), 368 channels in 12 passes of 32
    # (384): 21 x 384 x 368 = 2,967,552 MACs computed for 16 x 368 x 368 = 2,166,784; 3 x 12 x 1 tap iterations
    f = op_features(conv((1, 4, 4, 368), (368, 1, 1, 368), (1, 4, 4, 368)), "xnnpack", cpu=cpu).values
    assert (f["gemm_macs"], f["tile_taps"], f["narrow_macs"]) == (2_967_552.0, 36.0, 0.0)
    # BlazeFace's 5x5 stride-2 stem, 128x128x3 -> 64x64x24: the 7x16 kernel, 4,096 pixels in 586 tiles (4,102 rows),
    # 24 channels in 2 passes of 16: 4,102 x 32 x 25 taps x 3 = 9,844,800, all by the narrow kernel; 586 x 2 x 25
    f = op_features(conv((1, 128, 128, 3), (24, 5, 5, 3), (1, 64, 64, 24)), "xnnpack", cpu=cpu).values
    assert (f["gemm_macs"], f["tile_taps"], f["narrow_macs"]) == (9_844_800.0, 29_300.0, 9_844_800.0)
    # int8, 3x3 on 3 channels: kr 8 pads each tap's 3 channels to 8; 64x64 -> 586 tiles x 7, 32 channels -> 2 x 16
    f = op_features(conv((1, 64, 64, 3), (32, 3, 3, 3), (1, 64, 64, 32), "int8"), "xnnpack", cpu=cpu).values
    assert (f["gemm_macs"], f["narrow_macs"]) == (4_102 * 32 * 9 * 8.0, 0.0)
    # a squeeze-and-excite block's 1x1 layer over one pixel runs as a fully connected row on the delegate
    se = conv((1, 1, 1, 96), (24, 1, 1, 96), (1, 1, 1, 24))
    assert conv_kernel(se, "xnnpack") == "FULLY_CONNECTED" and conv_kernel(se, "builtin") == "CONV_2D"
    # ... by the convolution's GEMM, whose narrow kernel takes only fewer than 32 channels: a 1x1 head of 1,000 channels
    # runs the 32-wide one, where a FULLY_CONNECTED of 1,000 outputs takes the 16-wide nr2 kernel (it pads less)
    head = op_features(conv((1, 1, 1, 1024), (1000, 1, 1, 1024), (1, 1, 1, 1000)), "xnnpack", cpu=cpu)
    assert head.family == "FULLY_CONNECTED" and head.values["params_nr2"] == 0.0
    fc = SimpleNamespace(op_type="FULLY_CONNECTED", precision="float32", macs=1_024_000, flops=2_048_000, bytes_read=0,
                         bytes_written=0, params=1_025_000, inputs=((1, 1024), (1000, 1024), (1000,)),
                         outputs=((1, 1000),), executions=1)
    assert op_features(fc, "xnnpack", cpu=cpu).values["params_nr2"] == 1_025_000.0
    small_se = op_features(se, "xnnpack", cpu=cpu)  # 24 outputs: the convolution's narrow kernel
    assert small_se.values["params_nr2"] == small_se.values["params"] > 0


def test_transposed_conv_features_follow_xnnpack_s_sub_convolutions():
    from types import SimpleNamespace

    from tflite_flops.latency.features import op_features
    from tflite_flops.latency.kernels import cpu_target

    cpu = cpu_target("x86-avx512")
    assert (cpu.float_tile, cpu.float_nr2_tile, cpu.int8_tile) == (32, 16, 16)

    def tconv(h: int, cin: int, cout: int, k: int, s: int, precision: str = "float32") -> SimpleNamespace:
        ho = h * s  # SAME: MACs = input pixels x k x k x cin x cout (TensorFlow's count)
        return SimpleNamespace(op_type="TRANSPOSE_CONV", precision=precision, macs=h * h * k * k * cin * cout,
                               flops=0, bytes_read=0, bytes_written=0, params=cout * k * k * cin,
                               inputs=((4,), (cout, k, k, cin), (1, h, h, cin)), outputs=((1, ho, ho, cout),),
                               executions=1)

    def tiled(record: SimpleNamespace, placement: str = "xnnpack") -> float:
        return op_features(record, placement, cpu=cpu).values["tiled_macs"]

    # 8x8x24 -> 16x16x8, 3x3, stride 2: 8 x 8 x 9 x 24 x 8 = 110,592 MACs; fewer than 32 output channels: the
    # narrow kernel's passes of 16, each costing a full 32-wide pass: 1 pass -> 110,592 x 32 / 8 = 442,368
    small = tconv(8, 24, 8, 3, 2)
    assert small.macs == 110_592 and tiled(small) == 442_368.0
    assert op_features(small, "xnnpack", cpu=cpu).values["out_rows"] == 256.0  # 16 x 16 output pixels
    # 24 channels: 2 passes of 16 -> 64 channels' worth; 48: 2 passes of 32 -> 64 too; 32: one pass
    assert tiled(tconv(8, 24, 24, 3, 2)) == 331_776 * 64 / 24
    assert tiled(tconv(8, 24, 48, 3, 2)) == 663_552 * 64 / 48
    assert tiled(tconv(8, 24, 32, 3, 2)) == 442_368.0
    # int8 passes of 16 (int8_tile) and input channels padded to kr 8: 24 -> 32 outputs, 24 inputs stay
    assert tiled(tconv(8, 24, 24, 3, 2, "int8")) == 331_776 * 32 / 24
    # dynamic range (XNNPACK's qd8 deconvolution): passes of the hybrid tile (16), 12 input channels padded to kr 8: 16
    assert tiled(tconv(8, 12, 24, 3, 2, "hybrid")) == 165_888 * 32 / 24 * 16 / 12
    # on the builtin kernels: the law's tile (16): 8 -> 16
    assert tiled(small, "builtin") == 110_592 * 16 / 8
    # stride 1: no sub-convolutions, XNNPACK's IGEMM over every output pixel: the CONV_2D law predicts it
    assert op_features(tconv(16, 16, 16, 3, 1), "xnnpack", cpu=cpu).family == "CONV_2D"
    # ... with the GEMM features of the convolution its filter makes over its input 2: 256 pixels -> 37 tiles of 7
    # (259 rows), 16 channels: one pass of the narrow 16-wide kernel, 9 taps x 16 input channels
    f = op_features(tconv(16, 16, 16, 3, 1), "xnnpack", cpu=cpu).values
    assert (f["gemm_macs"], f["narrow_macs"], f["tile_taps"]) == (259 * 16 * 9 * 16.0, 259 * 16 * 9 * 16.0, 37 * 9.0)
    assert op_features(tconv(16, 16, 16, 3, 1), "builtin", cpu=cpu).family == "TRANSPOSE_CONV"
    assert op_features(small, "xnnpack", cpu=cpu).family == "TRANSPOSE_CONV"


def test_the_range_is_the_op_part_s_error_as_prediction_applies_it():
    from tflite_flops.latency.fit import op_residuals, residuals

    law = {"1": 2.0}  # the op alone: 2 us
    f = OpFeatures("ADD", "float32", "xnnpack", {"1": 1.0})
    rows = [Sample(f, 13.0, 10.0), Sample(f, 9.0, 10.0)]  # measured 13 and 9 us, 10 us of it invoke overhead
    # the op's own part: 13 - 10 = 3 us against 2 -> ln(1.5); the point's whole: ln(13 / (2 + 10)) = ln(13/12);
    # the second point's op part is 9 - 10 < 0: noise, nothing to compare, left out of the range
    assert op_residuals(law, rows) == [pytest.approx(math.log(1.5))]
    assert residuals(law, rows)[0] == pytest.approx(math.log(13 / 12))
    # Law.range_us multiplies the op's 2 us by exp(log_high): the op part's quantile, not the diluted one
    fitted = fit_law("ADD", "float32", "xnnpack", [Sample(f, 10.0 + t, 10.0) for t in (1.0, 2.0, 3.0)])
    own = op_residuals(dict(fitted.coefficients), [Sample(f, 10.0 + t, 10.0) for t in (1.0, 2.0, 3.0)])
    assert fitted.log_low == pytest.approx(float(np.percentile(own, 10)))
    assert fitted.log_high == pytest.approx(float(np.percentile(own, 90)))


@pytest.mark.slow
def test_the_suite_has_convolutions_with_large_weights_at_few_positions_in_every_precision():
    """The laws must see weights read from beyond the L2 at few output positions (ResNet's and Inception's last
    stages), apart from their MACs: without such points the cost folds into the cost per MAC (the real-family
    residual, docs/notes/predict-whole-model-residual.md)."""
    import ai_edge_litert  # noqa: F401

    from tflite_flops.measure import runtimes
    from tflite_flops.latency.calibrate import analyse
    from tflite_flops.latency.suite import PRECISIONS, WIDE_CONVS, build, suite

    fb = runtimes.schema_module("litert")
    names = {"-".join(map(str, c)) for c in WIDE_CONVS}
    wide = [p for p in suite() if p.family == "CONV_2D" and p.delegate
            and "-".join(p.id.split("-")[2:7]) in names]
    assert {p.precision for p in wide} == set(PRECISIONS) and len(wide) == len(WIDE_CONVS) * len(PRECISIONS)
    for p in wide:
        if p.precision != "float32":
            continue
        (f,) = analyse(p, build(fb, p)).features
        positions = f.values["out"] // int(p.id.split("-")[4])  # output elements over output channels
        assert f.values["params"] >= 2 ** 19 and positions <= 64, p.id
    fits = [p for p in suite(quick=True) if p.family == "CONV_2D"]
    assert not any("-".join(p.id.split("-")[2:7]) in names for p in fits)  # the quick suite stays small


@pytest.mark.runtime
def test_each_law_point_is_timed_in_passes_and_a_rerun_times_only_the_passes_missing(tmp_path):
    import ai_edge_litert  # noqa: F401

    from tflite_flops.latency.calibrate import (ORDER_SEED, PASSES, append_side, calibrate, configuration, pass_key,
                                                passes_median, read_side, side_path)
    from tflite_flops.latency.suite import suite
    from tflite_flops.measure.runtime import RuntimeSettings

    assert PASSES == 3 and ORDER_SEED
    points = [p for p in suite(quick=True) if p.id.startswith(("ADD-float32", "overhead"))]
    runtime = RuntimeSettings()
    output = str(tmp_path / "p.json")
    first = points[0]
    append_side(side_path(output), configuration(runtime), pass_key(first.key, 0, 3), 40.0)
    append_side(side_path(output), configuration(runtime), pass_key(first.key, 1, 3), 10.0)
    calls = []

    def fake_timer(blob, settings, quick):
        calls.append(len(blob))
        return 12.0 + 2.0 * (len(calls) % 3)  # 12, 14 or 16 us: each point's passes come out of that

    _, timed = calibrate(output, runtime, quick=True, progress=False, timer=fake_timer, points=points, passes=3)
    assert len(calls) == 3 * len(points) - 2  # the two passes the side file held are not timed again
    assert timed == len(points)  # points with at least one pass timed in this run
    side = read_side(side_path(output), configuration(runtime))
    assert {k for k in side if k.startswith(first.key)} == {f"{first.key}#{k}" for k in (1, 2, 3)}
    assert side[f"{first.key}#3"] in (12.0, 14.0, 16.0)
    # timed pass by pass: every point's first pass before any second pass, and so on
    with open(side_path(output), encoding="utf-8") as f:
        order = [int(k.rsplit("#", 1)[1]) for k in (json.loads(line).get("key", "") for line in f) if "#" in k]
    assert order[2:] == sorted(order[2:]) and set(order) == {1, 2, 3}  # after the two lines written by hand
    # a point's median is its passes' (40, 10 and the third: the third), or of those timed so far
    assert passes_median(side, first.key, 3) == side[f"{first.key}#3"]
    assert passes_median({f"{first.key}#1": 40.0, f"{first.key}#3": 10.0}, first.key, 3) == 25.0
    calls.clear()
    _, timed = calibrate(output, runtime, quick=True, progress=False, timer=fake_timer, points=points, passes=3)
    assert timed == 0 and calls == []
    assert pass_key(first.key, 0, 1) == first.key  # one pass: the key itself, as before passes


def test_a_softmax_law_costs_by_row_too():
    from types import SimpleNamespace

    from tflite_flops.latency.features import op_features
    from tflite_flops.latency.profile import law_features

    # timed here (x86-avx512, float32): [1,1024,16] 15.1 us and [1,4,1024] 0.7 us for 16,384 and 4,096 elements:
    # 14.7 ns a row of 16 against 0.17 ns an element, a cost the elements alone cannot give
    assert "out_rows" in law_features("SOFTMAX") and "out_rows" in law_features("LOG_SOFTMAX")
    rows = SimpleNamespace(op_type="SOFTMAX", precision="float32", macs=0, flops=0, bytes_read=0, bytes_written=0,
                           params=0, inputs=((1, 1024, 16),), outputs=((1, 1024, 16),), executions=1)
    f = op_features(rows, "xnnpack").values
    assert f["out_rows"] == 1_024.0 and f["in"] == 16_384.0


def test_mediapipe_s_transposed_convolution_is_predicted_by_the_transpose_conv_law():
    from types import SimpleNamespace

    from tflite_flops.latency.features import op_features
    from tflite_flops.latency.kernels import cpu_target
    from tflite_flops.ops.facts import facts_of

    # XNNPACK runs Convolution2DTransposeBias by its deconvolution: the selfie segmentation's 128x128x16 ->
    # 256x256x1 took ~0.85 ms where a stand-in law said 0.02. Its inputs: data 0, filter 1, bias 2
    assert facts_of("CUSTOM:Convolution2DTransposeBias").law_as == "TRANSPOSE_CONV"
    custom = SimpleNamespace(op_type="CUSTOM:Convolution2DTransposeBias", precision="float32",
                             macs=128 * 128 * 2 * 2 * 16, flops=0, bytes_read=0, bytes_written=0, params=64,
                             inputs=((1, 128, 128, 16), (1, 2, 2, 16), (1,)), outputs=((1, 256, 256, 1),),
                             executions=1)
    f = op_features(custom, "xnnpack", cpu=cpu_target("x86-avx512"))
    assert f.family == "TRANSPOSE_CONV"  # stride 2 (256 / 128) within its 2x2 kernel: sub-convolutions
    assert f.values["out_rows"] == 65_536.0 and f.values["tiled_macs"] == custom.macs * 32  # one pass of 32
    # stride 1 (a 3x3 kernel keeping 16x16): the convolution law, as TRANSPOSE_CONV's
    same = SimpleNamespace(**{**vars(custom), "inputs": ((1, 16, 16, 8), (4, 3, 3, 8), (4,)),
                              "outputs": ((1, 16, 16, 4),)})
    assert op_features(same, "xnnpack", cpu=cpu_target("x86-avx512")).family == "CONV_2D"


def test_a_large_suite_model_is_written_once_kept_in_a_file_between_passes_and_the_file_removed(tmp_path, monkeypatch):
    import ai_edge_litert  # noqa: F401

    from tflite_flops.latency import calibrate as cal
    from tflite_flops.latency.suite import suite
    from tflite_flops.measure.runtime import RuntimeSettings

    points = [p for p in suite(quick=True) if p.id.startswith(("ADD-float32", "overhead"))]
    built, folders, seen = collections.Counter(), [], collections.defaultdict(set)
    real_build = cal.build

    def counting_build(fb, point):
        built[point.id] += 1
        return real_build(fb, point)

    real_get = cal.Blobs.get

    def get(self, point):
        blob = real_get(self, point)
        folders.append(self.folder)
        seen[point.id].add(blob)
        return blob

    monkeypatch.setattr(cal, "build", counting_build)
    monkeypatch.setattr(cal.Blobs, "get", get)
    monkeypatch.setattr(cal, "BIG_MODEL", 0)  # every model "large": each kept in a file after it is written
    timed = []

    def fake_timer(blob, settings, quick):
        timed.append(blob)
        return 10.0

    cal.calibrate(str(tmp_path / "p.json"), RuntimeSettings(), quick=True, progress=False, timer=fake_timer,
                  points=points, passes=3)
    ids = {p.id for p in points}
    assert set(built) == ids and set(built.values()) == {1}  # 3 passes and the analysis: each written once
    assert len(timed) == 3 * len(points)
    assert all(len(blobs) == 1 for blobs in seen.values())  # what is read back is what was written
    folder = next(f for f in folders if f)
    assert not os.path.exists(folder)  # removed once the profile is written
