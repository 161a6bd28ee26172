"""Predictions wherever the tool reports a time: every signature with its token figures, ``batch``,
the KV-length sweep and the ``--max-predicted-ms`` budget gate.

The profile is built by hand: one generic law per placement, ``t = 0.001 µs × MACs`` (no constant), plus
the profile's 10 µs per invoke and 3 µs per XNNPACK partition run. A prediction is then
``(0.001 · MACs + 10 + 3 · partitions) µs``, with MACs derived by hand in tests/test_generative.py and
tests/test_kv_sweep.py, and the range ``[0.9, 1.25] ×`` the ops' part (the laws' residual quantiles).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

import cli_process
from lanes import slow_cases
from profile_helpers import installed_version
import tflite_flops
from tflite_flops.latency.profile import DeviceProfile, Law, Machine
from tflite_flops.render import render
from tflite_flops.report import LatencyStats, Report
from tflite_flops.report.budget import check_budget
from tflite_flops.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
DECODER = SAMPLES / "tiny_decoder.tflite"
KV_MODEL = SAMPLES / "tiny_decoder_kv.tflite"
PREFILL_MACS, DECODE_MACS = 1_572_864, 98_304  # tests/test_generative.py: 16·98,304 and 98,304
US_PER_MAC = 0.001
INVOKE_US, PARTITION_US = 10.0, 3.0


def macs_profile() -> DeviceProfile:
    laws = tuple(Law("*", "float32", place, {"macs": US_PER_MAC}, log_low=math.log(0.9), log_high=math.log(1.25),
                     points=10) for place in ("xnnpack", "builtin"))
    machine = Machine("test cpu", 2, "ai_edge_litert", installed_version(), 1, True)
    return DeviceProfile(machine, laws, invoke_overhead_us=INVOKE_US, partition_overhead_us=PARTITION_US,
                         created="2026-11-27T00:00:00+00:00", source="calibrate")


def expected_ms(macs: int, partitions: int) -> float:
    return (US_PER_MAC * macs + INVOKE_US + PARTITION_US * partitions) / 1000


@pytest.fixture(scope="module")
def signatures() -> Report:
    return tflite_flops.analyze(DECODER, all_signatures=True, predict=macs_profile())


def _partitions(key: str) -> int:
    """XNNPACK's DELEGATE nodes in the subgraph of one signature (the placement pass, docs/placement.md): a
    call runs that subgraph only, so it pays for its partitions, not for those of the other signatures'."""
    report = tflite_flops.analyze(DECODER, signature=key)
    entry = {"prefill": 1, "decode": 0}[key]
    assert {o.subgraph for o in report.ops if o.phase == "inference"} == {entry}
    return report.delegation["xnnpack"].partitions_by_subgraph[str(entry)]


# ---- signatures ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_signature_has_its_own_prediction(signatures):
    pre, dec = signatures.signatures["prefill"], signatures.signatures["decode"]
    assert _partitions("prefill") == _partitions("decode") == 3
    # prefill: 0.001 · 1,572,864 = 1,572.864 µs + 10 + 3·3 = 1,591.864 µs
    assert pre.prediction.latency_ms == pytest.approx(expected_ms(PREFILL_MACS, 3)) == pytest.approx(1.591864)
    # decode: 0.001 · 98,304 = 98.304 µs + 19 = 117.304 µs
    assert dec.prediction.latency_ms == pytest.approx(expected_ms(DECODE_MACS, 3)) == pytest.approx(0.117304)
    assert pre.prediction.complete and dec.prediction.complete
    # the range: the ops' part × 0.9 and × 1.25, the overheads as they are: 0.9·98.304 + 19 = 107.4736 µs
    assert dec.prediction.low_ms == pytest.approx((0.9 * 98.304 + 19) / 1000)
    assert dec.prediction.high_ms == pytest.approx((1.25 * 98.304 + 19) / 1000)  # 141.88 µs
    # each signature is predicted at its own shapes: the same as analysing that signature alone
    alone = tflite_flops.analyze(DECODER, signature="prefill", predict=macs_profile())
    assert alone.prediction == pre.prediction


def test_predicted_token_figures(signatures):
    pre, dec = signatures.signatures["prefill"].tokens, signatures.signatures["decode"].tokens
    # the measured figures' rules (measure/tokens.py) on the predicted call time:
    # prefill 16 tokens / 1.591864 ms = 10,051.1 tokens/s; time to first token = one prefill call
    assert pre.predicted_tokens_per_s == pytest.approx(16 / 1.591864e-3)
    assert pre.predicted_time_to_first_token_ms == pytest.approx(1.591864)
    # decode 1 token / 0.117304 ms = 8,524.9 tokens/s; no time to first token
    assert dec.predicted_tokens_per_s == pytest.approx(1 / 0.117304e-3)
    assert dec.predicted_latency_ms == pytest.approx(0.117304) and dec.predicted_time_to_first_token_ms is None
    # nothing measured: the measured fields stay empty
    assert pre.tokens_per_s is None and pre.latency_ms is None


