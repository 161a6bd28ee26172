"""Hostile device profiles (issue 44), in-process and quick: every numeric field of the schema
(``PROFILE_SCHEMA``) against numbers out of its range, every string against control characters, wrong types,
the caps on size and depth, a prediction that cannot overflow, laws that predict nothing (a partial prediction,
never 0 ms), a drift factor past its range, and profile strings escaped where they are printed.
The CLI cases of the same classes are in ``tests/redteam_profiles.py`` (slow lane)."""

from __future__ import annotations

import copy
import json
import math
import platform
import re
import sys
from dataclasses import replace
from pathlib import Path

import cli_process
import pytest
from work_counter import count_calls

import tflite_flops
from tflite_flops.latency.predict import OP_US_MAX, op_times, predict_ops, usable
from tflite_flops.latency.profile import (DRIFT_FACTOR_MAX, LAWS_MAX, PROFILE_SCHEMA, DeviceProfile, Drift, Law,
                                          OpFeatures, ProfileError)

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "predict_profile.json"
CNN = str(ROOT / "sample_models" / "cnn_float.tflite")


def fixture() -> dict:
    return json.loads(FIXTURE.read_text())


# Where each schema field lives in the fixture: (a function that sets it to a value, the path the error names).
def _curve_row(k):
    def put(d, v):
        row = [1024, 0.001, 0.01, 0.1]
        row[k] = v
        d["cache_curve"] = [row]
    return put


PLACES = {
    "machine.cores": (lambda d, v: d["machine"].update(cores=v), "machine.cores"),
    "machine.threads": (lambda d, v: d["machine"].update(threads=v), "machine.threads"),
    "machine.caches.*": (lambda d, v: d["machine"].update(caches={"L3": v}), "machine.caches.L3"),
    "invoke_overhead_us": (lambda d, v: d.update(invoke_overhead_us=v), "invoke_overhead_us"),
    "partition_overhead_us": (lambda d, v: d.update(partition_overhead_us=v), "partition_overhead_us"),
    "laws[].coefficients.*": (lambda d, v: d["laws"][2]["coefficients"].update(macs=v), "laws[2].coefficients.macs"),
    "laws[].log_low": (lambda d, v: d["laws"][1].update(log_low=v, log_high=10), "laws[1].log_low"),
    "laws[].log_high": (lambda d, v: d["laws"][1].update(log_high=v, log_low=-10), "laws[1].log_high"),
    "laws[].points": (lambda d, v: d["laws"][0].update(points=v), "laws[0].points"),
    "laws[].median_abs_error": (lambda d, v: d["laws"][0].update(median_abs_error=v), "laws[0].median_abs_error"),
    "laws[].domain.*[]": (lambda d, v: d["laws"][0].update(domain={"macs": [0, v]}), "laws[0].domain.macs[1]"),
    "range_rate": (lambda d, v: d.update(range_rate=v), "range_rate"),
    **{f"cache_curve[][{k}]": (_curve_row(k), f"cache_curve[0][{k}]") for k in range(4)},
    "reference.*": (lambda d, v: d.update(reference={"x": v}), "reference.x"),
}


def test_every_numeric_field_of_the_schema_has_a_place_here():
    assert set(PLACES) == set(PROFILE_SCHEMA)


def _load(change) -> DeviceProfile:
    d = copy.deepcopy(fixture())
    change(d)
    return DeviceProfile.from_dict(json.loads(json.dumps(d)), where="p.json")


BAD = [10**400, -10**400, float("inf"), float("-inf"), float("nan"), 1e306, -1.0, 5e-324 * -1, "1", True, [1], {"a": 1}]


@pytest.mark.parametrize("field", sorted(PROFILE_SCHEMA))
def test_a_number_out_of_its_field_s_range_is_one_line_naming_file_field_and_range(field):
    bound, (put, path) = PROFILE_SCHEMA[field], PLACES[field]
    values = [v for v in BAD if isinstance(v, (str, bool, list, dict)) or not bound.holds(v)]
    values += [bound.hi * 10 + 1, bound.lo - 1] + ([2.5] if bound.integer else [])
    for value in values:
        with pytest.raises(ProfileError) as info:
            _load(lambda d: put(d, value))
        message = str(info.value)
        assert message.startswith(f"p.json: ") and f" {path} " in message, message
        assert bound.text() in message or "not true" in message, message
        assert "\n" not in message and len(message) < 400, message
    for value in (bound.lo, bound.hi) if not bound.open_ends else (bound.lo + 0.01, bound.hi - 0.01):
        _load(lambda d: put(d, value))  # the ends of the range load


