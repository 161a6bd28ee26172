"""Red-team cases of the files that come from a device (issue 44): benchmark_model's logs and logcat captures,
its op profiles (text, CSV, proto), its ModelRuntimeDetails and BenchmarkResult protos, and litert-benchmark's
JSON and stdout, as ``import-profile`` reads them.

Each hostile file is a variant of what the other tests read: the fixtures of tests/fixtures (a real log, a
litert-benchmark JSON, the op profile in both text modes), protos written with ai-edge-litert's own message
classes, and the BenchmarkResult wire format of tests/test_device_evidence.py. The classes: huge numbers and
deep nesting; values out of range (NaN, infinity, negative, inconsistent statistics); work out of proportion to
the input (patterns that backtracked, per-node rescans, files over their caps); valid runtime details the HTML
page must draw; and control characters in the names these files carry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from redteam import CNN, SAMPLES, Case, cli, shared_operator, write
from test_device_evidence import _field, _float, _message, _varint

FIX = Path(__file__).resolve().parent / "fixtures"
INT8 = str(SAMPLES / "cnn_int8.tflite")
KIND = "device-files"


def _log() -> str:
    return (FIX / "phone" / "benchmark_model_cnn_float.log").read_text()


def _json() -> str:
    return (FIX / "phone" / "litert_benchmark_cnn_float.json").read_text()


def _stdout() -> str:
    return (FIX / "phone" / "litert_benchmark_cnn_float.txt").read_text()


def _csv() -> str:
    return (FIX / "benchmark_model_op_profile.csv").read_text()


def _txt() -> str:
    return (FIX / "benchmark_model_op_profile.txt").read_text()


def replaced(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` (which it holds) replaced by ``new``."""
    assert old in text, old
    return text.replace(old, new)


def log_with(old: str, new: str) -> Callable[[Path], list]:
    """``import-profile CNN --result LOG``: the fixture log with ``old`` replaced by ``new``."""
    def run(t: Path) -> list:
        text = _log()
        assert old in text, old
        return ["import-profile", CNN, "--result", write(t, "r.log", text.replace(old, new).encode())]
    return run


def result_text(name: str, text_of: Callable[[], str | bytes], *extra: str) -> Callable[[Path], list]:
    """``import-profile CNN --result FILE`` of ``text_of()``."""
    def run(t: Path) -> list:
        data = text_of()
        return ["import-profile", CNN, "--result", write(t, name, data if isinstance(data, bytes) else data.encode()),
                *extra]
    return run


def profile_text(name: str, text_of: Callable[[], str | bytes], *extra: str, model: str = CNN
                 ) -> Callable[[Path], list]:
    """``import-profile MODEL PROFILE`` of ``text_of()``."""
    def run(t: Path) -> list:
        data = text_of()
        return ["import-profile", model, write(t, name, data if isinstance(data, bytes) else data.encode()), *extra]
    return run


def csv_with(old: str, new: str) -> Callable[[], str]:
    def text() -> str:
        base = _csv()
        assert old in base, old
        return base.replace(old, new)
    return text


def json_with(old: str, new: str) -> Callable[[], str]:
    def text() -> str:
        base = _json()
        assert old in base, old
        return base.replace(old, new)
    return text


# ---- protos ------------------------------------------------------------------------------------------------


def _details_class() -> Any:
    from tflite_flops.device.benchmark_protos import message_class

    return message_class("tflite.profiling.ModelRuntimeDetails")


