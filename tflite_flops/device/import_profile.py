"""``import-profile``: benchmark_model's device outputs, each checked against the model and joined to its report."""

from __future__ import annotations

from dataclasses import replace

from ..errors import ProfileMismatchError
from ..report import Report
from . import benchmark_protos as dev
from .op_profile import join_profile, parse_profile, profile_graph, profile_mismatches


def _is_text_profile(data: bytes) -> bool:
    return any(marker in data for marker in (b"Run Order", b"node type", b"[Node type]"))


def import_device_outputs(report: Report, model: str, *, profile: str | None = None, runtime_info: str | None = None,
                          result: str | None = None, force: bool = False) -> Report:
    """``report`` (the static report of ``model``) with what benchmark_model measured joined to it.

    Args:
        report: the model's report.
        model: the model's path, as the errors name it.
        profile: the op profile: benchmark_model's stdout (text), its CSV, or its proto
            (``--op_profiling_output_mode=proto``).
        runtime_info: ``--model_runtime_info_output_file``: where each op ran (``ModelRuntimeDetails``).
        result: ``--result_file_path``: init, first inference, latency, memory (``BenchmarkResult``).
        force: join a file whose graph name or op types do not match the model (each problem a warning).

    Raises:
        ProfileMismatchError: a file is not of this model and ``force`` is False.
    """
    forced: list[str] = []

    def check(problems: list[str], path: str, what: str) -> None:
        if problems and not force:
            raise ProfileMismatchError(f"{path} is not {what} of {model}: {'; '.join(problems)} "
                                       "(--force joins it anyway)")
        forced.extend(problems)

    if runtime_info:
        placement = dev.parse_runtime_details(dev.read_bytes(runtime_info), runtime_info)
        check(dev.runtime_mismatches(report, placement), runtime_info, "the runtime details")
        report = dev.join_runtime_details(report, placement, source=runtime_info)
    if result:
        # the device's whole-model figures; the op profile's per-op summary joins them below
        report = replace(report, latency=dev.parse_benchmark_result(dev.read_bytes(result), result))
    if profile:
        data = dev.read_bytes(profile)
        if _is_text_profile(data):
            text = data.decode("utf-8", errors="replace")
            rows, graph = parse_profile(text), profile_graph(text)
        else:
            rows, graph = dev.parse_profile_proto(data, profile), None
        check(profile_mismatches(report, rows, graph), profile, "a profile")
        report = join_profile(report, rows, source=f"benchmark_model profile {profile}")
    if forced:
        report = replace(report, warnings=report.warnings + tuple(f"--force: {p}" for p in forced))
    return report
