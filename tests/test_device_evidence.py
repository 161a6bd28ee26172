"""Evidence from devices: benchmark_model's ModelRuntimeDetails, BenchmarkResult and proto op profile,
joined to the report (``import-profile --runtime-info/--result``).

The runtime-details fixtures are written with ai-edge-litert's own ``model_runtime_info_pb2`` classes,
from what LiteRT itself did with the model here (tests/litert_plan.py): the same facts benchmark_model
records on a phone. The BenchmarkResult is encoded by hand in protobuf's wire format (tag = field
number << 3 | wire type), independently of the message class the tool declares.
"""

from __future__ import annotations

import json
import struct

import pytest

import cli_process
import tflite_flops
from litert_plan import litert_plan
from tflite_flops.device.benchmark_protos import (join_runtime_details, message_class, parse_benchmark_result,
                                                  parse_profile_proto, parse_runtime_details, runtime_mismatches)

pytestmark = pytest.mark.runtime


def _runtime_details(path: str, replaced: list[frozenset[int]] | None = None, delegate="TfLiteXNNPackDelegate") -> bytes:
    """A ModelRuntimeDetails of ``path``'s primary subgraph as benchmark_model writes it (model_runtime_info.cc):
    every original node by id and name, then one DELEGATE node per partition with the ids it replaced."""
    details_class = message_class("tflite.profiling.ModelRuntimeDetails")  # ai-edge-litert's model_runtime_info_pb2
    model = tflite_flops.load_model(path)
    plan = litert_plan(path)
    partitions = plan.partitions if replaced is None else replaced
    details = details_class(model_name=path.rsplit("/", 1)[-1])
    sg = details.subgraphs.add(subgraph_id=0, subgraph_type=1)  # RuntimeSubgraph.TFLITE_SUBGRAPH
    owner = {op: p for p, ops in enumerate(partitions) for op in ops}
    n = len(model.subgraphs[0].operators)
    for op in model.subgraphs[0].operators:
        node = sg.nodes.add(id=op.index, name=op.op_type, type=str(op.builtin_code))
        if op.index in owner:
            node.delegated_to_node_id = n + owner[op.index]
    for p, ops in enumerate(partitions):
        node = sg.nodes.add(id=n + p, name=delegate, type=f"Delegate/{delegate}")
        node.delegate_node_details.delegate_name = delegate
        node.delegate_node_details.tflite_node_ids_replaced.extend(sorted(ops))
    sg.execution_plan.extend(sorted(set(range(n)) - set(owner)) + [n + p for p in range(len(partitions))])
    return details.SerializeToString()


def test_the_device_placement_is_what_litert_did_and_what_we_predicted(samples_dir):
    path = str(samples_dir / "cnn_int8.tflite")
    report = tflite_flops.analyze(path)
    placement = parse_runtime_details(_runtime_details(path), "rt.pb")
    assert runtime_mismatches(report, placement) == []
    joined = join_runtime_details(report, placement, "rt.pb")
    device = joined.delegation["device"]
    assert (device.delegated_ops, device.kept_ops, device.partitions) == (10, 2, 2)
    assert device.extra["differs_from_xnnpack_prediction"] == []
    assert [o.device_placement for o in joined.ops if o.op_type in ("RELU", "SOFTMAX")] == ["builtin", "builtin"]
    assert all(o.device_partition == o.xnnpack_partition for o in joined.ops)


def test_a_device_placement_other_than_the_prediction_is_named(samples_dir, tmp_path):
    path = str(samples_dir / "cnn_int8.tflite")
    # a device that kept op 9 (MEAN) off XNNPACK as well: partitions {0..7} and {10}
    rt = tmp_path / "rt.pb"
    rt.write_bytes(_runtime_details(path, [frozenset(range(8)), frozenset({10})]))
    run = cli_process.run(["import-profile", path, "--runtime-info", str(rt), "--format", "json"])
    assert run.returncode == 0, run.stderr
    d = json.loads(run.stdout)
    assert d["delegation"]["device"]["differs_from_xnnpack_prediction"] == ["0:9 MEAN"]
    assert "the device placed 1 op(s) other than the XNNPACK prediction: 0:9 MEAN" in run.stderr
    table = cli_process.run(["import-profile", path, "--runtime-info", str(rt)]).stdout
    assert "On the device (as measured on the device by TfLiteXNNPackDelegate): 9 of 12 ops delegated" in table


@pytest.mark.slow
def test_runtime_details_of_another_model_are_refused_unless_forced(samples_dir, tmp_path):
    rt = tmp_path / "fp16.pb"
    rt.write_bytes(_runtime_details(str(samples_dir / "cnn_fp16.tflite")))
    path = str(samples_dir / "cnn_int8.tflite")
    run = cli_process.run(["import-profile", path, "--runtime-info", str(rt)])
    assert run.returncode == 1 and run.stdout == ""
    assert "is not the runtime details of" in run.stderr and "DEQUANTIZE" in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert cli_process.run(["import-profile", path, "--runtime-info", str(rt), "--force"]).returncode == 0


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return bytes([number << 3 | wire]) + payload


