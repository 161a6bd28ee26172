"""What ``benchmark_model`` measured on a device, read from the protos it writes, and joined to a Report.

Three files, each a serialized protocol buffer:

* ``--export_model_runtime_info=true --model_runtime_info_output_file=F``: a ``ModelRuntimeDetails``
  (``tflite/profiling/proto/model_runtime_info.proto``). Every subgraph's nodes after delegation:
  a node a delegate replaced has ``delegated_to_node_id``; a DELEGATE node has
  ``delegate_node_details`` (the delegate's name and the node ids it replaced). This is where each op
  ran on the device.
* ``--result_file_path=F``: a ``BenchmarkResult`` (``tflite/tools/benchmark/proto/benchmark_result.proto``):
  init, first inference, warm-up, the latency statistics and the memory footprint.
* ``--enable_op_profiling=true --op_profiling_output_mode=proto --op_profiling_output_file=F``: a
  ``BenchmarkProfilingData`` (``tflite/profiling/proto/profiling_info.proto``), the per-op profile.

The first and the last are read with the message classes ai-edge-litert ships
(``model_runtime_info_pb2``, ``profiling_info_pb2``). ai-edge-litert ships no class for
``BenchmarkResult``: its five messages are declared here from the .proto's field numbers and types,
through protobuf's descriptor API (no protoc step).

Each file is read under its cap (:data:`~tflite_flops.device.schema.PROTO_CAP`,
:data:`~tflite_flops.device.schema.RESULT_CAP`); the nodes, tensors, subgraphs and op rows of a proto are
counted from its wire format before it is decoded (:func:`~tflite_flops.device.schema.count_elements`), and
each value kept is checked (ids and counts in range, no id listed twice, times finite and at least 0, the
statistics consistent); names are made safe for every output.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..errors import RuntimeMissingError
from ..report import DelegatePlacement, LatencyStats, OpRecord, Report
from ..files import read_capped
from . import schema
from .op_profile import ProfileRow, _op_type
from .schema import refuse

BUILTIN = "builtin"  # OpRecord.device_placement of an op the device ran on TFLite's builtin kernels


def message_class(full_name: str) -> Any:
    """The class of a ``tflite.profiling`` message: ai-edge-litert's (``model_runtime_info_pb2``,
    ``profiling_info_pb2``), or the identical one TensorFlow registered first in protobuf's default pool
    (both describe the same .proto files, and the pool takes each file once)."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.Default()
    try:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))
    except KeyError:
        pass
    try:
        if "ModelRuntimeDetails" in full_name:
            from ai_edge_litert import model_runtime_info_pb2  # noqa: F401  (registers the file)
        else:
            from ai_edge_litert import profiling_info_pb2  # noqa: F401
    except ImportError as exc:
        raise RuntimeMissingError("reading benchmark_model's protos needs ai-edge-litert "
                                  "(pip install 'tflite_flops[runtime]')") from exc
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


def _parse(message: Any, data: bytes, path: str, what: str) -> Any:
    from google.protobuf.message import DecodeError

    try:
        message.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as exc:
        raise refuse(path, f"not a {what} protocol buffer ({schema.name(exc)})") from None
    return message


def read_bytes(path: str, cap: int = schema.PROTO_CAP) -> bytes:
    """The bytes of a file of at most ``cap`` bytes, or one clear error."""
    try:
        return read_capped(path, cap)
    except OSError as exc:
        from ..errors import ModelLoadError

        raise ModelLoadError(f"{path}: cannot read ({exc.strerror or exc})") from None


# ---- ModelRuntimeDetails: where each op ran ------------------------------------------------------------


@dataclass(frozen=True)
class DeviceNode:
    """One original op of a subgraph as the device ran it."""

    subgraph: int
    index: int  # the node id: the op's index in its subgraph
    op_type: str  # the builtin name, or the custom op's name
    delegate: str | None  # the delegate that replaced it (its registration name), None: builtin kernels
    partition: int | None  # which of the subgraph's DELEGATE nodes (in execution-plan order)


@dataclass(frozen=True)
class DevicePlacement:
    """The ops of every subgraph and the DELEGATE nodes, as ``ModelRuntimeDetails`` lists them."""

    model_name: str
    nodes: tuple[DeviceNode, ...]
    partitions: Mapping[int, int]  # subgraph -> DELEGATE nodes
    delegates: tuple[str, ...]  # delegate names that replaced ops


RUNTIME_LAYOUT = {2: {2: None, 3: None}}  # ModelRuntimeDetails.subgraphs -> RuntimeSubgraph.edges, .nodes