def runtime_details(model: str = INT8, delegated: frozenset[int] = frozenset(range(9)),
                    delegate: str = "TfLiteXNNPackDelegate", names: dict[int, str] | None = None,
                    extra_delegates: int = 0) -> bytes:
    """A ModelRuntimeDetails of ``model``'s primary subgraph as benchmark_model writes it (as
    tests/test_device_evidence.py's builder, without running LiteRT): every op by id and name, one DELEGATE
    node (named ``delegate``) that replaced ``delegated``, and ``extra_delegates`` more DELEGATE nodes that
    replaced nothing (each in the execution plan)."""
    import tflite_flops

    ops = tflite_flops.load_model(model).subgraphs[0].operators
    details = _details_class()(model_name=Path(model).name)
    sg = details.subgraphs.add(subgraph_id=0, subgraph_type=1)
    n = len(ops)
    for op in ops:
        node = sg.nodes.add(id=op.index, name=(names or {}).get(op.index, op.op_type), type=str(op.builtin_code))
        if op.index in delegated:
            node.delegated_to_node_id = n
    parts = [sorted(delegated)] if delegated else []
    parts += [[]] * extra_delegates
    for p, replaced in enumerate(parts):
        node = sg.nodes.add(id=n + p, name=delegate, type=f"Delegate/{delegate}")
        node.delegate_node_details.delegate_name = delegate
        node.delegate_node_details.tflite_node_ids_replaced.extend(replaced)
    sg.execution_plan.extend(sorted(set(range(n)) - set(delegated)) + [n + p for p in range(len(parts))])
    return details.SerializeToString()


def runtime_info(data_of: Callable[[], bytes], *extra: str, model: str = INT8) -> Callable[[Path], list]:
    def run(t: Path) -> list:
        return ["import-profile", model, "--runtime-info", write(t, "rt.pb", data_of()), *extra]
    return run


def edited_details(edit: Callable[[Any], None], **kw: Any) -> bytes:
    """:func:`runtime_details` (``kw``) decoded, changed by ``edit``, encoded again."""
    details = _details_class()()
    details.ParseFromString(runtime_details(**kw))
    edit(details)
    return details.SerializeToString()


def nested_groups(depth: int) -> bytes:
    """Unknown field 3 as groups nested ``depth`` deep (start-group and end-group tags)."""
    return b"\x1b" * depth + b"\x1c" * depth


def benchmark_result(latency: dict[int, float], misc: bytes = b"", name: bytes = b"pixel8") -> bytes:
    """A BenchmarkResult in protobuf's wire format (benchmark_result.proto; LatencyMetrics: avg 1, min 2, max 3,
    stddev 4, median 5, p5 6, p95 7, init 8, first_inference 9, warm_up 10; MiscMetrics: num_runs 2)."""
    body = b"".join(_float(n, v) for n, v in latency.items())
    return _message(1, name) + _message(2, body) + (_message(4, misc) if misc else b"")


GOOD_LATENCY = {1: 2.5, 2: 2.0, 3: 4.0, 4: 0.5, 5: 2.25, 6: 2.0, 7: 3.5, 8: 120.0, 9: 9.0, 10: 3.0}


def _negative_varint(value: int) -> bytes:
    return _varint(value & (2**64 - 1))  # an int32 below 0 is sent as 10 bytes


def profile_proto(rows: int = 12, avg: int = 100, times_called: int = 1, count: int = 10, model: str = CNN,
                  node_type: str | None = None) -> bytes:
    """A BenchmarkProfilingData of ``model``'s ops (as tests/test_device_evidence.py writes it), or of ``rows``
    rows of ``node_type``."""
    import tflite_flops
    from tflite_flops.device.benchmark_protos import message_class

    data = message_class("tflite.profiling.BenchmarkProfilingData")(model_name=Path(model).name)
    sg = data.runtime_profile.subgraph_profiles.add(subgraph_index=0, subgraph_name="main")
    g = tflite_flops.load_model(model).subgraphs[0]
    ops = [(op.op_type, g.tensors[op.outputs[0]].name) for op in g.operators] if node_type is None \
        else [(node_type, f"t{i}") for i in range(rows)]
    for i, (kind, out) in enumerate(ops):
        row = sg.per_op_profiles.add(node_type=kind, name=out, run_order=i, times_called=times_called)
        row.inference_microseconds.avg = avg
        row.inference_microseconds.count = count
    return data.SerializeToString()


