"""Grouped and wide-kernel depthwise convolutions are predicted by the law of the kernel XNNPACK runs them with
(issue 29, docs/notes/predict-grouped-conv.md): a CONV_2D whose groups are one channel in and out (Keras'
``Conv2D(groups=channels)``) runs as a depthwise convolution when its kernel fits XNNPACK's dwconv kernels
(at most 25 taps) and the precision has them; a depthwise convolution of more taps, and every other grouped
convolution, runs as a GEMM once per group, which the CONV_2D law sees through ``grouped_taps`` (positions x
groups x taps) and ``grouped_macs``. The features are checked against hand-computed values, the suite against
the points it must hold, and a profile made before the features against the prediction it still gives."""

from __future__ import annotations

import collections
from types import SimpleNamespace

import pytest

from tflite_flops.latency.features import conv_geometry, conv_kernel, op_features
from tflite_flops.latency.profile import BUILTIN_PLACEMENT as B, XNNPACK_PLACEMENT as X
from tflite_flops.ops.facts import DWCONV_MAX_TAPS


def record(op_type: str, x: tuple[int, ...], w: tuple[int, ...], y: tuple[int, ...], macs: int,
           precision: str = "float32") -> SimpleNamespace:
    """The fields of an OpRecord that op_features reads: a convolution of input ``x``, filter ``w``, output ``y``."""
    params = 1
    for d in w:
        params *= d
    return SimpleNamespace(op_type=op_type, inputs=(x, w, (y[3],)), outputs=(y,), macs=macs, flops=2 * macs,
                           bytes_read=0, bytes_written=0, params=params + y[3], executions=1, precision=precision)


# [1,32,32,96] * [96,7,7,1] (groups = 96, ConvNeXt's layout): 32*32*96 outputs x 49 taps x 1 input channel
GROUPED_7 = record("CONV_2D", (1, 32, 32, 96), (96, 7, 7, 1), (1, 32, 32, 96), 32 * 32 * 96 * 49)
GROUPED_3 = record("CONV_2D", (1, 32, 32, 96), (96, 3, 3, 1), (1, 32, 32, 96), 32 * 32 * 96 * 9)
# [1,28,28,64] * [64,3,3,4]: 16 groups of 4 channels in and out
GROUPED_4 = record("CONV_2D", (1, 28, 28, 64), (64, 3, 3, 4), (1, 28, 28, 64), 28 * 28 * 64 * 9 * 4, "int8")
DEPTHWISE_7 = record("DEPTHWISE_CONV_2D", (1, 14, 14, 256), (1, 7, 7, 256), (1, 14, 14, 256), 14 * 14 * 256 * 49)
DEPTHWISE_5 = record("DEPTHWISE_CONV_2D", (1, 14, 14, 256), (1, 5, 5, 256), (1, 14, 14, 256), 14 * 14 * 256 * 25)
DENSE = record("CONV_2D", (1, 28, 28, 64), (128, 3, 3, 64), (1, 28, 28, 128), 28 * 28 * 128 * 9 * 64)


def test_geometry_reads_groups_channels_per_group_and_taps():
    assert conv_geometry(GROUPED_7) == (96, 1, 1, 49)
    assert conv_geometry(GROUPED_4) == (16, 4, 4, 9)
    assert conv_geometry(DEPTHWISE_7) == (256, 1, 1, 49)
    assert conv_geometry(DENSE) == (1, 64, 128, 9)
    assert conv_geometry(SimpleNamespace(op_type="ADD", inputs=((1, 4), (1, 4)))) is None


def test_the_kernel_xnnpack_runs_keys_the_law():
    assert DWCONV_MAX_TAPS == 25
    assert conv_kernel(GROUPED_3, X) == "DEPTHWISE_CONV_2D"  # 9 taps: XNNPACK's dwconv kernel
    assert conv_kernel(GROUPED_7, X) == "CONV_2D"  # 49 taps: its GEMM once per group
    assert conv_kernel(DEPTHWISE_5, X) == "DEPTHWISE_CONV_2D"
    assert conv_kernel(DEPTHWISE_7, X) == "CONV_2D"
    assert conv_kernel(GROUPED_4, X) == "CONV_2D" and conv_kernel(DENSE, X) == "CONV_2D"
    # dynamically quantized (hybrid): XNNPACK's qd8 convolution has no dwconv kernel, whatever the taps
    assert conv_kernel(record("CONV_2D", (1, 32, 32, 96), (96, 3, 3, 1), (1, 32, 32, 96), 1, "hybrid"), X) == "CONV_2D"
    # the builtin kernels: every op keeps its own type's law
    for r in (GROUPED_3, GROUPED_7, DEPTHWISE_7, GROUPED_4):
        assert conv_kernel(r, B) == r.op_type


