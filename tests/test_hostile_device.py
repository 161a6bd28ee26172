"""Files from a device that are hostile or broken (issue 44), read by the library directly: the quick lane's
share of tests/redteam_device.py (which runs each case through the CLI under memory and time limits).

Each reader refuses a value out of range in one ModelFormatError naming the file and the field; huge numbers
and deep nesting are refused before Python's own limits are met; names are made printable; and the joins do
work linear in rows and ops (counted, never timed).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import tflite_flops
from redteam import shared_operator
from redteam_device import (GOOD_LATENCY, benchmark_result, edited_details, log_with_bytes, nested_groups,
                            profile_proto, replaced, runtime_details)
from tflite_flops.device import schema
from tflite_flops.device.benchmark_logs import parse_timing, split_results
from tflite_flops.device.op_profile import join_profile, parse_profile, profile_graph, profile_mismatches
from tflite_flops.errors import ModelFormatError
from test_device_evidence import _message
from work_counter import count_calls

FIX = Path(__file__).resolve().parent / "fixtures"
CSV = (FIX / "benchmark_model_op_profile.csv").read_text()
TXT = (FIX / "benchmark_model_op_profile.txt").read_text()
JSON = (FIX / "phone" / "litert_benchmark_cnn_float.json").read_text()
CNN = Path(__file__).resolve().parent.parent / "sample_models" / "cnn_float.tflite"


def _refused(call, *needles):
    with pytest.raises(ModelFormatError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and all(n in message for n in needles), message
    return message


# ---- the schema's checks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -1, -0.5, "1", None, True, 10**400])
def test_a_time_is_a_finite_number_of_at_least_0(value):
    _refused(lambda: schema.time_value(value, "f", "avg"), "f: avg is not ")


@pytest.mark.parametrize("text", ["9" * 5000, "-5", "1.5", "nan", "", "1e999", "0x10"])
def test_a_count_is_an_integer_in_range(text):
    _refused(lambda: schema.count(text, "f", "count="), "f: count= is not a count", "1,000,000,000")


def test_good_values_pass():
    assert schema.time_value(0, "f", "t") == 0.0 and schema.time_value(1.25, "f", "t") == 1.25
    assert schema.count("184", "f", "c") == 184 and schema.count(3.0, "f", "c") == 3
    assert schema.number(" 1.24027e+06 ", "f", "n") == 1240270.0
    schema.check_stats("f", {"min": 1.0, "median": 1.0, "avg": 1.5, "max": 2.0, "p5": 1.0, "p95": 2.0})
    _refused(lambda: schema.check_stats("f", {"min": 1.3, "median": 0.0}), "min (1.3) is above median (0)")


def test_bracketed_finds_what_benchmark_model_logs_in_one_pass():
    assert schema.bracketed("INFO: Graph: [models/a.tflite]", "Graph") == "models/a.tflite"
    assert schema.bracketed("Graph: [a [b] c]  ", "Graph") == "a [b] c"
    assert schema.bracketed("SubGraph: [x]", "Graph") is None  # not a word of its own
    assert schema.bracketed("Graph: x Graph: [y]", "Graph") == "y"
    assert schema.bracketed("Graph: [" * 10_000, "Graph") is None
    line = "Graph: x " * 10_000 + "]"
    counted = count_calls(schema.bracketed, line, "Graph")
    assert counted.result is None and counted.calls < 6 * 10_000  # a few calls a "Graph:", none per character


def test_text_is_split_into_at_most_max_lines():
    _refused(lambda: schema.lines("\n" * schema.MAX_LINES, "f"), "more than 1,048,576 lines")
    assert schema.lines("a\r\nb\rc\n", "f") == ["a", "b\rc", ""]  # "\r" alone does not end a line


# ---- JSON --------------------------------------------------------------------------------------------------


def test_json_nested_too_deep_is_refused_naming_the_field():
    deep = b'{"latency": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    _refused(lambda: parse_timing(deep, "r.json"), "r.json: field 'latency' nests more than 32 levels")
    shallow = JSON.replace('"accelerators": [', '"accelerators": ' + "[" * 40 + "]" * 40 + ', "more": [')
    _refused(lambda: parse_timing(shallow.encode(), "r.json"), "field 'accelerators' nests more than 32 levels")
    _refused(lambda: parse_timing(b'{"latency": ' + b"[" * 200_000, "r.json"), "nests more than 32 levels")


@pytest.mark.parametrize("old, new, needle", [
    ('"num_runs": 50', '"num_runs": ' + "9" * 5000, "latency.num_runs is not a count (a number of 5,000 digits"),
    ('"num_runs": 50', '"num_runs": -50', "latency.num_runs is not a count"),
    ('"avg_ms": 0.02', '"avg_ms": NaN', "NaN is not a number JSON allows"),
    ('"avg_ms": 0.02', '"avg_ms": 1e999', "latency.avg_ms is not a time (inf"),
    ('"avg_ms": 0.02', '"avg_ms": -0.02', "latency.avg_ms is not a time"),
    ('"median_ms": 0.02', '"median_ms": 3', "inconsistent statistics: median (3000) is above max (20)"),
    ('"num_threads": 1', '"num_threads": -2', "num_threads is not a count"),
    ('"num_threads": 1', '"num_threads": 1.5', "num_threads is not a count"),
])
def test_litert_json_values_out_of_range(old, new, needle):
    _refused(lambda: parse_timing(replaced(JSON, old, new).encode(), "r.json"), "r.json: ", needle)


# ---- benchmark_model's log ---------------------------------------------------------------------------------


@pytest.mark.parametrize("old, new, needle", [
    ("count=184", "count=" + "9" * 5000, "line 22: count= is not a count"),
    ("median=1355", "median=0", "inconsistent statistics: min (1300) is above median (0)"),
    ("median=1355", "median=nan", "line 22: median is not a finite number ('nan')"),
    ("Num threads: [1]", "Num threads: [" + "9" * 5000 + "]", "Num threads is not a count"),
    ("Inference (avg): 1362.8", "Inference (avg): -1", "Inference (avg) is not a time"),
    ("Init: 3410", "Init: " + "9" * 5000, "Init is not a finite number"),
])
def test_log_values_out_of_range(old, new, needle):
    _refused(lambda: parse_timing(log_with_bytes(old, new), "r.log"), "r.log: ", needle)


def test_a_log_with_a_long_line_of_digits_is_refused_once():
    data = log_with_bytes("Init: 3410", "Init: " + "9" * 100_000 + "x")
    _refused(lambda: parse_timing(data, "r.log"), "malformed 'Inference timings in us' line")


def test_a_capture_of_many_runs_is_split_and_its_names_made_printable():
    one = log_with_bytes("models/cnn_float.tflite]", "a\x1b[2J.tflite]").decode()
    results = split_results(one + one, "cap.log")
    assert [t.graph for t, _ in results] == ["a\\x1b[2J.tflite"] * 2 and results[0][1] is False


# ---- op profiles (text, CSV) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "-5", "inf", "1e999"])
def test_a_csv_row_out_of_range_names_its_line(value):
    _refused(lambda: parse_profile(replaced(CSV, "0.412, 29.261%", f"{value}, 29.261%"), "p.csv"),
             "p.csv: line 9: avg_ms is not a time")


def test_a_text_row_out_of_range_and_a_huge_subgraph_index():
    _refused(lambda: parse_profile(replaced(TXT, "0.453\t    0.412", "0.453\t     -1"), "p.txt"),
             "avg ms is not a time")
    _refused(lambda: parse_profile("Subgraph (index: " + "9" * 5000 + ")\n" + CSV, "p.csv"),
             "the subgraph index is not a count")


def test_long_lines_of_banner_characters_and_brackets_are_read():
    rows = parse_profile(CSV + "=" * 50_000 + "x\n" + "=" * 50_000 + "\n", "p.csv")
    assert len(rows) == 12
    rows = parse_profile(replaced(TXT, "[cnn_1/up_1/Relu]", "[" * 50_000 + "x]"), "p.txt")
    assert len(rows) == 12 and rows[8].name == "[" * 49_999 + "x"
    assert profile_graph("Graph: [" * 10_000 + "\nINFO: Graph: [m.tflite]\n") == "m.tflite"


def test_names_and_node_types_are_made_printable():
    text = replaced(CSV, "\nADD, ", "\nADD\x1b[31m, ").replace("cnn_1/residual_1/Add", "res\rforged")
    row = parse_profile(text, "p.csv")[3]
    assert (row.node_type, row.name) == ("ADD\\x1b[31m", "res\\rforged")


@pytest.mark.slow
def test_the_join_is_linear_in_rows_and_ops():
    def work(n: int) -> int:
        report = tflite_flops.analyze(shared_operator(n, pad=(n - 4096) * 128 + 4096 if n > 4096 else 0))
        rows = parse_profile("=== Run Order ===\nnode type, first, avg_ms, times called, name\n"
                             + "ADD, 0.1, 0.1, 1, none\n" * n, "p.csv")
        counted = count_calls(lambda: (profile_mismatches(report, rows), join_profile(report, rows)))
        assert counted.error is None, counted.error
        return counted.calls

    small, large = work(200), work(800)
    assert large < 5 * small, (small, large)  # quadratic before: 4x the rows and ops, 16x the work


def test_a_profile_of_many_subgraphs_is_checked_once_per_row():
    report = tflite_flops.analyze(str(CNN))
    text = "=== Run Order ===\nnode type, first, avg_ms, times called, name\n" + "".join(
        f"Subgraph (index: {i})\nADD, 0.1, 0.1, 1, x\n" for i in range(1, 2001))
    rows = parse_profile(text, "p.csv")
    counted = count_calls(profile_mismatches, report, rows)
    assert len(counted.result) == 2000 and counted.calls < 40_000  # the model's ops sorted once, not per subgraph


# ---- protos ----------------------------------------------------------------------------------------------


@pytest.mark.runtime
def test_benchmark_result_out_of_range():
    from tflite_flops.device.benchmark_protos import parse_benchmark_result

    _refused(lambda: parse_benchmark_result(benchmark_result({**GOOD_LATENCY, 5: math.nan}), "r.pb"),
             "r.pb: latency_metrics.median_ms is not a time (nan")
    _refused(lambda: parse_benchmark_result(benchmark_result({**GOOD_LATENCY, 2: 1.3, 5: 0.0, 6: 1.3}), "r.pb"),
             "inconsistent statistics: latency_metrics.min (1.3) is above latency_metrics.median (0)")
    _refused(lambda: parse_benchmark_result(nested_groups(100_000), "r.pb"), "not a BenchmarkResult protocol buffer")
    lat = parse_benchmark_result(benchmark_result(GOOD_LATENCY, name=b"pix\x1b[2Jel"), "r.pb")
    assert lat.median_ms == 2.25 and "pix\\x1b[2Jel" in lat.method


@pytest.mark.runtime
def test_runtime_details_checked_and_counted_before_decoding():
    from tflite_flops.device.benchmark_protos import parse_runtime_details

    _refused(lambda: parse_runtime_details(edited_details(lambda d: setattr(d.subgraphs[0].nodes[1], "id", 0)),
                                           "rt.pb"), "rt.pb: subgraph 0: node 0 is listed twice")
    _refused(lambda: parse_runtime_details(_message(2, b"\x1a\x00" * 300_000), "rt.pb"), "more than 262,144 nodes")
    placement = parse_runtime_details(runtime_details(delegate="Npu\x1b[2J\nerror: x"), "rt.pb")
    assert placement.delegates == ("Npu\\x1b[2J\\nerror: x",)


@pytest.mark.runtime
def test_profile_proto_out_of_range():
    from tflite_flops.device.benchmark_protos import parse_profile_proto

    _refused(lambda: parse_profile_proto(profile_proto(avg=-100), "p.pb"), "inference_microseconds.avg is not a time")
    _refused(lambda: parse_profile_proto(profile_proto(times_called=-1), "p.pb"), "times_called is not a count")
    assert len(parse_profile_proto(profile_proto(), "p.pb")) == 12


@pytest.mark.runtime
@pytest.mark.parametrize("delegated", [frozenset(range(9)), frozenset()])
def test_the_html_page_draws_the_device_placement(delegated):
    from tflite_flops.device.benchmark_protos import join_runtime_details, parse_runtime_details
    from tflite_flops.render import render

    path = str(Path(__file__).resolve().parent.parent / "sample_models" / "cnn_int8.tflite")
    report = join_runtime_details(tflite_flops.analyze(path),
                                  parse_runtime_details(runtime_details(path, delegated), "rt.pb"), "rt.pb")
    page = render(report, "html")
    strip = page[page.index('data-delegate="device"'):]
    strip = strip[:strip.index("</div>")]
    assert strip.count('class="op') == 12 and ("partition 0" in strip) == bool(delegated)


# ---- a short coverage-guided run of the device readers ---------------------------------------------------


@pytest.mark.slow  # a libFuzzer run of 2,000 inputs (~10 s)
@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="atheris has wheels for Linux x86-64 only")
def test_a_short_coverage_guided_fuzz_run_of_the_device_readers(tmp_path):
    # Seeded and bounded by a count of inputs, not a time (as test_redteam.py's runs of the model harnesses).
    import os
    import subprocess
    import sys

    import atheris  # noqa: F401 - in the test extra on Linux x86-64

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    harness = str(root / "fuzz" / "fuzz_device.py")
    subprocess.run([sys.executable, harness, "--seed", str(tmp_path / "corpus")], check=True, capture_output=True,
                   env=env)
    from fuzz_corpus import run_atheris

    run_atheris("fuzz_device.py", tmp_path / "corpus", 2000, tmp_path)