def empty_profile_rows(count: int) -> bytes:
    """A BenchmarkProfilingData whose runtime profile's one subgraph holds ``count`` empty rows."""
    sg = b"\x1a\x00" * count  # SubGraphProfilingData.per_op_profiles = 3
    return _message(3, _message(1, sg))


# ---- checks ------------------------------------------------------------------------------------------------


def no_control_characters(proc: Any, tmp: Path) -> None:
    """Neither stream holds an escape, a carriage return or a line the file forged (``error: forged``)."""
    for stream in (proc.stdout, proc.stderr):
        assert "\x1b" not in stream and "\r" not in stream and "\x07" not in stream, stream[-2000:]
        assert not [line for line in stream.splitlines() if line.startswith(("error: forged", "forged"))], stream


def stdout_has(needle: str) -> Callable[[Any, Path], None]:
    def check(proc: Any, tmp: Path) -> None:
        assert needle in proc.stdout, proc.stdout[-3000:]
    return check


def html_has(needle: str) -> Callable[[Any, Path], None]:
    def check(proc: Any, tmp: Path) -> None:
        assert needle in (tmp / "r.html").read_text()
    return check


def lib_case(name: str, call_of: Callable[[Path], Callable[[], Any]], needle: str) -> Case:
    """A library case of this surface: ``call_of(tmp)()`` raises ModelFormatError holding ``needle``."""
    from tflite_flops.errors import ModelFormatError

    return Case(name, KIND, call_of, frozenset(), needle, raises=ModelFormatError, mode="library")


def _parse_timing(data_of: Callable[[], bytes]) -> Callable[[Path], Callable[[], Any]]:
    def make(t: Path) -> Callable[[], Any]:
        from tflite_flops.device.benchmark_logs import parse_timing

        data = data_of()
        return lambda: parse_timing(data, "r")
    return make


def _parse_profile(text_of: Callable[[], str]) -> Callable[[Path], Callable[[], Any]]:
    def make(t: Path) -> Callable[[], Any]:
        from tflite_flops.device.op_profile import parse_profile

        text = text_of()
        return lambda: parse_profile(text, "p")
    return make


D9 = "9" * 5000
DEEP = 200_000
BAD_LOG_STATS = "count=184 first=1371 curr=1356 min=1300 max=1620 avg=1362.8 std=34 p5=1310 median=1355 p95=1420"
TIMINGS = "Inference timings in us: Init: 3410, First inference: 2131, Warmup (avg): 1736.5, Inference (avg): 1362.8"

