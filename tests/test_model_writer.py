"""The one model writer: single-op models cut out of a model and the roofline's probe models,
read back by the package's own reader (an independent check of what was written)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tflite_flops
from tflite_flops.measure import model_writer, runtimes
from tflite_flops.errors import RuntimeMissingError
from tflite_flops.reader.load import load_model

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


def _schema():
    return runtimes.schema_module("litert")  # (runtime tests: LiteRT is installed, or they fail)


@pytest.mark.runtime
def test_probe_model_reads_back_with_its_op_shapes_and_weights():
    fb = _schema()
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    blob = model_writer.probe_model(
        fb, "FULLY_CONNECTED", "FullyConnectedOptions",
        [model_writer.ProbeTensor("x", (4, 2)), model_writer.ProbeTensor("w", (3, 2), w), None],
        [model_writer.ProbeTensor("y", (4, 3))], name="probe", description="test probe")
    model = load_model(blob)
    sg = model.main
    assert model.description == "test probe" and sg.name == "probe"
    assert [t.name for t in sg.tensors] == ["x", "w", "y"] and [t.shape for t in sg.tensors] == [(4, 2), (3, 2), (4, 3)]
    assert sg.inputs == (0,) and sg.outputs == (2,)
    op = sg.operators[0]
    assert op.op_type == "FULLY_CONNECTED" and op.inputs == (0, 1, -1) and op.outputs == (2,)
    np.testing.assert_array_equal(model.constant(sg.tensors[1]), w)
    assert tflite_flops.analyze(blob).totals.macs == 24  # 4·3·2


@pytest.mark.runtime
def test_single_op_model_keeps_the_op_and_takes_the_given_shapes():
    fb = _schema()
    data = (SAMPLES / "cnn_int8.tflite").read_bytes()
    original = load_model(data).main
    index = next(i for i, op in enumerate(original.operators) if op.op_type == "CONV_2D")
    op = original.operators[index]
    out = op.outputs[0]
    shapes = {out: (1,) + original.tensors[out].shape[1:]}
    blob, graph_inputs = model_writer.single_op_model(fb, model_writer.read_model(fb, data), index, shapes)
    single = load_model(blob).main
    assert len(single.operators) == 1
    cut = single.operators[0]
    assert cut.op_type == "CONV_2D" and dict(cut.options) == dict(op.options)
    assert graph_inputs == [op.inputs[0]]  # the activation; weights and bias keep their buffers
    assert [single.tensors[i].name for i in cut.inputs] == [original.tensors[i].name for i in op.inputs]
    assert single.tensors[cut.outputs[0]].shape == shapes[out]
    assert single.tensors[cut.inputs[1]].buffer != 0


@pytest.mark.runtime
def test_a_runtime_without_a_schema_module_borrows_an_installed_one():
    assert runtimes.get("tflite_runtime").schema is None
    assert runtimes.schema_module("tflite_runtime") is runtimes.schema_module("litert")


def test_no_schema_module_installed_names_what_to_install(monkeypatch):
    def missing():
        raise ImportError("No module named 'fake'")

    adapters = {n: runtimes.RuntimeAdapter(n, f"pip install {n}", missing, schema=missing if n != "b" else None)
                for n in ("a", "b")}
    monkeypatch.setattr(runtimes, "_ADAPTERS", adapters)
    with pytest.raises(RuntimeMissingError, match=r"install a \(pip install a\)$"):
        runtimes.schema_module("b")


@pytest.mark.runtime
@pytest.mark.parametrize("name", ["cnn_float", "cnn_int8"])
def test_segments_of_a_model_compute_what_the_model_computes(name):
    # The independent reference: LiteRT running the model and its segments. Cut into stretches of 3 ops,
    # each fed what the previous stretches computed, the last stretch's output is the model's, to the bit
    # (the same kernels on the same data); every op is in exactly one stretch.
    from ai_edge_litert.interpreter import Interpreter

    fb = _schema()
    data = (SAMPLES / f"{name}.tflite").read_bytes()
    model_obj = model_writer.read_model(fb, data)
    ops = len(model_obj.subgraphs[0].operators)
    rng = np.random.default_rng(0)

    def run(blob, feeds):
        interpreter = Interpreter(model_content=blob, num_threads=1)
        interpreter.allocate_tensors()
        for detail, value in zip(interpreter.get_input_details(), feeds):
            interpreter.set_tensor(detail["index"], value)
        interpreter.invoke()
        return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]

    whole = Interpreter(model_content=data, num_threads=1)
    detail = whole.get_input_details()[0]
    x = rng.integers(-100, 100, detail["shape"]).astype(detail["dtype"]) if detail["dtype"] != np.float32 else \
        rng.random(detail["shape"], dtype=np.float32)
    expected = run(data, [x])
    values = {model_obj.subgraphs[0].inputs[0]: x}
    covered = 0
    for start in range(0, ops, 3):
        stop = min(start + 3, ops)
        blob, graph_inputs = model_writer.segment_model(fb, model_obj, start, stop)
        cut = load_model(blob).main
        covered += len(cut.operators)
        produced = run(blob, [values[i] for i in graph_inputs])
        names = [cut.tensors[i].name for i in cut.outputs]
        original = {t.name.decode(): i for i, t in enumerate(model_obj.subgraphs[0].tensors)}
        values.update({original[n]: v for n, v in zip(names, produced)})
    assert covered == ops
    out = model_obj.subgraphs[0].outputs[0]
    np.testing.assert_array_equal(values[out], expected[0])


def test_a_segment_that_calls_another_subgraph_is_refused():
    fb = _schema()
    data = (SAMPLES / "lstm.tflite").read_bytes()
    model_obj = model_writer.read_model(fb, data)
    calls = next(i for i, op in enumerate(model_obj.subgraphs[0].operators)
                 if op.builtinOptions is not None and any("subgraph" in k.lower() for k in vars(op.builtinOptions)))
    with pytest.raises(ValueError, match="calls another subgraph"):
        model_writer.segment_model(fb, model_obj, calls, calls + 1)
