"""``calibrate [-o PROFILE.json] [--threads N] [--no-xnnpack] [--quick]``: time the calibration suite here and
save a device profile (``analyze --predict PROFILE`` reads it); ``--export-pack DIR`` / ``--import DIR`` do
the same for a phone through ``benchmark_model`` (docs/predict.md)."""

from __future__ import annotations

import argparse
import sys

from .common import analysis_settings, at_least

HELP = "time a suite of generated single-op models and fit a device profile for latency prediction"
DEFAULT_OUTPUT = "device-profile.json"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``calibrate``."""
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT,
                   help=f"the device profile to write (default {DEFAULT_OUTPUT}); the timed points are kept in "
                        "OUTPUT.points.jsonl so that a rerun continues")
    p.add_argument("--threads", type=at_least(1), default=1, help="interpreter threads (default 1)")
    p.add_argument("--no-xnnpack", action="store_true", help="calibrate the builtin kernels only (XNNPACK off)")
    p.add_argument("--quick", action="store_true", help="about half of the suite's shapes (a few seconds to a minute)")
    p.add_argument("--runtime", default="litert", help="the runtime to time with (default litert)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--export-pack", metavar="DIR",
                      help="write the suite's models, a manifest and run_calibration.sh (benchmark_model with op "
                           "profiling) for a phone, instead of timing here")
    what.add_argument("--import", dest="import_dir", metavar="DIR",
                      help="fit the profile from the op profiles a phone wrote into an exported pack")
    p.add_argument("--device", default="device", help="with --import: the device's name in the profile")


def run(args: argparse.Namespace) -> int:
    """Calibrate here, export a pack, or import one; print a one-paragraph summary."""
    from ..errors import OutputFormatError

    try:
        return _run(args)
    except OSError as exc:  # the profile, its side file or the pack's folder cannot be written
        raise OutputFormatError(f"cannot write {exc.filename or args.output}: {exc.strerror or exc}") from None


def _run(args: argparse.Namespace) -> int:
    settings = analysis_settings(args)  # the configuration calibrated (--runtime, --threads, --no-xnnpack)
    if args.export_pack:
        from ..latency.pack import SCRIPT, export_pack

        n = export_pack(args.export_pack, settings.runtime, args.quick)
        print(f"wrote {n} calibration models, manifest.json and {SCRIPT} to {args.export_pack}")
        return 0
    if args.import_dir:
        from ..latency.pack import import_pack

        profile = import_pack(args.import_dir, args.device)
        profile.save(args.output)
        timed = None
    else:
        from ..latency.calibrate import calibrate

        profile, timed = calibrate(args.output, settings.runtime, quick=args.quick, progress=True)
    m = profile.machine
    fitted = [law for law in profile.laws if law.family[:1].isupper()]
    print(f"device profile {args.output}: {len(fitted)} op laws, {len(profile.laws) - len(fitted)} group/generic laws"
          f"; {m.cpu}, {m.runtime} {m.runtime_version}, {m.threads} thread(s), XNNPACK {'on' if m.xnnpack else 'off'}")
    print(f"  per invoke {profile.invoke_overhead_us:.2f} us, per partition {profile.partition_overhead_us:.2f} us"
          + (f"; {timed} point(s) timed in this run" if timed is not None else ""))
    for note in profile.notes[1:]:
        print(f"note: {note}", file=sys.stderr)
    return 0
