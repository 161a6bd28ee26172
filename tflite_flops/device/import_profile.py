"""``import-profile``: benchmark_model's device outputs, each checked against the model and joined to its report."""

from __future__ import annotations

from dataclasses import replace

from ..errors import ProfileMismatchError
from ..report import Report
from . import benchmark_protos as dev
from . import schema
from .benchmark_logs import is_timing_text, parse_timing, timing_latency
from .op_profile import join_profile, parse_profile, profile_graph, profile_mismatches


MAX_PROBLEMS = 3  # mismatches named in the error (or, with --force, as warnings)


def _is_text_profile(data: bytes) -> bool:
    return any(marker in data for marker in (b"Run Order", b"node type", b"[Node type]"))


def _graph_mismatch(report: Report, graph: str | None) -> list[str]:
    """The model file the tool named against the report's (by base name), as the op profile's check."""
    import os

    name = os.path.basename(report.model.path) if report.model.path else None
    theirs = os.path.basename(graph.replace("\\", "/")) if graph else None
    if theirs and name and theirs != name:
        return [f"the result was taken of {theirs!r}, not {name!r}"]
    return []


def import_device_outputs(report: Report, model: str, *, profile: str | None = None, runtime_info: str | None = None,
                          result: str | None = None, force: bool = False) -> Report:
    """``report`` (the static report of ``model``) with what benchmark_model measured joined to it.

    Args:
        report: the model's report.
        model: the model's path, as the errors name it.
        profile: the op profile: benchmark_model's stdout (text), its CSV, or its proto
            (``--op_profiling_output_mode=proto``).
        runtime_info: ``--model_runtime_info_output_file``: where each op ran (``ModelRuntimeDetails``).
        result: the whole-model time: benchmark_model's ``--result_file_path`` (``BenchmarkResult``), its log
            or a logcat capture ("Inference timings in us"), or litert-benchmark's ``--result_json`` or stdout
            (:mod:`~tflite_flops.device.benchmark_logs`).
        force: join a file whose graph name or op types do not match the model (each problem a warning).

    Raises:
        ProfileMismatchError: a file is not of this model and ``force`` is False.
    """
    forced: list[str] = []

    def check(problems: list[str], path: str, what: str) -> None:
        # a file of many subgraphs can hold a problem per subgraph: the first few are named, the rest counted
        shown = problems[:MAX_PROBLEMS] + ([f"and {len(problems) - MAX_PROBLEMS:,} more"]
                                           if len(problems) > MAX_PROBLEMS else [])
        if problems and not force:
            raise ProfileMismatchError(f"{path} is not {what} of {model}: {'; '.join(shown)} "
                                       "(--force joins it anyway)")
        forced.extend(shown)

    if runtime_info:
        placement = dev.parse_runtime_details(dev.read_bytes(runtime_info, schema.PROTO_CAP), runtime_info)
        check(dev.runtime_mismatches(report, placement), runtime_info, "the runtime details")
        report = dev.join_runtime_details(report, placement, source=runtime_info)
    if result:
        # the device's whole-model figures; the op profile's per-op summary joins them below
        data = dev.read_bytes(result, max(schema.TEXT_CAP, schema.RESULT_CAP))  # a log, JSON or a proto
        if is_timing_text(data):
            timing = parse_timing(data, result)
            check(_graph_mismatch(report, timing.graph), result, "a result")
            latency = timing_latency(timing, result)
        else:
            latency = dev.parse_benchmark_result(data, result)
        report = replace(report, latency=latency)
    if profile:
        data = dev.read_bytes(profile, max(schema.TEXT_CAP, schema.PROTO_CAP))  # text, CSV or a proto
        if _is_text_profile(data):
            text = data.decode("utf-8", errors="replace")
            rows, graph = parse_profile(text, profile), profile_graph(text)
        else:
            rows, graph = dev.parse_profile_proto(data, profile), None
        check(profile_mismatches(report, rows, graph), profile, "a profile")
        report = join_profile(report, rows, source=f"benchmark_model profile {profile}")
    if forced:
        report = replace(report, warnings=report.warnings + tuple(f"--force: {p}" for p in forced))
    return report
