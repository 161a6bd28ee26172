"""Advice (issue 31, item 2): each kind fires on a model built to show it, with its saving (predicted from a
hand-made profile, measured from per-op times) and in every output format."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from lanes import slow_cases
from render_helpers import SAMPLES, sample_report
from test_predict import law, profile
from tflite_flops.analysis.advice import with_measured_savings
from tflite_flops.analysis.run import analyze_model
from tflite_flops.render import render
from tflite_flops.render.compare import render_comparison
from tflite_flops.report import LatencyStats, Report
from tflite_flops.report.advice import Advice, op_ranges
from tflite_flops.report.compare import compare_reports
from tflite_flops.settings import Settings

# XNNPACK runs any op in 1 µs, builtin kernels in 2 µs; a partition costs 3 µs (profile()), an invoke 10 µs
FLAT = (law("*", "xnnpack", one=1.0), law("*", "builtin", one=2.0))


def _fb():
    """The schema module a runtime ships (the model writer's object API); the test skips without one."""
    from tflite_flops.errors import TfliteFlopsError
    from tflite_flops.measure.runtimes import schema_module

    try:
        return schema_module("litert")
    except TfliteFlopsError as exc:
        pytest.skip(f"no runtime ships the TFLite schema module: {exc}")


def _kinds(report: Report) -> dict[str, Advice]:
    return {a.kind: a for a in report.advice}


def hybrid_depthwise_model() -> bytes:
    """ADD → dynamic-range DEPTHWISE_CONV_2D (float input, int8 filter) → ADD: XNNPACK has no dynamic-range
    depthwise kernel, so the depthwise conv is kept off and the graph is cut into 2 partitions."""
    from tflite_flops.measure.model_writer import Quant, ModelWriter

    w = ModelWriter(_fb())
    x = w.tensor((1, 8, 8, 4))
    one = w.tensor((1, 1, 1, 4), data=np.ones((1, 1, 1, 4)))
    a = w.tensor((1, 8, 8, 4))
    w.op("ADD", [x, one], [a], "AddOptions")
    filt = w.tensor((1, 3, 3, 4), "int8", data=np.arange(36).reshape(1, 3, 3, 4) % 7 + 1,
                    quant=Quant.of([0.01] * 4, axis=3))
    bias = w.tensor((4,), data=np.zeros(4))
    d = w.tensor((1, 8, 8, 4))
    w.op("DEPTHWISE_CONV_2D", [a, filt, bias], [d], "DepthwiseConv2DOptions", padding=0, strideW=1, strideH=1,
         depthMultiplier=1, dilationWFactor=1, dilationHFactor=1)
    y = w.tensor((1, 8, 8, 4))
    w.op("ADD", [d, one], [y], "AddOptions")
    return w.to_bytes([x], [y], "hybrid depthwise")


def int8_fc_model(weights: np.ndarray, scale: float) -> bytes:
    """One int8 FULLY_CONNECTED [1,16] × [8,16] with per-tensor weight ``scale``."""
    from tflite_flops.measure.model_writer import Quant, ModelWriter

    w = ModelWriter(_fb())
    x = w.tensor((1, 16), "int8", quant=Quant.of(0.05))
    k = w.tensor((8, 16), "int8", data=weights, quant=Quant.of(scale))
    b = w.tensor((8,), "int32", data=np.zeros(8), quant=Quant.of(0.05 * scale if scale else 0.0))
    y = w.tensor((1, 8), "int8", quant=Quant.of(0.1))
    w.op("FULLY_CONNECTED", [x, k, b], [y], "FullyConnectedOptions")
    return w.to_bytes([x], [y], "int8 fc")


def test_op_ranges():
    assert op_ranges(["0:57", "0:58", "0:59", "0:61", "1:2", "1:3"]) == "0:57–0:59, 0:61, 1:2–1:3"


def test_static_shape_and_partitions_with_predicted_saving():
    # fcn_dynamic: a dynamic input; SHAPE → SLICE → MUL compute RESIZE_BILINEAR's size at run time: 2 partitions
    r = analyze_model(SAMPLES / "fcn_dynamic.tflite", Settings(predict=profile(laws=FLAT)))
    k = _kinds(r)
    static, parts = k["static_shape"], k["partitions"]
    assert static.ops == ("0:6", "0:7", "0:8", "0:9")
    assert "0:6–0:9" in static.text and "folds 3 of them to constants" in static.text
    # SHAPE, SLICE, MUL fold away (3 × 2 µs); RESIZE_BILINEAR moves to XNNPACK (2 − 1 µs): 7 µs
    assert static.saving_source == "predicted" and static.saving_ms == pytest.approx(0.007)
    assert "~0.007 ms predicted" in static.text
    assert static.share_of == "flops" and "of the model's" not in static.text  # the time said; the share in the JSON
    # 2 partitions become 1: one partition overhead (3 µs)
    assert r.delegation["xnnpack"].partitions == 2
    assert parts.saving_ms == pytest.approx(0.003) and "would be 1" in parts.text


def test_full_integer_for_dynamic_range_depthwise():
    r = analyze_model(hybrid_depthwise_model(), Settings(predict=profile(laws=FLAT)))
    assert r.delegation["xnnpack"].partitions == 2
    a = _kinds(r)["full_integer"]
    assert a.ops == ("0:1",) and "DEPTHWISE_CONV_2D ×1" in a.text and "full integer" in a.text
    # 2 µs builtin − 1 µs on XNNPACK + one partition boundary less (3 µs) = 4 µs
    assert a.saving_ms == pytest.approx(0.004) and a.saving_source == "predicted"
    static = analyze_model(hybrid_depthwise_model())  # no profile: no saving to give
    assert _kinds(static)["full_integer"].saving_ms is None


def test_unsupported_op_names_the_nearest_form_and_measured_saving():
    r = sample_report("cnn_int8.tflite")  # int8 RELU and SOFTMAX: XNNPACK runs them in float only
    a = _kinds(r)["unsupported_op"]
    assert a.ops == ("0:8", "0:11") and "run them in float" in a.text and a.saving_ms is None
    timed = dataclasses.replace(r, ops=tuple(dataclasses.replace(o, latency_ms=0.25) for o in r.ops))
    m = _kinds(with_measured_savings(timed))["unsupported_op"]
    assert m.saving_source == "measured" and m.saving_ms == pytest.approx(0.5)  # 2 ops × 0.25 ms
    assert "up to ~0.5 ms measured" in m.text
    assert "bytes moved" not in m.text and m.share_of == "bytes_moved"  # the time replaces the share in the text


def test_zero_weights():
    r = analyze_model(int8_fc_model(np.zeros((8, 16)), 0.01))
    a = _kinds(r)["zero_weights"]
    assert a.ops == ("0:0",) and "every weight at zero" in a.text and a.saving_ms is None
    assert "zero_weights" not in _kinds(analyze_model(int8_fc_model(np.ones((8, 16)), 0.01)))


@pytest.mark.parametrize("scale", [0.0, 1e-40])
def test_degenerate_scale(scale):
    r = analyze_model(int8_fc_model(np.ones((8, 16)), scale))
    a = _kinds(r)["degenerate_scale"]
    assert a.ops == ("0:0",) and "a scale that is zero, negative or denormal (" in a.text
    assert f"({np.float32(scale):g})" in a.text  # as stored: a float32


def test_gpu_rejected():
    a = _kinds(sample_report("fcn_dynamic.tflite"))["gpu_rejected"]
    assert a.ops == ("0:6", "0:7", "0:8", "0:9", "0:10")
    assert "never checked on a phone's GPU" in a.text and "op type ×1" in a.text
    assert a.text.startswith("the LiteRT GPU accelerator (ML Drift")  # whose rules: the default GPU model


def test_quantized_slower_than_its_float_twin_in_compare():
    f, q = sample_report("cnn_float.tflite"), sample_report("cnn_int8.tflite")
    f = dataclasses.replace(f, latency=LatencyStats(runtime="litert", median_ms=1.0))
    q = dataclasses.replace(q, latency=LatencyStats(runtime="litert", median_ms=3.6))
    c = compare_reports(f, q)
    (a,) = c.advice
    assert a.kind == "quantized_slower" and a.ops == ("0:8", "0:11")  # the ops int8 loses from XNNPACK
    assert a.saving_ms == pytest.approx(2.6) and a.saving_source == "measured"
    assert "3.6× slower than its float twin" in a.text and "RELU ×1" in a.text
    assert compare_reports(q, f).advice[0].ops == ("0:8", "0:11")  # either side may be the quantized one
    faster = dataclasses.replace(q, latency=LatencyStats(runtime="litert", median_ms=0.5))
    assert compare_reports(f, faster).advice == ()
    assert json.loads(render_comparison(c, "json"))["advice"][0]["kind"] == "quantized_slower"
    for fmt in ("table", "md", "html"):
        assert "3.6× slower than its float twin" in render_comparison(c, fmt)


@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_advice_in_every_output_format(fmt):
    r = sample_report("fcn_dynamic.tflite")
    out = render(r, fmt)
    assert "What to change" in out
    for a in r.advice:
        assert (a.kind.replace("_", "\\_") if fmt == "md" else a.kind) in out
    assert "because their shapes are computed at run time" in out


def test_advice_json_round_trip():
    r = analyze_model(SAMPLES / "fcn_dynamic.tflite", Settings(predict=profile(laws=FLAT)))
    d = json.loads(r.to_json())
    assert [set(a) for a in d["advice"]] == [{"kind", "ops", "saving_ms", "saving_source", "text", "saving_share",
                                              "share_of"}] * len(r.advice)
    again = Report.from_json(r.to_json())
    assert [a.kind for a in again.advice] == [a.kind for a in r.advice]
    assert "advice" not in json.loads(sample_report("cnn_float.tflite").to_json())  # none: no key


@pytest.mark.slow
@pytest.mark.tf
def test_keras_dynamic_batch_and_dynamic_range():
    """A Keras squeeze-excite block with a dynamic batch: its Reshape's shape is computed at run time (SHAPE →
    STRIDED_SLICE → PACK), which cuts the graph in 2; exported dynamic-range, the depthwise conv (3·3·128 int8
    weights, over the converter's 1024) is kept off XNNPACK too."""
    import tensorflow as tf

    from tflite_flops.convert import to_tflite

    inp = tf.keras.Input((16, 16, 8))
    x = tf.keras.layers.Conv2D(128, 3, padding="same")(inp)
    s = tf.keras.layers.GlobalAveragePooling2D()(x)
    s = tf.keras.layers.Reshape((1, 1, 128))(s)
    s = tf.keras.layers.Conv2D(128, 1, activation="sigmoid")(s)
    x = tf.keras.layers.Multiply()([x, s])
    x = tf.keras.layers.DepthwiseConv2D(3, padding="same")(x)
    model = tf.keras.Model(inp, tf.keras.layers.Conv2D(16, 1)(x))
    r = analyze_model(to_tflite(model, "float"))
    k = _kinds(r)
    assert "SHAPE ×1" in k["static_shape"].text and "STRIDED_SLICE ×1" in k["static_shape"].text
    assert "with a static shape they would be 1" in k["partitions"].text
    q = analyze_model(to_tflite(model, "dynamic_range"))
    full = _kinds(q)["full_integer"]
    assert "DEPTHWISE_CONV_2D ×1" in full.text and "no dynamic-range depthwise kernel" in full.text


@pytest.mark.slow
@pytest.mark.runtime
def test_measured_saving_from_a_per_op_run():
    """analyze(per_op=True) times every op alone: the kept ops' advice then carries their measured time."""
    import tflite_flops
    from tflite_flops.measure.bench import BenchSettings

    r = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite", per_op=True, bench=BenchSettings(runs=5, warmup=1))
    a = _kinds(r)["unsupported_op"]
    times = {f"{o.subgraph}:{o.index}": o.latency_ms for o in r.ops}
    assert a.saving_source == "measured" and a.saving_ms == pytest.approx(times["0:8"] + times["0:11"])
    assert "measured: their time now" in a.text


def test_advice_prices_with_the_predictions_own_context(monkeypatch):
    """Advice's time at stake was priced with other features than the prediction it cites (the default tile, no
    caches, no loop terms: issue 42). Every feature computed for a model, the prediction's and advice's, now
    comes from one context: the profile's CPU target, its tile and its caches."""
    from tflite_flops.latency import predict

    seen = []
    real = predict.op_features

    def recording(o, placement, trips=0, loop=(0, 0), tile=0, passed=0, activated=False, caches=None, cpu=None):
        seen.append((tile, dict(caches or {}), getattr(cpu, "name", None)))
        return real(o, placement, trips, loop, tile, passed, activated, caches, cpu)

    monkeypatch.setattr(predict, "op_features", recording)
    # an Arm phone's profile: its law tile is 8 channels where the default (and every x86 target's) is 16
    machine = dataclasses.replace(profile(laws=FLAT).machine, target="arm-i8mm", caches={"l2": 1 << 20, "l3": 32 << 20})
    p = dataclasses.replace(profile(laws=FLAT), machine=machine)
    r = analyze_model(hybrid_depthwise_model(), Settings(predict=p))
    n = len(seen)
    assert _kinds(r)["full_integer"].saving_ms is not None  # advice read: it priced the kept op on XNNPACK
    assert len(seen) > n  # advice computed features too
    # arm-i8mm's law tile (8 channels), its caches, its name: the same in every call, the prediction's and advice's
    assert set(map(repr, seen)) == {repr((8, {"l2": 1 << 20, "l3": 32 << 20}, "arm-i8mm"))}


@pytest.mark.parametrize("ms, text", [
    (-0.000386, "no time saved (predicted)"),  # issue 45's "~-0.000386 ms"
    (9.13e-06, "< 0.001 ms predicted"),  # and "~9.13e-06 ms"
    (0.0073, "~0.0073 ms predicted"), (0.386, "~0.39 ms predicted"), (9.13, "~9.1 ms predicted"),
    (12.6, "~13 ms predicted"), (123.4, "~120 ms predicted"), (None, "")])
def test_a_saving_reads_as_a_person_writes_it(ms, text):
    from tflite_flops.report.advice import saving_text

    assert saving_text(ms, "predicted" if ms is not None else None) == text


def test_items_that_save_nothing_worth_a_line_are_folded_into_one():
    """Advice listed items that save nothing (issue 45): those under 1% of the model's time (or under 0.001 ms when
    the time is not known) become one last line that names their kinds; the others stay sorted by saving."""
    from tflite_flops.render.advice import advice_lines

    items = [Advice("partitions", ("0:1",), 0.02, "predicted", "a"), Advice("static_shape", ("0:2",), 2.0,
                                                                           "predicted", "b"),
             Advice("full_integer", ("0:3",), 0.0004, "predicted", "c"), Advice("zero_weights", ("0:4",), None, None, "d")]
    # model time 10 ms: 1% is 0.1 ms, so the 0.02 and 0.0004 ms items fold; the unknown saving stays, last
    assert advice_lines(items, 10.0) == ["[static_shape] b", "[zero_weights] d",
                                         "[2 more] changes that save under 0.1 ms each (partitions, full_integer): "
                                         "see the JSON"]
    assert advice_lines(items) == ["[static_shape] b", "[partitions] a", "[zero_weights] d",
                                   "[1 more] a change that saves under 0.001 ms (full_integer): see the JSON"]


# ---- issue 45: every item carries a saving (a share of the model without a time), in every output format ----------

def _zero_weights_report() -> Report:
    return analyze_model(int8_fc_model(np.zeros((8, 16)), 0.01))


def _degenerate_scale_report() -> Report:
    return analyze_model(int8_fc_model(np.ones((8, 16)), 0.0))


# each kind, on a model built to show it (no profile, no run): its share and what it is of
KIND_CASES = {
    # SHAPE → SLICE → MUL → RESIZE_BILINEAR: the resize's FLOPs (at the placeholder shape) are 11% of the model's
    "static_shape": (lambda: sample_report("fcn_dynamic.tflite"), "flops", "11% of the model's FLOPs"),
    "partitions": (lambda: sample_report("fcn_dynamic.tflite"), "partitions", "50% of XNNPACK's partitions"),  # 2 → 1
    "gpu_rejected": (lambda: sample_report("fcn_dynamic.tflite"), "flops", "24% of the model's FLOPs"),
    # RELU [1,16,16,8] int8: 2,048 B read + 2,048 written; SOFTMAX [1,10]: 10 + 10; of 35,802 + 23,580 B moved
    "unsupported_op": (lambda: sample_report("cnn_int8.tflite"), "bytes_moved", "6.9% of the model's bytes moved"),
    # the depthwise conv: 2·(8·8·4·9) MACs + 8·8·4 bias = 4,864 FLOPs of 4,864 + 2·256 (the ADDs) = 5,376: 90%
    "full_integer": (lambda: analyze_model(hybrid_depthwise_model()), "flops", "90% of the model's FLOPs"),
    # the [8,16] int8 weight: 128 B of 128 + 32 (the int32 bias) = 160 B of weights: 80%
    "zero_weights": (_zero_weights_report, "weight_bytes", "80% of the model's weight bytes"),
    "degenerate_scale": (_degenerate_scale_report, "weight_bytes", "80% of the model's weight bytes"),
}


def test_every_kind_of_the_analysis_has_a_case():
    from tflite_flops.report.advice import KINDS

    assert set(KIND_CASES) == set(KINDS) - {"quantized_slower"}  # compare's kind: always a time (its own test)


@pytest.mark.parametrize("kind", sorted(KIND_CASES))
def test_every_kind_carries_a_share_without_a_profile(kind):
    """Without --predict, no item had a time or even a share of the MACs (issue 45): each carries its share of the
    model figure it is about, and its text says it."""
    from tflite_flops.report.advice import SHARE_OF

    make, share_of, said = KIND_CASES[kind]
    a = _kinds(make())[kind]
    assert a.saving_ms is None and a.saving_source is None  # no profile, no run
    assert a.share_of == share_of and share_of in SHARE_OF and 0 < a.saving_share <= 1
    assert a.text.endswith(f" ({said})"), a.text


def _advice_part(out: str, fmt: str) -> str:
    """The advice section of a rendered report (the whole output for JSON)."""
    if fmt == "json":
        return out
    start = out.index('<section id="advice">' if fmt == "html" else "What to change")  # (the HTML's cards before)
    end = out.find({"table": "\n\n", "md": "\n\n**", "html": "</section>"}[fmt], start + len("What to change") + 4)
    return out[start:end if end >= 0 else len(out)]


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "md", "html"])
@pytest.mark.parametrize("kind", sorted(KIND_CASES))
def test_every_kind_in_every_output_format(kind, fmt):
    """Each kind, on its model, in every format: its line with the saving (or the folded line naming it); the JSON
    record with its share; the CSV has no advice (one row per op)."""
    make, share_of, said = KIND_CASES[kind]
    r = make()
    a = _kinds(r)[kind]
    out = render(r, fmt)
    if fmt == "csv":
        assert "What to change" not in out and a.text not in out
        return
    if fmt == "json":
        (item,) = [x for x in json.loads(out)["advice"] if x["kind"] == kind]
        assert item["share_of"] == share_of and item["saving_share"] == pytest.approx(a.saving_share, abs=1e-6)
        assert item["text"].endswith(f"({said})") and item["saving_ms"] is None
        return
    part = _advice_part(out, fmt)
    if fmt == "md":
        kind, said = kind.replace("_", "\\_"), said.replace("_", "\\_")
        assert f"\\[{kind}\\]" in part or f"({kind}" in part  # its own line, or named in the folded one
    else:
        said = said.replace("'", "&#x27;") if fmt == "html" else said
        assert f"[{kind}]" in part or f"({kind}" in part
    assert said in part


