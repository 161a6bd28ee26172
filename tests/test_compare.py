"""compare A B: totals and by-type deltas, op matching, every output format, the CLI."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import subprocess

import cli_process
import pytest

import tflite_flops
from render_helpers import LATENCY, SAMPLES, THROUGHPUT
from tflite_flops.report.compare import compare_reports, match_ops
from tflite_flops.render.compare import COMPARE_RENDERERS, compare_format_for_path, render_comparison
from tflite_flops.errors import OutputFormatError
from tflite_flops.report import LatencyStats, OpRecord, Throughput


@pytest.fixture(scope="module")
def pair():
    return tflite_flops.analyze(SAMPLES / "cnn_float.tflite"), tflite_flops.analyze(SAMPLES / "cnn_int8.tflite")


def _op(i: int, op_type: str, flops: int = 10) -> OpRecord:
    return OpRecord(0, i, op_type, f"t{i}", ((1, 4),), ((1, 4),), flops // 2, flops, 16, 16, 0, "ok", "")


def test_float_versus_int8(pair):
    a, b = pair
    c = compare_reports(a, b)
    assert (c.label_a, c.label_b) == ("cnn_float.tflite", "cnn_int8.tflite")
    totals = {m.key: m for m in c.totals}
    # The same architecture: the same MACs, all float32 in A and all int8 in B.
    assert totals["macs"].a == totals["macs"].b == a.totals.macs and totals["macs"].delta == 0
    assert totals["flops.float32"].b == 0 and totals["flops.int8"].a == 0
    assert totals["flops.int8"].b == b.totals.flops
    assert totals["param_bytes"].ratio < 0.5  # int8 weights take about a quarter of float32's bytes
    assert totals["flops"].delta == b.totals.flops - a.totals.flops
    by_type = {t.op_type: t for t in c.by_type}
    assert set(by_type) == set(a.by_op_type) | set(b.by_op_type)
    assert by_type["CONV_2D"].count_a == by_type["CONV_2D"].count_b == 3
    assert c.match_counts() == {"same": 12, "changed": 0, "only_a": 0, "only_b": 0}
    assert all(p.a.op_type == p.b.op_type for p in c.ops)


def test_matching_by_type_and_position():
    a = [_op(0, "CONV_2D"), _op(1, "RELU"), _op(2, "CONV_2D"), _op(3, "SOFTMAX")]
    b = [_op(0, "QUANTIZE"), _op(1, "CONV_2D"), _op(2, "RELU6"), _op(3, "CONV_2D"), _op(4, "SOFTMAX"),
         _op(5, "DEQUANTIZE")]
    pairs = [(p.match, p.a.index if p.a else None, p.b.index if p.b else None) for p in match_ops(a, b)]
    assert pairs == [("only_b", None, 0), ("same", 0, 1), ("changed", 1, 2), ("same", 2, 3), ("same", 3, 4),
                     ("only_b", None, 5)]


def test_latency_rows_appear_when_measured(pair):
    a, b = pair
    fast = LatencyStats(**dict(LATENCY, median_ms=0.1))
    c = compare_reports(a.with_latency(LatencyStats(**LATENCY), Throughput(**THROUGHPUT)),
                        b.with_latency(fast, Throughput(**THROUGHPUT)))
    totals = {m.key: m for m in c.totals}
    assert totals["latency.median_ms"].ratio == pytest.approx(0.5)
    assert "throughput.flops_per_s" in totals
    assert "latency.median_ms" not in {m.key for m in compare_reports(a, b).totals}


def test_identical_models_have_zero_deltas(pair):
    a, _ = pair
    c = compare_reports(a, a)
    assert all(m.delta in (0, None) for m in c.totals)
    assert c.label_a != c.label_b  # "A: ..." / "B: ..." keep the sides apart
    assert c.match_counts()["same"] == len([o for o in a.ops if o.phase == "inference"])


@pytest.mark.parametrize("fmt", list(COMPARE_RENDERERS))
def test_every_compare_format(pair, fmt):
    c = compare_reports(*pair)
    text = render_comparison(c, fmt)
    assert text.strip() and text == render_comparison(c, fmt)
    if fmt == "json":
        d = json.loads(text)
        macs = pair[0].totals.macs
        assert d["totals"]["macs"] == {"a": macs, "b": macs, "delta": 0, "ratio": 1.0}
        assert d["matches"]["same"] == 12 and len(d["ops"]) == 12
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        macs = next(r for r in rows if r["section"] == "totals" and r["key"] == "macs")
        assert int(macs["a"]) == int(macs["b"]) == pair[0].totals.macs
    elif fmt == "html":
        assert text.startswith("<!DOCTYPE html>") and "cnn_int8.tflite" in text and "<svg" in text
    elif fmt in ("md", "table"):
        assert "CONV" in text and "MACs" in text and "cnn_int8" in text.replace("\\_", "_")
    for ext in COMPARE_RENDERERS[fmt][1]:
        assert compare_format_for_path(f"x{ext}") == fmt
    with pytest.raises(OutputFormatError):
        compare_format_for_path("x.me.json.bak")


def test_compare_html_escapes_names(pair):
    a, b = pair
    evil = dataclasses.replace(b, ops=tuple(dataclasses.replace(o, name="<script>x</script>") for o in b.ops))
    text = render_comparison(compare_reports(a, evil), "html")
    assert "<script>x" not in text and "&lt;script&gt;x" in text


def _cli(*args: str) -> subprocess.CompletedProcess:
    return cli_process.run(["compare", *args], timeout=120)


def test_cli_side_by_side(tmp_path):
    a, b = str(SAMPLES / "cnn_float.tflite"), str(SAMPLES / "cnn_int8.tflite")
    outs = [tmp_path / f"c{ext}" for ext in (".json", ".csv", ".md", ".html", ".txt")]
    proc = _cli(a, b, *[x for p in outs for x in ("-o", str(p))])
    assert proc.returncode == 0, proc.stderr
    assert "cnn_float.tflite" in proc.stdout and "cnn_int8.tflite" in proc.stdout and "Δ" in proc.stdout
    assert all(p.exists() and p.stat().st_size > 0 for p in outs)
    assert json.loads(outs[0].read_text())["matches"]["same"] == 12


def test_cli_accepts_json_reports(tmp_path):
    a = tmp_path / "a.json"
    a.write_text(tflite_flops.analyze(SAMPLES / "cnn_float.tflite").to_json())
    proc = _cli(str(a), str(SAMPLES / "cnn_dynamic_range.tflite"), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["totals"]["flops.hybrid"]["b"] > 0 and d["totals"]["macs"]["delta"] == 0


def test_cli_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    for args in ([str(bad), str(SAMPLES / "cnn_int8.tflite")], [str(tmp_path / "missing.tflite"), str(bad)],
                 [str(SAMPLES / "cnn_int8.tflite"), str(SAMPLES / "cnn_int8.tflite"), "-o", "x.pdf"]):
        proc = _cli(*args)
        assert proc.returncode in (1, 2), args
        assert proc.stderr.strip().startswith("error:") and "Traceback" not in proc.stderr
