"""``calibrate [-o PROFILE.json] [--threads N] [--no-xnnpack] [--quick] [--points P,...]``: time the calibration
suite here and save a device profile (``analyze --predict PROFILE`` reads it); ``--export-pack DIR`` /
``--import DIR`` do the same for a phone through ``benchmark_model`` (docs/predict.md, "On a phone")."""

from __future__ import annotations

import argparse
import os
import sys

from ..settings import MAX_THREADS
from .common import add_overwrite_option, analysis_settings, at_least

HELP = "time a suite of generated single-op models and fit a device profile for latency prediction"
DEFAULT_OUTPUT = "device-profile.json"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``calibrate``."""
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT,
                   help=f"the device profile to write (default {DEFAULT_OUTPUT}); the timed points are kept in "
                        "OUTPUT.points.jsonl so that a rerun continues")
    add_overwrite_option(p)
    p.add_argument("--threads", type=at_least(1, maximum=MAX_THREADS), default=1,
                   help="interpreter threads (default 1)")
    p.add_argument("--no-xnnpack", action="store_true", help="calibrate the builtin kernels only (XNNPACK off)")
    p.add_argument("--quick", action="store_true", help="about half of the suite's shapes (a few seconds to a minute)")
    p.add_argument("--runtime", default="litert", help="the runtime to time with (default litert)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--export-pack", metavar="DIR",
                      help="write the suite's models, a manifest, run_calibration.sh (benchmark_model with op "
                           "profiling, over adb or --local) and README.txt for a phone, instead of timing here; "
                           "prints the pack's size and an estimate of its time on a phone")
    what.add_argument("--import", dest="import_dir", metavar="DIR",
                      help="fit the profile from what came back into an exported pack's profiles/: benchmark_model "
                           "logs, logcat captures of the benchmark app, or litert-benchmark --result_json files")
    what.add_argument("--from-results", metavar="RESULTS", action="append",
                      help="fit a device's profile from its whole-model times, on --base's laws: a JSON Lines file "
                           "of result rows (file, device, accelerator, latency_ms.median: a device farm's or "
                           "LiteRT's leaderboard), benchmark_model logs, or a folder of them (repeatable); the "
                           "models they name are read from --models")
    p.add_argument("--models", metavar="DIR", help="with --from-results: the folder of the .tflite files the results "
                                                   "name")
    p.add_argument("--base", metavar="PROFILE.json", help="with --from-results: the profile whose laws are scaled "
                                                         "(a calibrate of a host)")
    p.add_argument("--target", metavar="NAME", help="with --from-results: the device's CPU target (tflite_flops "
                                                    "targets; e.g. arm-i8mm for a Cortex-X2 or later): the tiles "
                                                    "the fit and every prediction see")
    p.add_argument("--points", metavar="PREFIX[,PREFIX...]", type=_prefixes, default=(),
                   help="only the suite's models whose id starts with one of these (e.g. ADD-float32,overhead): a "
                        "smaller calibration or pack")
    p.add_argument("--device", help="with --import: the device's name in the profile (default: the Android model "
                                    "or architecture the runner recorded, else 'device'); with --from-results: the "
                                    "device whose rows are fitted (needed when the results hold several, and for logs)")


def _prefixes(text: str) -> tuple[str, ...]:
    prefixes = tuple(p.strip() for p in text.split(",") if p.strip())
    if not prefixes:
        raise argparse.ArgumentTypeError("give one or more model id prefixes, comma-separated")
    return prefixes


def run(args: argparse.Namespace) -> int:
    """Calibrate here, export a pack, or import one; print a one-paragraph summary."""
    from ..errors import OutputFormatError

    try:
        return _run(args)
    except OSError as exc:  # the profile, its side file or the pack's folder cannot be written
        raise OutputFormatError(f"cannot write {exc.filename or args.output}: {exc.strerror or exc}") from None


def _run(args: argparse.Namespace) -> int:
    _check_combination(args)
    if args.from_results:
        return _from_results(args)
    settings = analysis_settings(args)  # the configuration calibrated (--runtime, --threads, --no-xnnpack)
    if args.export_pack:
        from ..latency.pack import README, SCRIPT, export_pack
        from ..latency.pack_files import duration

        manifest = export_pack(args.export_pack, settings.runtime, args.quick, args.points)
        e = manifest["estimate"]
        print(f"wrote {e['models']} calibration models ({e['bytes'] / 1e6:.1f} MB) for {e['runs']} runs, manifest.json, "
              f"{SCRIPT} and {README} to {args.export_pack}")
        print(f"  estimated time on a mid-range phone: about {duration(e['typical_s'])}, at most about "
              f"{duration(e['max_s'])} (the budget {SCRIPT} passes to benchmark_model, and an assumed "
              f"{e['startup_s']} s start-up a run: {README})")
        print(f"  next: read {README}, get benchmark_model for the phone, run: sh {SCRIPT}")
        return 0
    if args.import_dir:
        from ..latency.pack import import_pack

        profile = import_pack(args.import_dir, args.device)
        profile.save(args.output)
        timed = None
    else:
        from ..latency.calibrate import calibrate

        from ..latency.pack import select
        from ..latency.suite import suite

        points = select(suite(args.quick, settings.runtime.xnnpack), args.points) if args.points else None
        if points == []:
            from ..errors import InputSpecError

            raise InputSpecError(f"--points {','.join(args.points)}: no calibration model's id starts with that")
        profile, timed = calibrate(args.output, settings.runtime, quick=args.quick, progress=True, points=points)
    from ..units import printable

    m = profile.machine
    fitted = [law for law in profile.laws if law.family[:1].isupper()]
    print(f"device profile {args.output}: {len(fitted)} op laws, {len(profile.laws) - len(fitted)} group/generic laws"
          f"; {printable(m.cpu)}, {m.runtime} {m.runtime_version}, {m.threads} thread(s), "
          f"XNNPACK {'on' if m.xnnpack else 'off'}")
    print(f"  per invoke {profile.invoke_overhead_us:.2f} us, per partition {profile.partition_overhead_us:.2f} us"
          + (f"; {timed} point(s) timed in this run" if timed is not None else ""))
    for note in profile.notes[1:]:
        print(f"note: {printable(note)}", file=sys.stderr)
    return 0


def _check_combination(args: argparse.Namespace) -> None:
    """Refuse an option the mode given does not read, rather than ignore it (exit 2)."""
    from ..errors import InputSpecError

    if args.from_results:
        extra = [name for name, on in (("--quick", args.quick), ("--points", args.points),
                                       ("--threads", args.threads != 1), ("--no-xnnpack", args.no_xnnpack),
                                       ("--runtime", args.runtime != "litert")) if on]
        if extra:
            raise InputSpecError(f"{', '.join(extra)}: not read by --from-results (the profile keeps the base "
                                 "profile's configuration)")
    else:
        extra = [name for name, on in (("--models", args.models), ("--base", args.base), ("--target", args.target))
                 if on]
        if extra:
            raise InputSpecError(f"{', '.join(extra)}: only read with --from-results")


def _from_results(args: argparse.Namespace) -> int:
    """``--from-results``: fit, save, and print the fit and its leave-one-model-out accuracy."""
    from ..errors import InputSpecError
    from ..files import check_output
    from ..latency.profile import DeviceProfile
    from ..latency.results import fit_from_results, read_results
    from ..units import printable
    from ..render.results import fit_lines

    for option, value in (("--models DIR", args.models), ("--base PROFILE.json", args.base)):
        if not value:
            raise InputSpecError(f"--from-results needs {option}")
    if not os.path.isdir(args.models):
        raise InputSpecError(f"--models {printable(args.models)}: not a folder")
    check_output(args.output, args.overwrite)
    base = DeviceProfile.load(args.base)
    device, results = read_results(args.from_results, args.device)
    fit = fit_from_results(results, args.models, device, base, args.target)
    fit.profile.save(args.output)
    for line in fit_lines(args.output, fit):
        print(line)
    for why in fit.left_out:
        print(f"note: left out {why}", file=sys.stderr)
    if not args.target:
        print("note: no --target: the profile names no CPU target (its laws see the default tiles); name the "
              "device's (tflite_flops targets)", file=sys.stderr)
    return 0
