"""Saved JSON reports as untrusted input (issue 44): ``Report.from_json`` and ``compare`` on a ``.json`` side check
every value against the shipped schema (tflite_flops/report/loading.py) before any figure uses it.

A real saved report of the sample CNN has one field corrupted at a time: a string, NaN, an infinity, -1, 1e400,
1.5, a list, an object where the schema says integer (and an int, a list, an object where it says text). Each
gives one clean :class:`~tflite_flops.errors.ReportFormatError` that names the field, or a report that renders
in every format (repr, the notebook view, JSON, every analyze format, every compare format). The slow red-team
cases (tests/redteam_reports.py) run the same inputs through the CLI.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import cli_process
import pytest

from lanes import slow_cases
import tflite_flops
from tflite_flops.errors import ReportFormatError, TfliteFlopsError
from tflite_flops.report import Report
from tflite_flops.report.loading import FREE_DEPTH, REPORT_FILE_CAP

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "sample_models" / "cnn_float.tflite"
GOLDEN = ROOT / "tests" / "golden" / "analyze"

# JSON text put in place of a value ("__X__" marks the place)
INT_CORRUPTIONS = {"string": '"12"', "nan": "NaN", "infinity": "Infinity", "minus-infinity": "-Infinity",
                   "negative": "-1", "1e400": "1e400", "float": "1.5", "list": "[]", "object": "{}", "true": "true"}
TEXT_CORRUPTIONS = {"int": "7", "list": '["x"]', "object": '{"x": 1}', "nan": "NaN"}


@pytest.fixture(scope="module")
def saved():
    """The JSON text of the sample CNN's report, its parsed value and the report."""
    report = tflite_flops.analyze(CNN)
    text = report.to_json()
    return text, json.loads(text), Report.from_json(text)


def _leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, path + (i,))
    else:
        yield path, value


def _fields(d, kind):
    """The paths of the leaves of one JSON type, every op's fields once (those of ops[1]: every op has them)."""
    return [p for p, v in _leaves(d) if type(v) is kind and not (p[0] == "ops" and p[1] != 1)]


def _dotted(path) -> str:
    """``ops[1].macs``, ``by_op_type.CONV_2D.count``, ``x["0"]``: as the error message names a field."""
    from tflite_flops.report.loading import _key

    return "".join(f"[{p}]" if type(p) is int else _key(p) for p in path).lstrip(".")


def _corrupted(d, path, literal: str) -> str:
    """The JSON text of ``d`` with ``literal`` at ``path`` (``d`` itself is left as it was)."""
    parent = d
    for p in path[:-1]:
        parent = parent[p]
    missing = object()
    old = parent[path[-1]] if isinstance(parent, list) else parent.get(path[-1], missing)
    parent[path[-1]] = "__X__"
    try:
        return json.dumps(d).replace('"__X__"', literal)
    finally:
        if old is missing:
            del parent[path[-1]]
        else:
            parent[path[-1]] = old


def renders_everywhere(report: Report, other: Report) -> None:
    """Every output of ``report`` and of its comparison with ``other`` (both ways), with no NaN or infinity in JSON."""
    from tflite_flops.render import render
    from tflite_flops.render.compare import render_compare_table, render_comparison
    from tflite_flops.report.compare import compare_reports

    assert repr(report) and report._repr_html_()
    assert Report.from_json(report.to_json()) == report  # what was accepted is written back as accepted
    for fmt in ("table", "csv", "md", "html"):
        render(report, fmt)
    for c in (compare_reports(other, report), compare_reports(report, other)):
        render_compare_table(c)
        for fmt in ("csv", "md", "html"):
            render_comparison(c, fmt)
        text = render_comparison(c, "json")
        json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in compare's JSON"))


def _refused_or_renders(saved, path, literal):
    text, d, good = saved
    try:
        report = Report.from_json(_corrupted(d, path, literal))
    except ReportFormatError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) < 400, message
        assert _dotted(path) in message or "NaN" in message or "Infinity" in message or "range" in message, message
        return "refused"
    renders_everywhere(report, good)
    return "rendered"