def parse_runtime_details(data: bytes, path: str = "runtime info") -> DevicePlacement:
    """The placement a ``ModelRuntimeDetails`` records.

    Raises:
        ModelFormatError: not such a proto, more than :data:`~tflite_flops.device.schema.MAX_ELEMENTS` nodes,
            tensors and subgraphs, a subgraph or node id that is negative or listed twice, or a DELEGATE node
            naming an op that does not exist.
    """
    if len(data) > schema.PROTO_CAP:
        raise refuse(path, f"larger than {schema.PROTO_CAP >> 20} MiB, the most read from a ModelRuntimeDetails")
    schema.count_elements(data, RUNTIME_LAYOUT, path, "ModelRuntimeDetails")
    details = _parse(message_class("tflite.profiling.ModelRuntimeDetails")(), data, path, "ModelRuntimeDetails")
    if not details.subgraphs:
        raise refuse(path, "a ModelRuntimeDetails without subgraphs")
    nodes: list[DeviceNode] = []
    partitions: dict[int, int] = {}
    names: list[str] = []
    for sg in details.subgraphs:
        sg_id = schema.count(sg.subgraph_id, path, "subgraph_id")
        if sg_id in partitions:
            raise refuse(path, f"subgraph {sg_id} is listed twice")
        where = f"subgraph {sg_id}"
        ids: set[int] = set()
        for n in sg.nodes:
            node_id = schema.count(n.id, path, f"{where}: node id")
            if node_id in ids:
                raise refuse(path, f"{where}: node {node_id} is listed twice")
            ids.add(node_id)
        # the DELEGATE nodes in execution-plan order (the plan's positions found once, not per node)
        order: dict[int, int] = {}
        for i, node_id in enumerate(sg.execution_plan):
            order.setdefault(node_id, i)
        last = len(order)
        delegate_nodes = [n for n in sg.nodes if n.HasField("delegate_node_details")]
        delegate_nodes.sort(key=lambda n: (order.get(n.id, last), n.id))
        replaced: dict[int, tuple[str, int]] = {}
        for p, dn in enumerate(delegate_nodes):
            # an unnamed DELEGATE node still ran its ops (an empty name would read as builtin kernels)
            name = schema.name(dn.delegate_node_details.delegate_name or dn.name or f"delegate node {dn.id}")
            names.append(name)
            for op in dn.delegate_node_details.tflite_node_ids_replaced:
                replaced[op] = (name, p)
        partitions[sg_id] = len(delegate_nodes)
        originals = [n for n in sg.nodes if not n.HasField("delegate_node_details")]
        original_ids = {n.id for n in originals}
        missing = sorted(set(replaced) - original_ids)
        if missing:
            raise refuse(path, f"{where}: a DELEGATE node replaces node {missing[0]}, which the subgraph does not "
                               "list")
        for n in originals:
            delegate, part = replaced.get(n.id, (None, None))
            nodes.append(DeviceNode(sg_id, n.id, schema.name(n.name), delegate, part))
    return DevicePlacement(schema.name(details.model_name), tuple(nodes), partitions, tuple(dict.fromkeys(names)))


def runtime_mismatches(report: Report, placement: DevicePlacement) -> list[str]:
    """Why the runtime details do not come from the report's model; empty when they do.

    Per subgraph of the report, the device's op names in node order must be the report's op types.
    """
    problems = []
    ours: dict[int, list[str]] = {}
    for o in sorted(report.ops, key=lambda o: (o.subgraph, o.index)):
        ours.setdefault(o.subgraph, []).append(_op_type(o.op_type))
    theirs: dict[int, list[str]] = {}
    for n in placement.nodes:
        theirs.setdefault(n.subgraph, []).append(n.op_type)
    for sg, types in ours.items():
        got = theirs.get(sg)
        if got is None:
            problems.append(f"the device ran no subgraph {sg}")
        elif got != types:
            first = next((i for i, (a, b) in enumerate(zip(got, types)) if a != b), min(len(got), len(types)))
            problems.append(f"subgraph {sg}: {len(got)} op(s) on the device against {len(types)} in the model; "
                            f"node {first} is {got[first] if first < len(got) else '(end)'} on the device, "
                            f"{types[first] if first < len(types) else '(end)'} in the model")
    return problems


XNNPACK_NAME = "TfLiteXNNPackDelegate"