def test_grouped_features_by_hand():
    f = op_features(GROUPED_7, X)
    macs = 32 * 32 * 96 * 49  # 4,816,896
    assert f.family == "CONV_2D" and f.values["macs"] == macs
    assert f.values["taps"] == macs  # MACs over 1 input channel per group
    assert f.values["tiled_macs"] == macs * 16  # 1 output channel per group, padded to the 16-wide tile
    assert f.values["grouped_taps"] == 32 * 32 * 96 * 49  # positions x groups x taps
    assert f.values["grouped_macs"] == macs
    g = op_features(GROUPED_4, X)
    macs4 = 28 * 28 * 64 * 9 * 4  # 1,806,336
    assert (g.family, g.precision) == ("CONV_2D", "int8")
    assert g.values["taps"] == macs4 / 4 == 28 * 28 * 64 * 9
    assert g.values["tiled_macs"] == macs4 * 16 / 4  # 4 output channels per group, padded to 16
    assert g.values["grouped_taps"] == 28 * 28 * 16 * 9  # 112,896
    assert g.values["grouped_macs"] == macs4
    assert op_features(GROUPED_4, X, tile=8).values["tiled_macs"] == macs4 * 2  # a narrower target's tile


def test_a_wide_depthwise_takes_the_conv_law_s_features_and_a_narrow_grouped_conv_the_depthwise_ones():
    d = op_features(DEPTHWISE_7, X)
    macs = 14 * 14 * 256 * 49
    assert d.family == "CONV_2D"
    assert (d.values["taps"], d.values["tiled_macs"], d.values["grouped_taps"]) == (macs, 16 * macs, macs)
    narrow = op_features(GROUPED_3, X)  # as a DEPTHWISE_CONV_2D: no taps, tiles or group terms
    assert narrow.family == "DEPTHWISE_CONV_2D"
    assert [narrow.values[k] for k in ("taps", "tiled_macs", "grouped_taps", "grouped_macs")] == [0.0] * 4
    builtin = op_features(DEPTHWISE_7, B)
    assert builtin.family == "DEPTHWISE_CONV_2D" and builtin.values["grouped_taps"] == 0.0


def test_an_ungrouped_convolution_s_features_are_unchanged():
    f = op_features(DENSE, X)
    macs = DENSE.macs
    assert f.values["taps"] == macs / 64 and f.values["tiled_macs"] == macs  # 128 output channels: whole tiles
    assert f.values["grouped_taps"] == f.values["grouped_macs"] == 0.0


def _grouped_points(quick: bool):
    from tflite_flops.latency.suite import suite

    return [p for p in suite(quick) if "-g-" in p.id or (p.family == "DEPTHWISE_CONV_2D" and "-7-1-" in p.id)]


@pytest.mark.parametrize("quick", [False, True])
def test_the_suite_has_grouped_and_wide_depthwise_points_in_every_precision(quick):
    from tflite_flops.latency.suite import GROUPED_CONVS, PRECISIONS, WIDE_DEPTHWISES

    points = _grouped_points(quick)
    per = collections.Counter((p.family, p.precision, p.delegate) for p in points)
    for prec in PRECISIONS:
        for delegate in (True, False):
            assert per["CONV_2D", prec, delegate] >= (len(GROUPED_CONVS) if not quick else 2), (prec, delegate)
            wide = per["DEPTHWISE_CONV_2D", prec, delegate]  # none in hybrid: the builtin kernel, no cliff
            assert wide >= 1 if prec != "hybrid" else wide == 0, (prec, delegate)
    kernels = {k for _, _, g, k, _ in GROUPED_CONVS if g == 1}
    assert {3, 7} <= kernels and any(g > 1 for _, _, g, _, _ in GROUPED_CONVS)
    assert all(k * k > DWCONV_MAX_TAPS for _, _, k, _ in WIDE_DEPTHWISES)
    assert {c for _, c, *_ in GROUPED_CONVS} | {c for _, c, *_ in WIDE_DEPTHWISES} >= {32, 768}


@pytest.mark.slow
def test_the_analysis_keys_each_grouped_point_to_the_kernel_s_law():
    import ai_edge_litert  # noqa: F401  (the schema module the models are written with)

    from tflite_flops.latency.calibrate import analyse
    from tflite_flops.latency.suite import build
    from tflite_flops.measure import runtimes

    fb = runtimes.schema_module("litert")
    keys = collections.Counter()
    for p in _grouped_points(quick=True):
        a = analyse(p, build(fb, p))
        conv = [f for f in a.features if f.values["macs"] > 0 and f.family != "FULLY_CONNECTED"]  # (after-qd8 lead)
        assert len(conv) == 1, p.key
        f = conv[0]
        keys[f.family, f.placement] += 1
        if f.family == "CONV_2D" and f.placement == X and p.family == "DEPTHWISE_CONV_2D":
            assert f.values["grouped_taps"] == f.values["macs"]  # one channel per group
        if p.id.startswith("CONV_2D-float32-g-16-192-1-3-1"):
            assert (f.family, f.placement) == (("DEPTHWISE_CONV_2D", X) if p.delegate else ("CONV_2D", B))
    assert keys["CONV_2D", X] and keys["DEPTHWISE_CONV_2D", X] and keys["CONV_2D", B] and keys["DEPTHWISE_CONV_2D", B]