# the quick lane: a string, NaN, -1, 1e400 and 1.5; the slow lane also an infinity, a list, an object and true
@pytest.mark.parametrize("corruption", slow_cases(INT_CORRUPTIONS, {"infinity", "minus-infinity", "list", "object",
                                                                    "true"}))
def test_each_integer_field_corrupted_is_refused_or_renders(saved, corruption):
    outcomes = {_refused_or_renders(saved, path, INT_CORRUPTIONS[corruption])
                for path in _fields(saved[1], int)}
    # a count is a JSON integer >= 0: only a shape's dimension takes -1 (dynamic), and renders
    assert outcomes == ({"refused", "rendered"} if corruption == "negative" else {"refused"})


@pytest.mark.parametrize("corruption", list(TEXT_CORRUPTIONS))
def test_each_text_field_corrupted_is_refused(saved, corruption):
    for path in _fields(saved[1], str):
        assert _refused_or_renders(saved, path, TEXT_CORRUPTIONS[corruption]) == "refused", path


@pytest.mark.parametrize("path, literal, expected", [
    (("ops", 3, "macs"), '"12"', 'ops[3].macs: expected an integer >= 0, got "12"'),
    (("ops", 3, "macs"), "-1", "ops[3].macs: expected an integer >= 0, got -1"),
    (("ops", 3, "macs"), "1.5", "ops[3].macs: expected an integer >= 0, got 1.5"),
    (("ops", 3, "macs"), "[]", "ops[3].macs: expected an integer >= 0, got a list"),
    (("ops", 3, "status"), '"fine"', 'ops[3].status: expected one of "ok", "zero", "unsupported"'),
    (("ops", 3, "inputs"), '"1x32x32x3"', "ops[3].inputs: expected a list"),
    (("ops", 3, "outputs", 0, 1), "1.5", "ops[3].outputs[0][1]: expected an integer, got 1.5"),
    (("ops", 3, "latency_ms"), "-0.5", "ops[3].latency_ms: expected a finite number >= 0 or null, got -0.5"),
    (("ops", 3, "future_figure"), "[1]", "ops[3].future_figure: expected a string, a finite number"),
    (("totals", "flops"), "1", "ops[0].flops: expected at most totals.flops (1)"),
    (("by_op_type", "CONV_2D", "count"), "true", "by_op_type.CONV_2D.count: expected an integer >= 0, got true"),
    (("memory", "runtime", "total_bytes"), "{}", "memory.runtime.total_bytes: expected an integer >= 0, got an object"),
    (("delegation", "xnnpack", "kept_by_reason"), "[]", "delegation.xnnpack.kept_by_reason: expected an object"),
    (("settings", "input_shapes"), "3", "settings.input_shapes: expected an object, got 3"),
    (("settings", "batch"), "0", "settings.batch: expected an integer >= 1 or null, got 0"),
    (("model", "path"), "7", "model.path: expected a string or null, got 7"),
    (("unknown_key",), "1", "unknown_key: expected no such key"),
    (("warnings",), '{"a": 1}', "warnings: expected a list, got an object"),
])
def test_the_message_names_the_field_and_what_was_expected(saved, path, literal, expected):
    with pytest.raises(ReportFormatError) as info:
        Report.from_json(_corrupted(saved[1], path, literal), source="r.json")
    message = str(info.value)
    assert message.startswith("r.json: not a tflite_flops JSON report: "), message
    assert expected in message, message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"])
def test_nan_and_infinities_are_refused_when_parsed_anywhere(saved, literal):
    for path in (("ops", 3, "latency_ms"), ("settings", "future_setting"), ("latency",)):
        with pytest.raises(ReportFormatError, match="NaN and infinities|past a float's range"):
            Report.from_json(_corrupted(saved[1], path, literal))


def test_a_dict_made_in_python_is_checked_too(saved):
    d = json.loads(saved[0])
    d["ops"][2]["latency_ms"] = math.nan
    with pytest.raises(ReportFormatError, match=r"ops\[2\]\.latency_ms: expected a finite number"):
        Report.from_dict(d)
    d["ops"][2]["latency_ms"] = None
    d["memory"]["arena_bytes"] = True
    with pytest.raises(ReportFormatError, match=r"memory\.arena_bytes: expected an integer >= 0, got true"):
        Report.from_dict(d)


