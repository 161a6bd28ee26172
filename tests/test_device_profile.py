"""benchmark_model op profiles (text and CSV modes) joined to our ops.

The fixtures follow the documented output of ``benchmark_model --enable_op_profiling=true``
(stats_calculator's column layout; profile_summary_formatter's CSV mode) with the op names of
sample_models/cnn_float.tflite.
"""

from __future__ import annotations

from pathlib import Path

import cli_process
import pytest

import tflite_flops
from tflite_flops.device.op_profile import join_profile, parse_profile
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
    assert report.latency.per_op_sum_ms == pytest.approx(1.408)  # 0.412+0.101+…+0.006


def test_csv_names_with_commas_and_delegate_rows():
    text = ("============================== Run Order ==============================\n"
            "node type, start, first, avg_ms, %, cdf%, mem KB, times called, name\n"
            "TfLiteXNNPackDelegate, 0.000, 1.0, 0.900, 90%, 90%, 0, 1, [a, b]:0\n"
            "SOFTMAX, 0.9, 0.1, 0.100, 10%, 100%, 0, 1, StatefulPartitionedCall_1:0\n")
    rows = parse_profile(text)
    assert rows[0].name == "[a, b]:0"
    report = join_profile(tflite_flops.analyze(CNN), rows)
    assert report.latency.unmatched_rows == ("TfLiteXNNPackDelegate [[a, b]:0] 0.900 ms",)
    assert any("matched no op" in w for w in report.warnings)


def test_empty_profile_is_an_error():
    with pytest.raises(ModelFormatError, match="enable_op_profiling"):
        join_profile(tflite_flops.analyze(CNN), parse_profile("nothing here\n"))


def test_cli_import_profile():
    r = cli_process.run(["import-profile", str(CNN), str(FIX / "benchmark_model_op_profile.txt")], cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "Per-op latency from benchmark_model profile" in r.stdout and "MFLOP/s" in r.stdout


# ---- issue 12: a profile of another model is refused unless --force ------------------------------------


def _cli(*args):
    return cli_process.run(["import-profile", *args], cwd=ROOT, timeout=120)


def test_profile_of_another_model_is_refused():
    other = ROOT / "sample_models" / "transformer_block.tflite"
    r = _cli(str(other), str(FIX / "benchmark_model_op_profile.csv"))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
    assert ("12 profiled op(s) against 41 in the model; run position 0 is CONV_2D in the profile, "
            "FULLY_CONNECTED in the model (--force joins it anyway)") in r.stderr
    forced = _cli(str(other), str(FIX / "benchmark_model_op_profile.csv"), "--force")
    assert forced.returncode == 0 and "warning: --force: 12 profiled op(s) against 41" in forced.stderr


def test_profile_graph_name_is_checked():
    """Same op types, but benchmark_model logged 'Graph: [cnn_float.tflite]'."""
    r = _cli(str(ROOT / "sample_models" / "cnn_int8.tflite"), str(FIX / "benchmark_model_op_profile.txt"))
    assert r.returncode == 1
    assert "the profile was taken of 'cnn_float.tflite', not 'cnn_int8.tflite'" in r.stderr
    assert _cli(str(CNN), str(FIX / "benchmark_model_op_profile.txt")).returncode == 0


def test_op_sequence_checks():
    from tflite_flops.device.op_profile import ProfileRow, profile_mismatches

    report = tflite_flops.analyze(CNN)
    types = [o.op_type for o in report.ops]

    def rows(names):
        return [ProfileRow(0, t, 0.1, None, 1, "") for t in names]

    assert profile_mismatches(report, rows(types)) == []
    swapped = types[:3] + [types[4], types[3]] + types[5:]
    assert profile_mismatches(report, rows(swapped)) == [
        "12 profiled op(s) against 12 in the model; run position 3 is MAX_POOL_2D in the profile, ADD in the model"]
    assert "run position 11 is (end) in the profile" in profile_mismatches(report, rows(types[:-1]))[0]
    # a delegate partition replaces ops 0-6: the remaining rows follow the model's order
    delegated = ["TfLiteXNNPackDelegate"] + types[7:]
    assert profile_mismatches(report, rows(delegated)) == []
    assert profile_mismatches(report, rows(["TfLiteXNNPackDelegate", "SOFTMAX", "MEAN"])) == [
        "profile op MEAN does not follow the model's op order"]
    assert profile_mismatches(report, rows(types), graph="/sdcard/other.tflite") == [
        "the profile was taken of 'other.tflite', not 'cnn_float.tflite'"]