def test_a_share_reads_as_a_person_writes_it():
    from tflite_flops.report.advice import percent_text

    cases = {0.0: "0%", 1e-6: "< 0.01%", 0.000123: "0.012%", 0.0033: "0.33%", 0.025: "2.5%", 0.0996: "10%",
             0.27: "27%", 0.999: "> 99%", 1.0: "100%"}
    assert {s: percent_text(s) for s in cases} == cases


def test_items_sort_by_time_then_share_and_small_shares_fold():
    """Sorted by saving: a time first (largest first), then a share; a share under 1% folds, its line naming what
    it is a share of; no saving is written with an exponent or a minus sign."""
    from tflite_flops.render.advice import advice_lines, top_advice

    items = [Advice("gpu_rejected", ("0:1",), None, None, "a (2.5% of the model's FLOPs)", 0.025, "flops"),
             Advice("zero_weights", ("0:2",), None, None, "b (80% of the model's weight bytes)", 0.8, "weight_bytes"),
             Advice("unsupported_op", ("0:3",), 0.5, "predicted", "c (~0.5 ms predicted)", 0.001, "bytes_moved"),
             Advice("partitions", ("0:4",), None, None, "d (0.5% of XNNPACK's partitions)", 0.005, "partitions"),
             Advice("static_shape", ("0:5",), None, None, "e (0.0091% of the model's FLOPs)", 0.000091, "flops")]
    lines = advice_lines(items, 10.0)
    assert lines == ["[unsupported_op] c (~0.5 ms predicted)", "[zero_weights] b (80% of the model's weight bytes)",
                     "[gpu_rejected] a (2.5% of the model's FLOPs)",
                     "[2 more] changes that save under 1% of XNNPACK's partitions or the model's FLOPs each "
                     "(partitions, static_shape): see the JSON"]
    assert top_advice(items, 10.0).kind == "unsupported_op"
    assert top_advice(items[3:4]) is None  # every item folds: no top