def test_nesting_is_bounded(saved):
    with pytest.raises(ReportFormatError, match="nested too deeply"):
        Report.from_json("[" * 100_000)
    deep = "[" * (FREE_DEPTH + 4) + "]" * (FREE_DEPTH + 4)  # within what the parser takes, deeper than the cap
    with pytest.raises(ReportFormatError, match=rf"settings\.mine(\[0\])+: expected at most {FREE_DEPTH} levels"):
        Report.from_json(_corrupted(saved[1], ("settings", "mine"), deep))
    fine = "[" * (FREE_DEPTH - 2) + "1" + "]" * (FREE_DEPTH - 2)
    assert Report.from_json(_corrupted(saved[1], ("settings", "mine"), fine)).settings["mine"]


def test_a_newer_versions_keys_load_where_the_records_keep_them(saved, tmp_path):
    d = json.loads(saved[0])
    d["ops"][0]["future_figure"] = 3.5  # a per-op figure: kept in figures, written back
    d["settings"]["future_setting"] = {"a": [1, 2]}
    report = Report.from_dict(d)
    assert report.ops[0].future_figure == 3.5 and json.loads(report.to_json())["ops"][0]["future_figure"] == 3.5
    renders_everywhere(report, saved[2])
    d["totals"]["future_total"] = 1  # a record that keeps no unknown key
    with pytest.raises(ReportFormatError, match="totals.future_total: expected no such key"):
        Report.from_dict(d)


def test_mappings_of_fixed_keys_have_them(saved):
    # found by fuzz/fuzz_report.py: a precision split without its "flops" (the table sorts by it)
    d = json.loads(saved[0])
    del d["totals"]["by_precision"]["float32"]["flops"]
    with pytest.raises(ReportFormatError, match="totals.by_precision.float32: expected the key 'flops'"):
        Report.from_dict(d)
    d = json.loads(saved[0])
    del d["tool"]["name"]  # the table's first line names the tool
    with pytest.raises(ReportFormatError, match="tool: expected the key 'name'"):
        Report.from_dict(d)


def test_delegation_names_only_the_delegates_this_version_knows(saved):
    # found by fuzz/fuzz_report.py: the placement section looks each delegate's per-op fields up by its key
    d = json.loads(saved[0])
    d["delegation"]["xnnfack"] = d["delegation"]["xnnpack"]
    with pytest.raises(ReportFormatError, match="delegation.xnnfack: expected no such key"):
        Report.from_dict(d)


def test_a_prediction_with_an_odd_drift_check_renders(saved):
    import render_helpers

    d = json.loads(render_helpers.predicted_report().to_json())
    d["prediction"]["drift"] = {"applied": True, "factor": None, "why": ""}  # applied, but no factor to show
    renders_everywhere(Report.from_dict(d), saved[2])
    d["prediction"]["drift"] = {"applied": True, "factor": "x2"}
    with pytest.raises(ReportFormatError, match=r"prediction\.drift\.factor: expected a finite number >= 0 or null"):
        Report.from_dict(d)


def test_bundle_section_must_be_one_of_its_sections():
    report = tflite_flops.analyze(ROOT / "sample_models" / "tiny_decoder.litertlm")
    d = json.loads(report.to_json())
    d["bundle"]["section"] = 99
    with pytest.raises(ReportFormatError, match=r"bundle\.section: expected the index of one of bundle\.sections"):
        Report.from_dict(d)


@pytest.mark.parametrize("path", slow_cases(sorted(p for p in GOLDEN.glob("*.json")
                                                   if not p.name.endswith((".me.json", ".html.json"))),
                                            {"chain_600.json"}, key=lambda p: p.name), ids=lambda p: p.name)