def join_runtime_details(report: Report, placement: DevicePlacement, source: str) -> Report:
    """The report with ``device_placement`` / ``device_partition`` per op and ``delegation["device"]``."""
    where = {(n.subgraph, n.index): n for n in placement.nodes}
    ops: list[OpRecord] = []
    for o in report.ops:
        n = where.get((o.subgraph, o.index))
        ops.append(o if n is None else replace(o, device_placement=n.delegate or BUILTIN, device_partition=n.partition))
    seen = [o for o in ops if o.device_placement is not None]
    delegated = sum(1 for o in seen if o.device_placement != BUILTIN)
    agree = [o for o in seen if o.xnnpack is not None]
    differ = [f"{o.subgraph}:{o.index} {o.op_type}" for o in agree
              if (o.device_placement == XNNPACK_NAME) != o.xnnpack]
    extra: dict[str, Any] = {"delegates": list(placement.delegates), "file": source}
    if XNNPACK_NAME in placement.delegates or not placement.delegates:
        extra["differs_from_xnnpack_prediction"] = differ
    subgraphs = {o.subgraph for o in seen}
    summary = DelegatePlacement(
        delegated_ops=delegated, kept_ops=len(seen) - delegated,
        partitions=sum(placement.partitions.get(sg, 0) for sg in subgraphs),
        partitions_by_subgraph={str(sg): n for sg, n in sorted(placement.partitions.items()) if sg in subgraphs},
        source="device", extra=extra)
    warnings = report.warnings
    if "differs_from_xnnpack_prediction" in extra and differ:
        warnings = warnings + (f"the device placed {len(differ)} op(s) other than the XNNPACK prediction: "
                               f"{', '.join(differ[:5])}{' …' if len(differ) > 5 else ''}",)
    return replace(report, ops=tuple(ops), delegation={**report.delegation, "device": summary}, warnings=warnings)


# ---- BenchmarkResult: the device's whole-model figures -------------------------------------------------

_RESULT_FIELDS = {  # message -> (field, number, type); types: 2 float, 3 int64, 5 int32, 9 string, 11 message
    "LatencyMetrics": [("avg_ms", 1, 2), ("min_ms", 2, 2), ("max_ms", 3, 2), ("stddev_ms", 4, 2), ("median_ms", 5, 2),
                       ("p5_ms", 6, 2), ("p95_ms", 7, 2), ("init_ms", 8, 2), ("first_inference_ms", 9, 2),
                       ("average_warm_up_ms", 10, 2)],
    "MemoryMetrics": [("init_footprint_kb", 1, 3), ("overall_footprint_kb", 2, 3), ("peak_mem_mb", 3, 2)],
    "MiscMetrics": [("model_size_mb", 1, 2), ("num_runs", 2, 5), ("num_warmup_runs", 3, 5),
                    ("model_throughput_in_mb_per_sec", 4, 2)],
    "BenchmarkResult": [("name", 1, 9), ("latency_metrics", 2, "LatencyMetrics"), ("memory_metrics", 3, "MemoryMetrics"),
                        ("misc_metrics", 4, "MiscMetrics")],
}
_PACKAGE = "tflite.tools.benchmark"
_RESULT_CLASS: list[Any] = []


