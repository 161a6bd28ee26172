"""Options shared by several subcommands."""

from __future__ import annotations

import argparse
import math
import sys

from ..settings import MAX_THREADS
from ..units import printable


INT32_MAX = 2**31 - 1  # dims, threads, runs and trip counts are C ints in the runtimes


def at_least(minimum: int | float, kind: type = int, maximum: int | float | None = None):
    """An argparse ``type`` that parses ``kind`` and refuses values below ``minimum`` or above ``maximum``
    (for integers by default the largest C int), and floats that are infinite or NaN: a usage error (exit 2,
    with the subcommand's usage) in every subcommand alike."""
    if maximum is None and kind is int:
        maximum = INT32_MAX

    def parse(text: str) -> int | float:
        try:
            value = kind(text[:64])  # a number of thousands of digits is no count: refused, not parsed
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, "
                                             f"got {text[:40]!r}") from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if len(text) > 64 or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be at most {maximum} (got {text[:40]})")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum} (got {text})")
        return value

    parse.__name__ = kind.__name__
    return parse


def add_shape_options(p: argparse.ArgumentParser) -> None:
    """--input-shape, --batch, --while-trips, --signature."""
    p.add_argument("--input-shape", action="append", metavar="SPEC", default=None,
                   help="input shape: NAME=1x224x224x3, INDEX=1x224x224x3, or a bare 1x224x224x3 for a "
                        "single-input model (repeatable)")
    p.add_argument("--batch", type=at_least(1), metavar="N",
                   help="set the leading dim of every input whose batch dim is dynamic or 1")
    p.add_argument("--while-trips", type=at_least(0), default=1, metavar="N",
                   help="trip count of WHILE loops whose bound cannot be inferred (default 1)")
    p.add_argument("--signature", metavar="KEY", help="analyze this signature's subgraph instead of subgraph 0")


def add_target_option(p: argparse.ArgumentParser) -> None:
    """``--target NAME``: the CPU target of the memory figures and the latency law's tile (``tflite_flops
    targets`` lists them; default ``host``, this CPU's); ``--gpu-delegate``: whose rules the GPU placement
    follows (``settings.GPU_DELEGATES``); ``--tflm-target NAME``: the TFLite Micro build of the TFLM arena
    (``settings.TFLM_TARGETS``). An unknown name fails in one line listing the valid ones."""
    from ..targets import names

    p.add_argument("--target", metavar="NAME", default=None,
                   help=f"the CPU the LiteRT and XNNPACK figures are for: {', '.join(names())} (default host: this "
                        "CPU, detected; tflite_flops targets lists them with their sources)")
    from ..settings import DEFAULT_TFLM_TARGET, TFLM_TARGETS

    from ..settings import GPU_DELEGATES

    p.add_argument("--gpu-delegate", choices=GPU_DELEGATES, default=None,
                   help="whose rules the GPU placement follows: ml_drift (default: LiteRT 2.x's GPU accelerator, "
                        "the ML Drift delegate of benchmark_model --use_gpu, LITERT_CL / LITERT_METAL) or classic "
                        "(TfLiteGpuDelegateV2, the classic interpreter's GPU delegate)")
    p.add_argument("--tflm-target", metavar="NAME", default=None,
                   help=f"the TFLite Micro build the TFLM arena is for: {', '.join(TFLM_TARGETS)} (default "
                        f"{DEFAULT_TFLM_TARGET}: a 32-bit MCU with the reference kernels; *-cmsis-nn: CMSIS-NN's "
                        "kernels for that core's features; host-64: the tflite-micro Python package)")


def add_output_options(p: argparse.ArgumentParser, table, written: str) -> None:
    """``--format`` (stdout) and ``-o FILE`` (repeatable), both offering what the command's
    :class:`~tflite_flops.render.formats.RendererTable` has, with the extensions of ``FORMATS``."""
    extensions = " ".join(ext for _, exts in table.values() for ext in exts)
    # a format is named by its name or by an extension that selects it (issue 45: -o x.markdown was accepted,
    # --format markdown refused): markdown and htm too
    aliases = {ext[1:]: name for name, (_, exts) in table.items() for ext in exts if ext.count(".") == 1}
    p.add_argument("--format", "-f", choices=list(table), default="table", type=lambda v: aliases.get(v, v),
                   help="stdout format (default table; an extension names its format too: markdown, htm)")
    p.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                   help=f"{written}; the format follows the extension ({extensions}); repeatable")
    add_overwrite_option(p)


