"""Command line: ``python -m tflite_flops analyze MODEL`` and ``ops``.

Exit codes: 0 ok, 1 error (one line on stderr starting with ``error:``), 2 usage.
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import Sequence

from . import __version__
from .errors import TfliteFlopsError

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _add_shape_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-shape", action="append", metavar="SPEC", default=None,
                   help="input shape: NAME=1x224x224x3, INDEX=1x224x224x3, or a bare 1x224x224x3 for a "
                        "single-input model (repeatable)")
    p.add_argument("--batch", type=int, metavar="N",
                   help="set the leading dim of every input whose batch dim is dynamic or 1")
    p.add_argument("--while-trips", type=int, default=1, metavar="N",
                   help="trip count of WHILE loops whose bound cannot be inferred (default 1)")
    p.add_argument("--signature", metavar="KEY", help="analyze this signature's subgraph instead of subgraph 0")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by the docs)."""
    from .render import formats

    parser = argparse.ArgumentParser(
        prog="tflite-flops", description="FLOPs, MACs, bytes and params of TensorFlow Lite / LiteRT models.")
    parser.add_argument("--version", action="version", version=f"tflite_flops {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    a = sub.add_parser("analyze", help="cost every op of a model and print a report")
    a.add_argument("model", help="path to a .tflite file")
    a.add_argument("--format", "-f", choices=formats(), default="table", help="stdout format (default table)")
    a.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                   help="also write a report file; the format follows the extension (.json, .csv, .txt); repeatable")
    _add_shape_options(a)
    a.add_argument("--top", type=int, default=10, metavar="N", help="ops listed in the table's top list")
    a.add_argument("--strict", action="store_true", help="fail when an op has no cost formula")
    a.add_argument("--debug", action="store_true", help="show tracebacks")

    o = sub.add_parser("ops", help="list every op type with its formula and status")
    o.add_argument("--format", "-f", choices=["table", "csv", "md"], default="table")
    o.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m tflite_flops`` and the ``tflite-flops`` script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "analyze":
            return _analyze(args)
        if args.command == "ops":
            return _ops(args)
    except TfliteFlopsError as exc:
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug of ours: still one line unless --debug
        if getattr(args, "debug", False):
            raise
        print(f"error: internal error ({type(exc).__name__}: {exc}); rerun with --debug and report it",
              file=sys.stderr)
        return EXIT_ERROR
    parser.print_help(sys.stderr)  # pragma: no cover
    return EXIT_USAGE


def _analyze(args: argparse.Namespace) -> int:
    from .analysis import analyze
    from .render import format_for_path, render, write_atomic
    from .render.table import render_table

    targets = [(path, format_for_path(path)) for path in args.output]  # fail before any work
    report = analyze(args.model, input_shapes=args.input_shape, batch=args.batch, strict=args.strict,
                     while_trips=args.while_trips, signature=args.signature)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    texts = {fmt: (render_table(report, top=args.top) if fmt == "table" else render(report, fmt))
             for fmt in {args.format, *(f for _, f in targets)}}
    for path, fmt in targets:
        write_atomic(path, texts[fmt])
    sys.stdout.write(texts[args.format])
    return EXIT_OK


def _ops(args: argparse.Namespace) -> int:
    from .ops.catalog import render_catalog

    sys.stdout.write(render_catalog(args.format))
    return EXIT_OK