@pytest.mark.parametrize("name", slow_cases(["cnn_int8", "fcn_dynamic", "lstm", "tiny_decoder", "tiny_decoder_kv"],
                                             {"tiny_decoder", "tiny_decoder_kv"}))
def test_no_sample_item_prints_an_exponent_or_a_negative_saving(name):
    import re

    r = sample_report(f"{name}.tflite")
    assert r.advice and all(a.saving_share is not None for a in r.advice)
    for fmt in ("table", "md", "html"):
        part = _advice_part(render(r, fmt), fmt)
        assert not re.search(r"\d[eE][-+]?\d", part) and "~-" not in part, part


def test_the_html_cards_lead_with_the_change_that_saves_the_most():
    """Issue 45: the page's first cards hold the top item with its saving (linked to the section), before the
    model's details; with no item worth a line, a card says so."""
    from tflite_flops.render.formats.html import render_html

    page = render_html(sample_report("cnn_int8.tflite"))
    cards = page[page.index('<section id="totals"'):page.index('<div class="cards details">')]
    assert '<a class="card wide advice-card" href="#advice"' in cards
    assert '<div class="v">6.9% <span class="u">of the model&#x27;s bytes moved</span></div>' in cards
    assert "[unsupported_op] 2 ops (0:8, 0:11" in cards
    none = render_html(sample_report("cnn_float.tflite"))  # no finding
    assert '<div class="k">What to change first</div><div class="v">nothing to change</div>' in none