def add_overwrite_option(p: argparse.ArgumentParser) -> None:
    """``--overwrite``: an output may replace a read-only file or a symbolic link (never a device, FIFO or folder)."""
    p.add_argument("--overwrite", action="store_true",
                   help="let -o replace a read-only file, or a symbolic link (the link, not what it points to)")


def print_warnings(warnings) -> None:
    """Warnings go to stderr so that stdout stays clean JSON/CSV."""
    for warning in warnings:
        print(f"warning: {printable(str(warning))}", file=sys.stderr)


def print_notes(notes) -> None:
    """Informational notes (``Report.notes``: nothing is wrong) go to stderr as ``note: ...``, after the warnings."""
    for note in notes:
        print(f"note: {printable(str(note))}", file=sys.stderr)


def add_latency_options(p: argparse.ArgumentParser, per_op: bool = True, roofline: bool = True,
                        inputs: bool = True) -> None:
    """--latency and the runtime/timing options, with --per-op and --roofline where they apply."""
    g = p.add_argument_group("latency (needs a runtime: pip install 'tflite_flops[runtime]')")
    g.add_argument("--latency", action="store_true", help="time invoke() with the interpreter")
    if per_op:
        g.add_argument("--per-op", action="store_true", help="also time every op in isolation (implies --latency)")
    from ..measure import runtimes

    g.add_argument("--runtime", choices=runtimes.names(), default=runtimes.names()[0],
                   help=f"interpreter to use (default {runtimes.names()[0]} = ai_edge_litert)")
    g.add_argument("--threads", type=at_least(1, maximum=MAX_THREADS), default=1, metavar="N",
                   help="interpreter threads (default 1); also the threads of the LiteRT memory figure")
    g.add_argument("--no-xnnpack", action="store_true",
                   help="builtin kernels without the default XNNPACK delegate")
    g.add_argument("--runs", type=at_least(1), default=50, metavar="N", help="timed runs (default 50)")
    g.add_argument("--warmup", type=at_least(1), default=5, metavar="N", help="warm-up runs (default 5)")
    g.add_argument("--min-time", type=at_least(0.0, float, 86_400.0), default=0.0, metavar="SECONDS",
                   help="keep running until both --runs and this time are reached")
    g.add_argument("--time-limit", type=at_least(1.0, float, 604_800.0), default=None, metavar="SECONDS",
                   help="stop the measurement (the interpreter runs in a child process) after this long: one "
                        "error line, exit 1 (default 300 s + 2 x --min-time + 2 s per run, more with --per-op)")
    if inputs:
        g.add_argument("--inputs", metavar="FILE.npz", help="real input arrays keyed by input name or position")
    if roofline:
        g.add_argument("--roofline", action="store_true",
                       help="measure this machine's peak FLOP/s and bandwidth, classify ops as compute/memory bound")


def add_predict_options(p: argparse.ArgumentParser) -> None:
    """--predict PROFILE and --force."""
    g = p.add_argument_group("prediction (no runtime needed)")
    g.add_argument("--predict", metavar="PROFILE.json",
                   help="predict every op's time and the whole model's from a device profile (calibrate -o), "
                        "in the configuration of --runtime, --threads and --no-xnnpack")
    g.add_argument("--force", action="store_true",
                   help="predict with a profile made for another runtime version, thread count or XNNPACK setting")
    g.add_argument("--drift-check", action="store_true",
                   help="time the profile's drift reference here (about a second) and scale the prediction by the "
                        "drift found, when the runtime is installed and the CPU is the profile's; the report says so")


