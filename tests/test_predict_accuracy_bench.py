"""The pure figures of benchmarks/predict_accuracy.py on synthetic numbers: summaries, leave-one-family-out
corrections and drift ratios (no TensorFlow, no model run, no timing)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from bench_module import BENCHMARKS, bench_module


@pytest.fixture(scope="module")
def bench():
    with bench_module("predict_accuracy.py", "predict_accuracy_bench") as module:
        yield module


def result(bench, family, predicted, measured, low=None, high=None, precision="float32", rounds=()):
    return bench.Result(family, f"{family}_{predicted}_{measured}", precision, predicted,
                        predicted * 0.9 if low is None else low, predicted * 1.1 if high is None else high,
                        measured, tuple(rounds))


def test_error_and_range(bench):
    r = result(bench, "a", 9.0, 10.0, low=8.0, high=10.0)
    assert r.error == pytest.approx(-0.1)  # predicted faster: negative
    assert r.in_range
    assert not result(bench, "a", 9.0, 10.5, low=8.0, high=10.0).in_range


def test_summary_statistics(bench):
    rs = [result(bench, "a", 11.0, 10.0),   # +10%: within (the boundary counts)
          result(bench, "a", 8.0, 10.0),    # -20%
          result(bench, "b", 10.5, 10.0),   # +5%
          result(bench, "b", 5.0, 10.0)]    # -50%
    s = bench.summarize(rs)
    assert s["models"] == 4 and s["within_10"] == 2 and s["share_within_10"] == 0.5
    assert s["median_abs_error"] == pytest.approx((0.10 + 0.20) / 2)
    assert s["median_signed_error"] == pytest.approx((-0.20 + 0.05) / 2)
    # ranges are predicted x 0.9..1.1: 11 -> 9.9..12.1 holds 10; 8 -> 7.2..8.8 not; 10.5 -> 9.45.. holds; 5 not
    assert s["in_range"] == 2 and s["coverage"] == 0.5 and s["stated_coverage"] == 0.8
    assert bench.summarize([]) == {"models": 0}


def test_quantile_matches_numpy(bench):
    values = [3.0, -1.0, 4.0, 1.5, 9.0, 2.6, -5.3]
    for q in (0.0, 0.1, 0.25, 0.5, 0.9, 1.0):
        assert bench.quantile(values, q) == pytest.approx(float(np.quantile(values, q)))


def test_held_out_correction_never_sees_its_family(bench):
    # family "a" is predicted 2x too fast, "b" and "c" exactly; "a"'s correction comes from b and c only
    rs = [result(bench, "a", 1.0, 2.0), result(bench, "a", 2.0, 4.0),
          result(bench, "b", 1.0, 1.0), result(bench, "b", 3.0, 3.0), result(bench, "c", 5.0, 5.0)]
    c = bench.held_out_correction(rs, "a")
    assert c.trained_on == 3 and c.log_ratio == pytest.approx(0.0)
    assert c.log_low == pytest.approx(0.0) and c.log_high == pytest.approx(0.0)
    cb = bench.held_out_correction(rs, "b")  # trained on a (ln 2, ln 2) and c (0): median ln 2
    assert cb.trained_on == 3 and cb.log_ratio == pytest.approx(math.log(2))
    assert bench.held_out_correction([result(bench, "a", 1.0, 2.0)], "a") is None


def test_held_out_range_quantiles(bench):
    # ten other-family log ratios 0.0, 0.1, ..., 0.9: median 0.45; residuals -0.45..0.45
    rs = [result(bench, "x", 1.0, math.exp(0.1 * i)) for i in range(10)] + [result(bench, "h", 1.0, 1.0)]
    c = bench.held_out_correction(rs, "h", coverage=0.8)
    assert c.log_ratio == pytest.approx(0.45)
    rest = [0.1 * i - 0.45 for i in range(10)]
    assert c.log_low == pytest.approx(float(np.quantile(rest, 0.1)))
    assert c.log_high == pytest.approx(float(np.quantile(rest, 0.9)))
    corrected = c.apply(rs[-1])
    assert corrected.predicted_ms == pytest.approx(math.exp(0.45))
    assert corrected.low_ms == pytest.approx(math.exp(0.45 + c.log_low))
    assert corrected.high_ms == pytest.approx(math.exp(0.45 + c.log_high))
    assert corrected.measured_ms == 1.0


def test_leave_one_family_out_corrects_each_family_apart(bench):
    rs = [result(bench, "a", 1.0, 2.0), result(bench, "b", 1.0, 2.0), result(bench, "c", 1.0, 1.0)]
    corrected, corrections = bench.leave_one_family_out(rs)
    assert set(corrections) == {"a", "b", "c"}
    # a: trained on b (ln 2) and c (0): median ln(2)/2; c: trained on a and b: ln 2
    assert corrected[0].predicted_ms == pytest.approx(math.sqrt(2))
    assert corrected[2].predicted_ms == pytest.approx(2.0)
    assert [r.measured_ms for r in corrected] == [2.0, 2.0, 1.0]
    alone, corr = bench.leave_one_family_out([result(bench, "a", 1.0, 2.0)])
    assert corr == {"a": None} and alone[0].predicted_ms == 1.0  # nothing to learn from: unchanged


def test_drift_and_round_ratios(bench):
    assert bench.drift_ratios([2.0, 2.2, 1.8]) == pytest.approx([1.0, 1.1, 0.9])
    assert bench.drift_ratios([]) == []
    rs = [result(bench, "a", 1.0, 1.0, rounds=(1.0, 1.2, 0.9)),
          result(bench, "a", 1.0, 1.0, rounds=(2.0, 2.0, 2.0)),
          result(bench, "b", 1.0, 1.0, rounds=(4.0, 6.0, 4.0))]
    assert bench.round_ratios(rs) == pytest.approx([1.0, 1.2, 1.0])


def test_the_clock_s_own_cost_is_the_median_gap_between_two_readings(bench):
    ticks = iter(range(0, 10**9, 7))  # a clock that advances 7 ns per reading
    assert bench.clock_cost_ms(lambda: next(ticks), pairs=11) == pytest.approx(7e-6)


def test_fresh_families_are_families_of_the_benchmark(bench):
    """The project's own families by name; another converter's (``--external``) by the names
    ``benchmarks/torch_models.py`` gives them, its converter before a colon."""
    import torch_models

    own = {f for f in bench.FRESH_FAMILIES if ":" not in f}
    assert own <= set(bench.FAMILIES)
    for family in set(bench.FRESH_FAMILIES) - own:
        converter, arch = family.split(":", 1)
        assert converter == "litert-torch" and arch in torch_models.TORCHVISION, family


def test_every_family_has_models_and_four_precisions(bench):
    assert set(bench.PRECISIONS) == {"float32", "fp16", "dynamic", "int8"}
    families = {s.family for s in bench.SPECS}
    assert len(families - {"rnn", "transformer"}) >= 6 and {"rnn", "transformer"} <= families
    assert len({s.name for s in bench.SPECS}) == len(bench.SPECS)


def test_markdown_tables_of_a_json_document(bench):
    doc = {"coverage": 0.8,
           "results": [{"family": "resnet", "model": "r50", "precision": "int8", "measured_ms": 4.0, "predicted_ms": 3.0,
                        "error": -0.25, "in_range": False, "lofo_error": -0.05, "note": ""}],
           "summary_raw": {"all": {"models": 1, "within_10": 0, "share_within_10": 0.0, "median_abs_error": 0.25,
                                   "median_signed_error": -0.25, "coverage": 0.0}},
           "summary_lofo": {"all": {"models": 1, "within_10": 1, "share_within_10": 1.0, "median_abs_error": 0.05,
                                    "median_signed_error": -0.05, "coverage": 1.0}}}
    text = bench.markdown(doc)
    assert "| resnet | r50 | int8 | 4.000 | 3.000 | −25.0% miss | no | - | −5.0% |  |" in text  # no drift check
    assert "| all | 1 | 0 (0%) | 25.0% | −25.0% | 0% of 80% |" in text
    assert "| all | 1 | 1 (100%) | 5.0% | −5.0% | 100% of 80% |" in text
    assert "drift-checked |" not in text
    # with a drift check: its error per model and its summary, between the raw and the corrected ones
    doc["results"][0]["drift_error"] = -0.2
    doc["summary_drift"] = {"all": {"models": 1, "within_10": 0, "share_within_10": 0.0, "median_abs_error": 0.2,
                                    "median_signed_error": -0.2, "coverage": 0.0}}
    text = bench.markdown(doc)
    assert "| resnet | r50 | int8 | 4.000 | 3.000 | −25.0% miss | no | −20.0% | −5.0% |  |" in text
    assert text.index("| raw |") < text.index("| drift-checked |") < text.index("| leave-one-family-out corrected |")


def test_drift_checked_results_scale_the_prediction_and_its_range(bench):
    r = result(bench, "a", 9.0, 10.0)
    (checked,) = bench.drift_checked([r], 1.1)  # the reference runs 10% slower now than at calibration
    assert checked.predicted_ms == pytest.approx(9.9) and checked.measured_ms == 10.0
    assert checked.low_ms == pytest.approx(r.low_ms * 1.1) and checked.high_ms == pytest.approx(r.high_ms * 1.1)
    assert bench.drift_checked([r], None) == [r]


def test_the_error_splits_into_the_laws_and_the_whole_model_term(bench):
    # measured: the model 10 ms, its stretches 9 ms (the model takes 1 ms over them); predicted: the stretches
    # 8.1 ms (the laws 10% low), the model 8.6 ms (0.5 ms over them, where 1 ms was measured)
    r = dataclasses_replace(bench, result(bench, "a", 8.6, 10.0), segments_measured_ms=9.0, segments_predicted_ms=8.1)
    assert r.law_error == pytest.approx(-0.1)
    assert r.whole_error == pytest.approx((0.5 - 1.0) / 10.0)
    # error = laws' share (-0.9 ms) + whole-model term's (-0.5 ms), over 10 ms
    assert r.error == pytest.approx(r.law_error * 9.0 / 10.0 + r.whole_error)
    plain = result(bench, "a", 9.0, 10.0)
    assert plain.law_error is None and plain.whole_error is None
    summary = bench.split_summary([r, plain])
    assert summary["models"] == 1 and summary["median_whole_share"] == pytest.approx(0.1)
    assert bench.split_summary([plain]) == {"models": 0}


def dataclasses_replace(bench, r, **changes):
    import dataclasses

    return dataclasses.replace(r, **changes)


@pytest.mark.runtime
def test_cut_points_never_cut_through_a_shape(bench):
    # sample_models/transformer_block computes shapes at run time (its dynamic batch): a cut there would feed a
    # RESHAPE random shapes. Every stretch is at least the asked length (the last one aside) and every tensor
    # crossing a cut holds data.
    from tflite_flops.measure import runtimes
    from tflite_flops.measure.model_writer import read_model

    fb = runtimes.schema_module("litert")
    for name in ("transformer_block", "cnn_float", "tiny_decoder", "cnn_fp16"):
        path = os.path.join(BENCHMARKS, "..", "sample_models", f"{name}.tflite")
        with open(path, "rb") as f:
            model_obj = read_model(fb, f.read())
        sg = model_obj.subgraphs[0]
        cuts = bench.cut_points(model_obj, fb, 4)
        assert cuts[-1] == len(sg.operators) and cuts == sorted(set(cuts))
        starts = [0, *cuts[:-1]]
        assert all(b - a >= 4 for a, b in zip(starts, cuts[:-1]))
        data = {getattr(fb.TensorType, t) for t in ("FLOAT32", "FLOAT16", "INT8", "UINT8", "INT16")}
        def constant(t):
            b = sg.tensors[t].buffer
            return bool(b) and model_obj.buffers[b].data is not None and len(model_obj.buffers[b].data) > 0

        folded = {o for op in sg.operators if all(constant(t) for t in op.inputs if t >= 0) for o in op.outputs}
        for cut in cuts[:-1]:
            written = {t for op in sg.operators[:cut] for t in op.outputs if t >= 0}
            read = {t for op in sg.operators[cut:] for t in op.inputs if t >= 0}
            assert all(sg.tensors[t].type in data and t not in folded for t in written & read), (name, cut)
        if name == "cnn_fp16":  # its float16 weights are dequantized up front: no stretch may lose them
            assert folded and all(not (folded & {t for op in sg.operators[:c] for t in op.outputs}) or
                                  not (folded & {t for op in sg.operators[c:] for t in op.inputs}) for c in cuts[:-1])


def test_other_converters_models_come_from_their_manifest_and_are_grouped_by_converter(bench, tmp_path):
    import json

    (tmp_path / "tv_resnet18_224_int8.tflite").write_bytes(b"x")
    (tmp_path / "mp_iris_landmark.tflite").write_bytes(b"x")
    rows = [{"file": "tv_resnet18_224_int8.tflite", "family": "litert-torch:resnet18", "model": "resnet18_224",
             "precision": "int8"},
            {"file": "mp_iris_landmark.tflite", "family": "mediapipe:iris_landmark", "model": "iris_landmark",
             "precision": "float32"},
            {"file": "gone.tflite", "family": "mediapipe:gone", "model": "gone", "precision": "fp16"}]
    (tmp_path / "manifest.json").write_text(json.dumps(rows), encoding="utf-8")
    found = bench.external_models(str(tmp_path))  # a file the manifest names but the folder lacks is left out
    assert [(f, m, p) for f, m, p, _ in found] == [("litert-torch:resnet18", "resnet18_224", "int8"),
                                                   ("mediapipe:iris_landmark", "iris_landmark", "float32")]
    assert found[0][3] == str(tmp_path / "tv_resnet18_224_int8.tflite")
    assert [bench.converter(f) for f in ("litert-torch:resnet18", "mediapipe:iris_landmark", "mobilenet",
                                         bench.SAMPLES_FAMILY)] == ["litert-torch", "mediapipe", "keras", "samples"]
