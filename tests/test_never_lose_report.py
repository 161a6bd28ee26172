"""Issue 12: a runtime failure (at load, prepare or invoke) or incomplete shapes never lose the report.

The failing model is the bundled float CNN at batch 3: its TRANSPOSE_CONV hard-codes
``output_shape [1, 16, 16, 8]``, so propagation stops there (5 ops keep their stored shapes) and
LiteRT's builtin kernel fails inside ``invoke()`` (XNNPACK runs the same graph anyway).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import cli_process
import pytest

ROOT = Path(__file__).resolve().parent.parent
CNN = str(ROOT / "sample_models" / "cnn_float.tflite")
FAST = ("--runs", "2", "--warmup", "1")
INVOKE_FAILS = ("--batch", "3", "--latency", "--no-xnnpack", *FAST)
# the static numbers of the CNN at batch 3 (3 x the batch-following ops, the rest at batch 1)
MACS_B3 = 1_192_016


def run(*args):
    return cli_process.run(args, cwd=ROOT, timeout=300)


def one_line_reason(text: str) -> None:
    assert "Node number 7 (TRANSPOSE_CONV) failed to invoke" in text
    assert ")Node" not in text  # LiteRT's glued messages are separated
    assert "internal error" not in text and "Traceback" not in text


# ---- invoke() failures: analyze, sweep, compare, batch ----------------------------------------------


@pytest.mark.runtime
@pytest.mark.slow
def test_analyze_keeps_the_static_report_when_invoke_fails():
    r = run("analyze", CNN, *INVOKE_FAILS)
    assert r.returncode == 0, r.stderr
    assert "MACs               1.192 M         1,192,016" in r.stdout  # the full static report
    assert "Top 10 ops by FLOPs" in r.stdout
    assert "Latency skipped: the litert runtime failed in invoke(): " in r.stdout
    one_line_reason(r.stdout + r.stderr)
    assert "warning: latency skipped: " in r.stderr

    j = run("analyze", CNN, *INVOKE_FAILS, "-f", "json")
    d = json.loads(j.stdout)
    assert d["totals"]["macs"] == MACS_B3 and len(d["ops"]) == 12
    assert d["latency"]["runtime"] == "litert" and "failed in invoke()" in d["latency"]["skipped"]

    strict = run("analyze", CNN, *INVOKE_FAILS, "--strict", "-f", "json")
    assert strict.returncode == 1
    assert json.loads(strict.stdout)["totals"]["macs"] == MACS_B3  # still printed
    last = strict.stderr.strip().splitlines()[-1]
    assert last.startswith("error: --strict: ") and "latency skipped" in last


@pytest.mark.runtime
@pytest.mark.slow
def test_sweep_skips_the_point_that_fails():
    r = run("sweep", CNN, "--batch", "1,3", "--latency", "--no-xnnpack", *FAST, "-f", "json")
    assert r.returncode == 0, r.stderr
    points = json.loads(r.stdout)["points"]
    assert [p["totals"]["macs"] for p in points] == [397_392, MACS_B3]
    assert points[0]["latency"]["median_ms"] > 0
    assert "failed in invoke()" in points[1]["latency"]["skipped"]
    assert "warning: point batch=3: latency skipped: the litert runtime failed in invoke()" in r.stderr
    one_line_reason(points[1]["latency"]["skipped"])
    assert run("sweep", CNN, "--batch", "1,3", "--latency", "--no-xnnpack", *FAST, "--strict").returncode == 1


@pytest.mark.runtime
@pytest.mark.slow
def test_compare_keeps_both_reports_when_invoke_fails():
    r = run("compare", CNN, str(ROOT / "sample_models" / "cnn_int8.tflite"), *INVOKE_FAILS)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^  MACs +1\.192 M +1\.192 M ", r.stdout, re.M)
    assert "! A: latency skipped: the litert runtime failed in invoke()" in r.stdout
    assert "! B: partial totals: 5 op(s) with unresolved shapes" in r.stdout
    one_line_reason(r.stdout)


@pytest.mark.runtime
@pytest.mark.slow
def test_batch_rows_keep_their_static_costs_when_invoke_fails():
    r = run("batch", CNN, *INVOKE_FAILS, "-f", "json")
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)["models"][0]
    assert row["status"] == "partial" and row["error"] is None
    assert row["macs"] == MACS_B3 and row["unresolved_ops"] == 5
    assert "failed in invoke()" in row["latency_skipped"] and row["latency_median_ms"] is None
    assert "latency skipped: the litert runtime failed in invoke()" in r.stderr


@pytest.mark.runtime
def test_library_add_latency_skips_instead_of_raising():
    import tflite_flops
    from tflite_flops.measure.bench import BenchSettings
    from tflite_flops.measure.latency import add_latency
    from tflite_flops.measure.runtime import RuntimeSettings

    report = tflite_flops.analyze(CNN, batch=3)
    out = add_latency(report, CNN, RuntimeSettings(xnnpack=False), BenchSettings(2, 1), progress=False)
    assert out.totals == report.totals and "Node number 7" in out.latency.skipped
    assert out.warnings[-1].startswith("latency skipped: ")


@pytest.mark.runtime
@pytest.mark.slow
def test_per_op_failure_keeps_the_whole_model_latency():
    """XNNPACK runs the batch-3 graph, the builtin kernels (used to capture activations) do not."""
    r = run("analyze", CNN, "--batch", "3", "--per-op", *FAST, "-f", "json")
    assert r.returncode == 0, r.stderr
    lat = json.loads(r.stdout)["latency"]
    assert lat["median_ms"] > 0 and "failed in invoke()" in lat["per_op_skipped"]
    assert "warning: per-op latency skipped" in r.stderr


def test_runtime_messages_are_split_into_readable_parts():
    from tflite_flops.measure.runtime import runtime_message

    glued = RuntimeError("tflite/kernels/transpose_conv.cc:902 SizeOfDimension(input, 0) != SizeOfDimension(output, "
                         "0) (3 != 1)Node number 7 (TRANSPOSE_CONV) failed to invoke.")
    assert runtime_message(glued) == ("tflite/kernels/transpose_conv.cc:902 SizeOfDimension(input, 0) != "
                                      "SizeOfDimension(output, 0) (3 != 1); Node number 7 (TRANSPOSE_CONV) failed "
                                      "to invoke.")
    assert runtime_message(RuntimeError("a\nb")) == "a; b"
    assert runtime_message(ValueError()) == "ValueError"


def test_failures_at_every_stage_become_skips():
    """Load, resize, allocate and invoke failures of a fake interpreter all end as RuntimeUnavailableError."""
    from tflite_flops.measure import bench, runtime
    from tflite_flops.errors import RuntimeUnavailableError

    class Fake:
        def __init__(self, fail: str):
            self.fail = fail

        def get_input_details(self):
            return [{"name": "x", "index": 0, "shape": [1, 2], "dtype": "float32"}]

        def resize_tensor_input(self, *a, **k):
            if self.fail == "resize":
                raise ValueError("Cannot set tensor: Dimension mismatch")

        def allocate_tensors(self):
            if self.fail == "allocate":
                raise RuntimeError("Encountered unresolved custom op: Foo.\nNode number 0 (Foo) failed to prepare.")

        def set_tensor(self, *a):
            pass

        def invoke(self):
            if self.fail == "invoke":
                raise RuntimeError("boom.Node number 3 (ADD) failed to invoke.")

    messages = {}
    for stage in ("resize", "allocate", "invoke"):
        orig = bench.make_interpreter
        bench.make_interpreter = lambda model, settings, stage=stage: Fake(stage)
        try:
            with pytest.raises(RuntimeUnavailableError) as info:
                bench.measure_model(b"", {0: (2, 2)}, runtime.RuntimeSettings(), bench.BenchSettings(1, 1))
        finally:
            bench.make_interpreter = orig
        messages[stage] = str(info.value)
    assert messages["resize"].startswith("the runtime cannot resize the inputs to these shapes: ")
    assert messages["allocate"].startswith("the runtime has no kernel for the unresolved custom op 'Foo'")
    assert "shapes" not in messages["allocate"]  # a missing custom op is not a shape problem
    assert messages["invoke"] == "the litert runtime failed in invoke(): boom.; Node number 3 (ADD) failed to invoke."


# ---- partial totals ---------------------------------------------------------------------------------


def test_partial_totals_are_flagged_everywhere():
    import tflite_flops
    from tflite_flops.render import render
    from tflite_flops.render.formats.table import render_table
    from tflite_flops.report import Report

    report = tflite_flops.analyze(CNN, batch=3)
    assert report.totals.complete is False and report.totals.unresolved_ops == 5
    assert type(report.totals.unresolved_ops) is int
    d = json.loads(report.to_json())
    assert d["totals"]["complete"] is False and d["totals"]["unresolved_ops"] == 5
    assert Report.from_json(report.to_json()) == report
    assert "! PARTIAL TOTALS: 5 op(s) with unresolved shapes" in render_table(report)
    assert "Partial totals: 5 op(s) with unresolved shapes" in render(report, "md")
    assert 'id="partial-totals"' in render(report, "html")

    full = tflite_flops.analyze(CNN)
    assert full.totals.complete is True and full.totals.unresolved_ops == 0
    assert "PARTIAL" not in render_table(full) and 'id="partial-totals"' not in render(full, "html")
    dynamic = tflite_flops.analyze(str(ROOT / "sample_models" / "fcn_dynamic.tflite"))
    assert dynamic.totals.complete is False and dynamic.totals.unresolved_ops == 11
    # a dynamic batch alone is analysed per sample, complete (tests/test_dynamic_batch.py)
    per_sample = tflite_flops.analyze(str(ROOT / "sample_models" / "mlp_dynamic_batch.tflite"))
    assert per_sample.totals.complete is True and per_sample.totals.unresolved_ops == 0


def test_old_json_without_the_new_fields_still_loads():
    import tflite_flops
    from tflite_flops.report import Report

    d = json.loads(tflite_flops.analyze(CNN).to_json())
    for t in ("totals", "init_totals"):
        del d[t]["complete"], d[t]["unresolved_ops"]
    old = Report.from_dict(d)
    assert old.totals.complete is True and old.totals.unresolved_ops == 0


def test_strict_fails_on_partial_totals_after_printing_the_report():
    r = run("analyze", CNN, "--batch", "3", "--strict")
    assert r.returncode == 1
    assert "PARTIAL TOTALS" in r.stdout and "Top 10 ops by FLOPs" in r.stdout
    assert r.stderr.strip().splitlines()[-1] == "error: --strict: the totals are partial: 5 op(s) have unresolved shapes"
    assert run("analyze", CNN, "--strict").returncode == 0
    import tflite_flops
    from tflite_flops.errors import ShapeError

    with pytest.raises(ShapeError, match="partial"):
        tflite_flops.analyze(CNN, batch=3, strict=True)


@pytest.mark.runtime
@pytest.mark.slow
def test_latency_of_an_inconsistent_graph_is_flagged():
    """XNNPACK runs the batch-3 CNN although its TRANSPOSE_CONV output keeps batch 1."""
    r = run("analyze", CNN, "--batch", "3", "--latency", *FAST)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Latency ("))
    flag = next(line for line in lines[at:at + 8] if line.startswith("  ! "))
    assert "timed a graph whose shapes are inconsistent: 5 op(s)" in flag
    d = json.loads(run("analyze", CNN, "--batch", "3", "--latency", *FAST, "-f", "json").stdout)
    assert d["latency"]["shapes_consistent"] is False and "inconsistent" in d["latency"]["shape_warning"]
    ok = json.loads(run("analyze", CNN, "--latency", *FAST, "-f", "json").stdout)
    assert "shapes_consistent" not in ok["latency"]


@pytest.mark.slow
def test_batch_flags_dynamic_models_as_partial():
    r = run("batch", str(ROOT / "sample_models"), "-j", "1", "-f", "json")
    assert r.returncode == 0, r.stderr
    rows = {Path(row["model"]).name: row for row in json.loads(r.stdout)["models"]}
    # the two samples with dynamic dims other than the batch (tiny_decoder_kv's first subgraph has a
    # dynamic KV length); a dynamic batch alone is analysed per sample, complete
    for name, unresolved in (("fcn_dynamic.tflite", 11), ("tiny_decoder_kv.tflite", 63)):
        assert rows[name]["status"] == "partial" and rows[name]["unresolved_ops"] == unresolved
        assert f"{name}: partial totals: {unresolved} op(s) with unresolved shapes" in r.stderr
    for name in ("cnn_float.tflite", "mlp_dynamic_batch.tflite"):
        assert rows[name]["status"] == "ok" and rows[name]["unresolved_ops"] == 0
    assert "2 with partial totals" in r.stderr
    sized = run("batch", str(ROOT / "sample_models" / "mlp_dynamic_batch.tflite"), "--batch", "4", "-f", "json")
    assert json.loads(sized.stdout)["models"][0]["status"] == "ok"


# ---- runtime noise on stderr --------------------------------------------------------------------------


@pytest.mark.runtime
@pytest.mark.slow
def test_no_runtime_log_lines_on_stderr():
    r = run("analyze", CNN, "--latency", *FAST)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # no "INFO: Created TensorFlow Lite XNNPACK delegate for CPU."


@pytest.mark.tf
def test_no_tensorflow_log_lines_on_stderr():
    r = run("analyze", CNN, "--latency", "--runtime", "tensorflow", *FAST)
    assert r.returncode == 0, r.stderr
    assert "INFO:" not in r.stderr and "I0000" not in r.stderr and "absl" not in r.stderr
    assert "deprecated" not in r.stderr and r.stderr == ""


# ---- --inputs -------------------------------------------------------------------------------------------


@pytest.mark.runtime
@pytest.mark.slow
@pytest.mark.parametrize("key", ["image", "serving_default_image:0", "0", "arr_0"])
def test_inputs_accept_every_name_the_report_shows(tmp_path, key):
    import numpy as np

    path = tmp_path / "in.npz"
    np.savez(path, **{key: np.zeros((1, 32, 32, 3), np.float32)})
    r = run("analyze", CNN, *FAST, "--inputs", str(path), "-f", "json")  # --inputs implies --latency
    assert r.returncode == 0, r.stderr
    lat = json.loads(r.stdout)["latency"]
    assert lat.get("median_ms") is not None, lat


@pytest.mark.runtime
@pytest.mark.slow
def test_inputs_errors_are_clear(tmp_path):
    import numpy as np

    positional = tmp_path / "pos.npz"
    np.savez(positional, np.zeros((1, 32, 32, 3), np.float32))  # stored as arr_0
    assert json.loads(run("analyze", CNN, *FAST, "--inputs", str(positional), "-f", "json").stdout
                      )["latency"]["median_ms"] > 0
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, image=np.zeros((2, 32, 32, 3), np.float32))
    skipped = json.loads(run("analyze", CNN, *FAST, "--inputs", str(wrong), "-f", "json").stdout)["latency"]["skipped"]
    assert skipped.endswith("has shape [2, 32, 32, 3], the model runs [1, 32, 32, 3]")  # plain ints
    extra = tmp_path / "extra.npz"
    np.savez(extra, image=np.zeros((1, 32, 32, 3), np.float32), mask=np.zeros((1,), np.float32))
    skipped = json.loads(run("analyze", CNN, *FAST, "--inputs", str(extra), "-f", "json").stdout)["latency"]["skipped"]
    assert "'mask' match no input" in skipped and "'image'" in skipped
    missing = run("analyze", CNN, "--inputs", str(tmp_path / "nope.npz"))
    assert missing.returncode == 2 and missing.stderr.startswith("error: ") and len(missing.stderr.splitlines()) == 1


@pytest.mark.runtime
@pytest.mark.slow
def test_inputs_imply_latency_in_sweep_and_compare(tmp_path):
    import numpy as np

    path = tmp_path / "in.npz"
    np.savez(path, image=np.zeros((1, 32, 32, 3), np.float32))
    sweep = run("sweep", CNN, "--batch", "1", *FAST, "--inputs", str(path), "-f", "json")
    assert sweep.returncode == 0, sweep.stderr
    assert json.loads(sweep.stdout)["points"][0]["latency"]["median_ms"] > 0
    compare = run("compare", CNN, CNN, *FAST, "--inputs", str(path), "-f", "json")
    assert compare.returncode == 0, compare.stderr
    assert json.loads(compare.stdout)["totals"]["latency.median_ms"]["a"] > 0