def test_signature_predictions_in_json_and_back(signatures):
    d = json.loads(signatures.to_json())
    sig = d["signatures"]["decode"]
    assert sig["prediction"]["latency_ms"] == pytest.approx(0.117304)
    assert sig["tokens"]["predicted_tokens_per_s"] == pytest.approx(1 / 0.117304e-3)
    assert Report.from_json(signatures.to_json()) == signatures
    plain = json.loads(tflite_flops.analyze(DECODER, all_signatures=True).to_json())["signatures"]["decode"]
    assert "prediction" not in plain and not any(k.startswith("predicted") for k in plain["tokens"])


@pytest.mark.parametrize("fmt", slow_cases(["table", "md", "html"], {"html"}))
def test_signature_predictions_rendered(signatures, fmt):
    text = render(signatures, fmt)
    assert "predicted tokens/s" in text and "8,524.9" in text and "10,051.1" in text
    assert "time to first token 1.592 ms" in text
    assert "predicted tokens/s" not in render(tflite_flops.analyze(DECODER, all_signatures=True), fmt)


def test_predicted_against_measured_per_signature(signatures):
    # a measured median of 0.1 ms for decode (as measure_signatures would set it): the prediction
    # 0.117304 ms is (0.117304 - 0.1) / 0.1 = +17.3 % off
    sig = signatures.signatures["decode"]
    timed = dataclasses.replace(sig, latency=LatencyStats(runtime="litert", median_ms=0.1))
    report = dataclasses.replace(signatures, signatures={**signatures.signatures, "decode": timed})
    text = render(report, "table")
    assert "measured 0.100 ms: prediction +17.3%" in text
    assert "error" in text.splitlines()[[i for i, line in enumerate(text.splitlines()) if "Signatures" in line][0] + 1]


@pytest.mark.slow
def test_cli_all_signatures_predict(tmp_path):
    path = tmp_path / "p.json"
    macs_profile().save(str(path))
    r = cli_process.run(["analyze", str(DECODER), "--all-signatures", "--predict", str(path), "-f", "json"])
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["signatures"]["prefill"]["tokens"]["predicted_time_to_first_token_ms"] == pytest.approx(1.591864)


# ---- batch -----------------------------------------------------------------------------------------


def _batch(tmp_path, options_predict=True):
    from tflite_flops.studies.batch import BatchOptions, run_batch

    (tmp_path / "broken.tflite").write_bytes(b"not a model")
    paths = [str(DECODER), str(tmp_path / "broken.tflite"), str(SAMPLES / "cnn_float.tflite")]
    return run_batch(paths, BatchOptions(Settings(predict=macs_profile() if options_predict else None)))


def test_batch_predicts_every_model(tmp_path):
    from tflite_flops.render.batch import rows_csv, rows_json, rows_table

    rows = _batch(tmp_path)
    dec, broken, cnn = rows
    # the decoder's entry (subgraph 0, the decode step at its stored shapes): 117.304 µs as above
    assert dec["predicted_ms"] == pytest.approx(expected_ms(DECODE_MACS, 3))
    assert dec["predicted_low_ms"] < dec["predicted_ms"] < dec["predicted_high_ms"]
    assert broken["status"] == "error" and "predicted_ms" not in broken  # a failure stays one row
    assert cnn["status"] == "ok" and cnn["predicted_ms"] > 0
    assert rows_csv(rows).splitlines()[0].endswith(",seconds,predicted_ms,predicted_low_ms,predicted_high_ms,"
                                                   "predicted_low_confidence_share,predicted_flags")
    assert json.loads(rows_json(rows))["models"][1]["predicted_ms"] is None
    table = rows_table(rows)
    assert "predicted ms" in table and f"{dec['predicted_ms']:.3f}" in table
    plain = _batch(tmp_path, options_predict=False)
    assert "predicted" not in rows_csv(plain) + rows_table(plain) + rows_json(plain)


def test_batch_prediction_failure_is_that_models_row(tmp_path, monkeypatch):
    # a prediction that fails on one model (here forced to) makes that row an error, the others go on
    from tflite_flops.errors import InputSpecError
    from tflite_flops.latency import predict as run_module  # analysis.run imports add_prediction when predicting

    real = run_module.add_prediction

    def failing(report, model, profile, forced=None, config=None):
        if model.path and model.path.endswith("cnn_float.tflite"):
            raise InputSpecError("no prediction for this one")
        return real(report, model, profile, forced, config)

    monkeypatch.setattr(run_module, "add_prediction", failing)
    dec, broken, cnn = _batch(tmp_path)
    assert cnn["status"] == "error" and cnn["error"] == "no prediction for this one"
    assert dec["predicted_ms"] == pytest.approx(expected_ms(DECODE_MACS, 3))


