"""Accelerator-compiled custom ops (Edge TPU, LiteRT NPU dispatch, Vela Ethos-U) are reported as
opaque: their own status, a line in every report, flagged totals, and --strict fails on them."""

from __future__ import annotations

import json
from pathlib import Path

import cli_process
import numpy as np
import pytest
from flatbuffers import flexbuffers

import tflite_flops
from tflite_flops.errors import UnsupportedOpError
from tflite_flops.render import RENDERERS, render
from tflite_flops.report import STATUSES, Report

from tflite_builder import CUSTOM, FULLY_CONNECTED, build_model

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = 4096  # bytes of "compiled executable" in the custom options
UINT8_TYPE = 3  # TensorType.UINT8


def edgetpu_model() -> bytes:
    """QUANTIZE-free toy of what edgetpu_compiler writes: input -> edgetpu-custom-op -> FULLY_CONNECTED -> out.

    The custom op holds a 4,096-byte payload in its custom options, as the compiled executable.
    """
    w = np.ones((4, 10), dtype=np.float32)
    sg = {"tensors": [{"name": "image", "shape": [1, 8, 8, 3], "type": UINT8_TYPE},
                      {"name": "features", "shape": [1, 10]},
                      {"name": "w", "shape": [4, 10], "buffer": 1},
                      {"name": "logits", "shape": [1, 4]}],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1], "custom_options": bytes(range(256)) * 16},
                        {"opcode": 1, "inputs": [1, 2, -1], "outputs": [3]}],
          "inputs": [0], "outputs": [3], "name": "main"}
    return build_model([sg], [{"builtin": CUSTOM, "custom": "edgetpu-custom-op"}, FULLY_CONNECTED],
                       buffers=[None, w.tobytes()])


def ethos_u_model() -> bytes:
    """Vela's layout: the ethos-u op reads its command stream and its weights as constant uint8 tensors."""
    fbb = flexbuffers.Builder()
    with fbb.Map():
        fbb.Int("version", 1)
    sg = {"tensors": [{"name": "cmd", "shape": [100], "type": UINT8_TYPE, "buffer": 1},
                      {"name": "flash", "shape": [300], "type": UINT8_TYPE, "buffer": 2},
                      {"name": "x", "shape": [1, 16], "type": UINT8_TYPE},
                      {"name": "y", "shape": [1, 4], "type": UINT8_TYPE}],
          "operators": [{"opcode": 0, "inputs": [0, 1, 2], "outputs": [3], "custom_options": bytes(fbb.Finish())}],
          "inputs": [2], "outputs": [3]}
    return build_model([sg], [{"builtin": CUSTOM, "custom": "ethos-u"}], buffers=[None, bytes(100), bytes(300)])


def test_edgetpu_op_is_opaque_never_zero():
    report = tflite_flops.analyze(edgetpu_model())
    assert "opaque" in STATUSES
    tpu, fc = report.ops
    assert tpu.status == "opaque" and tpu.op_type == "CUSTOM:edgetpu-custom-op"
    assert "compiled for an accelerator (Edge TPU); the ops inside are not visible" in tpu.note
    assert f"custom options {PAYLOAD:,} bytes" in tpu.note
    # The visible FC still counts: 1·4·10 = 40 MACs; the Edge TPU part is flagged, not summed as 0.
    assert report.totals.macs == 40
    assert report.totals.opaque_ops == 1
    assert report.unsupported == {}  # its own status, not "no formula"
    assert any(w.startswith("op 0:0 CUSTOM:edgetpu-custom-op: compiled for an accelerator") for w in report.warnings)
    assert Report.from_json(report.to_json()) == report  # the status and the flag round-trip


@pytest.mark.parametrize("fmt", [f for f in RENDERERS if f != "model-explorer"])
def test_every_report_says_so(fmt):
    text = render(tflite_flops.analyze(edgetpu_model()), fmt)
    if fmt == "csv":
        assert ",opaque," in text  # the op row's status
    else:
        assert "compiled for an accelerator" in text
    if fmt == "json":
        assert json.loads(text)["totals"]["opaque_ops"] == 1
    if fmt in ("table", "md", "html"):
        assert "1 op(s) compiled for an accelerator (CUSTOM:edgetpu-custom-op ×1)" in text


def test_model_explorer_does_not_paint_it_as_zero():
    overlay = json.loads(render(tflite_flops.analyze(edgetpu_model()), "model-explorer"))
    assert set(overlay["main"]["results"]) == {"logits"}


def test_strict_fails_on_opaque_ops():
    with pytest.raises(UnsupportedOpError, match="compiled for an accelerator"):
        tflite_flops.analyze(edgetpu_model(), strict=True)


def test_cli_strict_exit_code(tmp_path):
    path = tmp_path / "tpu.tflite"
    path.write_bytes(edgetpu_model())
    run = lambda *a: cli_process.run(["analyze", str(path), *a], cwd=ROOT, timeout=120)  # noqa: E731
    ok = run()
    assert ok.returncode == 0 and "Opaque: 1 op(s) compiled for an accelerator" in ok.stdout
    strict = run("--strict")
    assert strict.returncode == 1
    # the report is printed first (stdout), then the one error line closes stderr
    assert "Opaque: 1 op(s) compiled for an accelerator" in strict.stdout
    assert strict.stderr.splitlines()[-1] == "error: --strict: 1 op(s) compiled for an accelerator hide their work"


def test_ethos_u_reports_its_constant_inputs():
    report = tflite_flops.analyze(ethos_u_model())
    (op,) = report.ops
    assert op.status == "opaque"
    # command stream 100 bytes + weights 300 bytes = 400 bytes in 2 constant inputs
    assert "2 constant input(s) of 400 bytes" in op.note
    assert "option keys version" in op.note
    assert "Arm Ethos-U (Vela)" in op.note


def test_dispatch_op_is_registered_opaque():
    from tflite_flops.ops import lookup

    assert lookup("CUSTOM:DISPATCH_OP").status == "opaque"


def test_compare_shows_the_opaque_ops_of_either_side():
    from tflite_flops.report.compare import compare_reports
    from tflite_flops.render.compare import render_comparison

    tpu = tflite_flops.analyze(edgetpu_model())
    plain = tflite_flops.analyze(ROOT / "sample_models" / "mlp_dynamic_batch.tflite")
    c = compare_reports(plain, tpu)
    row = next(m for m in c.totals if m.key == "opaque_ops")
    assert (row.a, row.b) == (0, 1)
    assert "Ops compiled for an accelerator" in render_comparison(c, "table")
    assert all(m.key != "opaque_ops" for m in compare_reports(plain, plain).totals)  # no row when neither has any
