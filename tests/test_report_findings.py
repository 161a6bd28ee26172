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


def test_an_llms_many_inputs_fold_into_a_line_per_kind():
    from dataclasses import replace

    from tflite_flops.report import TensorSummary

    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    # an LLM's decode step: the token, its position and a KV cache of 24 layers × K and V
    caches = [TensorSummary(f"kv_cache_{kv}_{i}", "FLOAT32", (1, 1280, 4, 64), None, 2 + 2 * i + (kv == "v"))
              for i in range(24) for kv in ("k", "v")]
    inputs = (TensorSummary("tokens", "INT32", (1, 1), None, 0), TensorSummary("input_pos", "INT32", (1,), None, 1),
              *caches)
    table = render_table(replace(report, inputs=inputs))
    lines = [line for line in table.splitlines() if line.startswith("  input ")]
    assert lines == ["  input  tokens: INT32 [1,1]", "  input  input_pos: INT32 [1]",
                     "  input  kv_cache_k_0, kv_cache_v_0 … kv_cache_v_23 (48): FLOAT32 [1,1280,4,64]"]
    assert len(report.to_dict()["inputs"]) == 1 and len(replace(report, inputs=inputs).to_dict()["inputs"]) == 50
    # a few inputs stay one line each
    assert [line for line in render_table(report).splitlines() if line.startswith("  input ")] == \
        ["  input  image: FLOAT32 [1,32,32,3]"]