STRINGS = {
    "machine.cpu": lambda d, v: d["machine"].update(cpu=v),
    "machine.system": lambda d, v: d["machine"].update(system=v),
    "machine.runtime": lambda d, v: d["machine"].update(runtime=v),
    "machine.runtime_version": lambda d, v: d["machine"].update(runtime_version=v),
    "machine.target": lambda d, v: d["machine"].update(target=v),
    "machine.caches key": lambda d, v: d["machine"].update(caches={v: 1}),
    "created": lambda d, v: d.update(created=v),
    "source": lambda d, v: d.update(source=v),
    "suite": lambda d, v: d.update(suite=v),
    "notes[0]": lambda d, v: d.update(notes=[v]),
    "laws[0].family": lambda d, v: d["laws"][0].update(family=v),
    "laws[0].precision": lambda d, v: d["laws"][0].update(precision=v),
    "laws[0].placement": lambda d, v: d["laws"][0].update(placement=v),
    "laws[0].coefficients key": lambda d, v: d["laws"][0].update(coefficients={v: 1.0}),
    "laws[0].domain key": lambda d, v: d["laws"][0].update(domain={v: [1, 2]}),
    "cache_curves key": lambda d, v: d.update(cache_curves={v: [[1, 0, 0, 0]]}),
    "reference key": lambda d, v: d.update(reference={v: 1.0}),
}


@pytest.mark.parametrize("path", sorted(STRINGS))
@pytest.mark.parametrize("value", ["x\nerror: forged", "\x1b[2Jx", "a\u202eb", "t\tab", "x" * 70_000, 5, None])
def test_a_string_field_with_a_control_character_a_wrong_type_or_too_long_is_refused(path, value):
    if value is None and path.endswith("key"):
        return  # a JSON key is always a string
    if value is None and path not in ("laws[0].family", "laws[0].precision", "laws[0].placement", "machine.cpu",
                                      "machine.runtime", "machine.runtime_version", "notes[0]"):
        _load(lambda d: STRINGS[path](d, value))  # an optional string may be null (absent)
        return
    if isinstance(value, int) and path.endswith("key"):
        return
    with pytest.raises(ProfileError, match=re.escape(path)) as info:
        _load(lambda d: STRINGS[path](d, value))
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value) and len(str(info.value)) < 400


@pytest.mark.parametrize("change, needle", [
    (lambda d: d.update(machine=[1]), "machine is a list, not an object"),
    (lambda d: d.update(laws={"a": 1}), "laws is an object, not a list"),
    (lambda d: d.update(laws=[3]), "laws[0] is an integer, not an object"),
    (lambda d: d["laws"][0].update(coefficients=[1, 2]), "laws[0].coefficients is a list, not an object"),
    (lambda d: d["laws"][0].pop("coefficients"), "laws[0].coefficients is missing"),
    (lambda d: d["machine"].update(xnnpack="false"), "machine.xnnpack is a string, not true or false"),
    (lambda d: d["machine"].update(xnnpack=1), "machine.xnnpack is an integer, not true or false"),
    (lambda d: d["machine"].pop("cores"), "machine.cores is missing"),
    (lambda d: d.update(notes="abc"), "notes is a string, not a list"),
    (lambda d: d.update(cache_curve=[[1, 2]]), "cache_curve[0] has 2 value(s)"),
    (lambda d: d.update(cache_curve=[[10, 0, 0, 0], [5, 0, 0, 0]]), "cache_curve[1][0] is 5, below the row before"),
    (lambda d: d["laws"][0].update(domain={"macs": [5, 1]}), "laws[0].domain.macs is [5, 1]"),
    (lambda d: d["laws"][0].update(domain={"macs": 3}), "laws[0].domain.macs is an integer, not a list"),
    (lambda d: d["laws"].append(dict(d["laws"][0])), "laws[6] is a second law for CONV_2D"),
    (lambda d: d.update(laws=d["laws"][:1] * (LAWS_MAX + 1)), "laws has 10,001 entries (at most 10,000)"),
    (lambda d: d.update(version=True), "device profile version true"),
])
def test_a_wrong_type_or_shape_is_one_line(change, needle):
    with pytest.raises(ProfileError, match=re.escape(needle)):
        _load(change)


