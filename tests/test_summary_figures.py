"""One figure, one number (issue 42): each declared summary figure (tflite_flops/report/summary.py) reads the
same in every output that shows it.

Each output is read the way a person reads it: the table's and the Markdown's rows, the HTML page's cards,
``repr`` and the notebook's card, the JSON at the figure's path, ``batch``'s rows (CSV, JSON, table), ``sweep``'s
point and ``compare``'s rows. The memory headline once read 22.9 MiB in the table, 13.2 MiB in ``repr`` and
2.1 MiB in ``batch``'s table for one model; here it must read one number everywhere, and so must params, MACs,
XNNPACK's partitions and the predicted time.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from lanes import slow_cases
import tflite_flops
from profile_helpers import installed_version
from tflite_flops.latency.profile import DeviceProfile, Law, Machine
from tflite_flops.render import render
from tflite_flops.render.batch import rows_csv, rows_json, rows_table
from tflite_flops.report import summary
from tflite_flops.report.compare import compare_reports
from tflite_flops.settings import Settings
from tflite_flops.studies.batch import BatchOptions, analyze_one
from tflite_flops.studies.sweep import PointSpec, sweep

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p.name for p in (ROOT / "sample_models").glob("*.tflite"))
SHOWN = ("macs", "params", "runtime_total_bytes", "xnnpack_partitions", "predicted_ms")


def _profile() -> DeviceProfile:
    """1 ns per MAC on both placements, 10 µs per invoke, 3 µs per partition."""
    laws = tuple(Law("*", "float32", place, {"macs": 0.001}, log_low=math.log(0.9), log_high=math.log(1.25), points=10)
                 for place in ("xnnpack", "builtin"))
    machine = Machine("test cpu", 2, "ai_edge_litert", installed_version(), 1, True)
    return DeviceProfile(machine, laws, invoke_overhead_us=10.0, partition_overhead_us=3.0,
                         created="2026-11-27T00:00:00+00:00", source="calibrate")


def _row(text: str, label: str) -> str:
    """The line of ``text`` whose first cell is ``label``."""
    found = [line for line in text.splitlines() if re.match(rf"\s*\|?\s*{re.escape(label)}", line)]
    assert found, f"no row {label!r}"
    return found[0]


def _card(page: str, label: str) -> tuple[str, str]:
    """(value, detail) of the HTML card ``label``."""
    m = re.search(rf'<div class="k">{re.escape(label)}</div><div class="v">([^<]*)</div><div class="x">([^<]*)</div>',
                  page)
    assert m, f"no card {label!r}"
    return m.group(1), m.group(2)


def check_every_output(path: Path, settings: Settings) -> dict[str, summary.Value]:
    """Analyse ``path`` and check each shown figure in every output; return the figures."""
    report = tflite_flops.analyze(path, settings=settings)
    want = summary.values(report)
    assert want["runtime_total_bytes"] is not None and want["xnnpack_partitions"] is not None
    doc = json.loads(render(report, "json"))
    table, md, page = render(report, "table"), render(report, "md"), render(report, "html")
    row = analyze_one(str(path), BatchOptions(settings))
    point = sweep(path, [PointSpec({}, None)], settings=settings, fit=False).points[0]
    deltas = {d.key: d for d in compare_reports(report, report).totals}
    for key in SHOWN:
        f, v = summary.BY_KEY[key], want[key]
        if v is None:
            continue
        assert summary.json_value(doc, f) == v, (key, "json")
        assert deltas[f.json_path.removeprefix("totals.")].a == v, (key, "compare")  # its totals are top-level
        assert row[key] == v, (key, "batch row")
    # the memory headline: the table's and the Markdown's total, the card, repr and the notebook, batch, sweep
    mem = want["runtime_total_bytes"]
    text, exact = summary.MEMORY.text(mem), summary.MEMORY.exact(mem)
    for out in (table, md):
        line = _row(out, "Total (LiteRT default")
        assert text in line and exact in line, line
    assert _card(page, summary.MEMORY.label)[0] == text
    assert f"memory {text} (" in repr(report) and text in report._repr_html_()
    assert point.totals.runtime_total_bytes == mem
    batch_table = rows_table([row])
    assert text in _row(batch_table, path.name), batch_table
    assert json.loads(rows_json([row]))["models"][0]["runtime_total_bytes"] == mem
    assert f",{mem}," in rows_csv([row]).splitlines()[1]
    # params and MACs: the totals' rows, the cards, repr, batch's table
    for key, label in (("params", "Params"), ("macs", "MACs")):
        f, v = summary.BY_KEY[key], want[key]
        for out in (table, md):
            assert f.exact(v) in _row(out, label)
        assert _card(page, label)[0] == f.text(v)
        assert f"{f.text(v)} {label if key == 'macs' else 'params'}" in repr(report)
    # XNNPACK's partitions: the placement line, the card
    parts = want["xnnpack_partitions"]
    assert f"· {parts} partition{'s' if parts != 1 else ''} ·" in _row(table, "XNNPACK (")
    assert _card(page, "XNNPACK partitions")[0] == str(parts)
    predicted = want["predicted_ms"]
    if predicted is not None:
        f = summary.BY_KEY["predicted_ms"]
        assert _card(page, f.label)[0] == f.text(predicted)
        assert f"latency {predicted:.3f} ms (predicted)" in repr(report)
        assert row["predicted_ms"] == point.prediction.latency_ms == predicted
    return want


@pytest.mark.parametrize("sample", slow_cases(SAMPLES, {"tiny_decoder.tflite", "tiny_decoder_kv.tflite"}))
def test_each_figure_reads_one_number_in_every_output(sample):
    check_every_output(ROOT / "sample_models" / sample, Settings(predict=_profile()))


def test_the_memory_headline_is_not_the_arena_nor_xnnpack_off():
    """The three figures the issue found under one name are three declared figures, with three names."""
    report = tflite_flops.analyze(ROOT / "sample_models" / "cnn_float.tflite")
    got = {k: summary.value(report, k) for k in ("runtime_total_bytes", "builtin_total_bytes", "arena_bytes")}
    assert len(set(got.values())) == 3
    m = report.memory
    # the headline: LiteRT's arena with XNNPACK on + XNNPACK's own bytes + the interpreter's own structures + the
    # weights mapped from the file
    assert got["runtime_total_bytes"] == (m.runtime_xnnpack.arena_bytes + m.runtime_xnnpack.persistent_arena_bytes
                                          + m.runtime_xnnpack.delegate_bytes + m.interpreter_bytes + m.weights_bytes)
    assert len({f.key for f in summary.FIGURES}) == len({f.label for f in summary.FIGURES}) == len(summary.FIGURES)


def _mobilenet_v3_small(keras):
    return keras.applications.MobileNetV3Small(input_shape=(224, 224, 3), weights=None)


def _text_lstm(keras):
    tokens = keras.Input((64,), batch_size=1, dtype="int32")
    x = keras.layers.LSTM(64)(keras.layers.Embedding(5_000, 128)(tokens))
    return keras.Model(tokens, keras.layers.Dense(1)(x))


@pytest.mark.slow
@pytest.mark.tf
@pytest.mark.parametrize("build", [_mobilenet_v3_small, _text_lstm], ids=["mobilenet_v3_small", "text_lstm"])
def test_real_looking_models_read_one_number_in_every_output(build, tmp_path):
    import keras

    import tf_reference as ref

    keras.utils.set_random_seed(0)
    path = tmp_path / "model.tflite"
    path.write_bytes(ref.convert(build(keras)))
    want = check_every_output(path, Settings(predict=_profile()))
    assert want["params"] > 0 and want["predicted_ms"] is not None
