"""A dynamic batch alone is not a partial result; other dynamic dims stay loud, with examples from the model.

A model whose only dynamic dim is the leading batch of its inputs (every Keras-converted model:
``[-1,224,224,3]``) is analysed per sample, at batch 1: complete totals, no warning, one note
(``Report.notes``, ``note:`` on stderr), ``settings["assumed_batch"] == 1``, and ``--strict``
passes. As soon as an input has another dynamic dim (an image side, a sequence, a KV-cache
length), every input left dynamic is warned about and unresolved as before, and the example
shape in the warning comes from the model (another signature's cache length) or is a placeholder
letter, never an invented 224.

Counts: ``mlp_dynamic_batch`` costs 64·128 + 128·64 + 64·10 = 17,024 MACs per sample.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import cli_process
import numpy as np
import pytest
from tflite_builder import ADD, FULLY_CONNECTED, build_model

import tflite_flops
from tflite_flops.errors import ShapeError
from tflite_flops.render import render
from tflite_flops.render.formats.table import render_table
from tflite_flops.report import Report

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
MLP = SAMPLES / "mlp_dynamic_batch.tflite"
FCN = SAMPLES / "fcn_dynamic.tflite"
KV = SAMPLES / "tiny_decoder_kv.tflite"
MLP_MACS = 64 * 128 + 128 * 64 + 64 * 10  # = 17,024
NOTE = "input 'features' has a dynamic batch (signature [-1,64]): analysed per sample, at batch 1"


def run(*args: str) -> subprocess.CompletedProcess:
    return cli_process.run(args, cwd=ROOT, timeout=120)


def two_inputs(b_signature: list[int], b_stored: list[int]) -> bytes:
    """Input ``a`` [-1,4] -> FULLY_CONNECTED (3 units) -> ``ya``; input ``b`` -> ADD(b, b) -> ``yb``.

    MACs at batch 1: 1·3·4 = 12 (the ADD has FLOPs, no MACs).
    """
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    bias = np.ones(3, dtype=np.float32)
    sg = {"tensors": [{"name": "a", "shape": [1, 4], "shape_signature": [-1, 4]},
                      {"name": "w", "shape": [3, 4], "buffer": 1}, {"name": "bias", "shape": [3], "buffer": 2},
                      {"name": "ya", "shape": [1, 3], "shape_signature": [-1, 3]},
                      {"name": "b", "shape": b_stored, "shape_signature": b_signature},
                      {"name": "yb", "shape": b_stored, "shape_signature": b_signature}],
          "operators": [{"opcode": 0, "inputs": [0, 1, 2], "outputs": [3],
                         "options": ("FullyConnectedOptions", {"fused_activation_function": 0})},
                        {"opcode": 1, "inputs": [4, 4], "outputs": [5]}],
          "inputs": [0, 4], "outputs": [3, 5], "name": "main"}
    return build_model([sg], [FULLY_CONNECTED, ADD], buffers=[None, w.tobytes(), bias.tobytes()],
                       signatures=[{"key": "serving_default", "inputs": {"a": 0, "b": 4},
                                    "outputs": {"ya": 3, "yb": 5}}])


def cache_model(other: tuple[str, list[int]] | None) -> bytes:
    """Signature ``decode``: input ``cache`` [1,-1,4,16] -> ADD(cache, cache). With ``other`` = (input
    name, static shape), a second signature ``decode_fixed`` does the same on that static input."""
    def sg(name: str, stored: list[int], signature: list[int] | None) -> dict:
        return {"tensors": [{"name": name, "shape": stored, "shape_signature": signature},
                            {"name": "out", "shape": stored, "shape_signature": signature}],
                "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1]}], "inputs": [0], "outputs": [1]}

    subgraphs = [sg("cache", [1, 1, 4, 16], [1, -1, 4, 16])]
    signatures = [{"key": "decode", "subgraph": 0, "inputs": {"cache": 0}, "outputs": {"out": 1}}]
    if other is not None:
        subgraphs.append(sg(other[0], other[1], None))
        signatures.append({"key": "decode_fixed", "subgraph": 1, "inputs": {other[0]: 0}, "outputs": {"out": 1}})
    return build_model(subgraphs, [ADD], signatures=signatures)


# --------------------------------------------------------------------------------------------
# A dynamic batch alone: per sample, complete, one note


def test_dynamic_batch_alone_is_analysed_per_sample():
    report = tflite_flops.analyze(MLP)
    assert report.totals.complete and report.totals.unresolved_ops == 0
    assert all(o.shapes_resolved for o in report.ops)
    assert report.totals.macs == MLP_MACS
    assert not report.warnings
    (note,) = report.notes
    assert note.startswith(NOTE) and "--batch N" in note
    assert report.settings["batch"] is None and report.settings["assumed_batch"] == 1
    assert report.inputs[0].shape == (1, 64) and report.inputs[0].shape_signature == (-1, 64)
    assert report.memory is not None and report.memory.complete
    # the same numbers as --batch 1, which is not an assumption: no note there
    one = tflite_flops.analyze(MLP, batch=1)
    assert (one.totals, one.ops) == (report.totals, report.ops)
    assert not one.notes and "assumed_batch" not in one.settings
    tflite_flops.analyze(MLP, strict=True)  # does not raise


def test_notes_round_trip_and_are_only_written_when_there_is_one():
    report = tflite_flops.analyze(MLP)
    d = json.loads(report.to_json())
    assert d["notes"] == list(report.notes) and list(d).index("notes") == list(d).index("warnings") + 1
    assert Report.from_json(report.to_json()) == report
    plain = json.loads(tflite_flops.analyze(SAMPLES / "cnn_float.tflite").to_json())
    assert "notes" not in plain and "assumed_batch" not in plain["settings"]
    assert Report.from_dict(plain).notes == ()


@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_renderers_show_the_note_and_no_partial_line(fmt):
    report = tflite_flops.analyze(MLP)
    text = render_table(report) if fmt == "table" else render(report, fmt)
    assert "analysed per sample, at batch 1" in text
    assert "PARTIAL" not in text and "Partial totals" not in text and 'id="partial-totals"' not in text
    if fmt == "html":
        assert "1 (assumed: dynamic batch, per sample)" in text


def test_cli_dynamic_batch_strict_passes_with_one_note():
    r = run("analyze", str(MLP), "--strict", "-f", "json")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr and "PARTIAL" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("note: " + NOTE)
    d = json.loads(r.stdout)
    assert d["totals"]["complete"] is True and d["totals"]["macs"] == MLP_MACS
    # --batch N: no assumption, no note
    r = run("analyze", str(MLP), "--strict", "--batch", "4", "-f", "json")
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout)["totals"]["macs"] == 4 * MLP_MACS


def test_several_batch_only_inputs_share_one_note():
    data = two_inputs([-1, 5, 4], [1, 5, 4])
    report = tflite_flops.analyze(data, strict=True)
    assert report.totals.complete and not report.warnings
    (note,) = report.notes
    assert note.startswith("inputs 'a', 'b' have a dynamic batch (signatures [-1,4], [-1,5,4])")
    assert report.totals.macs == 12  # 1·3·4
    # a shape given for one of them at batch 1 keeps the other at batch 1, with the note
    given = tflite_flops.analyze(data, input_shapes="b=1x5x4")
    assert given.totals.complete and given.notes and not given.warnings
    # ... at batch 2 the user's batch is not ours to guess: 'a' stays loud, as before
    given = tflite_flops.analyze(data, input_shapes="b=2x5x4")
    assert not given.totals.complete and not given.notes and given.warnings
    assert "'a' has dynamic dims [0]" in given.warnings[0] and "--batch N" in given.warnings[0]


def test_signatures_and_sweep_points_carry_their_notes():
    # signature 'fixed' (subgraph 0) is static; signature 'dyn' (subgraph 1) has a dynamic batch
    def sg(signature: list[int] | None) -> dict:
        return {"tensors": [{"name": "x", "shape": [1, 4], "shape_signature": signature},
                            {"name": "y", "shape": [1, 4], "shape_signature": signature}],
                "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1]}], "inputs": [0], "outputs": [1]}

    data = build_model([sg(None), sg([-1, 4])], [ADD], signatures=[
        {"key": "fixed", "subgraph": 0, "inputs": {"x": 0}, "outputs": {"y": 1}},
        {"key": "dyn", "subgraph": 1, "inputs": {"x": 0}, "outputs": {"y": 1}}])
    report = tflite_flops.analyze(data, all_signatures=True, strict=True)
    assert not report.warnings and report.signatures["dyn"].totals.complete
    assert report.notes == ("signature dyn: input 'x' has a dynamic batch (signature [-1,4]): analysed per "
                            "sample, at batch 1 (--batch N for a batch of N)",)
    from tflite_flops.studies.sweep import sweep

    result = sweep(two_inputs([-1, -1, 4], [1, 1, 4]), ["b=1x5x4", "b=1x7x4"], fit=False)
    assert not result.warnings and all(p.shapes_resolved for p in result.points)
    # the same note at every point: said once, without a point's label
    assert result.notes == ["input 'a' has a dynamic batch (signature [-1,4]): analysed per sample, "
                            "at batch 1 (--batch N for a batch of N)"]


# --------------------------------------------------------------------------------------------
# Other dynamic dims: as loud as before


def test_another_dynamic_dim_stays_loud_batch_included():
    # 'b' has a dynamic second dim: both inputs are warned about and unresolved (the batch-only
    # input 'a' is not made quieter by the other's problem)
    report = tflite_flops.analyze(two_inputs([-1, -1, 4], [1, 1, 4]))
    assert not report.totals.complete and not report.notes and "assumed_batch" not in report.settings
    wa, wb = report.warnings[:2]
    assert "'a' has dynamic dims [0]" in wa and "--batch N" in wa
    assert "'b' has dynamic dims [0, 1]" in wb and "--input-shape b=1xNx4 (replace N with the size of dim 1)" in wb
    with pytest.raises(ShapeError, match="partial"):
        tflite_flops.analyze(two_inputs([-1, -1, 4], [1, 1, 4]), strict=True)


def test_dynamic_image_stays_partial_and_strict_fails():
    report = tflite_flops.analyze(FCN)
    assert not report.totals.complete and report.totals.unresolved_ops == 11 and not report.notes
    assert any("dynamic dims [0, 1, 2]" in w and "--input-shape image=1x224x224x3" in w for w in report.warnings)
    r = run("analyze", str(FCN), "--strict", "-f", "json")
    assert r.returncode == 1 and "note:" not in r.stderr
    assert "partial totals" in r.stderr and "error: --strict" in r.stderr


# --------------------------------------------------------------------------------------------
# The example shape of the warning comes from the model


def test_kv_cache_example_comes_from_another_signature():
    report = tflite_flops.analyze(KV)  # signature 'decode' has a dynamic cache length
    cache = [w for w in report.warnings if "kv_cache" in w]
    assert len(cache) == 4
    for w in cache:
        assert "224" not in w
        assert "=1x128x4x16 (dim 1 as in signature 'decode_kv128'; other signatures have 32, 64)" in w
    # the suggestion works: giving it to every cache input makes the totals complete
    shapes = ",".join(f"kv_cache_{kv}_{i}=1x128x4x16" for kv in "kv" for i in (0, 1))
    full = tflite_flops.analyze(KV, input_shapes=shapes, strict=True)
    assert full.totals.macs == tflite_flops.analyze(KV, signature="decode_kv128").totals.macs


def test_kv_cache_example_from_an_input_of_the_same_rank_and_static_dims():
    (w,) = tflite_flops.analyze(cache_model(("k", [1, 48, 4, 16]))).warnings[:1]
    assert "--input-shape cache=1x48x4x16 (dim 1 as in signature 'decode_fixed')" in w
    # an input of another rank or other static dims says nothing about this one: a placeholder
    (w,) = tflite_flops.analyze(cache_model(("k", [1, 48, 8, 16]))).warnings[:1]
    assert "--input-shape cache=1xNx4x16 (replace N with the size of dim 1)" in w


def test_kv_cache_example_without_another_signature_is_a_placeholder(tmp_path):
    (w,) = tflite_flops.analyze(cache_model(None)).warnings[:1]
    assert "224" not in w and "--input-shape cache=1xNx4x16 (replace N with the size of dim 1)" in w
    # the placeholder is refused as a shape, so it is never taken for a real size
    path = tmp_path / "cache.tflite"
    path.write_bytes(cache_model(None))
    r = run("analyze", str(path), "--input-shape", "cache=1xNx4x16")
    assert r.returncode == 2 and "error: cannot read '1xNx4x16' as a shape" in r.stderr


# --------------------------------------------------------------------------------------------
# A Keras model converted by TensorFlow: signature [-1,32,32,3]


@pytest.mark.tf
@pytest.mark.slow
def test_keras_model_with_a_dynamic_batch_is_complete(tmp_path):
    import tensorflow as tf

    # Conv2D(8, 3×3, stride 2, same) on 32×32×3: 16·16·8 · 3·3·3 = 55,296 MACs
    # DepthwiseConv2D(3×3, same) on 16×16×8:      16·16·8 · 3·3   = 18,432
    # GlobalAveragePooling2D, Flatten-free Dense(10) on 8:   8·10 = 80       total 73,808
    tf.keras.utils.set_random_seed(0)
    L = tf.keras.layers
    model = tf.keras.Sequential([tf.keras.Input((32, 32, 3)), L.Conv2D(8, 3, strides=2, padding="same",
                                                                      activation="relu"),
                                 L.DepthwiseConv2D(3, padding="same", activation="relu"),
                                 L.GlobalAveragePooling2D(), L.Dense(10)])
    from tflite_flops.convert import to_tflite

    data = to_tflite(model, "float")
    report = tflite_flops.analyze(data, strict=True)
    assert report.inputs[0].shape_signature == (-1, 32, 32, 3)
    assert report.totals.complete and not report.warnings and len(report.notes) == 1
    assert report.totals.macs == 55_296 + 18_432 + 80 == 73_808
    assert tflite_flops.analyze(data, batch=4).totals.macs == 4 * report.totals.macs
    path = tmp_path / "keras.tflite"
    path.write_bytes(data)
    r = run("analyze", str(path), "--strict", "-f", "json")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr and r.stderr.count("note: ") == 1
