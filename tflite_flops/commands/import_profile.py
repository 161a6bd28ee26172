"""``import-profile MODEL [PROFILE] [--runtime-info F] [--result F]``: join what benchmark_model measured on a
device (per-op profile, where each op ran, whole-model figures) to our FLOPs and placement."""

from __future__ import annotations

import argparse

from .common import add_output_options, add_shape_options, add_target_option, analysis_settings, emit, print_warnings

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
                   help="the whole-model time: benchmark_model --result_file_path (BenchmarkResult), its log or a "
                        "logcat capture ('Inference timings in us'), or litert-benchmark --result_json / stdout")
    add_output_options(p, RENDERERS, "also write the joined report")
    add_shape_options(p)
    add_target_option(p)
    p.add_argument("--force", action="store_true",
                   help="join even when the files' graph name or op types do not match the model (warns)")


def run(args: argparse.Namespace) -> int:
    """Analyze, check that each file is of this model, join them (:mod:`tflite_flops.device.import_profile`),
    render."""
    from ..api import analyze
    from ..device.import_profile import import_device_outputs
    from ..errors import InputSpecError
    from ..render import format_for_path, render

    if not (args.profile or args.runtime_info or args.result):
        raise InputSpecError("import-profile: give an op profile, --runtime-info FILE or --result FILE")
    targets = [(path, format_for_path(path)) for path in args.output]
    report = analyze(args.model, settings=analysis_settings(args, force=False))  # --force here joins files
    report = import_device_outputs(report, args.model, profile=args.profile, runtime_info=args.runtime_info,
                                   result=args.result, force=args.force)
    print_warnings(report.warnings)
    emit(lambda fmt: render(report, fmt), args.format, targets)
    return 0