def test_the_file_is_capped_its_digits_and_depth_bounded(tmp_path):
    big = tmp_path / "big.json"
    big.write_text(json.dumps({**fixture(), "notes": ["n" * 60_000] * 40}))
    with pytest.raises(ProfileError, match="larger than 2 MiB"):
        DeviceProfile.load(str(big))
    digits = tmp_path / "digits.json"
    digits.write_text(json.dumps(fixture()).replace('"cores": 2', '"cores": ' + "9" * 5000))
    with pytest.raises(ProfileError, match="not the device profile"):
        DeviceProfile.load(str(digits))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    with pytest.raises(ProfileError, match="nested too deeply"):
        DeviceProfile.load(str(deep))


@pytest.mark.slow
def test_reading_a_profile_is_linear_work():
    # a profile of 100 laws, then one of 1,000: about ten times the function calls, not a hundred
    def profile_of(n):
        d = fixture()
        law = d["laws"][0]
        d["laws"] = [{**law, "family": f"F{i}", "domain": {f"f{j}": [0, j] for j in range(20)}} for i in range(n)]
        return d

    small = count_calls(DeviceProfile.from_dict, profile_of(100), limit=2_000_000).calls
    large = count_calls(DeviceProfile.from_dict, profile_of(1000), limit=20_000_000).calls
    assert large < 12 * small, (small, large)


# ---- the prediction cannot overflow, and a law that predicts nothing leaves its ops out ------------------------


def test_an_op_time_past_the_bound_or_not_finite_is_not_predicted():
    law = Law("*", "float32", "xnnpack", {"1": 1.0, "macs": 1e6}, log_low=-10, log_high=10)
    small = OpFeatures("X", "float32", "xnnpack", {"1": 1.0, "macs": 10.0})
    assert op_times(law, small, 0.0, 1) is not None
    huge = OpFeatures("X", "float32", "xnnpack", {"1": 1.0, "macs": 1e300})
    assert op_times(law, huge, 0.0, 1) is None  # 1e306 µs (and e^10 times that) is past OP_US_MAX
    assert op_times(law, small, 0.0, 10**400) is None  # runs past a float: no OverflowError
    assert op_times(law, small, float("nan"), 1) is None
    assert op_times(law, OpFeatures("X", "float32", "xnnpack", {"1": 1.0, "macs": OP_US_MAX / 1e6 / 2e5}), 0.0,
                    1) is not None


def test_a_domain_end_near_zero_says_over_a_million_times_never_inf():
    from tflite_flops.latency.predict import out_of_domain

    law = Law("*", "float32", "xnnpack", {"1": 1.0}, domain={"macs": (5e-324, 5e-324), "out": (1e30, 1e30)})
    why = out_of_domain(law, OpFeatures("X", "float32", "xnnpack", {"macs": 1e300, "out": 5e-324}))
    assert why == "MACs over 1,000,000x above the largest fitted"
    why = out_of_domain(law, OpFeatures("X", "float32", "xnnpack", {"macs": 0.0, "out": 5e-324}))
    assert why == "output elements over 1,000,000x below the smallest fitted"


@pytest.mark.parametrize("coefficients", [{}, {"bogus": 1.0}, {"1": 0.0, "macs": 0.0}])
def test_a_law_without_a_usable_term_predicts_nothing_and_the_prediction_is_partial(coefficients):
    d = fixture()
    for law in d["laws"]:
        law["coefficients"] = coefficients
    profile = DeviceProfile.from_dict(d)
    assert not usable(profile.laws[0], OpFeatures("CONV_2D", "float32", "xnnpack", {"1": 1.0, "macs": 5.0}))
    report = tflite_flops.analyze(CNN, predict=profile, force=True)
    p = report.prediction
    assert not p.complete and "partial" in p.flags and sum(p.ops_not_predicted.values()) == 11
    assert all(o.predicted_ms in (None, 0.0) for o in report.ops) and p.ops_predicted == p.ops_fused
    from tflite_flops.report.budget import check_budget

    assert any("partial" in v for v in check_budget(report, max_predicted_ms=0.001))


def test_the_cli_budget_fails_on_a_partial_prediction(tmp_path):
    d = fixture()
    for law in d["laws"]:
        law["coefficients"] = {}
    (tmp_path / "p.json").write_text(json.dumps(d))
    r = cli_process.run(["analyze", CNN, "--force", "--predict", str(tmp_path / "p.json"), "--max-predicted-ms",
                         "0.001"], cwd=ROOT, timeout=120)
    assert r.returncode == 3, r.stderr
    assert "predicted_ms partial" in r.stdout + r.stderr
    assert "PARTIAL: 11 of 12 op(s) (92%) not predicted" in r.stdout