def test_a_profile_without_the_grouped_features_loads_and_predicts(tmp_path):
    """A profile made before ``grouped_taps`` (its CONV_2D law lacks the feature) still loads, and predicts a 7x7
    grouped convolution by its CONV_2D law with the feature at 0, a 3x3 one by its DEPTHWISE_CONV_2D law."""
    import json

    from tflite_flops.latency.profile import DeviceProfile, Law, Machine

    laws = (Law("CONV_2D", "float32", X, {"1": 2.0, "macs": 0.0, "tiled_macs": 1e-5, "taps": 1e-4}, points=30),
            Law("DEPTHWISE_CONV_2D", "float32", X, {"1": 1.0, "macs": 2e-5}, points=12))
    machine = Machine("test cpu", 2, "ai_edge_litert", "9.9", 1, True)
    path = tmp_path / "old.json"
    DeviceProfile(machine, laws, invoke_overhead_us=10.0, partition_overhead_us=3.0,
                  created="2026-11-01T00:00:00+00:00", source="calibrate").save(str(path))
    assert "grouped_taps" not in path.read_text()
    old = DeviceProfile.load(str(path))
    f7, f3 = op_features(GROUPED_7, X), op_features(GROUPED_3, X)
    macs7, macs3 = 32 * 32 * 96 * 49, 32 * 32 * 96 * 9
    assert old.law_for(f7).predict_us(f7) == pytest.approx(2.0 + 1e-5 * 16 * macs7 + 1e-4 * macs7)
    assert old.law_for(f3).family == "DEPTHWISE_CONV_2D" and old.fallback(f3) is None
    assert old.law_for(f3).predict_us(f3) == pytest.approx(1.0 + 2e-5 * macs3)
    assert json.loads(path.read_text())["laws"][0]["coefficients"] == laws[0].coefficients


def test_a_grouped_model_is_predicted_end_to_end_by_the_kernel_s_law():
    """A written model with a 7x7 and a 3x3 groups-of-one CONV_2D, analysed with --predict: the 7x7 one by the
    CONV_2D law (its grouped features), the 3x3 one by the DEPTHWISE_CONV_2D law; no stand-in."""
    import ai_edge_litert  # noqa: F401  (the schema module the models are written with)

    from tflite_flops.analysis import analyze_model
    from tflite_flops.latency.profile import DeviceProfile, Law, Machine
    from tflite_flops.latency.suite_models import grouped_conv
    from tflite_flops.measure import runtimes
    from tflite_flops.measure.model_writer import ModelWriter
    from tflite_flops.reader.load import load_model
    from tflite_flops.settings import Settings

    from profile_helpers import installed_version

    w = ModelWriter(runtimes.schema_module("litert"))
    x7, y7 = grouped_conv(8, 32, 1, 7, 1, "NONE", "float32")(w)
    x3, y3 = grouped_conv(8, 32, 1, 3, 1, "NONE", "float32")(w)
    model = load_model(w.to_bytes([*x7, *x3], [*y7, *y3], "grouped"))
    laws = (Law("CONV_2D", "float32", X, {"1": 2.0, "grouped_taps": 1e-3}, points=30),
            Law("DEPTHWISE_CONV_2D", "float32", X, {"1": 1.0, "macs": 1e-4}, points=12))
    machine = Machine("test cpu", 2, "ai_edge_litert", installed_version(), 1, True)
    profile = DeviceProfile(machine, laws, invoke_overhead_us=0.0, partition_overhead_us=0.0,
                            created="2026-11-01T00:00:00+00:00", source="calibrate")
    report = analyze_model(model, Settings(predict=profile))
    convs = sorted((o for o in report.ops if o.op_type == "CONV_2D"), key=lambda o: -o.macs)
    assert [o.xnnpack for o in convs] == [True, True]
    assert convs[0].predicted_ms == pytest.approx((2.0 + 1e-3 * 8 * 8 * 32 * 49) / 1000)  # 100.352 + 2 µs
    assert convs[1].predicted_ms == pytest.approx((1.0 + 1e-4 * 8 * 8 * 32 * 9) / 1000)  # 1.843 µs
    assert report.prediction.ops_fallback == 0
