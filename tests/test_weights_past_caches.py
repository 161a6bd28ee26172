"""One-row fully connected layers read each weight once, at the speed of the cache level that holds it: the
latency laws' features for it (``params_past_l2``, ``params_past_l3``, ``params_nr2``: latency/kernels.py), the
calibration points that time it (``suite.gemv_points``) and the fit that prices it.

Counted and deterministic: analysed models, hand arithmetic, injected timers, no clock.
"""

from __future__ import annotations


import pytest

from tflite_flops.analysis import analyze_model
from tflite_flops.latency import calibrate as cal
from tflite_flops.latency.kernels import cpu_target, weights_past
from tflite_flops.latency.features import op_features
from tflite_flops.latency.profile import BUILTIN_PLACEMENT, XNNPACK_PLACEMENT, law_features
from tflite_flops.latency.suite import GEMV_PRECISIONS, SuitePoint, build, gemv_points
from tflite_flops.latency.suite_models import fully_connected
from tflite_flops.measure import runtimes
from tflite_flops.reader.load import load_model

MiB = 2**20
CACHES = {"L1d": 48 * 1024, "L2": 1 * MiB, "L3": 32 * MiB}


def _record(k: int, n: int, prec: str = "float32"):
    point = SuitePoint(f"fc-{k}-{n}", "FULLY_CONNECTED", prec, True, True, fully_connected(1, k, n, "NONE", prec))
    report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
    return next(o for o in report.ops if o.op_type == "FULLY_CONNECTED" and o.phase == "inference")


def test_the_weights_past_each_cache_level():
    assert weights_past(1000, "float32", 0) == 0.0  # the capacity unknown: no feature
    assert weights_past(300_000, "float32", MiB) == 300_000 - MiB // 4  # float32: 4 bytes a weight
    assert weights_past(300_000, "int8", MiB) == 0.0  # int8 (and hybrid): 1 byte
    assert weights_past(300_000, "float16", MiB) == 300_000 - MiB // 4  # float16 weights are read as float32


@pytest.mark.slow
def test_a_one_row_fully_connected_layer_s_features():
    fc = _record(2048, 1024)  # 2,097,152 weights and 1,024 biases: 8 MiB of float32
    params = 2048 * 1024 + 1024
    assert fc.params == params
    f = op_features(fc, XNNPACK_PLACEMENT, caches=CACHES).values
    assert f["params_past_l2"] == params - MiB // 4  # what the 1 MiB L2 cannot hold
    assert f["params_past_l3"] == 0.0  # 8 MiB fit in half the 32 MiB L3
    big = op_features(_record(4096, 4096), XNNPACK_PLACEMENT, caches=CACHES).values
    assert big["params_past_l3"] == 4096 * 4096 + 4096 - 16 * MiB // 4
    assert op_features(fc, XNNPACK_PLACEMENT).values["params_past_l2"] == 0.0  # a profile without cache sizes
    int8 = op_features(_record(2048, 1024, "int8"), XNNPACK_PLACEMENT, caches=CACHES).values
    assert int8["params_past_l2"] == 2048 * 1024 + 1024 - MiB  # 1 byte a weight (params count the biases too)
    assert {"params_past_l2", "params_past_l3", "params_nr2"} <= set(law_features("FULLY_CONNECTED"))


