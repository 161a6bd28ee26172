"""Budget gate: check_budget(report, ...), the --max-* / --budget options and exit code 3."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from render_helpers import LATENCY, sample_report
from tflite_flops.report.budget import (add_budget_arguments, budget_exit_code, budget_limits, check_budget,
                                        load_budget_file)
from tflite_flops.errors import InputSpecError
from tflite_flops.report import LatencyStats


@pytest.fixture(scope="module")
def report():
    return sample_report("cnn_float.tflite")


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_budget_arguments(p)
    return p.parse_args(list(argv))


def test_limits_at_and_over_the_totals(report):
    t = report.totals
    assert check_budget(report, max_macs=t.macs, max_flops=t.flops, max_params=t.params) == []  # equal is in budget
    out = check_budget(report, max_macs=t.macs - 1, max_flops=t.flops - 1, max_params=t.params - 1)
    assert [v.split()[0] for v in out] == ["macs", "flops", "params"]
    assert check_budget(report, max_macs=t.macs - 1) == out[:1]


def test_suffixes_and_messages(report):
    # cnn_float: 397,392 MACs
    assert check_budget(report, max_macs="100K") == ["macs 397.4 K > 100 K"]
    assert check_budget(report, max_macs="0.4M") == []
    assert check_budget(report, max_flops="1G", max_params="3.8k") == ["params 3.832 K > 3.8 K"]
    with pytest.raises(InputSpecError):
        check_budget(report, max_macs="lots")
    with pytest.raises(InputSpecError):
        check_budget(report, max_params=-1)


def test_latency_limit(report):
    assert check_budget(report, max_latency_ms=5) == ["latency_ms not measured (limit 5 ms; run with --latency)"]
    timed = report.with_latency(LatencyStats(**LATENCY), None)  # median 0.2 ms
    assert check_budget(timed, max_latency_ms=0.25) == []
    assert check_budget(timed, max_latency_ms="0.1") == ["latency_ms 0.200 > 0.1"]


def test_budget_file_toml(tmp_path, report):
    f = tmp_path / "budget.toml"
    f.write_text('# deployment limits\n[budget]\nmax_macs = "300K"\nmax_flops = 2e6\nparams = 10_000\n'
                 "max_latency_ms = 12.5\n")
    assert load_budget_file(str(f)) == {"max_macs": 300_000, "max_flops": 2_000_000, "max_params": 10_000,
                                        "max_latency_ms": 12.5}
    top = tmp_path / "top.toml"
    top.write_text("max_macs = 1000000\n")
    assert load_budget_file(str(top)) == {"max_macs": 1_000_000}
    bad = tmp_path / "bad.toml"
    bad.write_text("max_watts = 3\n")
    with pytest.raises(InputSpecError, match="unknown key"):
        load_budget_file(str(bad))
    broken = tmp_path / "broken.toml"
    broken.write_text("max_macs = = 3\n")
    with pytest.raises(InputSpecError):
        load_budget_file(str(broken))
    with pytest.raises(InputSpecError, match="cannot read"):
        load_budget_file(str(tmp_path / "missing.toml"))


def test_invalid_toml_is_one_line(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text('[budget]\nmax_macs = "300M"\nmax_macs: 3\n')
    with pytest.raises(InputSpecError, match=r"b\.toml: invalid TOML \(.*line 3") as exc:
        load_budget_file(str(f))
    assert "\n" not in str(exc.value)


def test_options_override_the_file(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text('max_macs = "1M"\nmax_params = "5K"\n')
    args = _args("--budget", str(f), "--max-macs", "250K", "--max-latency-ms", "15")
    assert budget_limits(args) == {"max_macs": 250_000, "max_params": 5_000, "max_latency_ms": 15.0}


def test_bad_option_values_are_usage_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        _args("--max-macs", "12Q")
    assert exc.value.code == 2 and "12Q" in capsys.readouterr().err


def test_budget_exit_code(report, capsys):
    assert budget_exit_code(report, _args("--max-macs", "100K", "--max-flops", "100K")) == 3
    err = capsys.readouterr().err.splitlines()
    assert err == ["budget exceeded: macs 397.4 K > 100 K", "budget exceeded: flops 829.2 K > 100 K"]
    assert budget_exit_code(report, _args("--max-macs", "400K")) == 0
    assert capsys.readouterr().err == ""
    assert budget_exit_code(report, _args()) == 0


# ---- MobileNetV2 (about 300 M MACs) ------------------------------------------------------------


@pytest.fixture(scope="module")
def mobilenet_v2(tmp_path_factory):
    """MobileNetV2 at 224×224 (random weights), converted once; the file stays in a temp dir."""
    import tensorflow as tf

    from tflite_flops.convert import to_tflite

    model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    path = tmp_path_factory.mktemp("mnv2") / "mobilenet_v2.tflite"
    path.write_bytes(to_tflite(model))
    return path


@pytest.mark.tf
def test_mobilenet_v2_budget(mobilenet_v2):
    import tflite_flops

    report = tflite_flops.analyze(mobilenet_v2)
    assert 290e6 < report.totals.macs < 310e6
    assert check_budget(report, max_macs="200M") == [f"macs {report.totals.macs / 1e6:.1f} M > 200 M"]
    assert check_budget(report, max_macs="400M") == []
    assert budget_exit_code(report, _args("--max-macs", "200M")) == 3
    assert budget_exit_code(report, _args("--max-macs", "400M")) == 0


@pytest.mark.tf
def test_mobilenet_v2_budget_cli(mobilenet_v2):
    help_text = subprocess.run([sys.executable, "-m", "tflite_flops", "analyze", "--help"], capture_output=True,
                               text=True, timeout=60).stdout
    assert "--max-macs" in help_text
    run = [sys.executable, "-m", "tflite_flops", "analyze", str(mobilenet_v2), "-f", "json"]
    over = subprocess.run(run + ["--max-macs", "200M"], capture_output=True, text=True, timeout=120)
    assert over.returncode == 3 and "budget exceeded: macs 300.8 M > 200 M" in over.stderr
    ok = subprocess.run(run + ["--max-macs", "400M"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
