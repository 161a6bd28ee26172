"""``import-profile MODEL [PROFILE] [--runtime-info F] [--result F]``: join what benchmark_model measured on a
device (per-op profile, where each op ran, whole-model figures) to our FLOPs and placement."""

from __future__ import annotations

import argparse

from .common import add_output_options, add_shape_options, analysis_settings, emit, print_warnings

HELP = ("join benchmark_model's device outputs (op profile as text/CSV/proto, --runtime-info, --result) "
        "to the per-op FLOPs and placement")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``import-profile``."""
    from ..render import RENDERERS

    p.add_argument("model", help="the .tflite file that was profiled")
    p.add_argument("profile", nargs="?",
                   help="benchmark_model's op profile: its stdout (text), its CSV, or its proto "
                        "(--op_profiling_output_mode=proto)")
    p.add_argument("--runtime-info", metavar="FILE",
                   help="benchmark_model --model_runtime_info_output_file: where each op ran (ModelRuntimeDetails)")
    p.add_argument("--result", metavar="FILE",
                   help="benchmark_model --result_file_path: init, first inference, latency, memory (BenchmarkResult)")
    add_output_options(p, RENDERERS, "also write the joined report")
    add_shape_options(p)
    p.add_argument("--force", action="store_true",
                   help="join even when the files' graph name or op types do not match the model (warns)")


def _is_text_profile(data: bytes) -> bool:
    return any(marker in data for marker in (b"Run Order", b"node type", b"[Node type]"))


def run(args: argparse.Namespace) -> int:
    """Analyze, check that each file is of this model, join them, render."""
    from dataclasses import replace

    from ..api import analyze
    from ..errors import InputSpecError, ProfileMismatchError
    from ..measure import device_evidence as dev
    from ..measure.device_profile import join_profile, parse_profile, profile_graph, profile_mismatches
    from ..render import format_for_path, render

    if not (args.profile or args.runtime_info or args.result):
        raise InputSpecError("import-profile: give an op profile, --runtime-info FILE or --result FILE")
    targets = [(path, format_for_path(path)) for path in args.output]
    report = analyze(args.model, settings=analysis_settings(args, force=False))  # --force here joins files
    forced: list[str] = []

    def check(problems: list[str], path: str, what: str) -> None:
        if problems and not args.force:
            raise ProfileMismatchError(f"{path} is not {what} of {args.model}: {'; '.join(problems)} "
                                       "(--force joins it anyway)")
        forced.extend(problems)

    if args.runtime_info:
        placement = dev.parse_runtime_details(dev.read_bytes(args.runtime_info), args.runtime_info)
        check(dev.runtime_mismatches(report, placement), args.runtime_info, "the runtime details")
        report = dev.join_runtime_details(report, placement, source=args.runtime_info)
    if args.result:
        # the device's whole-model figures; the op profile's per-op summary joins them below
        report = replace(report, latency=dev.parse_benchmark_result(dev.read_bytes(args.result), args.result))
    if args.profile:
        data = dev.read_bytes(args.profile)
        if _is_text_profile(data):
            text = data.decode("utf-8", errors="replace")
            rows, graph = parse_profile(text), profile_graph(text)
        else:
            rows, graph = dev.parse_profile_proto(data, args.profile), None
        check(profile_mismatches(report, rows, graph), args.profile, "a profile")
        report = join_profile(report, rows, source=f"benchmark_model profile {args.profile}")
    if forced:
        report = replace(report, warnings=report.warnings + tuple(f"--force: {p}" for p in forced))
    print_warnings(report.warnings)
    emit(lambda fmt: render(report, fmt), args.format, targets)
    return 0
