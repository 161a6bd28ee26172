"""``import-profile MODEL PROFILE``: join benchmark_model's on-device per-op profile to our FLOPs."""

from __future__ import annotations

import argparse

from .common import add_output_options, add_shape_options, emit, print_warnings

HELP = "join a benchmark_model --enable_op_profiling output (text or CSV) to the per-op FLOPs"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``import-profile``."""
    from ..render import RENDERERS

    p.add_argument("model", help="the .tflite file that was profiled")
    p.add_argument("profile", help="benchmark_model output: its stdout (text) or its CSV profile")
    add_output_options(p, RENDERERS, "also write the joined report")
    add_shape_options(p)
    p.add_argument("--force", action="store_true",
                   help="join even when the profile's graph name or op types do not match the model (warns)")


def run(args: argparse.Namespace) -> int:
    """Analyze, check that the profile is of this model, join it, render."""
    from dataclasses import replace

    from ..api import analyze
    from ..measure.device_profile import (join_profile, parse_profile, profile_graph, profile_mismatches,
                                          read_profile_text)
    from ..errors import ProfileMismatchError
    from ..render import format_for_path, render

    targets = [(path, format_for_path(path)) for path in args.output]
    text = read_profile_text(args.profile)
    rows = parse_profile(text)
    report = analyze(args.model, input_shapes=args.input_shape, batch=args.batch, while_trips=args.while_trips,
                     signature=args.signature)
    problems = profile_mismatches(report, rows, profile_graph(text))
    if problems and not args.force:
        raise ProfileMismatchError(f"{args.profile} is not a profile of {args.model}: {'; '.join(problems)} "
                                   "(--force joins it anyway)")
    report = join_profile(report, rows, source=f"benchmark_model profile {args.profile}")
    if problems:
        report = replace(report, warnings=report.warnings + tuple(f"--force: {p}" for p in problems))
    print_warnings(report.warnings)
    emit(lambda fmt: render(report, fmt), args.format, targets)
    return 0
