"""benchmark_model op profiles (text and CSV modes) joined to our ops.

The fixtures follow the documented output of ``benchmark_model --enable_op_profiling=true``
(stats_calculator's column layout; profile_summary_formatter's CSV mode) with the op names of
sample_models/cnn_float.tflite.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops.device_profile import join_profile, parse_profile
from tflite_flops.errors import ModelFormatError

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).resolve().parent / "fixtures"
CNN = ROOT / "sample_models" / "cnn_float.tflite"


@pytest.mark.parametrize("name", ["benchmark_model_op_profile.txt", "benchmark_model_op_profile.csv"])
def test_both_modes_parse_the_run_order_and_skip_init(name):
    rows = parse_profile((FIX / name).read_text())
    assert len(rows) == 12  # the AllocateTensors row of the init block is not an op row
    assert rows[0].node_type == "CONV_2D" and rows[0].avg_ms == 0.412
    assert rows[0].name == "cnn_1/stem_1/Relu;cnn_1/stem_1/convolution"
    assert rows[-1].name == "StatefulPartitionedCall_1:0"


@pytest.mark.parametrize("name", ["benchmark_model_op_profile.txt", "benchmark_model_op_profile.csv"])
def test_join_by_output_name(name):
    report = join_profile(tflite_flops.analyze(CNN), parse_profile((FIX / name).read_text()))
    by_name = {o.name: o for o in report.ops}
    assert by_name["cnn_1/up_1/conv_transpose1"].latency_ms == 0.377
    assert all(o.latency_ms is not None for o in report.ops)
    assert report.latency["per_op_sum_ms"] == pytest.approx(1.408)  # 0.412+0.101+…+0.006


def test_csv_names_with_commas_and_delegate_rows():
    text = ("============================== Run Order ==============================\n"
            "node type, start, first, avg_ms, %, cdf%, mem KB, times called, name\n"
            "TfLiteXNNPackDelegate, 0.000, 1.0, 0.900, 90%, 90%, 0, 1, [a, b]:0\n"
            "SOFTMAX, 0.9, 0.1, 0.100, 10%, 100%, 0, 1, StatefulPartitionedCall_1:0\n")
    rows = parse_profile(text)
    assert rows[0].name == "[a, b]:0"
    report = join_profile(tflite_flops.analyze(CNN), rows)
    assert report.latency["unmatched_rows"] == ["TfLiteXNNPackDelegate [[a, b]:0] 0.900 ms"]
    assert any("matched no op" in w for w in report.warnings)


def test_empty_profile_is_an_error():
    with pytest.raises(ModelFormatError, match="enable_op_profiling"):
        join_profile(tflite_flops.analyze(CNN), parse_profile("nothing here\n"))


def test_cli_import_profile():
    r = subprocess.run([sys.executable, "-m", "tflite_flops", "import-profile", str(CNN),
                        str(FIX / "benchmark_model_op_profile.txt")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "Per-op latency from benchmark_model profile" in r.stdout and "MFLOP/s" in r.stdout
