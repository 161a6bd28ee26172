"""``analyze MODEL``: cost every op, optionally time the model, print (and write) a report."""

from __future__ import annotations

import argparse
import os
import stat
import sys

from .common import (add_latency_options, add_output_options, add_predict_options, add_shape_options, add_target_option,
                     analysis_settings, at_least, emit, latency_settings, print_notes, print_warnings)

HELP = "cost every op of a model (and optionally time it) and print a report"

# the stdout formats that show the report's notes themselves: a note goes to stderr only for the others (JSON,
# CSV, ...), so that a terminal shows it once
NOTES_SHOWN = ("table", "md", "html")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``analyze``."""
    from ..render import RENDERERS
    from ..report.budget import add_budget_arguments

    p.add_argument("model", help="path to a .tflite file or a LiteRT-LM bundle (.litertlm)")
    add_output_options(p, RENDERERS, "also write a report file")
    add_shape_options(p)
    add_target_option(p)
    p.add_argument("--top", type=at_least(0), default=10, metavar="N", help="ops listed in the table's top list")
    p.add_argument("--strict", action="store_true",
                   help="after printing the report, exit 1 when an op is not counted (no cost formula, accelerator-"
                        "compiled, a formula that raised), the totals are partial (unresolved shapes) or latency "
                        "was skipped")
    p.add_argument("--count-zeros", action=argparse.BooleanOptionalAction, default=None,
                   help="read dense weights to report effective MACs of mostly-zero (pruned) weights "
                        "(default: only for files up to 64 MiB)")
    g = p.add_argument_group("signatures and generative models")
    g.add_argument("--all-signatures", action="store_true",
                   help="also analyze every signature: per-signature totals, and per-token figures of "
                        "prefill/decode signatures (with --latency: tokens/s and time to first token)")
    g.add_argument("--prefill", metavar="SIG", help="the prefill signature (default: detected; implies --all-signatures)")
    g.add_argument("--decode", metavar="SIG", help="the decode signature (default: detected; implies --all-signatures)")
    b = p.add_argument_group("LiteRT-LM bundles (.litertlm)")
    b.add_argument("--section", metavar="NAME|INDEX",
                   help="the model section to analyse: its index or model_type (e.g. embedder); "
                        "default: the prefill_decode model")
    b.add_argument("--all-sections", action="store_true",
                   help="also analyse every other model section of the bundle (their totals in the report)")
    add_latency_options(p)
    add_predict_options(p)
    p.add_argument("--what-if", action="store_true",
                   help="also predict the model as the converter would write it in each precision it could be "
                        "converted to (fp16 weights, dynamic-range int8, full int8), and with a static shape where "
                        "an input is dynamic: time (with --predict), memory, placement, partitions; nothing is "
                        "converted")
    add_budget_arguments(p)


def run(args: argparse.Namespace) -> int:
    """Analyze and measure with :func:`tflite_flops.api.analyze`, render, write files atomically, print.

    A runtime that cannot load, prepare or run the model leaves the static report intact: latency
    is ``{"skipped": why}``, a warning says why, and the exit code is 0. A runtime that is not
    installed prints the static report, then an error (exit 1). ``--strict`` is checked after the
    report is printed, by the function ``analyze(..., strict=True)`` uses
    (:func:`tflite_flops.report.completeness.check_strict`): uncounted ops, partial totals or skipped
    latency then exit 1.
    """
    digest = _digest(args.model)  # first: it overlaps all that follows
    from ..api import analyze
    from ..errors import RuntimeMissingError, TfliteFlopsError
    from ..render import format_for_path, render
    from ..render.formats.table import render_table
    from ..report.budget import budget_exit_code, budget_limits
    from ..report.completeness import check_strict, partial_note

    targets = [(path, format_for_path(path)) for path in args.output]  # fail before any work
    limits = budget_limits(args)  # also reads --budget FILE early: a bad file fails first
    if "max_latency_ms" in limits:
        args.latency = True
    if "max_predicted_ms" in limits and not args.predict:
        from ..errors import InputSpecError

        raise InputSpecError("--max-predicted-ms / max_predicted_ms limits the predicted latency: "
                             "give the device profile with --predict PROFILE.json")
    if args.inputs:  # real input arrays only mean something to a timed run
        args.latency = True
    timed = args.latency or args.per_op or args.roofline
    bench, inputs = latency_settings(args) if timed else (None, None)  # bad --runs fail first
    settings = analysis_settings(args)  # the configuration analysed, measured and the profile is checked against
    all_signatures = args.all_signatures or args.prefill is not None or args.decode is not None
    model = _read(args, digest)
    missing = None
    for attempt in (1, 2):  # a latency gate on a noisy measurement measures once more (then the gate says so)
        try:
            report = analyze(model, settings=settings, all_signatures=all_signatures, prefill=args.prefill,
                             decode=args.decode, latency=args.latency, per_op=args.per_op, roofline=args.roofline,
                             bench=bench, inputs=inputs, progress=True, section=args.section,
                             all_sections=args.all_sections, predict=args.predict, what_if=args.what_if)
        except RuntimeMissingError as exc:
            if exc.report is None:
                raise
            report, missing = exc.report, exc
        noisy = report.latency.noisy if report.latency is not None else None
        if attempt == 2 or not noisy or "max_latency_ms" not in limits:
            break
        print_notes([f"the latency measurement was noisy ({noisy}): measuring once more for --max-latency-ms"])
    del model  # the report keeps only its hasher (a parsed model's)
    partial = partial_note(report)
    print_warnings(report.warnings + ((partial,) if partial else ()))
    if args.format not in NOTES_SHOWN:
        print_notes(report.notes)
    emit(lambda fmt: render_table(report, top=args.top) if fmt == "table" else render(report, fmt),
         args.format, targets)
    if missing is not None:
        print(f"error: {missing} (the static report above is complete)", file=sys.stderr)
        return 1
    if args.strict:
        try:
            check_strict(report)  # the rules of analyze(..., strict=True), applied to the printed report
        except TfliteFlopsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return budget_exit_code(report, args)


def _digest(path: str):
    """The file's SHA-256, started on a background thread before the model is read, when the summaries will
    show it (a regular file up to ``SUMMARY_HASH_MAX_BYTES``; the JSON and HTML reports always carry it):
    reading and hashing 14 MB take ~10 ms, which the analysis hides on a second core. None for a smaller file
    (hashed when shown), a larger one, or a path the reader will refuse. The library's
    :func:`~tflite_flops.api.analyze` hashes when the hash is first read, as a caller may never read it."""
    from ..files import HASH_THREAD_MIN_BYTES, SUMMARY_HASH_MAX_BYTES, FileDigest

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or not HASH_THREAD_MIN_BYTES <= st.st_size <= SUMMARY_HASH_MAX_BYTES:
        return None
    return FileDigest(path)


def _read(args: argparse.Namespace, digest):
    """The model (``--section`` of a bundle), read as the analysis reads one, hashed by ``digest``; a SavedModel
    directory as it is (:func:`~tflite_flops.api.analyze` converts it)."""
    from ..analysis.run import collector_paused
    from ..convert import needs_conversion
    from ..reader.load import load_model

    if needs_conversion(args.model):
        return args.model
    with collector_paused():
        model = load_model(args.model, args.section)
    if digest is not None:
        model.hasher().start(digest)
    return model
