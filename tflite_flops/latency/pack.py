"""Calibrating a phone: ``calibrate --export-pack DIR`` and ``calibrate --import DIR``.

The pack holds the suite's models (``models/ID.tflite``, one file per model: a model timed with and
without XNNPACK is one file and two runs), ``manifest.json`` (each run's suite point, model and
output files, the threads and XNNPACK setting, the time budget and the time estimate),
``run_calibration.sh`` and ``README.txt`` (:mod:`tflite_flops.latency.pack_files`). The script runs
``benchmark_model`` on every run with op profiling, each run bounded by its own flags
(:data:`BUDGET`), over adb or locally; ``litert-benchmark`` (the ai-edge-litert wheel's tool) stands in
for it on a Linux machine. Back on the host, the import reads each run's whole-model time from what
came back (:mod:`tflite_flops.device.benchmark_logs`): ``profiles/STEM.json`` (litert-benchmark's
``--result_json``), else ``profiles/STEM.log`` (benchmark_model's stdout, or a logcat capture of the
Android benchmark app); without either, the sum of the op profile's rows (``profiles/STEM.csv``); else a
result in any other log or logcat capture in ``profiles/`` (a device farm's, of many runs) whose
``Graph: [...]`` and ``Use xnnpack: [..]`` name the run (:func:`captured_runs`). The median is kept when
the tool gives one, else the average. Then the same fit as a calibration here.

A pack is untrusted when it comes back (:mod:`tflite_flops.latency.pack_manifest`): its manifest is read under
a size and a nesting cap and validated field by field; only regular files inside the pack's folder are read
(no absolute path, no ``..``, no symbolic link); each model must have the SHA-256 the export recorded, and a
log that names another run's model is refused. The export writes only inside its folder, each file atomically,
never through a symbolic link (:func:`tflite_flops.files.write_atomic`).

The time estimate (:func:`estimate`) is the budget the script enforces, times the runs, plus an
ASSUMED start-up time per run (:data:`STARTUP_S`): nothing here measures a phone.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from typing import Any, Mapping, Sequence

from .profile import DeviceProfile, Machine, ProfileError
from ..errors import InputSpecError, ModelFormatError, ModelLoadError, RuntimeUnavailableError
from ..files import NotReplaced, TooLarge, check_output, read_capped, write_atomic
from ..settings import RuntimeSettings, Settings, Target
from ..targets import detect
from ..measure import runtimes
from ..measure.runtime import runtime_version
from .calibrate import analyse, build_profile, cache_size
from .suite import SuitePoint, build, suite
from ..device.benchmark_logs import BENCHMARK_MODEL, LITERT_BENCHMARK, is_timing_text, parse_timing, split_results
from ..device.op_profile import parse_profile, read_profile_text
from ..units import printable
from .pack_files import readme, script
from .pack_manifest import (MAX_PROFILE_FILES, MODEL_CAP, OUTPUT_KEYS, PACK_FORMAT, PACK_VERSION,  # noqa: F401
                            check_model, device_facts, load, pack_file)

SCRIPT = "run_calibration.sh"
README = "README.txt"
# benchmark_model's flags per run (warm-up runs; then at least num_runs and min_secs, at most max_secs) and
# litert-benchmark's fixed run count; --quick halves the phone's time
BUDGET = {"warmup_runs": 2, "num_runs": 5, "min_secs": 0.25, "max_secs": 1.0, "litert_runs": 50}
QUICK_BUDGET = {"warmup_runs": 2, "num_runs": 5, "min_secs": 0.1, "max_secs": 0.5, "litert_runs": 20}
STARTUP_S = 0.3  # ASSUMED per run on a mid-range phone: start benchmark_model, load the model, create the delegate
SLOWEST_RUN_S = 0.05  # ASSUMED: the suite's largest op (116 M MACs) on a phone doing over ~2.3 GMAC/s
COARSE = 0.05  # a time within 20 steps of its tool's rounding is coarse


def file_stem(point: SuitePoint) -> str:
    """The file name (without extension) of a run's outputs."""
    return point.key.replace("@", "_")


