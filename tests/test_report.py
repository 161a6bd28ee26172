"""The JSON/CSV contract and the Report round trip."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lanes import slow_cases
import tflite_flops
from tflite_flops.render import render, write
from tflite_flops.report import Report

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "sample_models").glob("*.tflite"))


@pytest.fixture(scope="module", params=slow_cases([p.name for p in SAMPLES], {"tiny_decoder_kv.tflite"}))
def report(request) -> Report:
    return tflite_flops.analyze(Path(__file__).resolve().parent.parent / "sample_models" / request.param)


def _ints(value, path="") -> None:
    """Every count in the JSON is a Python int (never a float or a NumPy scalar)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("macs", "flops", "params", "param_bytes", "bytes_read", "bytes_written", "count", "ops",
                     "size_bytes", "executions", "subgraph", "index", "subgraphs", "operators") \
                    and not isinstance(v, (list, dict)):
                assert type(v) is int, f"{path}.{k} = {v!r}"
            _ints(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _ints(v, f"{path}[{i}]")


def test_json_contract(report):
    d = json.loads(report.to_json())
    assert d["schema_version"] == 1
    assert d["tool"]["name"] == "tflite_flops" and d["tool"]["version"] == tflite_flops.__version__
    assert set(d["model"]) >= {"path", "size_bytes", "sha256", "subgraphs", "operators", "description"}
    for t in d["inputs"] + d["outputs"]:
        assert set(t) >= {"name", "dtype", "shape", "shape_signature"}
    assert set(d["totals"]) >= {"macs", "flops", "params", "param_bytes", "bytes_read", "bytes_written"}
    for v in d["by_op_type"].values():
        assert set(v) >= {"count", "macs", "flops"}
    op_keys = {"subgraph", "index", "op_type", "name", "inputs", "outputs", "macs", "flops", "bytes_read",
               "bytes_written", "params", "status", "formula", "note"}
    assert len(d["ops"]) == d["model"]["operators"]  # every op of every subgraph
    for op in d["ops"]:
        assert set(op) >= op_keys
        assert op["status"] in ("ok", "zero", "unsupported")
    assert isinstance(d["unsupported"], dict) and isinstance(d["warnings"], list)
    assert "latency" in d and d["latency"] is None
    _ints(d)


def test_totals_are_the_sum_of_per_inference_ops(report):
    ops = [o for o in report.ops if o.phase == "inference"]
    assert report.totals.macs == sum(o.macs for o in ops)
    assert report.totals.flops == sum(o.flops for o in ops)
    assert report.totals.flops == sum(v["flops"] for v in report.totals.by_precision.values())
    assert sum(v.count for v in report.by_op_type.values()) == len(ops)


def test_round_trip(report):
    again = Report.from_json(report.to_json())
    assert again == report
    assert again.to_json() == report.to_json()


def test_csv_one_row_per_op_with_raw_integers(report, tmp_path):
    path = tmp_path / "ops.csv"
    text = write(report, str(path))  # the format from the extension
    assert path.read_text() == text == render(report, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(report.ops)
    for row, op in zip(rows, report.ops):
        assert int(row["macs"]) == op.macs and int(row["flops"]) == op.flops  # no "1.2M"
        assert row["op_type"] == op.op_type


def test_schema_version_is_checked(report):
    d = report.to_dict()
    d["schema_version"] = 99
    with pytest.raises(ValueError, match="schema_version"):
        Report.from_dict(d)


def test_sha256_is_the_files_and_computed_once(tmp_path, monkeypatch):
    import hashlib

    from tflite_flops import files as files_module

    path = SAMPLES[0]
    calls = []
    real = files_module.sha256_file
    monkeypatch.setattr(files_module, "sha256_file", lambda p: calls.append(p) or real(p))
    model = tflite_flops.load_model(path)
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert tflite_flops.analyze(model).model.sha256 == expected
    assert tflite_flops.analyze(model).model.sha256 == expected  # a sweep over one parsed model hashes once
    assert tflite_flops.analyze(path.read_bytes()).model.sha256 == expected
    assert len(calls) == 1


def test_report_module_imports_no_renderer():
    """The report is pure data: importing it loads no renderer (renderers depend on it, never the reverse)."""
    code = ("import sys, tflite_flops.report; "
            "print(sorted(m for m in sys.modules if m.startswith('tflite_flops.render')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
    assert not hasattr(Report, "to_csv")


def test_measured_records_keep_their_json_keys_in_order():
    """A measured record lists only the fields that were set, in the order of the JSON files."""
    from tflite_flops.report import LatencyStats, Roofline, Throughput

    skipped = {"skipped": "no runtime", "runtime": "litert"}
    assert list(LatencyStats.from_dict(skipped).to_dict()) == ["skipped", "runtime"]
    per_op = {"runtime": "litert", "median_ms": 0.0, "input_shapes": [[1, 2]], "per_op_sum_ms": 1.0,
              "per_op_timed": 3, "per_op_not_timed": 0, "per_op_vs_whole": None, "per_op_note": "n"}
    assert LatencyStats.from_dict(per_op).to_dict() == per_op  # per_op_vs_whole stays, null
    assert list(LatencyStats.from_dict(per_op).to_dict()) == list(per_op)
    newer = {"median_ms": 1.0, "from_a_newer_version": [1]}
    assert LatencyStats.from_dict(newer).to_dict() == newer  # kept, not lost
    assert Throughput.from_dict({}).to_dict() == {}
    rl = {"peak_flops_per_s": 1.0, "peak_bytes_per_s": 2.0, "ridge_intensity": 0.5, "ops": [],
          "counts": {"compute": 0, "memory": 0}, "above_roof": 0, "above_roof_note": None}
    assert Roofline.from_dict(rl).to_dict() == rl
    op = {"subgraph": 0, "index": 1, "op_type": "ADD", "intensity": 0.1, "bound": "memory", "roof_flops_per_s": 1.0,
          "achieved_flops_per_s": None, "fraction_of_roof": None, "above_roof": False}
    newer_rl = {**rl, "ops": [{**op, "from_a_newer_version": 1}], "counts": {"compute": 0, "memory": 1, "io": 2},
                "probe_note": "kept"}
    back = Roofline.from_dict(newer_rl).to_dict()
    assert back["probe_note"] == "kept" and back["ops"] == [op] and back["counts"] == {"compute": 0, "memory": 1}