def test_the_narrow_kernel_feature_follows_the_packing_tile():
    # x86-avx512's f32 GEMM is 32 wide with a 16-wide nr2 kernel: 1,000 outputs pad to 1,008 with it (8 more)
    # where 32 pads 24, over 1% of them (xnn_use_nr2), so 1,000 outputs take the narrow kernel, 1,024 do not.
    # The memory pass packs with the same tile (CpuTarget.float_fc_tile), which the traced allocations check.
    cpu = cpu_target("x86-avx512")
    assert cpu.float_fc_tile(1000) == 16 == cpu.float_nr2_tile and cpu.float_fc_tile(1024) == 32
    assert cpu.float_fc_tile(1016) == 32  # 8 past either tile: the wider one
    head = _record(1024, 1000)
    assert op_features(head, XNNPACK_PLACEMENT, cpu=cpu).values["params_nr2"] == head.params
    assert op_features(_record(1024, 1024), XNNPACK_PLACEMENT, cpu=cpu).values["params_nr2"] == 0.0
    assert op_features(head, BUILTIN_PLACEMENT, cpu=cpu).values["params_nr2"] == 0.0  # XNNPACK's kernels only
    assert op_features(head, XNNPACK_PLACEMENT).values["params_nr2"] == 0.0  # no CPU target: no feature
    assert op_features(_record(1024, 1000, "int8"), XNNPACK_PLACEMENT, cpu=cpu).values["params_nr2"] == 0.0