def test_cli_batch_refuses_a_foreign_profile_with_one_line(tmp_path):
    path = tmp_path / "p.json"
    dataclasses.replace(macs_profile(), machine=dataclasses.replace(macs_profile().machine, threads=4)).save(str(path))
    r = cli_process.run(["batch", str(DECODER), "--predict", str(path), "-f", "csv"])
    assert r.returncode == 1 and r.stdout == "" and r.stderr.strip().count("\n") == 0
    assert r.stderr.startswith("error: device profile made at 4 thread(s)")
    r = cli_process.run(["batch", str(DECODER), "--predict", str(path), "--threads", "4", "-f", "csv", "-j", "1"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].endswith("predicted_high_ms,predicted_low_confidence_share,predicted_flags")


# ---- KV sweep --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_kv_sweep_predicts_the_decode_step_per_length():
    from tflite_flops.render.sweep import render_sweep
    from tflite_flops.studies.kv_sweep import kv_sweep

    result = kv_sweep(KV_MODEL, [32, 64, 128], settings=Settings(predict=macs_profile()))
    got = [p.prediction.latency_ms for p in result.points]
    parts = [p.prediction.partitions for p in result.points]
    # MACs 81,920 + 256·S (tests/test_kv_sweep.py): 90,112, 98,304, 114,688 at S = 32, 64, 128;
    # at 3 partitions each: 109.112, 117.304, 133.688 µs
    assert parts == [3, 3, 3]
    assert got == pytest.approx([expected_ms(81_920 + 256 * s, 3) for s in (32, 64, 128)])
    assert got == pytest.approx([0.109112, 0.117304, 0.133688])
    # the attention's share of the step grows by 0.001 · 256 = 0.256 µs per cache slot
    assert (got[2] - got[0]) / (128 - 32) == pytest.approx(0.256e-3)
    assert "predicted ms" in render_sweep(result) and "0.134" in render_sweep(result)


@pytest.mark.slow
def test_cli_kv_sweep_predict(tmp_path):
    path = tmp_path / "p.json"
    macs_profile().save(str(path))
    r = cli_process.run(["sweep", str(KV_MODEL), "--kv-length", "32,64", "--predict", str(path), "-f", "json"],
                        cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert [p["prediction"]["latency_ms"] for p in json.loads(r.stdout)["points"]] == pytest.approx(
        [0.109112, 0.117304])


# ---- budget ----------------------------------------------------------------------------------------


def test_budget_gates_the_point_estimate(signatures):
    # the whole model (subgraph 0, the decode step): 0.117304 ms, range 0.107474 – 0.141880 ms
    assert check_budget(signatures, max_predicted_ms=0.12) == []  # the point is within, the high end is not
    assert check_budget(signatures, max_predicted_ms=0.1) == [
        "predicted_ms 0.117 > 0.1 (range 0.107 – 0.142 ms)"]
    assert check_budget(tflite_flops.analyze(DECODER), max_predicted_ms="0.2ms") == [
        "predicted_ms not predicted (limit 0.2 ms; run with --predict PROFILE)"]
    partial = dataclasses.replace(signatures, prediction=dataclasses.replace(
        signatures.prediction, complete=False, ops_not_predicted={"CUSTOM": 2}))
    assert check_budget(partial, max_predicted_ms=10) == [
        "predicted_ms partial: 0.117 ms leaves out op(s) the profile has no law for (CUSTOM ×2); "
        "it cannot be shown to be within 10 ms"]


@pytest.mark.slow
def test_cli_budget_gate(tmp_path):
    path = tmp_path / "p.json"
    macs_profile().save(str(path))
    base = ["analyze", str(DECODER), "--predict", str(path), "-f", "json"]
    assert cli_process.run(base + ["--max-predicted-ms", "0.12"]).returncode == 0
    r = cli_process.run(base + ["--max-predicted-ms", "0.1"])
    assert r.returncode == 3 and "budget exceeded: predicted_ms 0.117 > 0.1" in r.stderr
    budget = tmp_path / "budget.toml"
    budget.write_text("[budget]\nmax_predicted_ms = 0.1\n")
    assert cli_process.run(base + ["--budget", str(budget)]).returncode == 3
    r = cli_process.run(["analyze", str(DECODER), "--budget", str(budget)])
    assert r.returncode == 2 and r.stdout == "" and r.stderr.strip().count("\n") == 0
    assert "give the device profile with --predict" in r.stderr


@pytest.mark.runtime
@pytest.mark.slow
def test_cli_signatures_predicted_against_measured(tmp_path):
    # --latency times every signature with the runner; each prediction sits next to its measured median,
    # with the error (predicted - measured) / measured (the values depend on the machine: only the form)
    path = tmp_path / "p.json"
    macs_profile().save(str(path))
    r = cli_process.run(["analyze", str(DECODER), "--all-signatures", "--latency", "--runs", "3", "--warmup", "1",
                         "--predict", str(path), "-f", "json"], timeout=300)
    assert r.returncode == 0, r.stderr
    d = Report.from_json(r.stdout)
    for key in ("prefill", "decode"):
        sig = d.signatures[key]
        assert sig.latency.median_ms > 0 and sig.prediction.latency_ms == sig.tokens.predicted_latency_ms
        line = next(x for x in render(d, "table").splitlines() if f"predicted {sig.tokens.role} '{key}'" in x)
        error = 100 * (sig.prediction.latency_ms - sig.latency.median_ms) / sig.latency.median_ms
        assert f"measured {sig.latency.median_ms:.3f} ms: prediction {error:+.1f}%" in line
