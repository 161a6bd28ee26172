"""``import-profile MODEL PROFILE``: join benchmark_model's on-device per-op profile to our FLOPs."""

from __future__ import annotations

import argparse

from .common import add_shape_options, emit, print_warnings

HELP = "join a benchmark_model --enable_op_profiling output (text or CSV) to the per-op FLOPs"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``import-profile``."""
    from ..render import formats

    p.add_argument("model", help="the .tflite file that was profiled")
    p.add_argument("profile", help="benchmark_model output: its stdout (text) or its CSV profile")
    p.add_argument("--format", "-f", choices=formats(), default="table")
    p.add_argument("-o", "--output", action="append", default=[], metavar="FILE")
    add_shape_options(p)


def run(args: argparse.Namespace) -> int:
    """Analyze, join the profile, render."""
    from ..analysis import analyze
    from ..device_profile import join_profile, read_profile
    from ..render import format_for_path, render

    targets = [(path, format_for_path(path)) for path in args.output]
    rows = read_profile(args.profile)
    report = analyze(args.model, input_shapes=args.input_shape, batch=args.batch, while_trips=args.while_trips,
                     signature=args.signature)
    report = join_profile(report, rows, source=f"benchmark_model profile {args.profile}")
    print_warnings(report.warnings)
    emit(lambda fmt: render(report, fmt), args.format, targets)
    return 0