def _float(number: int, value: float) -> bytes:
    return _field(number, 5, struct.pack("<f", value))


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _message(number: int, body: bytes) -> bytes:
    return _field(number, 2, _varint(len(body)) + body)


def test_benchmark_result_is_read_from_its_wire_format(tmp_path, samples_dir):
    # benchmark_result.proto: BenchmarkResult{name=1, latency_metrics=2, memory_metrics=3, misc_metrics=4};
    # LatencyMetrics{avg 1, min 2, max 3, stddev 4, median 5, p5 6, p95 7, init 8, first_inference 9, warm_up 10}
    latency = b"".join(_float(n, v) for n, v in ((1, 2.5), (2, 2.0), (3, 4.0), (4, 0.5), (5, 2.25), (6, 2.0),
                                                 (7, 3.5), (8, 120.0), (9, 9.0), (10, 3.0)))
    memory = _field(1, 0, _varint(2048)) + _field(2, 0, _varint(4096)) + _float(3, 37.5)
    misc = _float(1, 0.01) + _field(2, 0, _varint(50)) + _field(3, 0, _varint(5))
    data = _message(1, b"pixel8") + _message(2, latency) + _message(3, memory) + _message(4, misc)
    lat = parse_benchmark_result(data, "result.pb")
    assert (lat.median_ms, lat.mean_ms, lat.min_ms, lat.max_ms, lat.std_ms) == (2.25, 2.5, 2.0, 4.0, 0.5)
    assert (lat.init_ms, lat.first_ms, lat.runs, lat.warmup, lat.cv) == (120.0, 9.0, 50, 5, 0.2)
    assert lat.extra["p95_ms"] == 3.5 and lat.extra["device_memory"]["overall_footprint_kb"] == 4096
    path = tmp_path / "result.pb"
    path.write_bytes(data)
    run = cli_process.run(["import-profile", str(samples_dir / "cnn_int8.tflite"), "--result", str(path)])
    assert run.returncode == 0, run.stderr
    assert "Latency (benchmark_model (device), 50 runs)" in run.stdout and "median 2.250 ms" in run.stdout


def test_the_op_profile_in_proto_form_joins_like_the_text_form(samples_dir, tmp_path):
    path = str(samples_dir / "cnn_int8.tflite")
    model = tflite_flops.load_model(path)
    data = message_class("tflite.profiling.BenchmarkProfilingData")(model_name="cnn_int8.tflite")
    sg = data.runtime_profile.subgraph_profiles.add(subgraph_index=0, subgraph_name="main")
    for op in model.subgraphs[0].operators:  # benchmark_model names a row by its op's output tensor
        name = model.subgraphs[0].tensors[op.outputs[0]].name
        row = sg.per_op_profiles.add(node_type=op.op_type, name=name, run_order=op.index, times_called=1)
        row.inference_microseconds.avg = 100 + op.index  # 0.1 ms + index µs
        row.inference_microseconds.count = 10
    rows = parse_profile_proto(data.SerializeToString(), "profile.pb")
    assert [r.node_type for r in rows] == [op.op_type for op in model.subgraphs[0].operators]
    f = tmp_path / "profile.pb"
    f.write_bytes(data.SerializeToString())
    run = cli_process.run(["import-profile", path, str(f), "--format", "json"])
    assert run.returncode == 0, run.stderr
    ops = json.loads(run.stdout)["ops"]
    assert [o["latency_ms"] for o in ops] == [pytest.approx((100 + i) / 1000) for i in range(len(ops))]


@pytest.mark.parametrize("flag", ["--runtime-info", "--result", None])
def test_a_file_that_is_no_such_proto_fails_in_one_line(samples_dir, tmp_path, flag):
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff\xff\xff not a protocol buffer")
    args = ["import-profile", str(samples_dir / "cnn_int8.tflite")] + ([flag, str(bad)] if flag else [str(bad)])
    run = cli_process.run(args)
    assert run.returncode != 0 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


@pytest.mark.tf
def test_the_protos_read_after_tensorflow_registered_its_copy(samples_dir):
    """TensorFlow ships the same tflite.profiling .proto files; imported first, it owns them in protobuf's pool,
    and ai-edge-litert's modules cannot register theirs. The reader then uses TensorFlow's identical classes."""
    import subprocess
    import sys

    code = ("import tensorflow, tflite_flops\n"
            "from tflite_flops.device.benchmark_protos import message_class, parse_runtime_details\n"
            "d = message_class('tflite.profiling.ModelRuntimeDetails')(model_name='m')\n"
            "sg = d.subgraphs.add(subgraph_id=0)\n"
            "sg.nodes.add(id=0, name='ADD')\n"
            "print(parse_runtime_details(d.SerializeToString()).nodes[0].op_type)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("ADD")