def test_gemv_points_are_sized_by_the_caches():
    points = gemv_points(CACHES)
    # per precision 5 sizes (half and twice the L2, a quarter, one and two L3s), float32 twice (k and k - 24
    # outputs), each on the delegate and off it
    assert len(points) == 2 * (5 * 2 + 5 + 5)
    assert {p.precision for p in points} == set(GEMV_PRECISIONS)
    for p in points:
        k, n = map(int, p.id.rsplit("-", 1)[1].split("x"))
        assert k % 64 == 0 and n in (k, k - 24) and p.family == "FULLY_CONNECTED"
    float_k = sorted({int(p.id.rsplit("-", 1)[1].split("x")[0]) for p in points if p.precision == "float32"})
    sizes = [4 * k * k for k in float_k]  # each k the nearest multiple of 64 to its target size's
    for size, target in zip(sizes, (MiB // 2, 2 * MiB, 8 * MiB, 32 * MiB, 64 * MiB)):
        assert 0.75 * target < size < 1.25 * target
    assert len(gemv_points(CACHES, quick=True)) == 2 * (2 * 2 + 2 + 2)
    assert gemv_points(CACHES, xnnpack=False) == [p for p in points if not p.delegate]
    assert gemv_points({}) == [] and gemv_points({"L2": MiB}) != []


@pytest.mark.slow
def test_calibration_times_them_and_the_fit_prices_weights_past_the_l2(tmp_path, monkeypatch):
    # A machine with a 64 KiB L2 and a 1 MiB L3, timed by a fake clock: an invoke 20 us, 1 us per KiB of the
    # model's bytes (its weights, nearly all of it), 3 us more per KiB past the L2. The suite is cut to its
    # FULLY_CONNECTED float32 points and the overhead chains; calibrate adds the gemv points for these caches.
    from tflite_flops.latency.suite import suite
    from tflite_flops.settings import RuntimeSettings

    caches = {"L2": 64 * 1024, "L3": MiB}
    kept = [p for p in suite(quick=True) if p.id.startswith(("FULLY_CONNECTED-float32", "overhead"))]
    monkeypatch.setattr(cal, "suite", lambda quick, xnnpack: list(kept))

    def timer(blob, settings, quick):
        return 20.0 + len(blob) / 1024 + 3.0 * max(len(blob) - caches["L2"], 0) / 1024

    profile, timed = cal.calibrate(str(tmp_path / "p.json"), RuntimeSettings(), quick=False, progress=False,
                                   timer=timer, cold_timer=lambda b, s, e: (timer(b, s, False),) * 2, caches=caches,
                                   reference=[], streams=[])
    gemv = gemv_points(caches)
    assert timed == len(kept) + len(gemv)
    law = next(law for law in profile.laws if law.family == "FULLY_CONNECTED" and law.precision == "float32"
               and law.placement == XNNPACK_PLACEMENT)
    assert law.coefficients.get("params_past_l2", 0.0) > 0.0
    # a 2 MiB layer (twice the L3, past both knees): predicted within 10% of what the fake clock says
    record = _record(704, 704)
    features = op_features(record, XNNPACK_PLACEMENT, caches=caches)
    fake = 4 * 704 * 705 / 1024 * 4.0 - 3.0 * caches["L2"] / 1024  # its weights' KiB at 1 + 3 us, less the L2's 3
    assert law.range_us(features)[0] == pytest.approx(fake, rel=0.10)


def _depthwise(h: int, c: int, k: int, prec: str = "float32"):
    from tflite_flops.latency.suite_models import depthwise

    point = SuitePoint(f"dw-{h}-{c}-{k}", "DEPTHWISE_CONV_2D", prec, True, True, depthwise(h, c, k, 1, "NONE", prec))
    report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
    return next(o for o in report.ops if o.op_type == "DEPTHWISE_CONV_2D")


def test_a_depthwise_convolution_s_weights_past_half_the_l1():
    # half of a 48 KiB L1d is 24,576 bytes: 5x5 x 240 float32 channels are 24,000 (within), 5x5 x 288 are 28,800
    # (past), 3x3 x 960 are 34,560 (past); in int8 (1 byte a weight) 5x5 x 672 are 16,800 (within)
    caches = {"L1d": 48 * 1024}
    within, past = _depthwise(14, 240, 5), _depthwise(14, 288, 5)
    assert op_features(within, XNNPACK_PLACEMENT, caches=caches).values["dw_macs_past_l1"] == 0.0
    assert op_features(past, XNNPACK_PLACEMENT, caches=caches).values["dw_macs_past_l1"] == past.macs == 14 * 14 * 288 * 25
    assert op_features(_depthwise(14, 960, 3), BUILTIN_PLACEMENT, caches=caches).values["dw_macs_past_l1"] > 0
    assert op_features(_depthwise(10, 672, 5, "int8"), XNNPACK_PLACEMENT, caches=caches).values["dw_macs_past_l1"] == 0
    assert op_features(past, XNNPACK_PLACEMENT).values["dw_macs_past_l1"] == 0.0  # the L1d unknown
    assert op_features(_record(1024, 1024), XNNPACK_PLACEMENT, caches=caches).values["dw_macs_past_l1"] == 0.0
    assert "dw_macs_past_l1" in law_features("DEPTHWISE_CONV_2D")


def test_an_element_wise_op_s_activations_past_the_l2():
    from tflite_flops.latency.kernels import activations_past
    from tflite_flops.latency.suite_models import binary

    # two float32 [1,112,112,32] in, one out: 3 x 401,408 elements, 4.8 MB; 1 MiB holds 262,144 of them
    point = SuitePoint("mul", "MUL", "float32", True, True, binary("MUL", (1, 112, 112, 32), (1, 112, 112, 32), "NONE",
                                                                    "float32"))
    report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
    mul = next(o for o in report.ops if o.op_type == "MUL")
    f = op_features(mul, XNNPACK_PLACEMENT, caches=CACHES).values
    assert f["elems_past_l2"] == 3 * 112 * 112 * 32 - MiB // 4
    assert activations_past(3 * 50_176, "float32", MiB) == 0.0  # [1,28,28,64] x 3: 602 KB, within
    assert activations_past(3_000_000, "int8", MiB) == 3_000_000 - MiB  # 1 byte an element
    assert activations_past(10**6, "float32", 0) == 0.0
    assert {"elems_past_l2"} <= set(law_features("MUL")) & set(law_features("RELU")) & set(law_features("PAD"))


def test_a_data_movement_op_s_rows():
    from tflite_flops.latency.kernels import innermost_rows
    from tflite_flops.latency.suite import LAYOUTS
    from tflite_flops.latency.suite_models import layout

    # ResNet's stem PAD: [1,128,128,3] padded by 3 on each side of H and W -> [1,134,134,3]: 134 x 134 rows of 3
    point = SuitePoint("pad", "PAD", "float32", True, True, layout("PAD", (1, 128, 128, 3), 3, "float32"))
    report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
    pad = next(o for o in report.ops if o.op_type == "PAD")
    assert pad.outputs == ((1, 134, 134, 3),)
    assert op_features(pad, XNNPACK_PLACEMENT).values["out_rows"] == 134 * 134
    assert innermost_rows([(4, 5, 6)]) == 20.0 and innermost_rows([]) == 0.0 and innermost_rows([(7,)]) == 1.0
    assert "out_rows" in law_features("PAD")
    # enough PAD points for the law to keep every layout feature (features + 2), some of few channels
    pads = [shape for op, shape, _ in LAYOUTS if op == "PAD"]
    assert len(pads) >= len(law_features("PAD")) + 2 and any(shape[-1] <= 8 for shape in pads)


def test_a_law_keeps_the_features_its_points_allow():
    from tflite_flops.latency.fit import Sample, _features_for
    from tflite_flops.latency.profile import OpFeatures

    names = law_features("DEPTHWISE_CONV_2D")  # the conv group's, in order of importance

    def rows(n, zero=()):
        return [Sample(OpFeatures("DEPTHWISE_CONV_2D", "float32", XNNPACK_PLACEMENT,
                                  {f: (0.0 if f in zero else 1.0 + i) for f in names}), 10.0 + i, 0.0)
                for i in range(n)]

    assert _features_for(rows(len(names) + 2), "DEPTHWISE_CONV_2D") == list(names)
    # a feature 0 on every point is not one the points must pay for
    assert _features_for(rows(len(names) + 1, zero={"dw_macs_past_l1"}), "DEPTHWISE_CONV_2D") == \
        [f for f in names if f != "dw_macs_past_l1"]
    # too few points: the first ones they allow (points - 2), never fewer than the constant and the main feature
    assert _features_for(rows(7), "DEPTHWISE_CONV_2D") == list(names[:5])
    assert _features_for(rows(3), "DEPTHWISE_CONV_2D") == list(names[:2])


def test_the_fit_names_the_points_it_leaves_out():
    # four points on a line of 1 us per element and one at ten times it: the law holds the four, and says which
    # point it left out, for calibration's notes
    from tflite_flops.latency.fit import Sample, fit_law
    from tflite_flops.latency.profile import OpFeatures

    def point(n, us, key):
        return Sample(OpFeatures("RELU", "float32", XNNPACK_PLACEMENT, {"out": float(n)}), us, 0.0, key)

    rows = [point(n, float(n), f"p{n}") for n in (100, 200, 400, 800, 1600)] + [point(300, 3000.0, "odd")]
    law = fit_law("RELU", "float32", XNNPACK_PLACEMENT, rows)
    assert law.dropped == ("odd",) and law.points == 5
    assert law.coefficients.get("out") == pytest.approx(1.0, rel=0.01)


def test_the_cache_knees_are_the_cpu_target_s():
    # the knees are shares of the caches a CPU target holds (read off x86-avx512); another target's shares move
    # them: 5x5 x 288 float32 channels are 28,800 bytes, past half of 48 KiB (24,576), within 0.75 of it (36,864);
    # 2,048 x 1,024 float32 weights (8 MiB) fit in half a 32 MiB L3, not in a fifth of it (6.4 MiB)
    from tflite_flops.latency.kernels import cache_shares, llc_capacity

    caches = {"L1d": 48 * 1024, "L3": 32 * MiB}
    cpu = cpu_target("x86-avx512")
    assert cache_shares(cpu) == cache_shares(None) == (0.5, 0.5)
    dw = _depthwise(14, 288, 5)
    assert op_features(dw, XNNPACK_PLACEMENT, caches=caches, cpu=cpu).values["dw_macs_past_l1"] > 0
    assert op_features(dw, XNNPACK_PLACEMENT, caches=caches, cpu=cpu.with_(law_l1_share=0.75)
                       ).values["dw_macs_past_l1"] == 0.0
    fc = _record(2048, 1024)
    assert llc_capacity(caches, cpu) == 16 * MiB
    assert op_features(fc, XNNPACK_PLACEMENT, caches=caches, cpu=cpu).values["params_past_l3"] == 0.0
    small = cpu.with_(law_llc_share=0.2)
    assert op_features(fc, XNNPACK_PLACEMENT, caches=caches, cpu=small).values["params_past_l3"] == \
        2048 * 1024 + 1024 - int(32 * MiB * 0.2) // 4


def _conv(cin: int, prec: str, cout: int = 32):
    from tflite_flops.latency.suite_models import conv
    point = SuitePoint(f"conv-{cin}-{prec}", "CONV_2D", prec, True, True, conv(64, cin, cout, 3, 1, "NONE", prec))
    report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
    return next(o for o in report.ops if o.op_type == "CONV_2D" and o.phase == "inference")


def test_int8_and_qd8_convolutions_pad_each_tap_s_input_channels_to_the_kernel_depth():
    # timed here (x86-avx512, kr 8): a 3x3 CONV_2D of 64x64 outputs and 32 output channels, int8 or dynamically
    # quantized, takes 29.7 us for 1 to 8 input channels and 45.7 for 9 to 16; float32 grows by the channel
    cpu = cpu_target("x86-avx512")
    assert cpu.int8_kr == cpu.hybrid_kr == 8

    def tiled(cin: int, prec: str, placement: str = XNNPACK_PLACEMENT, target=cpu) -> float:
        return op_features(_conv(cin, prec), placement, caches=CACHES, cpu=target).values["tiled_macs"]

    taps = 64 * 64 * 9 * 32  # output pixels x kernel taps x output channels (32: two tiles of 16, no padding)
    for prec in ("int8", "hybrid"):
        assert tiled(1, prec) == tiled(3, prec) == tiled(8, prec) == taps * 8
        assert tiled(9, prec) == tiled(16, prec) == taps * 16
        assert tiled(3, prec, BUILTIN_PLACEMENT) == taps * 3  # the builtin kernels: XNNPACK's kr does not apply
        assert tiled(3, prec, target=None) == taps * 3  # a profile without a CPU target: unpadded, as before
    assert tiled(3, "float32") == taps * 3  # the f32 kernels take the channels one by one
    assert tiled(3, "int8", target=cpu_target("arm-neon")) == taps * 3  # a target whose int8 kr is 1


def test_a_resize_is_priced_by_its_output_and_the_suite_times_both_kinds():
    # timed here: a bilinear resize of 16x16x21 to 128x128 (a DeepLab head) takes 76 us; the layout group's law
    # priced it by its 5,376 input elements at 4 us
    from tflite_flops.latency.suite import suite
    from tflite_flops.latency.suite_models import layout

    for op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
        assert {"out", "out_rows"} <= set(law_features(op)) and "in" not in law_features(op)
        point = SuitePoint(f"{op}-x", op, "float32", True, True, layout(op, (1, 16, 16, 21), 128, "float32"))
        report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
        resize = next(o for o in report.ops if o.op_type == op)
        f = op_features(resize, XNNPACK_PLACEMENT, caches=CACHES).values
        assert f["out"] == 128 * 128 * 21 and f["out_rows"] == 128 * 128
        shapes = {p.id for p in suite() if p.family == op and p.precision == "float32"}
        assert len(shapes) >= 5  # enough points for the law's features (features + 2)


def test_a_depthwise_convolution_whose_channels_end_in_a_partial_tile_has_its_remainder_feature():
    # timed here (x86-avx512, float32, depthwise tile 16, 32x32 outputs, 5x5): 16 / 24 / 32 / 40 / 48 channels
    # take 20.8 / 35.7 / 25.7 / 44.3 / 34.4 us: a partial last tile costs more than a whole one
    from tflite_flops.latency.suite import DEPTHWISES
    from tflite_flops.latency.suite_models import depthwise

    cpu = cpu_target("x86-avx512")
    assert cpu.float_depthwise_tile == 16 and cpu.int8_depthwise_tile == 32

    def rem(c: int, prec: str = "float32", placement: str = XNNPACK_PLACEMENT) -> float:
        point = SuitePoint(f"dw-{c}-{prec}", "DEPTHWISE_CONV_2D", prec, True, True, depthwise(32, c, 5, 1, "NONE", prec))
        report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
        op = next(o for o in report.ops if o.op_type == "DEPTHWISE_CONV_2D")
        return op_features(op, placement, caches=CACHES, cpu=cpu).values["dw_rem_taps"]

    assert rem(24) == rem(40) == 32 * 32 * 25  # output pixels x taps
    assert rem(16) == rem(32) == rem(48) == 0.0  # whole tiles
    assert rem(48, "int8") == 32 * 32 * 25 and rem(64, "int8") == 0.0  # the int8 kernel's tile is 32
    assert rem(24, placement=BUILTIN_PLACEMENT) == 0.0  # XNNPACK's kernel only
    assert "dw_rem_taps" in law_features("DEPTHWISE_CONV_2D")
    assert [c for _, c, _, _ in DEPTHWISES if c % 16]  # the suite times partial tiles


def test_the_suite_times_a_channel_shuffle_s_transpose_with_enough_points_for_the_layout_features():
    # ShuffleNet's channel shuffle, [1,16,16,2,24] -> [1,16,16,24,2] in int8, took 7.2 us where a TRANSPOSE law
    # fitted on 3 points (a constant and a cost per element) said 0.4: the copy runs 2 elements at a time
    from tflite_flops.latency.suite import suite

    for prec in ("float32", "int8"):
        ids = [p.id for p in suite() if p.family == "TRANSPOSE" and p.precision == prec and p.delegate]
        assert any("x2x24-0x1x2x4x3" in i for i in ids)
        assert len(ids) >= len(law_features("TRANSPOSE")) + 1  # every feature, a constant and one to spare
    assert "out_rows" in law_features("TRANSPOSE")


def test_a_dynamic_range_pointwise_convolution_is_predicted_by_the_fully_connected_law():
    # XNNPACK's delegate runs a dynamically quantized 1x1 stride-1 CONV_2D as a fully connected op: every output
    # pixel a row of its qd8 GEMM, quantized with parameters of its own. Timed here (x86-avx512): ~16 ns a pixel at
    # 16 channels ([1,64,64,16] -> 16: 67.6 us, where the convolution law said 20), ~5 for its 3x3 convolutions
    from tflite_flops.latency.suite_models import conv

    cpu = cpu_target("x86-avx512")

    def features(prec: str, k: int, placement: str = XNNPACK_PLACEMENT):
        point = SuitePoint(f"pw-{prec}-{k}", "CONV_2D", prec, True, True, conv(16, 96, 24, k, 1, "NONE", prec))
        report = analyze_model(load_model(build(runtimes.schema_module("litert"), point)))
        op = next(o for o in report.ops if o.op_type == "CONV_2D")
        return op_features(op, placement, caches=CACHES, cpu=cpu)

    macs = 16 * 16 * 96 * 24
    pointwise = features("hybrid", 1)
    assert pointwise.family == "FULLY_CONNECTED" and "out_rows" in law_features("FULLY_CONNECTED")
    assert pointwise.values["out_rows"] == 256.0 and pointwise.values["macs"] == macs  # 16 x 16 rows
    assert pointwise.values["tiled_macs"] == 0.0  # not a feature of the fully connected law
    assert features("int8", 1).family == "CONV_2D"  # int8 and float run it as a convolution
    assert features("int8", 1).values["tiled_macs"] == macs * 32 / 24  # the qs8 kernel's 16-wide tiles
    assert features("hybrid", 3).family == "CONV_2D"  # a 3x3 one: the qd8 convolution (IGEMM)
    assert features("hybrid", 3).values["tiled_macs"] == 9 * macs * 32 / 24  # its 16-wide tiles (96 in: no kr)
    hybrid_builtin = features("hybrid", 1, BUILTIN_PLACEMENT)  # the builtin hybrid kernel: a convolution
    assert hybrid_builtin.family == "CONV_2D" and hybrid_builtin.values["tiled_macs"] == macs * 32 / 24