def test_every_golden_json_report_loads(path):
    # every sample, every signature, a bundle, a dynamic model at a shape, the 600-op chain
    text = path.read_text(encoding="utf-8")
    assert Report.from_json(text).to_json(end="\n") == text


def test_counts_past_a_float_load_render_and_compare():
    # a legitimate report (the analysis counts in Python ints) whose counts no float holds: 10**373 FLOPs
    import redteam
    from tflite_flops.reader.load import load_model

    huge = tflite_flops.analyze(load_model(redteam.huge_dims_model()))
    assert huge.totals.flops > 10**300
    loaded = Report.from_json(huge.to_json())
    assert loaded == huge
    renders_everywhere(loaded, tflite_flops.analyze(CNN))


def test_report_load_names_the_file_and_refuses_before_reading_past_the_cap(saved, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(_corrupted(saved[1], ("ops", 3, "macs"), "NaN"), encoding="utf-8")
    with pytest.raises(ReportFormatError, match=rf"^{re.escape(str(bad))}: not a tflite_flops JSON report: .*NaN"):
        Report.load(bad)
    (tmp_path / "latin1.json").write_bytes(b'{"schema_version": 1, "x": "\xff"}')
    with pytest.raises(ReportFormatError, match="not UTF-8"):
        Report.load(tmp_path / "latin1.json")
    sparse = tmp_path / "sparse.json"
    with open(sparse, "wb") as f:
        f.truncate(REPORT_FILE_CAP + 1)  # a hole: refused from its size, never read (a 1 GiB read would be)
    with pytest.raises(OSError, match="larger than 1024 MiB"):
        Report.load(sparse)
    good = tmp_path / "good.json"
    good.write_text(saved[0], encoding="utf-8")
    assert Report.load(good) == saved[2]


def test_compare_says_which_file_and_field_in_one_line(saved, tmp_path):
    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    good.write_text(saved[0], encoding="utf-8")
    bad.write_text(_corrupted(saved[1], ("ops", 3, "macs"), '"many"'), encoding="utf-8")
    r = cli_process.run(["compare", str(good), str(bad)], cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (f"error: {bad}: not a tflite_flops JSON report: ops[3].macs: expected an integer >= 0, "
                        'got "many"\n')


def test_the_errors_are_the_packages(saved):
    with pytest.raises(ReportFormatError) as info:
        Report.from_json(_corrupted(saved[1], ("totals", "macs"), '"x"'))
    assert isinstance(info.value, TfliteFlopsError) and isinstance(info.value, ValueError)
    d = json.loads(saved[0])
    del d["ops"][3]["macs"], d["inputs"][0]["name"]  # a key a record cannot do without: from_dict says which
    with pytest.raises(ReportFormatError, match="missing 1 required positional argument: 'macs'"):
        Report.from_dict(d)
    del d["delegation"], d["init_totals"]  # keys an older version did not write: their defaults
    d["ops"][3]["macs"] = 0
    with pytest.raises(ReportFormatError, match="missing key 'name'"):
        Report.from_dict(d)


@pytest.mark.slow  # a short libFuzzer run (300 seeded inputs, ~10 s)
@pytest.mark.skipif(platform.machine() != "x86_64" or not sys.platform.startswith("linux"),
                    reason="atheris (the test extra) has wheels for Linux x86-64 only")
def test_a_short_coverage_guided_fuzz_run_of_the_report_loader_finds_nothing(tmp_path):
    # Seeded and bounded by a count of inputs, not a time. A crash (an exception other than ReportFormatError, a
    # report that loads but does not render), a leak or a hang fails it; the input is saved under tmp_path.
    import atheris  # noqa: F401 - in the test extra on Linux x86-64

    harness, corpus = ROOT / "fuzz" / "fuzz_report.py", tmp_path / "corpus"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, str(harness), "--seed", str(corpus)], check=True, capture_output=True, env=env)
    proc = subprocess.run([sys.executable, str(harness), str(corpus), "-runs=300", "-seed=1", "-timeout=60",
                           "-rss_limit_mb=3072", f"-artifact_prefix={tmp_path}/"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Done 300 runs" in proc.stderr, proc.stderr[-3000:]
