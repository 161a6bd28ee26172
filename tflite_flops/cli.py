"""Command line: ``python -m tflite_flops COMMAND ...``.

Each subcommand lives in ``tflite_flops/commands/<name>.py`` and exposes ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. This module only builds the parser,
dispatches, and maps errors to exit codes.

Exit codes: 0 ok, 1 error (one line on stderr starting with ``error:``), 2 usage,
3 budget exceeded. ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import Sequence

from . import files
from ._version import __version__
from .errors import InputSpecError, TfliteFlopsError
from .units import printable

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
    "targets": "targets",
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
    overwrite = files.OVERWRITE.set(bool(getattr(args, "overwrite", False)))
    try:
        _check_streams()
        _check_outputs_are_not_inputs(args)
        _check_outputs_are_replaceable(args)
        code = int(args._run(args))
        sys.stdout.flush()  # a full disk or a closed pipe fails here, inside the error handling, not at exit
        return code
    except TfliteFlopsError as exc:
        if args.debug:
            import traceback  # only here: most runs never show one

            traceback.print_exc()
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except OSError as exc:  # what the package reads is checked where it is read: this is stdout or stderr failing
        if args.debug:
            raise
        _silence_stdout()
        print(f"error: cannot write the output ({exc.strerror or exc})", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug of ours: still one line unless --debug
        if args.debug:
            raise
        print(f"error: internal error ({type(exc).__name__}: {printable(str(exc))}); rerun with --debug and report it",
              file=sys.stderr)
        return EXIT_ERROR
    finally:
        files.OVERWRITE.reset(overwrite)


def console() -> int:
    """The process's entry (``python -m tflite_flops`` and the ``tflite-flops`` script): :func:`main`, set up
    and wound down as a process of its own, which a caller of :func:`main` (a notebook, the tests) is not.

    Before: one BLAS thread (:func:`_one_blas_thread`). After: the objects left are frozen out of the garbage
    collector (``gc.freeze``). The interpreter's last collections would otherwise walk every object numpy and
    the analysis made, to free memory the process's exit frees anyway: about 15 ms of a 0.17 s run of
    ``analyze`` on MobileNetV2. Exit handlers and finalizers run as before.
    """
    _one_blas_thread()
    code = main()
    gc.freeze()
    return code


def _one_blas_thread() -> None:
    """One OpenBLAS thread for a process that numpy has not entered yet (a run of the command line).

    No command calls BLAS for more than a small least-squares fit. But OpenBLAS starts a thread per core
    when numpy is imported, and each one spins until its timeout (2**28 cycles by default) before it
    sleeps. On a 2-core machine, ``analyze`` on MobileNetV2 took 0.30 s of CPU for 0.22 s of wall time with
    them and 0.22 s without: CPU taken from whatever else runs there (another model's timing, a CI job), and
    more with every core. A choice the user made (``OPENBLAS_NUM_THREADS`` set) stands, and a process that
    has already imported numpy (a notebook, the tests) is left as it is.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _check_streams() -> None:
    """Standard output that exists, and text that reaches it whatever its encoding.

    An ASCII or Latin-1 terminal gets ``\u2014`` for what it cannot show, and a model path that is not
    UTF-8 (surrogate-escaped by Python) gets ``\udcff``, instead of an encoding error after the work.
    """
    if sys.stdout is None:  # started with stdout closed (>&-)
        raise TfliteFlopsError("standard output is closed: redirect it to a file or /dev/null")
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream that cannot change its errors handler keeps it
                pass


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush cannot fail again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _check_outputs_are_not_inputs(args: argparse.Namespace) -> None:
    """``-o FILE`` never names a file the command reads (the model, a budget, a profile, a saved report):
    ``analyze m.txt -o m.txt`` would replace the model with its report."""
    outputs = [path for path in _outputs(args) if os.path.exists(path)]
    if not outputs:
        return
    inputs = []
    for key, value in vars(args).items():
        if key == "output" or key.startswith("_"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and os.path.exists(item):
                inputs.append(item)
    for out in outputs:
        for source in inputs:
            try:
                same = os.path.samefile(out, source)
            except OSError:
                continue
            if same:
                raise InputSpecError(f"-o {out}: that is an input of this command ({source}); "
                                     "write the output to another file")


def _check_outputs_are_replaceable(args: argparse.Namespace) -> None:
    """``-o FILE`` names a new file or a regular one it may replace, refused before any work: never a device, a
    FIFO, a socket or a folder, and a read-only file or a symbolic link only with ``--overwrite``
    (:func:`tflite_flops.files.check_output`; the write checks again)."""
    from .errors import OutputFormatError

    for path in [] if getattr(args, "export_pack", None) else _outputs(args):  # --export-pack: its folder, not -o
        try:
            files.check_output(path)
        except files.NotReplaced as exc:
            raise OutputFormatError(f"-o {path}: {exc}") from None


def _outputs(args: argparse.Namespace) -> list[str]:
    """The files ``-o`` names: a list (repeatable ``-o``) or one path (``calibrate -o``, never split into its
    characters)."""
    outputs = getattr(args, "output", None) or []
    return [outputs] if isinstance(outputs, str) else list(outputs)
