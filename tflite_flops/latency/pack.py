"""Calibrating a phone: ``calibrate --export-pack DIR`` and ``calibrate --import DIR``.

The pack holds the suite's models (``models/KEY.tflite``), a ``manifest.json`` naming each model's
suite point and the configuration (threads, XNNPACK), and ``run_calibration.sh``, which runs
``benchmark_model`` with op profiling on each model (``--enable_op_profiling=true
--op_profiling_output_mode=csv --op_profiling_output_file=profiles/KEY.csv``, its log in
``profiles/KEY.log``). Back on the host, the import reads each op profile with the on-device import
(:func:`tflite_flops.device.op_profile.read_profile`): a model's time is the log's
``Inference (avg)`` when the log is there, else the sum of its profile rows; then the same fit as a
calibration here.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .profile import DeviceProfile, Machine, ProfileError, read_json
from ..settings import RuntimeSettings, Settings
from ..measure import runtimes
from .calibrate import analyse, build_profile
from .suite import SuitePoint, build, suite
from ..device.op_profile import read_profile, read_profile_text

PACK_FORMAT = "tflite_flops.calibration_pack"
PACK_VERSION = 1
SCRIPT = "run_calibration.sh"
_AVG = re.compile(r"Inference \(avg\):\s*([0-9.eE+-]+)")


def file_stem(point: SuitePoint) -> str:
    """The file name (without extension) of a point's model and profile."""
    return point.key.replace("@", "_")


def export_pack(folder: str, runtime: RuntimeSettings, quick: bool) -> int:
    """Write the pack into ``folder`` for the configuration ``runtime`` (its threads and XNNPACK setting on the
    device; its runtime's schema writes the models); returns the number of models."""
    threads, xnnpack = runtime.threads, runtime.xnnpack
    fb = runtimes.schema_module(runtime.runtime)
    points = suite(quick, xnnpack)
    os.makedirs(os.path.join(folder, "models"), exist_ok=True)
    entries = []
    lines = ["#!/bin/sh", "# tflite_flops calibration pack: run on the device, then bring profiles/ back and run",
             "#   tflite_flops calibrate --import THIS_FOLDER -o device-profile.json",
             "# usage: sh run_calibration.sh [PATH_TO_benchmark_model]", "BENCH=${1:-./benchmark_model}",
             'cd "$(dirname "$0")" || exit 1', "mkdir -p profiles", "run() {",
             f'  "$BENCH" --graph="models/$1.tflite" --num_threads={threads} --use_xnnpack=$2 --warmup_runs=5 '
             '--num_runs=50 --enable_op_profiling=true --op_profiling_output_mode=csv '
             '--op_profiling_output_file="profiles/$1.csv" > "profiles/$1.log" 2>&1 || echo "failed: $1"', "}"]
    for i, p in enumerate(points, 1):
        stem = file_stem(p)
        with open(os.path.join(folder, "models", stem + ".tflite"), "wb") as f:
            f.write(build(fb, p))
        entries.append({"key": p.key, "id": p.id, "family": p.family, "precision": p.precision,
                        "delegate": p.delegate, "model": f"models/{stem}.tflite", "profile": f"profiles/{stem}.csv",
                        "log": f"profiles/{stem}.log"})
        lines.append(f'echo "{i}/{len(points)} {stem}"; run {stem} {"true" if p.delegate else "false"}')
    manifest = {"format": PACK_FORMAT, "version": PACK_VERSION, "threads": threads, "xnnpack": xnnpack,
                "quick": quick, "points": entries}
    with open(os.path.join(folder, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(folder, SCRIPT), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(os.path.join(folder, SCRIPT), 0o755)
    return len(points)


def read_manifest(folder: str) -> dict[str, Any]:
    """The pack's manifest; ProfileError (one line) when it is missing or not a calibration pack."""
    path = os.path.join(folder, "manifest.json")
    manifest = read_json(path, f"{folder}: not a calibration pack (no manifest.json; make one with --export-pack)",
                         "a calibration pack manifest")
    if not isinstance(manifest, dict) or manifest.get("format") != PACK_FORMAT:
        raise ProfileError(f"{path}: not a tflite_flops calibration pack manifest")
    if manifest.get("version") != PACK_VERSION:
        raise ProfileError(f"{path}: calibration pack version {manifest.get('version')!r}; this tool reads "
                           f"version {PACK_VERSION}")
    return manifest


def import_pack(folder: str, device: str = "device") -> DeviceProfile:
    """The profile fitted to the op profiles that came back in ``folder``/profiles.

    Raises:
        ProfileError: not a pack, a point of the manifest unknown to this tool's suite (a pack of another
            version), or no model profiled at all.
    """
    manifest = read_manifest(folder)
    known = {p.key: p for p in suite(bool(manifest.get("quick")), bool(manifest.get("xnnpack")))}
    analysed, medians, missing = [], {}, []
    # the configuration the phone ran (its threads and XNNPACK setting): the suite's models analysed in it
    settings = Settings(runtime=RuntimeSettings("benchmark_model", int(manifest.get("threads", 1)),
                                                bool(manifest.get("xnnpack", True))))
    for entry in manifest.get("points", []):
        point = known.get(str(entry.get("key")))
        if point is None:
            raise ProfileError(f"{folder}: the pack names a calibration model this tool does not know "
                               f"({entry.get('key')!r}): export the pack again with this version")
        csv = os.path.join(folder, str(entry["profile"]))
        if not os.path.exists(csv):
            missing.append(point.key)
            continue
        rows = read_profile(csv)
        log = os.path.join(folder, str(entry.get("log", "")))
        avg = _AVG.search(read_profile_text(log)) if entry.get("log") and os.path.exists(log) else None
        if avg is not None:
            medians[point.key] = float(avg.group(1))  # us, the whole invoke as benchmark_model timed it
        elif rows:
            medians[point.key] = sum(r.avg_ms for r in rows) * 1e3
        else:
            missing.append(point.key)
            continue
        model = os.path.join(folder, str(entry["model"]))
        with open(model, "rb") as f:
            analysed.append(analyse(point, f.read(), settings))
    if not medians:
        raise ProfileError(f"{folder}: no op profile came back (run {SCRIPT} on the device and copy profiles/ here)")
    where = Machine(cpu=device, cores=0, runtime="benchmark_model", runtime_version="device",
                    threads=int(manifest.get("threads", 1)), xnnpack=bool(manifest.get("xnnpack", True)))
    notes = (f"imported from benchmark_model op profiles; {len(missing)} model(s) without a profile",) if missing else (
        "imported from benchmark_model op profiles",)
    return build_profile(analysed, medians, where, "import", notes=notes)
