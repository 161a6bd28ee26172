"""``calibrate --from-results`` (issue 43 part 8): a device profile fitted from whole-model times on a base
profile's laws, read from untrusted result files.

The fit is checked against a device made up here: each model's "measured" time is the base's split by class
(computed through the profile, :func:`tflite_flops.latency.results._base_split`) times known factors. The fit must
find those factors, and the profile it writes must predict, through ``analyze --predict``, the time the fit claims.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tflite_flops.cli import main
from tflite_flops.errors import ModelFormatError
from tflite_flops.latency import results as R
from tflite_flops.latency.profile import DeviceProfile
from tflite_flops.report.prediction import WHOLE_MODEL_FIT
from tflite_flops.settings import Settings, Target

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
BASE = Path(__file__).resolve().parent / "fixtures" / "predict_profile.json"
MODELS = ("cnn_float.tflite", "lstm.tflite", "tiny_decoder.tflite", "tiny_decoder_kv.tflite", "transformer_block.tflite",
          "mlp_dynamic_batch.tflite", "fcn_dynamic.tflite")
TRUE = {"gemm float": 0.5, "depthwise float": 0.8, "elementwise float": 1.5, "data float": 1.2, "overhead": 2.0}
TARGET = "arm-i8mm"


@pytest.fixture(scope="module")
def splits():
    base = DeviceProfile.load(str(BASE))
    at = replace(base, machine=replace(base.machine, target=TARGET))
    settings = Settings(target=Target(xnnpack=TARGET))
    return {m: R._base_split(str(SAMPLES / m), at, settings)[0] for m in MODELS}


def _device_ms(split):
    return sum(TRUE.get(c, 1.0) * v for c, v in split.items())


@pytest.fixture(scope="module")
def results_file(splits, tmp_path_factory):
    path = tmp_path_factory.mktemp("results") / "results.jsonl"
    rows = []
    for m, split in splits.items():
        ms = _device_ms(split)
        rows.append({"file": m, "device": "Phone X", "accelerator": "cpu", "runtime_version": "2.2.0",
                     "latency_ms": {"median": ms, "min": ms * 0.9, "max": ms * 1.2}, "nodes_total": 12})
        rows.append({"file": m, "device": "Phone X", "accelerator": "gpu", "latency_ms": {"median": ms / 3}})
        rows.append({"file": m, "device": "Other phone", "accelerator": "cpu", "latency_ms": {"median": ms * 5}})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.slow
def test_the_split_adds_up_to_the_base_prediction(splits):
    """The classes' milliseconds add up to the base profile's whole-model prediction (nothing lost, nothing twice)."""
    import tflite_flops

    base = DeviceProfile.load(str(BASE))
    at = replace(base, machine=replace(base.machine, target=TARGET))
    for m, split in splits.items():
        p = tflite_flops.analyze(str(SAMPLES / m), predict=at, force=True).prediction
        assert sum(split.values()) == pytest.approx(p.latency_ms, rel=1e-9), m
        assert set(split) <= set(R.CLASSES)


@pytest.mark.slow
def test_the_fit_finds_the_device_factors_and_its_profile_predicts_what_it_claims(results_file, tmp_path, splits,
                                                                                  capsys):
    out = tmp_path / "phone.json"
    assert main(["calibrate", "--from-results", str(results_file), "--device", "Phone X", "--models", str(SAMPLES),
                 "--base", str(BASE), "--target", TARGET, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"Phone X ({TARGET}), fitted from {len(MODELS)} whole-model times" in printed
    # left out, cnn_float's depthwise time is nobody else's: its class falls back to the common factor
    got = re.search(r"(\d+) of (\d+) within ±10%, median signed [^;]+; one scale: (\d+) of", printed)
    assert got and int(got[2]) == len(MODELS) and int(got[1]) >= len(MODELS) - 1 and int(got[3]) < int(got[1])
    assert "cnn_float.tflite" in printed and "12 / 12" in printed and "5 / 12  (differs)" in printed
    assert "! factors that rest on one model (leaving it out cannot check them): depthwise float" in printed
    phone = DeviceProfile.load(str(out))
    assert phone.source == R.SOURCE and phone.machine.target == TARGET and phone.machine.runtime_version == "2.2.0"
    # the classes the models exercise get their factor back (every model's time is exactly their sum), within the
    # pull towards the common factor the leave-one-out chose (exact without it: test_leave_one_out...)
    by_class = {R.law_class(law): law for law in phone.laws}
    base = {law.key: law for law in DeviceProfile.load(str(BASE)).laws}
    for c in ("gemm float", "depthwise float"):  # the classes most of the time is in
        f = TRUE[c]
        law = by_class[c]
        k, v = next(iter(law.coefficients.items()))
        assert v == pytest.approx(f * base[law.key].coefficients[k], rel=0.1), c
    assert phone.invoke_overhead_us / DeviceProfile.load(str(BASE)).invoke_overhead_us == pytest.approx(2.0, rel=0.05)
    # analyze --predict with the profile gives the device's time, flagged as a whole-model fit
    import tflite_flops

    for m in ("cnn_float.tflite", "lstm.tflite"):
        r = tflite_flops.analyze(str(SAMPLES / m), predict=str(out))
        assert r.prediction.latency_ms == pytest.approx(_device_ms(splits[m]), rel=0.02)
        assert WHOLE_MODEL_FIT in r.prediction.flags
    assert main(["analyze", str(SAMPLES / "cnn_float.tflite"), "--predict", str(out), "--target", "x86-avx2"]) == 2
    assert "contradicts the profile" in capsys.readouterr().err


def test_leave_one_out_predicts_each_row_from_the_others_alone():
    rng = np.random.default_rng(7)
    t = rng.uniform(0.1, 2.0, size=(9, 3))
    f = np.array([0.5, 1.5, 1.0])
    y = t @ f * rng.uniform(0.97, 1.03, size=9)
    by_class, by_scale = R.leave_one_out(t, y)
    for i in (0, 4, 8):
        keep = np.arange(9) != i
        lam = R.choose_lambda(t[keep], y[keep])
        assert by_class[i] == pytest.approx(float(t[i] @ R.fit_factors(t[keep], y[keep], lam)))
        assert by_scale[i] == pytest.approx(float(t[i].sum() * R.one_scale(t[keep], y[keep])))
    assert R.within(by_class, y) > R.within(by_scale, y)
    exact = t @ f
    assert R.fit_factors(t, exact, 1e-12) == pytest.approx(f, rel=1e-6)
    # a class no row exercises keeps the one-scale factor
    t0 = np.hstack([t, np.zeros((9, 1))])
    assert R.fit_factors(t0, y, 1.0)[-1] == pytest.approx(R.one_scale(t0, y))


def _rows(tmp_path, *rows, name="r.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return str(path)


def _row(**kw):
    row = {"file": "cnn_float.tflite", "device": "Phone X", "accelerator": "cpu", "latency_ms": {"median": 1.5}}
    row.update(kw)
    return row


@pytest.mark.parametrize("row, needle", [
    (_row(latency_ms={"median": float("nan")}), "not valid JSON"),
    (_row(latency_ms={"median": -1.0}), "latency_ms.median is not a time"),
    (_row(latency_ms={"median": 0}), "a whole model's time is above 0"),
    (_row(latency_ms={"median": 2.0, "min": 3.0}), "inconsistent statistics"),
    (_row(latency_ms={"median": int("9" * 400)}), "latency_ms.median is not a time"),
    (_row(latency_ms={"avg": 1.0, "p95": 0.5, "p5": 0.7}), "inconsistent statistics"),
    (_row(file="../../etc/passwd\n"), "file is not a file name"),
    (_row(file=".."), "file is not a file name"),
    (_row(file=7), "file is not a file name"),
    (_row(device=None), "device is missing"),
    (_row(latency_ms=[1.0]), "latency_ms is missing or not an object"),
    (_row(nodes_total=-3), "nodes_total is not a count"),
    ('{"latency_ms": ' * 40 + "1" + "}" * 40, "nests more than"),
    ("[1, 2]", "not a result row"),
])
def test_a_hostile_row_is_one_line_naming_the_file_line_and_field(tmp_path, row, needle):
    path = _rows(tmp_path, _row(file="x.tflite"), row)
    with pytest.raises(ModelFormatError, match=None) as exc:
        R.read_results([path])
    assert needle in str(exc.value) and f"{path}:2" in str(exc.value) and "\n" not in str(exc.value)


def test_devices_rows_and_logs(tmp_path):
    path = _rows(tmp_path, _row(), _row(device="B"), _row(accelerator="gpu", file="y.tflite"),
                 _row(file="z.tflite", status="failed", latency_ms=None))
    with pytest.raises(ModelFormatError, match=r"rows of 2 devices \(B, Phone X\): name one with --device"):
        R.read_results([path])
    device, got = R.read_results([path], "Phone X")
    assert device == "Phone X" and [(r.file, r.ms) for r in got] == [("cnn_float.tflite", 1.5)]
    # a path keeps its last part: the model is looked up inside --models DIR, never outside it
    away = _rows(tmp_path, _row(file="../../etc/x.tflite"), _row(file="/data/local/tmp/y.tflite"), name="away.jsonl")
    assert [r.file for r in R.read_results([away])[1]] == ["x.tflite", "y.tflite"]
    with pytest.raises(ModelFormatError, match="no cpu row of the device 'C'"):
        R.read_results([path], "C")
    twice = _rows(tmp_path, _row(), _row(), name="twice.jsonl")
    with pytest.raises(ModelFormatError, match="cnn_float.tflite of Phone X again"):
        R.read_results([twice])
    # a benchmark_model log names its model (the phone's path: its base name is kept), not its device
    log = str(Path(__file__).resolve().parent / "fixtures" / "phone" / "benchmark_model_cnn_float.log")
    with pytest.raises(ModelFormatError, match="pass --device NAME"):
        R.read_results([log])
    device, got = R.read_results([log], "Pixel")
    assert got[0].file == "cnn_float.tflite" and got[0].ms == pytest.approx(1.355)


def test_the_command_refuses_what_it_cannot_fit(tmp_path, capsys):
    one = _rows(tmp_path, _row(), _row(file="missing.tflite"))
    base = ["calibrate", "--from-results", one, "-o", str(tmp_path / "p.json")]
    assert main(base) == 2
    assert "needs --models DIR" in capsys.readouterr().err
    assert main([*base, "--models", str(SAMPLES), "--base", str(BASE), "--target", "z80"]) == 2
    assert "not a CPU target" in capsys.readouterr().err
    assert main([*base, "--models", str(SAMPLES), "--base", str(BASE), "--quick", "--threads", "4"]) == 2
    assert "--quick, --threads: not read by --from-results" in capsys.readouterr().err
    assert main(["calibrate", "--import", str(tmp_path), "--base", str(BASE)]) == 2
    assert "--base: only read with --from-results" in capsys.readouterr().err
    assert main([*base, "--models", str(SAMPLES), "--base", str(BASE)]) == 1
    err = capsys.readouterr().err
    assert "1 of 2 models could be fitted; at least 3 are needed (missing.tflite: not in" in err
    assert not (tmp_path / "p.json").exists()
