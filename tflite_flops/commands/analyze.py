"""``analyze MODEL``: cost every op and print (and write) a report."""

from __future__ import annotations

import argparse
import sys

from .common import add_shape_options, print_warnings

HELP = "cost every op of a model and print a report"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``analyze``."""
    from ..render import formats

    p.add_argument("model", help="path to a .tflite file")
    p.add_argument("--format", "-f", choices=formats(), default="table", help="stdout format (default table)")
    p.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                   help="also write a report file; the format follows the extension (.json, .csv, .txt); repeatable")
    add_shape_options(p)
    p.add_argument("--top", type=int, default=10, metavar="N", help="ops listed in the table's top list")
    p.add_argument("--strict", action="store_true", help="fail when an op has no cost formula")


def run(args: argparse.Namespace) -> int:
    """Analyze, render, write files atomically, print."""
    from ..analysis import analyze
    from ..render import format_for_path, render, write_atomic
    from ..render.table import render_table

    targets = [(path, format_for_path(path)) for path in args.output]  # fail before any work
    report = analyze(args.model, input_shapes=args.input_shape, batch=args.batch, strict=args.strict,
                     while_trips=args.while_trips, signature=args.signature)
    print_warnings(report.warnings)
    texts = {fmt: (render_table(report, top=args.top) if fmt == "table" else render(report, fmt))
             for fmt in {args.format, *(f for _, f in targets)}}
    for path, fmt in targets:
        write_atomic(path, texts[fmt])
    sys.stdout.write(texts[args.format])
    return 0