def select(points: Sequence[SuitePoint], only: Sequence[str]) -> list[SuitePoint]:
    """The points whose id starts with one of ``only`` (all of them when ``only`` is empty)."""
    prefixes = tuple(p for p in only if p)
    return [p for p in points if not prefixes or p.id.startswith(prefixes)]


def estimate(runs: int, budget: dict[str, float]) -> dict[str, float]:
    """Seconds on the phone: typical (every run reaches ``min_secs``, its ``num_runs`` fit in it) and at most
    (every run stopped by ``max_secs``, with its warm-up and the run under way at the slowest op's time)."""
    typical = runs * (STARTUP_S + budget["min_secs"] + budget["warmup_runs"] * 0.005)
    most = runs * (STARTUP_S + budget["max_secs"] + (budget["warmup_runs"] + 1) * SLOWEST_RUN_S)
    return {"runs": runs, "startup_s": STARTUP_S, "typical_s": round(typical, 1), "max_s": round(most, 1)}


def export_pack(folder: str, runtime: RuntimeSettings, quick: bool, only: Sequence[str] = ()) -> dict[str, Any]:
    """Write the pack into ``folder`` for the configuration ``runtime`` (its threads and XNNPACK setting on the
    device; its runtime's schema writes the models); ``only``: id prefixes to keep. Returns the manifest.

    Everything is written inside ``folder`` (created when missing), each file whole or not at all
    (:func:`tflite_flops.files.write_atomic`): ``models/``, ``manifest.json``, the script or the README that is a
    symbolic link, a device, a FIFO or a folder is refused, never written through, and a read-only one is
    replaced only with ``--overwrite``; the script is made executable before it takes its name.

    Raises:
        InputSpecError: ``only`` keeps no point.
        OSError (NotReplaced): a path of the pack that is not replaced; another that cannot be written.
    """
    threads, xnnpack = runtime.threads, runtime.xnnpack
    fb = runtimes.schema_module(runtime.runtime)
    points = select(suite(quick, xnnpack), only)
    if not points:
        raise InputSpecError(f"--points {','.join(only)}: no calibration model's id starts with that")
    _pack_folder(folder, sorted({f"models/{p.id}.tflite" for p in points}))
    entries, runs, sizes, hashes = [], [], {}, {}
    for p in points:
        stem, model = file_stem(p), f"models/{p.id}.tflite"
        if model not in sizes:
            blob = build(fb, p)
            write_atomic(os.path.join(folder, model), blob)
            sizes[model], hashes[model] = len(blob), hashlib.sha256(blob).hexdigest()
        entries.append({"key": p.key, "id": p.id, "family": p.family, "precision": p.precision, "delegate": p.delegate,
                        "model": model, "model_sha256": hashes[model], "log": f"profiles/{stem}.log",
                        "profile": f"profiles/{stem}.csv", "json": f"profiles/{stem}.json"})
        runs.append((stem, p.id, p.delegate))
    budget = dict(QUICK_BUDGET if quick else BUDGET)
    manifest = {"format": PACK_FORMAT, "version": PACK_VERSION, "threads": threads, "xnnpack": xnnpack,
                "quick": quick, "only": list(only), "runtime": runtime.runtime,
                "runtime_version": runtime_version(runtime.runtime), "budget": budget,
                "estimate": {**estimate(len(points), budget), "models": len(sizes), "bytes": sum(sizes.values())},
                "points": entries}
    write_atomic(os.path.join(folder, "manifest.json"), json.dumps(manifest, indent=1) + "\n")
    write_atomic(os.path.join(folder, SCRIPT), script({k: _flag(v) for k, v in budget.items()}, threads, runs,
                                                      len(sizes)), executable=True)
    write_atomic(os.path.join(folder, README), readme(manifest))
    return manifest


