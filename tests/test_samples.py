"""The sample models: what make_samples.py reproduces (structure and counts, not bytes).

Weights come out of float arithmetic (random initializers, BatchNorm folding, int8
calibration) whose last bits depend on the CPU and the TensorFlow version, so regenerated
files may differ in a few weight bytes on another machine. Their structure and costs may not.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tflite_flops

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
SHAPES = {"fcn_dynamic.tflite": ["image=2x48x40x3"], "mlp_dynamic_batch.tflite": None}
BATCH = {"mlp_dynamic_batch.tflite": 4}


def structure(path: Path) -> dict:
    """Everything a regenerated sample must reproduce: ops, tensors, signatures and every count."""
    report = tflite_flops.analyze(str(path), input_shapes=SHAPES.get(path.name), batch=BATCH.get(path.name),
                                  count_zeros=False)
    t = report.totals
    return {
        "subgraphs": report.model.subgraphs, "signatures": report.model.signatures,
        "ops": [(o.subgraph, o.index, o.op_type, o.inputs, o.outputs, o.precision, o.phase, o.status,
                 o.macs, o.flops, o.bytes_read, o.bytes_written, o.params) for o in report.ops],
        "inputs": report.inputs, "outputs": report.outputs,
        "totals": (t.macs, t.flops, t.params, t.param_bytes, t.bytes_read, t.bytes_written, dict(t.by_precision)),
        "by_op_type": dict(report.by_op_type),
    }


@pytest.mark.tf
@pytest.mark.slow
def test_regenerated_samples_have_the_same_structure_and_counts(tmp_path):
    r = subprocess.run([sys.executable, str(SAMPLES / "make_samples.py"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    committed = sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.tflite"))  # mcu/ too
    regenerated = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.tflite"))
    assert set(committed) <= set(regenerated), (committed, regenerated)
    for name in committed:
        assert structure(tmp_path / name) == structure(SAMPLES / name), name


def test_readme_claims_structure_not_bytes():
    text = (SAMPLES / "README.md").read_text(encoding="utf-8")
    assert "byte-identical" not in text and "structure and counts" in text
