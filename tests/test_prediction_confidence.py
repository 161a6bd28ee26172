"""The prediction's honesty (issue 29, docs/predict.md "Confidence"): each law's fitted domain, an op out of it or
predicted by a stand-in law flagged low-confidence, the share of the predicted time resting on such ops, the
provenance flags (a --quick profile, stand-in laws, a foreign profile, a profile without domains) and the range's
nominal rate, in every output. No clock: the profiles are hand-written or fitted on injected times."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from pathlib import Path

import pytest

from render_helpers import PREDICT_PROFILE, SAMPLES, predicted_report
from tflite_flops.analysis import analyze_model
from tflite_flops.latency.fit import RANGE_RATE, Sample, domain_of, fit_law
from tflite_flops.latency.predict import DOMAIN_FACTOR, out_of_domain
from tflite_flops.latency.profile import DeviceProfile, Law, OpFeatures, ProfileError
from tflite_flops.render import render
from tflite_flops.report import Report
from tflite_flops.report.prediction import DOMAINS_UNKNOWN, FOREIGN_PROFILE, QUICK_PROFILE, STAND_IN_LAWS
from tflite_flops.settings import Settings

FORMATS = ("table", "json", "csv", "md", "html")
CNN = SAMPLES / "cnn_float.tflite"


def fixture_dict() -> dict:
    return json.loads(Path(PREDICT_PROFILE).read_text())


def predict(profile: DeviceProfile, model: Path = CNN) -> Report:
    return analyze_model(model, Settings(predict=profile))


def conf(op) -> tuple[str | None, str | None]:
    return op.figures.get("prediction_confidence"), op.figures.get("prediction_note")


@pytest.fixture(scope="module")
def fixture_report() -> Report:
    return predict(DeviceProfile.load(str(PREDICT_PROFILE)))


# ---- the domain and the per-op confidence ---------------------------------------------------------------


def test_the_domain_check_names_the_feature_furthest_out_and_holds_the_factor():
    law = Law("CONV_2D", "float32", "xnnpack", {"1": 1.0}, domain={"macs": (1000.0, 50000.0), "out": (64.0, 4096.0)})

    def feats(**values: float) -> OpFeatures:
        return OpFeatures("CONV_2D", "float32", "xnnpack", {"1": 1.0, "macs": 20000.0, "out": 512.0, **values})

    assert DOMAIN_FACTOR == 2.0
    assert out_of_domain(law, feats()) is None
    assert out_of_domain(law, feats(macs=100000.0)) is None  # exactly 2x the largest: still within
    assert out_of_domain(law, feats(macs=500.0)) is None  # exactly half the smallest: still within
    assert out_of_domain(law, feats(macs=205000.0)) == "MACs 4.1x above the largest fitted"  # 205,000 / 50,000
    assert out_of_domain(law, feats(out=16.0)) == "output elements 4.0x below the smallest fitted"  # 64 / 16
    # both out: the furthest (MACs 8x above, against out 4x below) is named
    assert out_of_domain(law, feats(macs=400000.0, out=16.0)) == "MACs 8.0x above the largest fitted"
    assert out_of_domain(law, feats(macs=0.0)) == "MACs 0, the smallest fitted 1000"
    # a law without a domain (an older profile) flags nothing
    assert out_of_domain(dataclasses.replace(law, domain={}), feats(macs=1e12)) is None


def test_out_of_domain_and_stand_in_ops_are_flagged(fixture_report):
    # the fixture's CONV_2D law was fitted on 20,000..50,000 MACs; FULLY_CONNECTED's on 1,000..100,000
    ops = fixture_report.ops
    assert (ops[0].op_type, ops[0].macs) == ("CONV_2D", 110592)
    assert conf(ops[0]) == ("low", "MACs 2.2x above the largest fitted")  # 110,592 / 50,000 = 2.21
    assert conf(ops[2]) == ("high", None)  # CONV_2D, 65,536 MACs: 1.3x, within 2x
    assert conf(ops[1]) == ("high", None)  # DEPTHWISE_CONV_2D, 36,864 MACs in 10,000..100,000
    assert (ops[10].op_type, ops[10].macs) == ("FULLY_CONNECTED", 80)
    assert conf(ops[10]) == ("low", "MACs 12.5x below the smallest fitted")  # 1,000 / 80
    assert ops[3].op_type == "ADD" and conf(ops[3]) == ("low", "stand-in: generic law")  # no ADD law, no binary law
    assert ops[8].op_type == "RELU" and ops[8].predicted_ms == 0.0 and conf(ops[8]) == ("high", None)  # fused


def test_the_low_confidence_share_is_the_sum_of_the_low_ops(fixture_report):
    p = fixture_report.prediction
    low = [o for o in fixture_report.ops if conf(o)[0] == "low"]
    # 2 CONV_2D / FULLY_CONNECTED out of their domain + 6 stand-ins (ADD, MAX_POOL_2D, CONCATENATION,
    # TRANSPOSE_CONV, MEAN, SOFTMAX)
    assert len(low) == p.low_confidence_ops == 8 and p.ops_fallback == 6
    assert p.low_confidence_ms == pytest.approx(sum(o.predicted_ms for o in low))
    assert p.low_confidence_share == pytest.approx(p.low_confidence_ms / p.latency_ms)
    assert 0 < p.low_confidence_ms < p.ops_ms
    assert p.flags == (STAND_IN_LAWS,)
    assert p.profile.suite == "full" and p.profile.range_rate == 0.8
    init = [o for o in fixture_report.ops if o.predicted_ms is None]
    assert all(conf(o) == (None, None) for o in init)


def test_a_profile_without_stand_ins_or_domains_out_is_all_high():
    d = fixture_dict()
    d["laws"] = [x for x in d["laws"] if x["family"] != "*"]
    d["laws"].append({"family": "*", "precision": "float32", "placement": "xnnpack", "coefficients": {"1": 1.0},
                      "domain": {"macs": [0, 1e9], "flops": [0, 1e9], "bytes": [1, 1e9]}})
    d["laws"][0]["domain"] = {"macs": [1000, 1e6]}
    d["laws"][2]["domain"] = {"macs": [10, 1e6]}
    p = DeviceProfile.from_dict(d)
    r = predict(p)
    assert "low confidence: " in render(r, "table")
    # a law of its own for every op type, over a domain wide enough: nothing is low
    from tflite_flops.latency.profile import law_features

    static = analyze_model(CNN)
    own = {(o.op_type, "xnnpack" if o.xnnpack else "builtin") for o in static.ops if o.phase == "inference"}
    laws = tuple(Law(t, "float32", place, {"1": 1.0}, domain={f: (0.0, 1e12) for f in law_features(t) if f != "1"})
                 for t, place in sorted(own))
    clean = predict(dataclasses.replace(p, laws=laws))
    assert clean.prediction.low_confidence_ops == 0 and clean.prediction.low_confidence_ms == 0.0
    assert "confidence: no op predicted by a stand-in law or beyond 2x its law's fitted domain" in render(clean, "table")
    # every op without a law of its own is a stand-in (the generic law): only those are low
    low = {o.op_type for o in r.ops if conf(o)[0] == "low"}
    assert low == {"ADD", "MAX_POOL_2D", "CONCATENATION", "TRANSPOSE_CONV", "MEAN", "SOFTMAX"}
    assert all(conf(o)[1].startswith("stand-in: ") for o in r.ops if conf(o)[0] == "low")


# ---- what the profile records -----------------------------------------------------------------------------


def test_the_fit_records_the_domain_of_the_points_it_kept():
    rows = [Sample(OpFeatures("ADD", "float32", "xnnpack", {"1": 1.0, "in": float(n), "out": float(n // 2)}),
                   1.0 + 0.001 * n, 0.0) for n in (1000, 4000, 16000, 64000)]
    law = fit_law("ADD", "float32", "xnnpack", rows)
    # the binary group's features: 1, in, out, rows, act_out (no broadcast, no fused activation here: 0)
    assert law.domain == {"in": (1000.0, 64000.0), "out": (500.0, 32000.0), "rows": (0.0, 0.0), "act_out": (0.0, 0.0),
                          "elems_past_l2": (0.0, 0.0)}
    assert domain_of("ADD", rows) == law.domain
    assert RANGE_RATE == 0.8  # the 10% and 90% quantiles


def test_domain_suite_and_rate_round_trip_through_json(tmp_path):
    p = DeviceProfile.load(str(PREDICT_PROFILE))
    assert p.suite == "full" and p.range_rate == 0.8 and p.domains_known
    conv = next(law for law in p.laws if law.family == "CONV_2D")
    assert conv.domain == {"macs": (20000.0, 50000.0), "params": (100.0, 2000.0)}
    path = tmp_path / "p.json"
    p.save(str(path))
    assert DeviceProfile.load(str(path)) == p
    saved = json.loads(path.read_text())
    assert saved["suite"] == "full" and saved["range_rate"] == 0.8
    assert saved["laws"][0]["domain"] == {"macs": [20000.0, 50000.0], "params": [100.0, 2000.0]}
    assert "domain" not in saved["laws"][-1]  # a law without one writes none


def test_an_old_profile_without_domain_suite_or_rate_loads_and_says_so_once():
    d = fixture_dict()
    for key in ("suite", "range_rate"):
        del d[key]
    for x in d["laws"]:
        x.pop("domain", None)
    p = DeviceProfile.from_dict(d)
    assert p.suite == "" and p.range_rate is None and not p.domains_known
    r = predict(p)
    pr = r.prediction
    assert pr.flags == (STAND_IN_LAWS, DOMAINS_UNKNOWN)
    assert pr.profile.suite == "" and pr.profile.range_rate is None
    # own-law ops are "unknown", not "high"; the stand-ins stay low; no per-op note repeats the missing domain
    assert conf(r.ops[0]) == ("unknown", None) and conf(r.ops[3]) == ("low", "stand-in: generic law")
    assert pr.low_confidence_ops == 6
    text = render(r, "table")
    assert text.count("without fitted domains") == 1 and "suite not recorded" in text
    assert "(range " in text and "% range" not in text  # no rate claimed
    # an old --quick profile: its notes said so
    d["notes"] = ["575 single-op points, 575 timed models", "quick suite"]
    assert DeviceProfile.from_dict(d).suite == "quick"
    d["notes"], d["source"] = [], "import"
    assert DeviceProfile.from_dict(d).suite == "import"


@pytest.mark.parametrize("change, match", [
    (lambda d: d["laws"][0].update(domain={"macs": [5, 1]}), "domain"),
    (lambda d: d["laws"][0].update(domain={"macs": [1]}), "malformed"),
    (lambda d: d.update(range_rate=1.5), "range_rate"),
    (lambda d: d.update(range_rate="x"), "malformed"),
])
def test_a_bad_domain_or_rate_is_refused_in_one_line(change, match):
    d = fixture_dict()
    change(d)
    with pytest.raises(ProfileError, match=match):
        DeviceProfile.from_dict(d, where="p.json")


@pytest.mark.slow
def test_calibration_records_the_suite_the_rate_and_every_law_s_domain(tmp_path):
    import ai_edge_litert  # noqa: F401  (the points are written with its schema: CI fails, never skips)

    from tflite_flops.latency.calibrate import build_profile, calibrate
    from tflite_flops.latency.profile import Machine
    from tflite_flops.latency.suite import suite
    from tflite_flops.measure.runtime import RuntimeSettings

    points = [p for p in suite(quick=True) if p.id.startswith(("ADD-float32", "overhead"))]
    timed = []

    def fake_timer(blob, settings, quick):  # no runtime, no clock: a time from the model's size
        timed.append(1)
        return 12.0 + len(blob) % 7

    profile, _ = calibrate(str(tmp_path / "q.json"), RuntimeSettings(), quick=True, progress=False, timer=fake_timer,
                           points=points)
    assert profile.suite == "quick" and profile.range_rate == RANGE_RATE and timed
    assert all(law.domain for law in profile.laws)
    add = next(law for law in profile.laws if law.family == "ADD")
    assert set(add.domain) == {"in", "out", "rows", "act_out", "elems_past_l2"} and add.domain["in"][0] < add.domain["in"][1]
    assert DeviceProfile.load(str(tmp_path / "q.json")) == profile
    full, _ = calibrate(str(tmp_path / "f.json"), RuntimeSettings(), quick=False, progress=False, timer=fake_timer,
                        points=points)
    assert full.suite == "full"
    # an imported pack is fitted the same way (latency.pack.import_pack calls build_profile with "import")
    from tflite_flops.latency.calibrate import analyse
    from tflite_flops.latency.suite import build
    from tflite_flops.measure import runtimes

    fb = runtimes.schema_module("litert")
    analysed = [analyse(p, build(fb, p)) for p in points]
    imported = build_profile(analysed, {p.key: 12.0 + i % 5 for i, p in enumerate(points)},
                             Machine("phone", 8, "benchmark_model", "device", 1, True), "import")
    assert imported.suite == "import" and imported.range_rate == RANGE_RATE and all(law.domain for law in imported.laws)


# ---- every output ------------------------------------------------------------------------------------------


def _quick_forced() -> Report:
    """The render helpers' predicted report, predicted again with the fixture made a --quick profile and forced."""
    from tflite_flops.latency.predict import add_prediction
    from tflite_flops.reader.load import load_model

    p = dataclasses.replace(DeviceProfile.load(str(PREDICT_PROFILE)), suite="quick")
    model = load_model(str(CNN))
    base = analyze_model(CNN)
    return add_prediction(base, model, p, forced="device profile made at 4 thread(s), not 1")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_shows_confidence_rate_and_flags(fmt):
    r = _quick_forced()
    p = r.prediction
    assert p.flags == (QUICK_PROFILE, STAND_IN_LAWS, FOREIGN_PROFILE)
    text = render(r, fmt)
    if fmt == "json":
        d = json.loads(text)
        assert d["prediction"]["flags"] == ["quick_profile", "stand_in_laws", "foreign_profile"]
        assert d["prediction"]["low_confidence_ms"] == p.low_confidence_ms
        assert d["prediction"]["low_confidence_share"] == p.low_confidence_share
        assert d["prediction"]["profile"]["suite"] == "quick" and d["prediction"]["profile"]["range_rate"] == 0.8
        assert d["ops"][0]["prediction_confidence"] == "low"
        assert d["ops"][0]["prediction_note"] == "MACs 2.2x above the largest fitted"
        assert Report.from_json(text) == r  # the figures and flags round-trip
        return
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == len(r.ops)  # one row per op, no comment line
        assert rows[0]["prediction_confidence"] == "low" and rows[0]["prediction_note"].startswith("MACs 2.2x")
        assert rows[3]["prediction_note"] == "stand-in: generic law"
        assert rows[0]["prediction_flags"] == "quick_profile;stand_in_laws;foreign_profile"
        assert all(row["prediction_flags"] == "" for row, o in zip(rows, r.ops) if o.predicted_ms is None)
        return
    assert "80% range" in text
    assert f"{100 * p.low_confidence_share:.0f}% of the predicted time" in text
    assert f"rests on {p.low_confidence_ops} low-confidence op(s)" in text
    assert "quick profile (calibrate --quick)" in text and "foreign profile (--force)" in text
    assert "stand-in laws: 6 op(s)" in text and "(quick suite)" in text
    assert "MACs 2.2x above the largest fitted" in text  # the slowest predicted ops' confidence
    if fmt == "html":  # the flags stand out as alerts
        assert '<div class="alert prediction-flag">quick profile (calibrate --quick)' in text