CASES: list[Case] = [
    # -- huge numbers and deep nesting: one error line naming the file and the field
    cli("dev-log-count-5000-digits", KIND, log_with("count=184", f"count={D9}"), {1}, "count= is not a count"),
    cli("dev-log-count-negative", KIND, log_with("count=184", "count=-5"), {1}, "count= is not a count ('-5'"),
    cli("dev-log-init-5000-digits", KIND, log_with("Init: 3410", f"Init: {D9}"), {1}, "Init is not a finite number"),
    cli("dev-log-median-5000-digits", KIND, log_with("median=1355", f"median={D9}"), {1},
        "median is not a finite number"),
    cli("dev-log-threads-5000-digits", KIND, log_with("Num threads: [1]", f"Num threads: [{D9}]"), {1},
        "Num threads is not a count"),
    cli("dev-json-deep-200k", KIND,
        result_text("r.json", lambda: '{"latency": ' + "[" * DEEP + "]" * DEEP + "}"), {1},
        "field 'latency' nests more than 32 levels"),
    cli("dev-json-deep-40-in-extra", KIND,
        result_text("r.json", json_with('"accelerators": [', '"accelerators": ' + "[" * 40 + "]" * 40 + ', "more": [')),
        {1}, "field 'accelerators' nests more than 32 levels"),
    cli("dev-json-deep-unclosed", KIND, result_text("r.json", lambda: '{"latency": ' + "[" * DEEP), {1},
        "nests more than 32 levels"),
    cli("dev-json-runs-5000-digits", KIND, result_text("r.json", json_with('"num_runs": 50', f'"num_runs": {D9}')),
        {1}, "latency.num_runs is not a count (a number of 5,000 digits"),
    cli("dev-json-avg-5000-digits", KIND, result_text("r.json", json_with('"avg_ms": 0.02', f'"avg_ms": {D9}')),
        {1}, "latency.avg_ms is not a time"),
    cli("dev-json-threads-float-digits", KIND,
        result_text("r.json", json_with('"num_threads": 1', f'"num_threads": {D9}.5')), {1},
        "num_threads is not a count"),
    cli("dev-stdout-runs-5000-digits", KIND,
        result_text("r.txt", lambda: replaced(_stdout(), "(50 runs)", f"({D9} runs)")), {1}, "runs is not a count"),
    cli("dev-profile-subgraph-5000-digits", KIND,
        profile_text("p.csv", lambda: f"Subgraph (index: {D9})\n" + _csv()), {1}, "the subgraph index is not a count"),
    cli("dev-runtime-info-nested-groups", KIND, runtime_info(lambda: nested_groups(DEEP)), {1},
        "not a ModelRuntimeDetails protocol buffer"),
    cli("dev-result-proto-nested-groups", KIND,
        result_text("r.pb", lambda: nested_groups(DEEP)), {1}, "not a BenchmarkResult protocol buffer"),
    # -- values out of range: NaN, infinity, below 0, inconsistent statistics
    *[cli(f"dev-csv-avg-{label}", KIND, profile_text("p.csv", csv_with("0.412, 29.261%", f"{value}, 29.261%")), {1},
          "line 9: avg_ms is not a time")
      for label, value in (("nan", "nan"), ("negative", "-5"), ("inf", "inf"), ("1e999", "1e999"))],
    cli("dev-csv-first-nan", KIND, profile_text("p.csv", csv_with("0.453, 0.412", "NaN, 0.412")), {1},
        "line 9: first is not a time"),
    cli("dev-csv-times-called-negative", KIND,
        profile_text("p.csv", csv_with("29.261%, 0, 1, cnn_1/stem_1", "29.261%, 0, -1, cnn_1/stem_1")), {1},
        "times called is not a count"),
    cli("dev-text-avg-nan", KIND,
        profile_text("p.txt", lambda: replaced(_txt(), "0.453\t    0.412", "0.453\t      nan")), {1},
        "avg ms is not a time (nan"),
    cli("dev-log-avg-negative", KIND, log_with("Inference (avg): 1362.8", "Inference (avg): -1362.8"), {1},
        "Inference (avg) is not a time"),
    cli("dev-log-median-below-min", KIND, log_with("median=1355", "median=0"), {1}, "inconsistent statistics"),
    cli("dev-log-avg-above-max", KIND, log_with("Inference (avg): 1362.8", "Inference (avg): 99999"), {1},
        "avg (99999) is above max (1620)"),
    cli("dev-json-avg-negative", KIND, result_text("r.json", json_with('"avg_ms": 0.02', '"avg_ms": -0.02')), {1},
        "latency.avg_ms is not a time"),
    cli("dev-json-avg-nan-literal", KIND, result_text("r.json", json_with('"avg_ms": 0.02', '"avg_ms": NaN')), {1},
        "NaN is not a number JSON allows"),
    cli("dev-json-median-infinity-literal", KIND,
        result_text("r.json", json_with('"median_ms": 0.02', '"median_ms": -Infinity')), {1}, "-Infinity"),
    cli("dev-json-avg-1e999", KIND, result_text("r.json", json_with('"avg_ms": 0.02', '"avg_ms": 1e999')), {1},
        "latency.avg_ms is not a time (inf"),
    cli("dev-json-runs-negative", KIND, result_text("r.json", json_with('"num_runs": 50', '"num_runs": -50')), {1},
        "latency.num_runs is not a count"),
    cli("dev-json-median-above-max", KIND, result_text("r.json", json_with('"median_ms": 0.02', '"median_ms": 7')),
        {1}, "inconsistent statistics"),
    cli("dev-stdout-median-nan", KIND,
        result_text("r.txt", lambda: replaced(_stdout(), "Inference (median):    0.02 ms",
                                              "Inference (median): 1e999 ms")),
        {1}, "Inference (median) is not a finite number"),
    cli("dev-result-proto-median-nan", KIND,
        result_text("r.pb", lambda: benchmark_result({**GOOD_LATENCY, 5: float("nan")})), {1},
        "latency_metrics.median_ms is not a time (nan"),
    cli("dev-result-proto-avg-inf", KIND,
        result_text("r.pb", lambda: benchmark_result({**GOOD_LATENCY, 1: float("inf")})), {1},
        "latency_metrics.avg_ms is not a time (inf"),
    cli("dev-result-proto-init-negative", KIND,
        result_text("r.pb", lambda: benchmark_result({**GOOD_LATENCY, 8: -120.0})), {1},
        "latency_metrics.init_ms is not a time"),
    cli("dev-result-proto-median-0-below-min", KIND,
        result_text("r.pb", lambda: benchmark_result({**GOOD_LATENCY, 2: 1.3, 5: 0.0, 6: 1.3})), {1},
        "inconsistent statistics: latency_metrics.min (1.3) is above latency_metrics.median (0)"),
    cli("dev-result-proto-runs-negative", KIND,
        result_text("r.pb", lambda: benchmark_result(GOOD_LATENCY, _field(2, 0, _negative_varint(-5)))), {1},
        "misc_metrics.num_runs is not a count"),
    cli("dev-result-proto-valid", KIND, result_text("r.pb", lambda: benchmark_result(GOOD_LATENCY)), {0}),
    cli("dev-profile-proto-avg-negative", KIND, profile_text("p.pb", lambda: profile_proto(avg=-100)), {1},
        "inference_microseconds.avg is not a time"),
    cli("dev-profile-proto-times-called-negative", KIND,
        profile_text("p.pb", lambda: profile_proto(times_called=-1)), {1}, "times_called is not a count"),
    cli("dev-profile-proto-count-negative", KIND, profile_text("p.pb", lambda: profile_proto(count=-3)), {1},
        "inference_microseconds.count is not a count"),
    cli("dev-runtime-info-node-id-negative", KIND,
        runtime_info(lambda: edited_details(lambda d: setattr(d.subgraphs[0].nodes[1], "id", -7))), {1},
        "subgraph 0: node id is not a count (-7;"),
    cli("dev-runtime-info-node-listed-twice", KIND,
        runtime_info(lambda: edited_details(lambda d: setattr(d.subgraphs[0].nodes[1], "id", 0))), {1},
        "subgraph 0: node 0 is listed twice"),
    cli("dev-runtime-info-subgraph-negative", KIND,
        runtime_info(lambda: edited_details(lambda d: setattr(d.subgraphs[0], "subgraph_id", -1))), {1},
        "subgraph_id is not a count"),
    # -- work out of proportion: backtracking patterns, rescans, files over their caps
    cli("dev-csv-equals-line-64k", KIND, profile_text("p.csv", lambda: _csv() + "=" * 65_536 + "x\n"), {0}),
    cli("dev-csv-equals-line-1m", KIND, profile_text("p.csv", lambda: "=" * 1_000_000 + " x\n" + _csv()), {0}),
    cli("dev-log-digits-line-1m", KIND, log_with("Init: 3410", "Init: " + "9" * 1_000_000 + "x"), {1},
        "malformed 'Inference timings in us' line"),
    cli("dev-log-graph-repeated-1m", KIND, log_with("INFO: Graph: [models/cnn_float.tflite]",
                                                    "Graph: [" * 150_000 + "x"), {0}),
    cli("dev-log-count-fields-1m", KIND, log_with(BAD_LOG_STATS, BAD_LOG_STATS + " a=b" * 250_000 + "=" * 100_000),
        {0}),
    cli("dev-profile-graph-repeated-1m", KIND,
        profile_text("p.txt", lambda: "Graph: x " * 150_000 + "]\n" + "INFO: Graph: [" * 100_000 + "\n" + _txt()),
        {0}),
    cli("dev-text-row-brackets-1m", KIND,
        profile_text("p.txt", lambda: replaced(_txt(), "[cnn_1/up_1/Relu]", "[" * 1_000_000 + "x")), {0, 1}),
    cli("dev-runtime-info-60k-delegate-nodes", KIND,
        runtime_info(lambda: runtime_details(extra_delegates=60_000), "--force"), {0}),
    cli("dev-runtime-info-8m-empty-nodes", KIND, runtime_info(lambda: _message(2, b"\x1a\x00" * 8_000_000)), {1},
        "more than 262,144 nodes"),
    cli("dev-runtime-info-8m-subgraphs", KIND, runtime_info(lambda: b"\x12\x00" * 8_000_000), {1},
        "more than 262,144 nodes"),
    cli("dev-runtime-info-3m-edges-3m-nodes", KIND, runtime_info(lambda: _message(2, b"\x12\x00\x1a\x00" * 3_000_000)),
        {1}, "more than 262,144 nodes"),
    cli("dev-runtime-info-17-mib", KIND, runtime_info(lambda: _message(1, b"m" * (17 << 20))), {1},
        "larger than 16 MiB"),
    cli("dev-profile-proto-8m-empty-rows", KIND, profile_text("p.pb", lambda: empty_profile_rows(8_000_000)), {1},
        "more than 262,144 nodes"),
    cli("dev-profile-join-20k-ops", KIND,
        lambda t: ["import-profile", write(t, "m.tflite", shared_operator(20_000, pad=2_200_000)),
                   write(t, "p.csv", ("=== Run Order ===\nnode type, first, avg_ms, times called, name\n"
                                      + "ADD, 0.1, 0.1, 1, none\n" * 20_000).encode())], {0}),
    cli("dev-profile-100k-subgraphs", KIND,
        profile_text("p.csv", lambda: "=== Run Order ===\nnode type, first, avg_ms, times called, name\n" + "".join(
            f"Subgraph (index: {i})\nADD, 0.1, 0.1, 1, x\n" for i in range(1, 100_001))), {1}, "and 99,997 more"),
    cli("dev-log-2m-lines", KIND, result_text("r.log", lambda: "\n" * 2_000_000 + TIMINGS + "\n"), {1},
        "more than 1,048,576 lines"),
    cli("dev-log-33-mib", KIND, result_text("r.log", lambda: b"x" * (33 << 20) + TIMINGS.encode()), {1},
        "larger than 32 MiB"),
    cli("dev-json-2-mib", KIND, result_text("r.json", lambda: '{"latency": {"avg_ms": 1}, "pad": "' + "x" * (2 << 20)
                                            + '"}'), {1}, "larger than 1 MiB"),
    cli("dev-result-proto-2-mib", KIND, result_text("r.pb", lambda: _message(1, b"x" * (2 << 20))), {1},
        "larger than 1 MiB"),
    cli("dev-log-many-results", KIND, result_text("r.log", lambda: (TIMINGS + "\n") * 200_000), {0}),
    # -- valid runtime details the HTML page draws (a KeyError: 'device' before)
    cli("dev-runtime-info-html", KIND,
        lambda t: ["import-profile", INT8, "--runtime-info", write(t, "rt.pb", runtime_details()), "-o",
                   str(t / "r.html")], {0}, check=html_has('data-delegate="device"')),
    cli("dev-runtime-info-html-no-delegate", KIND,
        runtime_info(lambda: runtime_details(delegated=frozenset()), "--force", "-f", "html"), {0}),
    cli("dev-runtime-info-html-unknown-delegate", KIND,
        runtime_info(lambda: runtime_details(delegate="VendorNpuDelegate"), "-f", "html"), {0}),
    cli("dev-runtime-info-md", KIND, runtime_info(runtime_details, "-f", "md"), {0}),
    cli("dev-runtime-info-html-other-subgraph", KIND,
        runtime_info(lambda: edited_details(lambda d: setattr(d.subgraphs[0], "subgraph_id", 7)), "--force", "-f",
                     "html"), {0}),
    cli("dev-runtime-info-unnamed-delegate", KIND,
        runtime_info(lambda: runtime_details(delegate="")), {0},
        check=stdout_has("by delegate node 12): 9 of 12 ops delegated")),
    # -- control characters in the names a device file carries
    cli("dev-runtime-info-escape-delegate-name", KIND,
        runtime_info(lambda: runtime_details(delegate="\x1b[2J\x1b]0;owned\x07X\rforged\nerror: forged")), {0},
        check=no_control_characters),
    cli("dev-runtime-info-escape-op-name", KIND,
        runtime_info(lambda: runtime_details(names={3: "ADD\x1b[31m\nerror: forged"})), {1},
        check=no_control_characters),
    cli("dev-csv-escape-node-type", KIND,
        profile_text("p.csv", csv_with("\nADD, ", "\nADD\x1b[31m\r\nerror: forged, "), "--force"), {0},
        check=no_control_characters),
    cli("dev-csv-escape-name", KIND,
        profile_text("p.csv", lambda: replaced(_csv(), "cnn_1/residual_1/Add", "\x1b]0;x\x07\rforged") + "\n"
                     "MYSTERY\x1b[5m, 0, 0.1, 0.1, 0%, 0%, 0, 1, \x1b[2J\rforged\n", "--force"), {0},
        check=no_control_characters),
    cli("dev-log-escape-graph", KIND, log_with("models/cnn_float.tflite]", "\x1b[2Jother\r.tflite]"), {1},
        "is not a result of", check=no_control_characters),
    cli("dev-json-escape-model", KIND,
        result_text("r.json", json_with('"sample_models/cnn_float.tflite"', '"\\u001b[2J\\rforged.tflite"'), "--force"),
        {0}, check=no_control_characters),
    cli("dev-result-proto-escape-name", KIND,
        result_text("r.pb", lambda: benchmark_result(GOOD_LATENCY, name=b"\x1b[2Jpixel\r\nerror: forged")), {0},
        check=no_control_characters),
    cli("dev-profile-proto-escape-node-type", KIND,
        profile_text("p.pb", lambda: profile_proto(rows=3, node_type="\x1b[31mADD\nerror: forged"), "--force"), {0},
        check=no_control_characters),
    # -- the library: each reader refuses in one ModelFormatError
    lib_case("dev-lib-parse-timing-count-digits", _parse_timing(lambda: log_with_bytes("count=184", f"count={D9}")),
             "count= is not a count"),
    lib_case("dev-lib-parse-timing-deep-json",
             _parse_timing(lambda: b'{"latency": ' + b"[" * DEEP + b"]" * DEEP + b"}"),
             "nests more than 32 levels"),
    lib_case("dev-lib-parse-profile-nan", _parse_profile(csv_with("0.412, 29.261%", "nan, 29.261%")),
             "avg_ms is not a time"),
]


def log_with_bytes(old: str, new: str) -> bytes:
    return replaced(_log(), old, new).encode()