def _pack_folder(folder: str, models: Sequence[str]) -> None:
    """``folder`` and its ``models/``, made when missing; ``models/`` that is a symbolic link or not a folder is
    refused (the pack's models are written only inside its folder). Before a file is written, the pack's other
    files are checked too: nothing is written when one of them would be refused."""
    os.makedirs(folder, exist_ok=True)
    where = os.path.join(folder, "models")
    try:
        mode = os.lstat(where).st_mode
    except FileNotFoundError:
        os.mkdir(where)
        mode = os.lstat(where).st_mode
    if stat.S_ISLNK(mode):
        raise NotReplaced(0, "a symbolic link: the pack's models are written only inside its folder", where)
    if not stat.S_ISDIR(mode):
        raise NotReplaced(0, "not a folder: the pack's models go in a folder models/", where)
    for name in ("manifest.json", SCRIPT, README, *models):
        check_output(os.path.join(folder, name))


def _flag(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def read_manifest(folder: str) -> dict[str, Any]:
    """The pack's manifest, read under its caps and validated (:func:`tflite_flops.latency.pack_manifest.load`);
    ProfileError (one line naming the file and the field) when it is missing, not a calibration pack, or
    invalid."""
    return load(folder)


def run_time(folder: str, entry: dict[str, Any], threads: int = 0) -> tuple[float, str, float] | None:
    """(microseconds, tool, rounding step in us) of one run from its outputs, None when none came back.

    Raises:
        ProfileError: an output that is there but malformed, or that says it ran at another thread count than
            ``threads`` (when given) (one line naming the file).
    """
    def there(key: str) -> str | None:  # a regular file inside the pack (a link or a FIFO is refused), or None
        path = pack_file(folder, entry[key], f"the output of the run {entry['key']}")
        return path if os.path.lexists(path) else None

    json_path, log, csv = there("json"), there("log"), there("profile")
    try:
        for path in (json_path, log):
            if path is None:
                continue
            data = read_profile_text(path).encode("utf-8", errors="replace")
            if is_timing_text(data):
                t = parse_timing(data, path)
                if threads and t.threads is not None and t.threads != threads:
                    raise ProfileError(f"{path}: ran at {t.threads} thread(s), the pack is for {threads}: run it "
                                       "again with the pack's script, or export a pack for that thread count")
                ran, model = _graph_name(t.graph), os.path.basename(entry["model"])
                if ran and ran != model:
                    raise ProfileError(f"{path}: a run of {printable(ran[:80])}, not of {model} (the manifest's "
                                       f"run {entry['key']}): a log put under another run's name")
                return t.typical_us, t.tool, t.resolution_us
        if csv is not None:
            rows = parse_profile(read_profile_text(csv))
            if rows:
                return sum(r.avg_ms for r in rows) * 1e3, BENCHMARK_MODEL, 1.0
    except (ModelFormatError, ModelLoadError) as exc:
        raise ProfileError(str(exc)) from None
    return None


def _graph_name(graph: str | None) -> str:
    """The file name of the model a tool said it ran (``Graph: [/data/local/tmp/pack/models/ID.tflite]``)."""
    return os.path.basename((graph or "").replace("\\", "/").strip())


def captured_runs(folder: str, manifest: dict[str, Any], threads: int = 0) -> dict[str, tuple[float, str, float]]:
    """Runs timed in logs or logcat captures of many runs (a device farm's), by run key: every file in
    ``profiles/`` that is not a run's own output (nor ``device.txt``) and holds "Inference timings in us" lines.
    Each result is matched to a run by its ``Graph: [.../ID.tflite]`` and its ``Use xnnpack: [0|1]``; a result
    without the XNNPACK setting is matched only when the model has a single run. The last result of a run wins.

    Raises:
        ProfileError: a malformed result, or a result of one of the pack's models at another thread count than
            ``threads`` (when given) (one line naming the file).
    """
    profiles = pack_file(folder, "profiles", "the runs' outputs", directory=True)  # a folder, never a link
    own = {os.path.basename(e[k]) for e in manifest["points"] for k in OUTPUT_KEYS}
    by_id: dict[str, list[dict[str, Any]]] = {}
    for e in manifest["points"]:
        by_id.setdefault(e["id"], []).append(e)
    found: dict[str, tuple[float, str, float]] = {}
    try:
        with os.scandir(profiles) as listing:
            entries = []
            for item in listing:
                entries.append(item)
                if len(entries) > MAX_PROFILE_FILES:
                    raise ProfileError(f"{profiles}: more than {MAX_PROFILE_FILES} files, more than a pack's runs "
                                       "leave")
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for item in sorted(entries, key=lambda i: i.name):
        name, path = item.name, item.path
        if name in own or name.startswith(".") or name == "device.txt":
            continue
        if item.is_symlink():
            raise ProfileError(f"{path}: a symbolic link: a run's output is read only from a file inside the pack's "
                               "folder")
        if not item.is_file(follow_symlinks=False):
            continue  # a folder, a FIFO: not a capture
        try:
            text = read_profile_text(path)
            results = split_results(text, path) if "Inference timings in us" in text else []
        except (ModelFormatError, ModelLoadError) as exc:
            raise ProfileError(str(exc)) from None
        for timing, xnnpack in results:
            model = _graph_name(timing.graph)
            runs = by_id.get(model[:-len(".tflite")] if model.endswith(".tflite") else model, [])
            if xnnpack is not None:
                runs = [e for e in runs if bool(e.get("delegate")) == xnnpack]
            if len(runs) == 1:
                if threads and timing.threads is not None and timing.threads != threads:
                    raise ProfileError(f"{path}: {printable(model[:80])} ran at {timing.threads} thread(s), the pack "
                                       f"is for {threads}")
                found[str(runs[0]["key"])] = (timing.typical_us, timing.tool, timing.resolution_us)
    return found


def device_target(facts: Mapping[str, str]) -> tuple[str, str | None]:
    """The CPU target of the device a pack ran on (``facts``: its device.txt, :func:`device_facts`), as XNNPACK picks
    its kernels from the CPU's feature flags, and a note when it is unknown ("") or guessed."""
    machine, features = facts.get("machine", ""), facts.get("features", "")
    if not machine:
        return "", ("the device's architecture was not recorded (a pack of an earlier version): the profile names "
                    "no CPU target, and its laws were fitted with this host's")
    name, note = detect(f"Features\t: {features}" if features else "", machine)
    if note is not None:
        return "", f"the device's CPU matches no target ({note.split(': ', 1)[0]}): the profile names none"
    if not features:
        return name, f"the device's CPU features were not recorded: taken as {name}, the plainest target of {machine}"
    return name, None


def import_pack(folder: str, device: str | None = None) -> DeviceProfile:
    """The profile fitted to the times that came back in ``folder``/profiles.

    Raises:
        ProfileError: not a pack, a point of the manifest unknown to this tool's suite (a pack of another
            version), a malformed output, or no model timed at all.
    """
    manifest = read_manifest(folder)
    known = {p.key: p for p in suite(bool(manifest.get("quick")), bool(manifest.get("xnnpack")))}
    analysed, medians, missing, zero, coarse = [], {}, [], [], 0
    tools: dict[str, int] = {}
    # the configuration the phone ran (its threads and XNNPACK setting): the suite's models analysed in it
    threads = manifest["threads"]
    facts = device_facts(folder)
    target, target_note = device_target(facts)
    caches = {key.removeprefix("cache_"): size for key, value in facts.items()
              if key.startswith("cache_") and (size := cache_size(value)) is not None}
    # the device's CPU target, not this host's: its kernels' tiles and depths are what the laws are fitted with
    settings = Settings(runtime=RuntimeSettings("benchmark_model", threads, bool(manifest.get("xnnpack", True))),
                        target=Target(xnnpack=target or None))
    blobs: dict[str, bytes] = {}
    captured = captured_runs(folder, manifest, threads)
    for entry in manifest["points"]:
        point = known.get(entry["key"])
        if point is None:
            raise ProfileError(f"{folder}: the pack names a calibration model this tool does not know "
                               f"({entry['key']!r}): export the pack again with this version")
        if point.key in medians or point.key in missing or point.key in zero:
            raise ProfileError(f"{folder}: the pack names the run {point.key!r} twice")
        got = run_time(folder, entry, threads) or captured.get(point.key)
        if got is None:
            missing.append(point.key)
            continue
        us, tool, step = got
        if us <= 0:
            zero.append(point.key)  # rounded to nothing by the tool: no relative error can be fitted
            continue
        coarse += step / us > COARSE
        tools[tool] = tools.get(tool, 0) + 1
        medians[point.key] = us
        if entry["model"] != f"models/{point.id}.tflite":
            raise ProfileError(f"{os.path.join(folder, 'manifest.json')}: the run {point.key!r} names the model "
                               f"{entry['model']!r}, not models/{point.id}.tflite")
        model = pack_file(folder, entry["model"], "the pack's model")
        if model not in blobs:
            try:
                blobs[model] = read_capped(model, MODEL_CAP, follow=False)
            except TooLarge:
                raise ProfileError(f"{model}: larger than {MODEL_CAP >> 20} MiB, the most read of a pack's model") \
                    from None
            except OSError as exc:
                raise ProfileError(f"{model}: cannot read the pack's model ({exc.strerror or exc})") from None
        check_model(model, blobs[model], entry)
        try:
            analysed.append(analyse(point, blobs[model], settings, caches))
        except (ModelFormatError, ModelLoadError) as exc:
            raise ProfileError(f"{model}: not the pack's calibration model ({str(exc).removeprefix('<bytes>: ')})") \
                from None
    if not medians:
        raise ProfileError(f"{folder}: no time came back (run {SCRIPT} as {README} says, and copy profiles/ here)")
    tool = max(tools, key=lambda k: tools[k])
    cores = int(facts["cores"]) if facts.get("cores", "").isdigit() and int(facts["cores"]) > 0 else 0
    name = device or facts.get("model") or facts.get("machine") or "device"  # facts: printable, bounded
    where = Machine(cpu=name, cores=cores or threads, system=facts.get("machine", ""), runtime=tool,
                    runtime_version="device", threads=threads, xnnpack=bool(manifest.get("xnnpack", True)),
                    target=target, caches=caches)
    notes = [f"imported from {' and '.join(sorted(tools))} outputs of a calibration pack "
             f"({len(medians)} of {len(manifest['points'])} runs)"]
    if target_note:
        notes.append(target_note)
    if not caches:
        notes.append("the device's cache sizes were not recorded: the cost of weights past its caches is unknown")
    if not cores:
        notes.append("the device's core count was not recorded: the thread count stands in")
    if missing:
        notes.append(f"{len(missing)} run(s) without an output, left out")
    if zero:
        notes.append(f"{len(zero)} run(s) timed at 0 (below the tool's rounding), left out")
    if coarse:
        notes.append(f"{coarse} run(s) within 20 steps of the tool's rounding "
                     f"({LITERT_BENCHMARK}: 0.01 ms): their laws are coarse")
    try:
        return build_profile(analysed, medians, where, "import", notes=tuple(notes))
    except RuntimeUnavailableError:  # only runs that feed no law came back (the overhead chains alone)
        raise ProfileError(f"{folder}: the {len(medians)} run(s) that came back fit no law (every one of them an "
                           "overhead chain): copy the rest of profiles/ here, or run the pack again") from None
