"""A Report in a notebook: ``repr`` on one line, ``to_dataframe`` (the CSV's columns), ``_repr_html_`` (escaped)."""

from __future__ import annotations

import csv
import io
import re
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import tflite_flops
from tflite_flops.render import render
from tflite_flops.report import LatencyStats

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


@pytest.fixture(scope="module")
def report():
    # x86-avx512's XNNPACK bytes (the figures below), on every host
    return tflite_flops.analyze(SAMPLES / "cnn_float.tflite", target="x86-avx512")


def test_repr_is_one_readable_line(report):
    text = repr(report)
    assert "\n" not in text and len(text) < 250
    assert text.startswith("<tflite_flops Report 'cnn_float.tflite':")
    assert "12 ops" in text and "397.4 K MACs" in text and "3.832 K params" in text
    # the memory headline, as the table and the JSON read it (LiteRT's default, XNNPACK on, with the weights
    # mapped from the file, the interpreter's own structures: 165.5 + 102.5 + 15.0 KiB), not the dataclass dump
    assert "memory 283.0 KiB (LiteRT default: XNNPACK on, 1 thread, weights mapped)" in text
    assert "OpRecord(" not in text and "latency" not in text  # not measured, not predicted: no latency figure
    assert str(report) == text


def test_repr_names_the_latency_measured_first_and_partial_totals(report):
    timed = replace(report, latency=LatencyStats(median_ms=1.25))
    assert "latency 1.250 ms (measured)" in repr(timed)
    partial = tflite_flops.analyze(SAMPLES / "fcn_dynamic.tflite")  # H and W left dynamic
    assert repr(partial).endswith("PARTIAL totals>")
    assert "'<bytes>'" in repr(tflite_flops.analyze((SAMPLES / "cnn_float.tflite").read_bytes()))


def test_dataframe_has_the_csv_columns_and_values(report):
    df = report.to_dataframe()
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert list(df.columns) == list(rows[0])  # the same columns, in the same order
    assert len(df) == len(report.ops) == len(rows)
    for i, op in enumerate(report.ops):
        assert df["macs"][i] == op.macs == int(rows[i]["macs"])
        assert df["op_type"][i] == op.op_type
        assert df["inputs"][i] == op.inputs  # shapes stay tuples
    for name in ("macs", "flops", "params", "bytes_read", "executions", "live_bytes"):
        assert pd.api.types.is_integer_dtype(df[name]), name  # ints stay ints
    assert int(df["flops"].sum()) == report.totals.flops


def test_dataframe_keeps_ints_where_an_op_has_no_value(samples_dir):
    # the int8 CNN keeps ops off XNNPACK: their xnnpack_partition is None, the others' ints
    r = tflite_flops.analyze(samples_dir / "cnn_int8.tflite")
    parts = [o.xnnpack_partition for o in r.ops]
    assert None in parts and any(p is not None for p in parts)
    df = r.to_dataframe()
    assert str(df["xnnpack_partition"].dtype) == "Int64"  # nullable ints, not floats with NaN
    assert [None if pd.isna(v) else int(v) for v in df["xnnpack_partition"]] == parts
    assert str(df["xnnpack"].dtype) in ("bool", "boolean")


def test_dataframe_without_pandas_is_one_clear_error(report, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r"needs pandas.*pip install .tflite_flops\[notebook\]."):
        report.to_dataframe()


def test_html_view_has_the_headline_and_the_top_ops(report):
    html = report._repr_html_()
    assert html.startswith('<div class="tflite-flops-report">') and html.endswith("</div>")
    for text in ("cnn_float.tflite", "397.4 K", "829.2 K", "283.0 KiB", "Top 10 ops by FLOPs", "CONV_2D"):
        assert text in html
    assert "<script" not in html.lower() and "<style" not in html.lower()
    assert html.count("<tr>") >= 10


def test_html_view_escapes_names(report):
    hostile = '<script>alert("x")</script>&'
    ops = tuple(replace(o, name=hostile) if i == 0 else o for i, o in enumerate(report.ops))
    evil = replace(report, ops=ops, warnings=("<img src=x onerror=alert(1)>",),
                   model=replace(report.model, path="/tmp/<b>m</b>.tflite"))
    html = evil._repr_html_()
    assert "<script" not in html and "<img" not in html and "<b>m</b>" not in html
    assert "&lt;script&gt;" in html and "&lt;img" in html
    assert re.search(r"<[a-z]+ on\w+=", html) is None
