"""``sweep MODEL --input-shape SPEC --input-shape SPEC ...``: totals at several input shapes and the scaling law."""

from __future__ import annotations

import argparse

from .common import (add_latency_options, add_output_options, add_predict_options, add_target_option,
                     analysis_settings, at_least, check_notes, checked_profile, emit, latency_settings, print_notes,
                     print_warnings)

HELP = "analyze a model at several input shapes (or batch sizes) and fit the scaling law of its FLOPs"

def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``sweep``."""
    from ..render.sweep import SWEEP_RENDERERS

    p.add_argument("model", help="path to a .tflite file or a LiteRT-LM bundle (.litertlm: its prefill_decode model)")
    p.add_argument("--input-shape", action="append", metavar="SPEC", default=None,
                   help="one sweep point: NAME=1x224x224x3, INDEX=..., or a bare shape; several inputs of one "
                        "point comma-separated (a=1x64,b=1x64); repeat for every point")
    p.add_argument("--batch", metavar="N[,N...]", type=_batches,
                   help="batch sizes to sweep, e.g. 1,2,4,8 (with --input-shape: every shape at every batch)")
    add_output_options(p, SWEEP_RENDERERS, "also write the sweep")
    p.add_argument("--while-trips", type=at_least(0), default=1, metavar="N",
                   help="trip count of WHILE loops whose bound cannot be inferred (default 1)")
    p.add_argument("--signature", metavar="KEY", help="analyze this signature's subgraph instead of subgraph 0")
    p.add_argument("--strict", action="store_true",
                   help="fail when an op has no cost formula or a point's totals are partial (unresolved shapes); "
                        "after printing, exit 1 when a point's latency was skipped")
    p.add_argument("--kv-length", metavar="S[,S...]",
                   help="sweep the KV-cache length of the decode step, e.g. 128,512,2048 (one decode signature "
                        "per length, or a dynamic cache dim); with --latency: decode tokens/s per length")
    p.add_argument("--decode", metavar="SIG", help="with --kv-length: the decode signature (default: detected)")
    add_target_option(p)
    add_latency_options(p, per_op=False, roofline=False)
    add_predict_options(p)


def _batches(text: str) -> list[int]:
    """``--batch 1,2,4``: a usage error (exit 2, this subcommand's usage) when it cannot be read."""
    from ..errors import InputSpecError
    from ..studies.sweep import parse_batches

    try:
        values = parse_batches(text)
    except InputSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("--batch ", "")) from None
    if min(values) < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {text})")
    return values


def run(args: argparse.Namespace) -> int:
    """Analyze every point, fit, render, write files atomically."""
    from ..render.sweep import sweep_format_for_path
    from ..studies.sweep import make_points, sweep

    targets = [(path, sweep_format_for_path(path)) for path in args.output]  # fail before any work
    if args.kv_length is not None:
        return _run_kv(args, targets)
    if args.decode is not None:
        from ..errors import InputSpecError

        raise InputSpecError("--decode applies to --kv-length sweeps")
    batches = args.batch  # parsed and checked by _batches
    points = make_points(args.input_shape, batches)
    # built once; each point brings its own input shapes and batch; a bad or foreign profile fails before any work
    settings, check = checked_profile(args, analysis_settings(args, input_shapes=None, batch=None))
    measure = None
    if args.inputs:  # real input arrays only mean something to a timed run
        args.latency = True
    if args.latency:
        from ..measure.latency import point_measurer

        bench, inputs = latency_settings(args)
        measure = point_measurer(args.model, settings.runtime, bench, inputs)
    result = sweep(args.model, points, measure, settings=settings, strict=args.strict)
    _print_check(check)
    return _finish(result, args, targets)


def _print_check(check) -> None:
    """What the profile check could not check, once for the whole sweep (the refusal ``--force`` overrode is
    in every point's prediction and warnings, as in ``analyze``'s report; that this CPU matches no target is
    in every point's notes, :attr:`~tflite_flops.studies.sweep.SweepResult.notes`)."""
    print_notes(check_notes(check))


def _finish(result, args: argparse.Namespace, targets) -> int:
    """Warn about the points whose latency was skipped, print and write the sweep, then apply
    ``--strict``'s rules (:func:`tflite_flops.report.completeness.strict_problems`) to every point with its
    latency: the analysis problems already failed the point, what is left is skipped latency."""
    import sys
    from dataclasses import replace

    from ..report.completeness import strict_problems
    from ..render.sweep import render_sweep

    skipped = [f"point {p.spec.label}: latency skipped: {p.latency.skipped}" for p in result.points
               if p.latency is not None and p.latency.skipped]
    print_warnings(list(result.warnings) + skipped)
    print_notes(result.notes)
    emit(lambda fmt: render_sweep(result, fmt), args.format, targets)
    if args.strict:
        problems = [f"point {p.spec.label}: {why}" for p in result.points if p.report is not None
                    for why in strict_problems(replace(p.report, latency=p.latency))]
        if problems:
            print("error: --strict: " + "; ".join(problems), file=sys.stderr)
            return 1
    return 0


def _run_kv(args: argparse.Namespace, targets) -> int:
    """``sweep --kv-length``: the decode step at every KV length (see :mod:`tflite_flops.studies.kv_sweep`)."""
    from ..errors import InputSpecError
    from ..studies.kv_sweep import decode_measurer, kv_sweep, parse_lengths

    if args.input_shape or args.batch is not None or args.signature is not None:
        raise InputSpecError("--kv-length makes its own points: drop --input-shape / --batch / --signature "
                             "(name the decode signature with --decode)")
    lengths = parse_lengths(args.kv_length)
    settings, check = checked_profile(args, analysis_settings(args))  # a bad or foreign profile fails before any work
    measure = None
    if args.inputs:  # real input arrays only mean something to a timed run
        args.latency = True
    if args.latency:
        bench, inputs = latency_settings(args)
        measure = decode_measurer(args.model, settings.runtime, bench, inputs=inputs)
    result = kv_sweep(args.model, lengths, decode=args.decode, measure=measure, settings=settings,
                      strict=args.strict)
    _print_check(check)
    return _finish(result, args, targets)