def test_predict_ops_sums_stay_finite_with_every_value_at_its_bound():
    from tflite_flops.report import OpRecord

    d = fixture()
    for law in d["laws"]:
        law.update(coefficients={k: 1e6 for k in ("1", "macs", "bytes", "out")}, log_low=-10, log_high=10)
    d.update(invoke_overhead_us=1e7, partition_overhead_us=1e7)
    profile = DeviceProfile.from_dict(d)
    ops = [OpRecord(subgraph=0, index=i, op_type="ADD", name="a", inputs=((1, 4),), outputs=((1, 4),),
                    macs=0, flops=4 * 10**i, params=0, bytes_read=10**(3 * i), bytes_written=0, status="ok",
                    formula="", executions=10**(5 * i))
           for i in range(80)]
    p = predict_ops(ops, profile, {})
    figures = [p.ops_ms, p.low_ms, p.high_ms, p.overhead_ms, *p.predicted_ms.values()]
    assert all(math.isfinite(v) for v in figures) and p.not_predicted


# ---- drift ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("factor", [1e300, float("inf"), float("nan"), 1e-9, DRIFT_FACTOR_MAX * 1.01])
def test_a_drift_factor_past_its_range_is_recorded_not_applied(factor):
    profile = DeviceProfile.load(str(FIXTURE))
    drifted = profile.drifted(Drift(True, factor=factor, reference_ms_then=1e-9, reference_ms_now=float("inf")))
    assert not drifted.drift.applied and "beyond" in drifted.drift.why
    assert drifted.laws == profile.laws and drifted.invoke_overhead_us == profile.invoke_overhead_us
    text = json.dumps(drifted.drift.to_dict(), allow_nan=False)  # raises on NaN or Infinity
    assert "beyond" in text
    assert profile.drifted(Drift(True, factor=2.0)).invoke_overhead_us == 2 * profile.invoke_overhead_us


# ---- profiles built in code, and profile strings where they are printed ----------------------------------------


def test_a_profile_built_in_code_is_checked_as_a_file_is():
    profile = DeviceProfile.load(str(FIXTURE))
    forged = replace(profile, machine=replace(profile.machine, cpu="x\nerror: forged"))
    with pytest.raises(ProfileError, match=r"machine\.cpu"):
        tflite_flops.analyze(CNN, predict=forged, force=True)
    huge = replace(profile, laws=tuple(replace(law, log_high=1000.0) for law in profile.laws))
    with pytest.raises(ProfileError, match=r"laws\[0\]\.log_high is 1000\.0, out of range"):
        tflite_flops.analyze(CNN, predict=huge, force=True)
    assert tflite_flops.analyze(CNN, predict=profile, force=True).prediction.complete
    from tflite_flops.errors import InputSpecError

    with pytest.raises(InputSpecError, match="predict: expected a DeviceProfile or the path of its JSON file, got dict"):
        tflite_flops.analyze(CNN, predict=fixture())


def test_profile_strings_in_a_saved_report_are_escaped_in_the_table():
    # a report read back (Report.from_json) was never checked as a profile: its strings are escaped where printed
    from tflite_flops import Report
    from tflite_flops.render.prediction import prediction_lines

    report = tflite_flops.analyze(CNN, predict=str(FIXTURE), force=True)
    d = json.loads(report.to_json())
    d["prediction"]["profile"]["cpu"] = "x\nerror: forged\x1b[2J"
    d["prediction"]["ops_not_predicted"] = {"EVIL\nerror: y": 1}
    d["prediction"]["complete"] = False
    lines = prediction_lines(Report.from_json(json.dumps(d)))
    assert not any("\n" in line or "\x1b" in line for line in lines), lines
    assert any("x\\nerror: forged\\x1b[2J" in line for line in lines)


# ---- a short coverage-guided run of the profile harness ---------------------------------------------------------


@pytest.mark.slow  # ~15 s: 300 seeded inputs of fuzz/fuzz_profile.py (libFuzzer via atheris)
@pytest.mark.skipif(platform.machine() != "x86_64" or not sys.platform.startswith("linux"),
                    reason="atheris (the test extra) has wheels for Linux x86-64 only")
def test_a_short_coverage_guided_fuzz_run_of_the_profile_reader_finds_nothing(tmp_path):
    import atheris  # noqa: F401 - in the test extra on Linux x86-64

    from fuzz_corpus import run_atheris

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "fixture").write_bytes(FIXTURE.read_bytes())
    for i in range(8):
        (corpus / f"seed{i}").write_bytes(bytes(range(i * 31 % 256, 256))[:64])
    run_atheris("fuzz_profile.py", corpus, 300, tmp_path)