def analysis_settings(args: argparse.Namespace, **points):
    """The :class:`~tflite_flops.settings.Settings` of the parsed options, built once per command and handed
    down whole: input shapes, batch, while trips, signature, ``--count-zeros``, the runtime (``--runtime``,
    ``--threads``, ``--no-xnnpack``), ``--force``, ``--target`` and ``--gpu-delegate``; an option a command lacks
    keeps its default.
    ``points``: fields the command sets itself (a sweep's points are not one input shape)."""
    from ..api import make_settings
    from ..settings import RuntimeSettings

    if getattr(args, "threads", 1) < 1:
        from ..errors import InputSpecError

        raise InputSpecError("--threads must be at least 1")
    if getattr(args, "drift_check", False) and not getattr(args, "predict", None):
        from ..errors import InputSpecError

        raise InputSpecError("--drift-check checks a device profile's reference: give it with --predict PROFILE.json")
    options = {"input_shapes": getattr(args, "input_shape", None), "batch": getattr(args, "batch", None),
               "while_trips": getattr(args, "while_trips", 1), "signature": getattr(args, "signature", None),
               "count_zeros": getattr(args, "count_zeros", None), "force": getattr(args, "force", False),
               "drift_check": getattr(args, "drift_check", False),
               "runtime": RuntimeSettings(getattr(args, "runtime", "litert"), getattr(args, "threads", 1),
                                          not getattr(args, "no_xnnpack", False)),
               "target": getattr(args, "target", None), "tflm_target": getattr(args, "tflm_target", None),
               "gpu_delegate": getattr(args, "gpu_delegate", None)}
    return make_settings(**{**options, **points})  # the library's builder: the command line's settings are its


def checked_profile(args: argparse.Namespace, settings):
    """``(settings with the --predict profile, the check)``: the profile read and checked once against the
    configuration of ``settings`` (that of a ``--latency`` run), or ``(settings, None)`` without ``--predict``.

    Raises:
        ProfileError, ProfileMismatchError: as :func:`tflite_flops.api.load_profile`.
    """
    if not getattr(args, "predict", None):
        return settings, None
    from ..api import load_profile

    check = load_profile(args.predict, settings=settings)
    return settings.with_profile(check), check


def check_notes(check, settings=None) -> list[str]:
    """The lines a command of many analyses (batch, sweep) prints once: with ``settings``, that this CPU matches
    no target (each report carries it too); about a checked profile, what could not be checked, and its drift
    check (``--drift-check``) when there was one."""
    from ..targets import fallback_note

    fallback = fallback_note(settings.target.xnnpack) if settings is not None else None
    out = [fallback] if fallback else []
    if check is None:
        return out
    out += [check.note] if check.note else []
    drift = getattr(check.profile, "drift", None)
    if drift is not None:
        out.append(f"prediction: drift ×{drift.factor:.3f} applied (reference {drift.reference_ms_then:.3f} ms at "
                   f"calibration, {drift.reference_ms_now:.3f} ms now)" if drift.applied
                   else f"prediction: drift not applied ({drift.why})")
        if drift.busy:
            out.append(f"prediction: this process had {drift.cpu_share:.0%} of the CPU while timing the drift "
                       "reference: other processes compete for the cores")
    return out


def latency_settings(args: argparse.Namespace):
    """(BenchSettings, input arrays or None) from the parsed options; the runtime is the settings'."""
    from ..measure.bench import BenchSettings
    from ..errors import InputSpecError
    from ..measure.runtime import load_npz

    if args.runs < 1 or args.warmup < 1 or args.threads < 1 or args.min_time < 0:
        raise InputSpecError("--runs, --warmup and --threads must be at least 1, --min-time at least 0")
    inputs = load_npz(args.inputs) if getattr(args, "inputs", None) else None
    return BenchSettings(args.runs, args.warmup, args.min_time, getattr(args, "time_limit", None)), inputs


TERMINAL_FORMATS = ("table", "md")  # read on a terminal as they are; JSON, CSV and HTML escape or quote their strings


def emit(render_fn, stdout_format: str, targets, to_stdout: bool = True) -> None:
    """Render each needed format once, write the ``(path, format)`` targets atomically, then print.

    ``render_fn(fmt) -> str``. Files are written before anything reaches stdout.
    """
    from ..analysis.run import collector_paused
    from ..files import write_chunked
    from ..render import write_atomic

    with collector_paused():  # a large model's rows, lines and JSON dicts, which reference counting frees
        texts = {fmt: render_fn(fmt) for fmt in {stdout_format, *(f for _, f in targets)}}
    for path, fmt in targets:
        write_atomic(path, texts[fmt])
    if to_stdout:  # a terminal gets no escape sequence from a model's names, descriptions or metadata
        text = texts[stdout_format]
        write_chunked(sys.stdout, printable(text, newlines=True) if stdout_format in TERMINAL_FORMATS else text)
