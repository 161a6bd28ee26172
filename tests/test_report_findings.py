"""Smaller findings of a new user's trial (issue 31): each fixed where the user met it.

* the dynamic-batch note reaches a terminal once (the table shows it; stderr only for JSON, CSV, ...);
* a WHILE body's trip count shows in the per-op tables (``runs ×8``), not only in JSON and CSV;
* ``--max-latency-ms`` turns ``--latency`` on, as its help now says;
* an input shape the model refuses (wrong rank, a fixed dim) exits 2 like an unknown input name
  (tests/test_shapes.py and tests/test_cli.py hold the cases).
"""

from __future__ import annotations

import json
from pathlib import Path

import cli_process
import pytest

import tflite_flops
from tflite_flops.render import render
from tflite_flops.render.formats.table import render_table

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
NOTE = "input 'features' has a dynamic batch"


@pytest.mark.parametrize("fmt, on_stdout, on_stderr", [("table", 1, 0), ("md", 1, 0), ("json", 1, 1), ("csv", 0, 1)])
def test_the_dynamic_batch_note_is_shown_once_per_stream(fmt, on_stdout, on_stderr):
    r = cli_process.run(["analyze", str(SAMPLES / "mlp_dynamic_batch.tflite"), "-f", fmt])
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(NOTE) == on_stdout and r.stderr.count(NOTE) == on_stderr
    assert r.stdout.count(NOTE) + r.stderr.count(NOTE) >= 1  # never lost


def test_while_trip_counts_show_in_the_tables():
    report = tflite_flops.analyze(SAMPLES / "lstm.tflite")  # two Keras LSTM loops of 8 trips each
    looped = [o for o in report.top_ops(10) if o.executions > 1]
    assert looped and {o.executions for o in looped} == {8}
    table = render_table(report, top=10)
    header = next(line for line in table.splitlines() if line.strip().startswith("op ") and "runs" in line)
    assert header.split().index("runs") < header.split().index("MACs")
    assert "×8" in table
    assert "| runs |" in render(report, "md") and "| ×8 |" in render(report, "md")
    assert ">runs</th>" in render(report, "html")
    # a model without a loop keeps its tables as they were
    plain = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    assert "×" not in render_table(plain) and "| runs |" not in render(plain, "md")
    assert ">runs</th>" not in render(plain, "html")


def test_max_latency_ms_help_says_it_turns_latency_on():
    r = cli_process.run(["analyze", "--help"])
    text = " ".join(r.stdout.split())
    assert "limit on the median latency (turns --latency on)" in text
    assert "needs --latency" not in text


@pytest.mark.runtime
@pytest.mark.slow
def test_max_latency_ms_measures_without_latency(tmp_path):
    r = cli_process.run(["analyze", str(SAMPLES / "cnn_float.tflite"), "--max-latency-ms", "100000", "--runs", "3",
                         "--warmup", "1", "-f", "json"], timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["latency"]["median_ms"] > 0
    # and a budget file's latency limit the same way
    budget = tmp_path / "b.toml"
    budget.write_text("max_latency_ms = 100000\n")
    r = cli_process.run(["analyze", str(SAMPLES / "cnn_float.tflite"), "--budget", str(budget), "--runs", "3",
                         "--warmup", "1", "-f", "json"], timeout=300)
    assert r.returncode == 0 and json.loads(r.stdout)["latency"]["median_ms"] > 0