@pytest.mark.slow
def test_the_cli_flags_a_quick_profile_forced_onto_another_configuration(tmp_path):
    import cli_process

    d = fixture_dict()
    d["suite"], d["machine"]["threads"] = "quick", 4
    path = tmp_path / "quick4.json"
    path.write_text(json.dumps(d))
    r = cli_process.run(["analyze", str(CNN), "--predict", str(path), "--force", "-f", "csv"])
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert rows[0]["prediction_flags"] == "quick_profile;stand_in_laws;foreign_profile"


def test_the_declared_confidence_columns_show_in_html_and_markdown():
    r = predicted_report()
    html = render(r, "html").split('id="ops-table"')[1]
    assert 'data-key="confidence">confidence</th>' in html and 'data-key="confidence_note">confidence note</th>' in html
    assert "| confidence |" in render(r, "md")


def test_a_report_without_a_prediction_has_no_confidence():
    r = analyze_model(CNN)
    for fmt in FORMATS:
        text = render(r, fmt)
        assert "confidence" not in text and "prediction_flags" not in text


# ---- sweep, batch, compare -----------------------------------------------------------------------------------


def test_sweep_batch_and_compare_carry_the_share_and_the_flags(tmp_path):
    from tflite_flops.render.batch import rows_csv, rows_json, rows_markdown, rows_table
    from tflite_flops.render.compare import render_comparison
    from tflite_flops.render.sweep import render_sweep
    from tflite_flops.report.compare import compare_reports
    from tflite_flops.studies.batch import BatchOptions, run_batch
    from tflite_flops.studies.sweep import sweep

    quick = dataclasses.replace(DeviceProfile.load(str(PREDICT_PROFILE)), suite="quick")
    result = sweep(SAMPLES / "fcn_dynamic.tflite", ["image=1x32x32x3", "image=1x64x64x3"], settings=Settings(predict=quick))
    small = result.points[0].prediction
    d = result.to_dict()["points"][0]["prediction"]
    assert d["flags"][0] == "quick_profile" and d["low_confidence_share"] == small.low_confidence_share
    assert d["range_rate"] == 0.8
    table = render_sweep(result, "table")
    assert "low conf." in table and f"{100 * small.low_confidence_share:.0f}%" in table
    assert "! prediction flags: quick profile" in table and "80% range" in table
    rows = list(csv.DictReader(io.StringIO(render_sweep(result, "csv"))))
    assert float(rows[0]["predicted_low_confidence_share"]) == small.low_confidence_share
    assert rows[0]["predicted_flags"].startswith("quick_profile")

    batch = run_batch([str(CNN)], BatchOptions(Settings(predict=quick)))
    (row,) = batch
    assert row["predicted_flags"] == "quick_profile;stand_in_laws" and row["predicted_low_confidence_share"] > 0
    assert json.loads(rows_json(batch))["models"][0]["predicted_flags"] == "quick_profile;stand_in_laws"
    assert "predicted_low_confidence_share,predicted_flags" in rows_csv(batch).splitlines()[0]
    share = f"{100 * row['predicted_low_confidence_share']:.0f}% low; quick profile; stand-in laws"
    assert share in rows_table(batch) and share in rows_markdown(batch)

    a, b = predict(quick), analyze_model(CNN)
    c = compare_reports(a, b)
    data = c.to_dict()
    assert data["totals"]["prediction.low_confidence_ms"]["a"] == a.prediction.low_confidence_ms
    assert data["a"]["prediction_flags"] == ["quick_profile", "stand_in_laws"] and "prediction_flags" not in data["b"]
    for fmt in ("table", "md", "html"):
        text = render_comparison(c, fmt)
        assert "quick profile (calibrate --quick)" in text and "low-confidence op(s)" in text
    rows = list(csv.DictReader(io.StringIO(render_comparison(c, "csv"))))
    assert any(row["key"] == "prediction.low_confidence_ms" for row in rows)
    (flags,) = [row for row in rows if row["section"] == "prediction"]
    assert (flags["a"], flags["b"]) == ("quick_profile;stand_in_laws", "")


def test_the_budget_line_says_the_range_rate():
    from tflite_flops.report.budget import check_budget

    r = predict(DeviceProfile.load(str(PREDICT_PROFILE)))
    (line,) = check_budget(r, max_predicted_ms=0.001)
    assert "(80% range " in line and math.isfinite(r.prediction.high_ms)
