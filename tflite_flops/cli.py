"""Command line: ``python -m tflite_flops COMMAND ...``.

Each subcommand lives in ``tflite_flops/commands/<name>.py`` and exposes ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. This module only builds the parser,
dispatches, and maps errors to exit codes.

Exit codes: 0 ok, 1 error (one line on stderr starting with ``error:``), 2 usage,
3 budget exceeded. ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from typing import Sequence

from ._version import __version__
from .errors import TfliteFlopsError

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_BUDGET = 0, 1, 2, 3

# subcommand name -> module under tflite_flops.commands
COMMANDS = {
    "analyze": "analyze",
    "ops": "ops",
    "compare": "compare",
    "batch": "batch",
    "import-profile": "import_profile",
    "roofline": "roofline",
    "sweep": "sweep",
    "calibrate": "calibrate",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand; ``command``: only that one, with its options (and
    what they import: renderers, runtimes); the others' modules are not even imported."""
    parser = argparse.ArgumentParser(
        prog="tflite-flops", description="FLOPs, MACs, bytes, params and latency of TensorFlow Lite / LiteRT models.")
    parser.add_argument("--version", action="version", version=f"tflite_flops {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        if command is not None and command != name:
            continue  # a run parses only its own command's words
        module = importlib.import_module(f".commands.{module_name}", __package__)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        if command is None or command == name:
            module.add_arguments(p)
        p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
        p.set_defaults(_run=module.run, _parser=p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m tflite_flops`` and the ``tflite-flops`` script."""
    words = list(sys.argv[1:] if argv is None else argv)
    first = next((w for w in words if not w.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else None)  # a run builds only its command's options
    args, extra = parser.parse_known_args(words)
    if extra:  # an unknown option belongs to the subcommand: show its usage, not the top-level one
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.debug:  # the tracebacks of formulas that raised (ops reported with status "error")
        import logging

        log = logging.getLogger("tflite_flops")
        log.setLevel(logging.DEBUG)
        log.addHandler(logging.StreamHandler(sys.stderr))
    try:
        return int(args._run(args))
    except TfliteFlopsError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug of ours: still one line unless --debug
        if args.debug:
            raise
        print(f"error: internal error ({type(exc).__name__}: {exc}); rerun with --debug and report it",
              file=sys.stderr)
        return EXIT_ERROR
