"""``compare A B``: two models (or two saved JSON reports) side by side."""

from __future__ import annotations

import argparse

from .common import (add_latency_options, add_output_options, add_predict_options, add_shape_options, add_target_option,
                     analysis_settings, at_least, check_notes, checked_profile, emit, latency_settings, print_notes,
                     print_warnings)

HELP = "compare two models (e.g. float vs int8, before vs after): totals, op types, matched ops"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``compare``."""
    from ..render.compare import COMPARE_RENDERERS

    p.add_argument("a", metavar="A", help="baseline: a .tflite file, a LiteRT-LM bundle (.litertlm) or a JSON report (analyze -f json)")
    p.add_argument("b", metavar="B", help="candidate: a .tflite file, a .litertlm bundle or a JSON report")
    add_output_options(p, COMPARE_RENDERERS, "also write the comparison")
    p.add_argument("--top", type=at_least(0), default=20, metavar="N", help="op differences listed in the table")
    add_shape_options(p)
    add_target_option(p)
    add_latency_options(p, roofline=False)
    add_predict_options(p)


def _load(path: str, args: argparse.Namespace, settings):
    """A Report from a saved JSON report, or by analyzing (and timing, with --latency) a model with the
    command's settings (the same for both sides)."""
    from ..api import analyze
    from ..errors import ModelLoadError

    if path.lower().endswith(".json"):  # checked against the report's schema (report/loading.py)
        from ..report import Report

        try:
            return Report.load(path)
        except OSError as exc:
            raise ModelLoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    timed = args.latency or args.per_op
    bench, inputs = latency_settings(args) if timed else (None, None)
    return analyze(path, settings=settings, latency=timed, per_op=args.per_op, bench=bench, inputs=inputs,
                   progress=True, predict=settings.predict)


def run(args: argparse.Namespace) -> int:
    """Analyze both sides, compare, render, write files atomically, print."""
    from ..report.compare import compare_reports
    from ..render.compare import compare_format_for_path, render_compare_table, render_comparison

    targets = [(path, compare_format_for_path(path)) for path in args.output]  # fail before any work
    if args.inputs:  # real input arrays only mean something to a timed run
        args.latency = True
    settings = analysis_settings(args)  # built once: both sides are analysed with the same
    settings, check = checked_profile(args, settings)  # the profile read, checked (and its drift timed) once for both
    a, b = _load(args.a, args, settings), _load(args.b, args, settings)
    print_warnings([f"A: {w}" for w in a.warnings] + [f"B: {w}" for w in b.warnings])
    shared = [n for n in check_notes(check, settings) if n != (check.note if check else None)]  # said once
    print_notes(shared + [f"A: {n}" for n in a.notes if n not in shared] + [f"B: {n}" for n in b.notes if n not in shared])
    c = compare_reports(a, b, what_if=_twin_rows(args, a, b, settings))
    emit(lambda fmt: render_compare_table(c, top=args.top) if fmt == "table" else render_comparison(c, fmt),
         args.format, targets)
    return 0


def _twin_rows(args: argparse.Namespace, a, b, settings):
    """With --predict, when B is a conversion of float A (two model files): A's what-if row in B's precision
    beside B's own (:func:`tflite_flops.studies.what_if.twin_rows`), else None."""
    if settings.predict is None or any(p.lower().endswith(".json") for p in (args.a, args.b)):
        return None
    from ..reader.load import load_model
    from ..studies.what_if import twin_rows

    return twin_rows(load_model(args.a), a, load_model(args.b), b, settings)