def benchmark_result_class() -> Any:
    """The ``BenchmarkResult`` message class, declared from the .proto's fields (proto2, all optional)."""
    if _RESULT_CLASS:
        return _RESULT_CLASS[0]
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    file = descriptor_pb2.FileDescriptorProto(name="tflite_flops_benchmark_result.proto", package=_PACKAGE,
                                              syntax="proto2")
    for name, fields in _RESULT_FIELDS.items():
        msg = file.message_type.add(name=name)
        for fname, number, ftype in fields:
            f = msg.field.add(name=fname, number=number, label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
            if isinstance(ftype, str):
                f.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                f.type_name = f".{_PACKAGE}.{ftype}"
            else:
                f.type = ftype
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.BenchmarkResult"))
    _RESULT_CLASS.append(cls)
    return cls


def _set(message: Any) -> dict[str, Any]:
    return {f.name: v for f, v in message.ListFields()}


_LATENCY_STATS = {"min_ms": "min", "median_ms": "median", "avg_ms": "avg", "max_ms": "max", "p5_ms": "p5",
                  "p95_ms": "p95"}


def parse_benchmark_result(data: bytes, path: str = "result") -> LatencyStats:
    """The device's whole-model figures as :class:`LatencyStats` (``runtime`` "benchmark_model (device)").

    p5, p95, the average warm-up, the memory footprint and the throughput are kept as extra keys.

    Raises:
        ModelFormatError: not such a proto, a time that is not finite or below 0, a count or memory figure
            below 0, or statistics that disagree (min <= p5 <= median <= p95 <= max, min <= avg <= max).
    """
    if len(data) > schema.RESULT_CAP:
        raise refuse(path, f"larger than {schema.RESULT_CAP >> 20} MiB, the most read from a BenchmarkResult")
    result = _parse(benchmark_result_class()(), data, path, "BenchmarkResult")
    lat, mem, misc = (_set(result.latency_metrics), _set(result.memory_metrics), _set(result.misc_metrics))
    if not lat:
        raise refuse(path, "a BenchmarkResult without latency metrics (is it benchmark_model's --result_file_path "
                           "output?)")
    lat = {k: schema.time_value(v, path, f"latency_metrics.{k}") for k, v in lat.items()}
    mem = {k: schema.time_value(v, path, f"memory_metrics.{k}", "a memory figure") for k, v in mem.items()}
    runs = {k: schema.count(misc[k], path, f"misc_metrics.{k}") for k in ("num_runs", "num_warmup_runs") if k in misc}
    for k in ("model_size_mb", "model_throughput_in_mb_per_sec"):
        if k in misc:
            schema.time_value(misc[k], path, f"misc_metrics.{k}", "a size or rate")
    schema.check_stats(path, {_LATENCY_STATS[k]: v for k, v in lat.items() if k in _LATENCY_STATS},
                       "latency_metrics.")

    def ms(key: str) -> float | None:
        return None if key not in lat else round(float(lat[key]), 6)

    mean, std = ms("avg_ms"), ms("stddev_ms")
    extra: dict[str, Any] = {k: ms(k) for k in ("p5_ms", "p95_ms", "average_warm_up_ms") if k in lat}
    if mem:
        extra["device_memory"] = {k: (round(float(v), 3) if k == "peak_mem_mb" else int(v)) for k, v in mem.items()}
    if "model_throughput_in_mb_per_sec" in misc:
        extra["model_throughput_mb_per_s"] = round(float(misc["model_throughput_in_mb_per_sec"]), 3)
    name = schema.name(result.name)
    return LatencyStats(runtime="benchmark_model (device)", runs=runs.get("num_runs"),
                        warmup=runs.get("num_warmup_runs"), init_ms=ms("init_ms"), first_ms=ms("first_inference_ms"),
                        mean_ms=mean, std_ms=std, min_ms=ms("min_ms"), median_ms=ms("median_ms"), max_ms=ms("max_ms"),
                        cv=round(std / mean, 6) if mean and std is not None else None,
                        method=f"device result {schema.name(path)}" + (f" ({name})" if name else ""), extra=extra)


# ---- BenchmarkProfilingData: the op profile in proto form ---------------------------------------------

_MODEL_PROFILE = {1: {3: None}, 2: {2: None}}  # subgraph_profiles -> per_op_profiles; delegate_profiles -> per_op
PROFILE_LAYOUT = {2: _MODEL_PROFILE, 3: _MODEL_PROFILE}  # BenchmarkProfilingData.init_profile, .runtime_profile


def parse_profile_proto(data: bytes, path: str = "profile") -> list[ProfileRow]:
    """The runtime profile's rows (per subgraph, in run order), as the text profile's reader gives them.

    Delegate rows (a DELEGATE node's time) keep their node type, as in the text form.

    Raises:
        ModelFormatError: not such a proto, more than :data:`~tflite_flops.device.schema.MAX_ELEMENTS` rows and
            subgraphs, a time or count below 0, or no row.
    """
    if len(data) > schema.PROTO_CAP:
        raise refuse(path, f"larger than {schema.PROTO_CAP >> 20} MiB, the most read from a BenchmarkProfilingData")
    schema.count_elements(data, PROFILE_LAYOUT, path, "BenchmarkProfilingData")
    profile = _parse(message_class("tflite.profiling.BenchmarkProfilingData")(), data, path, "BenchmarkProfilingData")
    rows = []
    for sg in profile.runtime_profile.subgraph_profiles:
        sg_index = schema.count(sg.subgraph_index, path, "subgraph_index")
        for op in sorted(sg.per_op_profiles, key=lambda o: o.run_order):
            stat = op.inference_microseconds
            where = f"subgraph {sg_index}: row {schema.name(op.name)!r}: "
            count = schema.count(stat.count, path, f"{where}inference_microseconds.count")
            avg = schema.time_value(stat.avg, path, f"{where}inference_microseconds.avg")
            first = schema.time_value(stat.first, path, f"{where}inference_microseconds.first") if count else None
            called = schema.count(op.times_called, path, f"{where}times_called")
            rows.append(ProfileRow(sg_index, schema.name(op.node_type), avg / 1000.0,
                                   None if first is None else first / 1000.0, float(called) if called else None,
                                   schema.name(op.name)))
    if not rows:
        raise refuse(path, "no per-op rows in the BenchmarkProfilingData runtime profile")
    return rows
