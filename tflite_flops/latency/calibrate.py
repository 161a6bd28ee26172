"""``calibrate``: time the calibration suite here, fit the laws, save a device profile.

1. The suite (:mod:`tflite_flops.latency.suite`) is written model by model and timed with
   the harness (:func:`tflite_flops.measure.bench.time_invokes`: warm-up, then timed ``invoke()`` runs,
   the median), each point with XNNPACK on or off as it says. A point takes about ``POINT_SECONDS``
   of timed runs (at least ``MIN_RUNS``).
2. Every timed median goes to a side file next to the profile (``PROFILE.points.jsonl``, one JSON
   line per point, with the configuration it was timed in: runtime, version, threads, CPU). A rerun
   reads it and times only the points it lacks, so an interrupted calibration continues.
3. Each model is analysed with the same static analysis the prediction uses: its op's precision
   and placement (XNNPACK or builtin) say which law the point feeds, ``features.op_features``
   its features. The chains of tiny ADDs give the per-invoke and per-partition overheads
   (:func:`tflite_flops.latency.fit.fit_overheads`), which are subtracted from every point.
4. :func:`tflite_flops.latency.fit.fit_laws` fits the laws on the single-op points; then the WHILE
   points, less their cond and body ops as those laws predict them, give the WHILE law (:func:`loop_laws`).
5. **Whole-model conditions**: some points (``suite.cold_points``) are timed again, warm and *cold* in
   turn (:func:`time_cold`: an eviction buffer read before each cold run), with buffers sized from this
   machine's caches (:func:`cache_sizes`, read from sysfs; ``latency.cache.evictions``); the cold time less
   the warm one, against the op's bytes, gives the cost of data by reuse distance
   (:func:`tflite_flops.latency.fit.fit_cache_curve`), which the prediction applies to each op's data in a
   whole model (:mod:`tflite_flops.latency.cache`).
6. **The drift reference**: a few fixed points (``suite.reference_points``) are timed once more in every pass
   and the median of their passes stored (the speed of the machine over the whole calibration, not of one
   moment); ``--drift-check`` times them again (:func:`check_drift`).
   The profile is saved with the machine and its cache sizes.

Timers can be injected (tests: no clock, no runtime).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import random
import statistics
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..analysis import analyze_model
from ..analysis.placement import xnnpack_placer
from .profile import (AFTER_QD8_PLACEMENTS, BUILTIN_PLACEMENT, DEVICE_SOURCES, LAW_FEATURES, XNNPACK_PLACEMENT,
                      DeviceProfile, Drift, Law, Machine)
from .predict import feature_context
from ..reader.load import load_model
from ..errors import RuntimeUnavailableError
from ..settings import Settings, Target
from ..measure import runtimes
from ..measure.bench import BenchSettings, summarize_ms, time_invokes
from ..report.measured import cpu_share
from .suite import (LOOP, OVERHEAD, STREAM, SuitePoint, build, cold_points, gemv_points, reference_points, stream_points,
                    suite)
from .fit import RANGE_RATE, ColdSample, Sample, StreamSample, fit_cache_curve, fit_law, fit_laws, fit_overheads, stream_costs
from .cache import CacheCurve, OpData, cost_at, evictions, op_data, per_inference_bytes, with_stream_costs
from ..measure.progress import progress_bar
from ..measure.runtime import RuntimeSettings, cpu_model, fill_inputs, make_interpreter, resize_and_allocate, runtime_version

# A law point's seconds of invokes over its passes, its runs per pass: measured paired (each point timed both ways
# in turn, in one run, 2026-12-08), 0.036 s and 3-100 runs put every prediction of 16 real models within 2.7% of
# what 0.25 s and 5-400 runs gave (median 0.8%, no common shift), for a quarter of the timing's CPU time
# (docs/predict.md, "The calibration suite")
POINT_SECONDS, QUICK_POINT_SECONDS = 0.036, 0.015
MIN_RUNS, MAX_RUNS = 3, 100
ORDER_SEED = 29  # the seed of the order the points are timed in (a fixed shuffle: a calibration is repeatable)
REFERENCE_SECONDS, REFERENCE_MAX_RUNS = 0.2, 1_000_000  # each drift reference point (5 of them: about a second)
SIDE_SUFFIX = ".points.jsonl"
SIDE_FORMAT = "tflite_flops.calibration_points"

# timer(model bytes, runtime settings of the point, quick) -> median microseconds of one invoke()
Timer = Callable[[bytes, RuntimeSettings, bool], float]
# cold timer(model bytes, runtime settings of the point, bytes read before each cold run)
#   -> (warm median, cold median) in microseconds, timed in turn in the same run
ColdTimer = Callable[[bytes, RuntimeSettings, int], "tuple[float, float]"]
COLD_RUNS = 4  # timed cold runs of a point (each after an eviction: up to 2x the last-level cache read)
MIN_CURVE_POINTS = 8  # cold points per eviction size for a precision to get a cache curve of its own
CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"


@dataclass(frozen=True)
class Analysed:
    """A suite point as the analysis sees it: its inference ops' features and its delegate partitions."""

    point: SuitePoint
    features: tuple[Any, ...]  # OpFeatures of the ops that run per inference
    partitions: int  # XNNPACK partitions (DELEGATE nodes) when timed with the delegate, else 0
    ops: int  # ops that run per inference
    runs: tuple[int, ...] = ()  # the executions per inference of each of ``features`` (1 when not given)
    data: tuple[OpData, ...] = ()  # the bytes each inference op touches (latency.cache.op_data)


def cache_sizes(root: str = CACHE_DIR) -> dict[str, int]:
    """``{"L1d": bytes, "L2": ..., "L3": ...}``: the data and unified caches one core sees, from sysfs
    (``index*/level``, ``type``, ``size``); {} where there is no such directory."""
    out: dict[str, int] = {}
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return out
    for name in names:
        if not name.startswith("index"):
            continue
        try:
            with open(os.path.join(root, name, "level"), encoding="ascii") as f:
                level = int(f.read().strip())
            with open(os.path.join(root, name, "type"), encoding="ascii") as f:
                kind = f.read().strip()
            with open(os.path.join(root, name, "size"), encoding="ascii") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        size = cache_size(text)
        if kind == "Instruction" or size is None:
            continue
        out[f"L{level}{'d' if kind == 'Data' else ''}"] = size
    return out


CACHE_MAX = 1 << 32  # 4 GiB: no CPU cache is larger; a size past it is not a cache's


def cache_size(text: str) -> int | None:
    """The bytes of a sysfs cache ``size`` ("48K", "2048K", "32M", "512"), None when it is not one (empty, not a
    number, 0, or past :data:`CACHE_MAX`)."""
    text = text.strip()
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    digits, unit = (text[:-1], units[text[-1].upper()]) if text[-1:].upper() in units else (text, 1)
    if not digits.isdigit() or len(digits) > 12:
        return None
    size = int(digits) * unit
    return size if 0 < size <= CACHE_MAX else None


_BUFFERS: dict[int, Any] = {}  # eviction buffers by size


def time_cold(blob: bytes, settings: RuntimeSettings, evict: int, runs: int = COLD_RUNS) -> tuple[float, float]:
    """(warm, cold) medians of one ``invoke()`` in microseconds, timed in turn: a warm run right after another
    invoke, then a cold run after reading ``evict`` bytes of another buffer (one load per 64-byte line), which
    pushes the model's data that far in reuse distance. Paired in one run so that the machine's drift between
    the suite and this timing does not enter the difference."""
    import numpy as np

    interpreter = make_interpreter(blob, settings)
    resize_and_allocate(interpreter, {})
    fill_inputs(interpreter)
    lines = _BUFFERS.get(evict)
    if lines is None:  # kept for the next point: allocating and faulting in 64 MiB per point would cost more than the point
        lines = _BUFFERS[evict] = np.ones(max(evict // 8, 8))[::8]  # one float64 per cache line
    warm, cold = [], []
    try:
        interpreter.invoke()
        for _ in range(max(runs, 1)):
            interpreter.invoke()
            start = time.perf_counter_ns()
            interpreter.invoke()
            warm.append((time.perf_counter_ns() - start) / 1e6)
            lines.sum()
            start = time.perf_counter_ns()
            interpreter.invoke()
            cold.append((time.perf_counter_ns() - start) / 1e6)
    except (ValueError, RuntimeError) as exc:
        raise RuntimeUnavailableError(f"the runtime failed on a calibration model: {exc}") from exc
    return summarize_ms(warm)["median_ms"] * 1e3, summarize_ms(cold)["median_ms"] * 1e3


def time_model(blob: bytes, settings: RuntimeSettings, quick: bool = False, seconds: float | None = None,
               max_runs: int = MAX_RUNS) -> float:
    """The median of one ``invoke()`` of a model, in microseconds: a warm-up run and one run to size the loop, then
    enough timed runs to fill about ``seconds`` (default ``POINT_SECONDS``, ``QUICK_POINT_SECONDS`` when
    ``quick``), at least MIN_RUNS and at most ``max_runs``."""
    interpreter = make_interpreter(blob, settings)
    resize_and_allocate(interpreter, {})
    fill_inputs(interpreter)
    if seconds is None:
        seconds = QUICK_POINT_SECONDS if quick else POINT_SECONDS
    try:
        _, probe = time_invokes(interpreter.invoke, BenchSettings(runs=1, warmup=1))
        each = max(min(probe), 1e-4) / 1e3  # seconds
        runs = int(min(max(seconds / each, MIN_RUNS), max_runs))
        _, samples = time_invokes(interpreter.invoke, BenchSettings(runs=runs, warmup=0))
    except (ValueError, RuntimeError) as exc:
        raise RuntimeUnavailableError(f"the runtime failed on a calibration model: {exc}") from exc
    return summarize_ms(samples)["median_ms"] * 1e3


STREAM_ROUNDS, STREAM_RUNS = 5, 2
BIG_MODEL = 16 * 2**20  # a suite model of more bytes is kept in a file between its passes, not in memory


class Blobs:
    """The suite's model bytes by point id, each written once: a small one held in memory, one of more than
    BIG_MODEL bytes (the streaming chains, the one-row layers past the L3: 15 models, about 800 MiB here) kept in a
    file of a temporary folder and read back for its next pass and its analysis. Writing those again for every
    pass took a fifth of the calibration's CPU time; holding them would double its memory. :meth:`close` removes
    the folder."""

    def __init__(self, fb: Any) -> None:
        self.fb = fb
        self.held: dict[str, bytes] = {}
        self.files: dict[str, str] = {}  # point id -> the file of a model past BIG_MODEL
        self.folder: str | None = None

    def get(self, point: SuitePoint) -> bytes:
        if point.id in self.held:
            return self.held[point.id]
        if point.id in self.files:
            with open(self.files[point.id], "rb") as f:
                return f.read()
        blob = build(self.fb, point)
        if len(blob) <= BIG_MODEL:
            self.held[point.id] = blob
            return blob
        if self.folder is None:
            import tempfile

            try:
                self.folder = tempfile.mkdtemp(prefix="tflite_flops-calibrate-")
            except OSError:
                return blob
        path = os.path.join(self.folder, f"{len(self.files)}.tflite")
        try:
            with open(path, "wb") as f:
                f.write(blob)
        except OSError:  # no room for it: written again when next needed, as before
            return blob
        self.files[point.id] = path
        return blob

    def close(self) -> None:
        if self.folder is not None:
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder, self.files = None, {}


def time_streams(blobs: Mapping[str, bytes], settings: RuntimeSettings, rounds: int = STREAM_ROUNDS,
                 runs: int = STREAM_RUNS) -> dict[str, float]:
    """The median of one ``invoke()`` of each model of ``blobs`` (key -> model), in microseconds: the models
    timed in turn, ``rounds`` times, ``runs`` invokes each, and the median of the rounds' medians, so that a
    burst of load hits the chains and the op alone alike (the streaming chains: suite.stream_points). By the
    CPU time of the invoking thread: on a busy machine a long invoke is preempted where a short one is not
    (docs/predict.md, Drift), and what is measured here is the cost of the bytes, not of the neighbours' turns."""
    interpreters = {}
    for key, blob in blobs.items():
        interpreter = make_interpreter(blob, settings)
        resize_and_allocate(interpreter, {})
        fill_inputs(interpreter)
        interpreters[key] = interpreter
    medians: dict[str, list[float]] = {key: [] for key in interpreters}
    try:
        for k in range(rounds):  # a warm-up run in the first round only: a chain's weights come from memory anyway
            for key, interpreter in interpreters.items():
                _, samples = time_invokes(interpreter.invoke, BenchSettings(runs=runs, warmup=int(k == 0)),
                                          clock=time.thread_time_ns)
                medians[key].append(summarize_ms(samples)["median_ms"] * 1e3)
    except (ValueError, RuntimeError) as exc:
        raise RuntimeUnavailableError(f"the runtime failed on a streaming chain: {exc}") from exc
    return {key: statistics.median(values) for key, values in medians.items()}


def time_reference(blob: bytes, settings: RuntimeSettings, quick: bool = False) -> float:
    """The median of one ``invoke()`` of a drift reference point, in microseconds: the same at calibration and
    at ``--drift-check``, about ``REFERENCE_SECONDS`` of runs whatever the point's size (no run cap), so that
    the reference spans about a second and its CPU share means something."""
    return time_model(blob, settings, seconds=REFERENCE_SECONDS, max_runs=REFERENCE_MAX_RUNS)


def configuration(runtime: RuntimeSettings) -> dict[str, Any]:
    """What a timed point depends on besides the model: a side-file line of another configuration is not reused."""
    return {"runtime": runtime.runtime, "runtime_version": runtime_version(runtime.runtime),
            "threads": runtime.threads, "cpu": cpu_model()}


def side_path(output: str) -> str:
    """The side file of the points timed for ``output``."""
    return output + SIDE_SUFFIX


def read_side(path: str, config: Mapping[str, Any]) -> dict[str, float]:
    """The medians (us) by point key that ``path`` holds for ``config`` (empty when there is no file).
    Lines of another configuration, and lines cut short by an interruption, are skipped."""
    done: dict[str, float] = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except FileNotFoundError:
        return done
    except OSError as exc:
        raise RuntimeUnavailableError(f"{path}: cannot read the timed points ({exc.strerror or exc})") from None
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("format") == SIDE_FORMAT and entry.get("config") == dict(config):
            try:
                done[str(entry["key"])] = float(entry["median_us"])
            except (KeyError, TypeError, ValueError):
                continue
    return done


def _check_outputs(output: str, side: str) -> None:
    """The profile and its side file may be written (:func:`tflite_flops.files.check_output`): never a device, a
    FIFO or a folder, nor a read-only file without ``--overwrite``; the side file, appended to, is never a
    symbolic link."""
    from ..files import NotReplaced, check_output

    check_output(output)
    if os.path.islink(side):
        raise NotReplaced(0, "a symbolic link: the timed points are not appended through it", side)
    check_output(side)


def append_side(path: str, config: Mapping[str, Any], key: str, median_us: float) -> None:
    """Add one timed point to the side file (flushed at once: an interruption loses at most this point)."""
    with open(path, "a+b") as f:  # a line an interruption cut short is ended first, so this one stays whole
        f.seek(0, os.SEEK_END)
        if f.tell():
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                f.write(b"\n")
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"format": SIDE_FORMAT, "key": key, "median_us": median_us, "config": dict(config)}) + "\n")
        f.flush()


def analyse(point: SuitePoint, blob: bytes, settings: Settings | None = None,
            caches: Mapping[str, int] | None = None) -> Analysed:
    """The point's ops as the prediction will see them: precision, placement and features per inference op,
    analysed with ``settings`` (those of the configuration calibrated: its threads and delegate flags, as
    ``analyze --predict`` will analyse a model) on a machine with cache sizes ``caches`` (the profile's)."""
    model = load_model(blob)
    settings = settings if settings is not None else Settings()
    report = analyze_model(model, settings)
    ops = [o for o in report.ops if o.phase == "inference"]
    # the calibrated CPU's kernels, its caches and the loop terms: what a prediction with the profile will see
    context = feature_context(model, report.ops, settings.target.cpu.name, caches, point.delegate,
                              xnnpack_placer(model, settings.delegate))
    feats = tuple(context.features(o, XNNPACK_PLACEMENT if point.delegate and o.xnnpack else BUILTIN_PLACEMENT)
                  for o in ops)
    partitions = 0
    if point.delegate and report.delegation is not None and report.delegation.get("xnnpack") is not None:
        partitions = int(report.delegation["xnnpack"].partitions)
    return Analysed(point, feats, partitions, len(ops), tuple(max(o.executions, 1) for o in ops),
                    tuple(op_data(model, ops)))


def cold_key(point: SuitePoint, evict: int, warm: bool = False) -> str:
    """The side-file key of ``point`` timed cold after reading ``evict`` bytes (``warm``: its paired warm time)."""
    return f"{point.key}~cold-{evict}{'-warm' if warm else ''}"


def cold_samples(analysed: Iterable[Analysed], medians: Mapping[str, float], caches: Mapping[str, int]
                 ) -> list[ColdSample]:
    """The cold points timed (their paired warm and cold medians) with the bytes their op touches."""
    out = []
    for a in analysed:
        chain = a.point.family == OVERHEAD
        if len(a.data) != 1 and not chain:
            continue
        for evict in evictions(caches):
            cold, warm = cold_key(a.point, evict), cold_key(a.point, evict, warm=True)
            if cold in medians and warm in medians:
                out.append(ColdSample(medians[warm], medians[cold], evict, sum(d.footprint for d in a.data), cold,
                                      "" if chain or not a.features else a.features[0].precision,
                                      len(a.data), chain))
    return out


def samples_of(analysed: Iterable[Analysed], medians: Mapping[str, float]) -> tuple[list[Sample], float, float]:
    """The single-op samples with their overheads, and the (per-invoke, per-partition) overheads in us."""
    analysed = [a for a in analysed if a.point.key in medians]
    chains: dict[bool, list[tuple[int, float]]] = {True: [], False: []}
    for a in analysed:
        if a.point.family == OVERHEAD:
            chains[a.partitions > 0].append((a.ops, medians[a.point.key]))
    invoke_us, partition_us = fit_overheads(chains[False], chains[True])
    samples = []
    for a in analysed:
        lead = a.point.lead  # a point run after its lead's op (suite.after_qd8): the lead's own time is taken out
        if a.point.family in (OVERHEAD, LOOP, STREAM) or len(a.features) != 1 + bool(lead) or \
                (lead and lead not in medians):
            continue
        overhead = invoke_us + partition_us * a.partitions
        feature = a.features[-1]
        if lead:  # its op runs after a qd8 kernel: the law of that placement (builtin or XNNPACK)
            overhead += max(medians[lead] - invoke_us - partition_us, 0.0)
            feature = replace(feature, placement=AFTER_QD8_PLACEMENTS.get(feature.placement, feature.placement))
        samples.append(Sample(feature, medians[a.point.key], overhead, a.point.key))
    return samples, invoke_us, partition_us


def loop_laws(analysed: Iterable[Analysed], medians: Mapping[str, float], laws: Sequence[Law],
              invoke_us: float) -> tuple[Law, ...]:
    """The WHILE laws, fitted on the loop points once the other laws are: a loop point's time less the
    per-invoke overhead and its cond and body ops (predicted by their laws, times their executions, as the
    prediction adds them up) is the WHILE's own cost (``profile.LAW_FEATURES["WHILE"]``). No law when
    nothing is left of the points' time once those ops are taken out."""
    by_laws = DeviceProfile(machine=Machine("", 0, "", "", 0, False), laws=tuple(laws))
    buckets: dict[tuple[str, str], list[Sample]] = {}
    for a in analysed:
        if a.point.family != LOOP or a.point.key not in medians:
            continue
        loops = [f for f in a.features if f.family == LOOP]
        others = 0.0
        for f, runs in zip(a.features, a.runs or (1,) * len(a.features)):
            law = by_laws.law_for(f) if f.family != LOOP else None
            others += law.predict_us(f) * runs if law is not None else 0.0
        if len(loops) == 1:
            f = loops[0]
            buckets.setdefault((f.precision, f.placement), []).append(
                Sample(f, medians[a.point.key], invoke_us + others, a.point.key))
    laws = (fit_law(LOOP, prec, place, rows) for (prec, place), rows in sorted(buckets.items()))
    # a law with no positive coefficient (the other laws already account for the points' whole time, as the
    # --quick suite's small-op laws with their larger constants do) would predict a WHILE at 0: left out,
    # the generic law stands in as without loop points
    return tuple(law for law in laws if law.coefficients)


def stream_samples(analysed: Iterable[Analysed], medians: Mapping[str, float]) -> list[StreamSample]:
    """The streaming chains timed (suite.stream_points), with the bytes their ops touch."""
    out = []
    for a in analysed:
        if a.point.family == STREAM and a.point.key in medians and a.data:
            first = a.data[0]
            out.append(StreamSample(a.point.precision, len(a.data), first.weights, first.footprint,
                                    per_inference_bytes(a.data), medians[a.point.key]))
    return out


def machine(runtime: RuntimeSettings) -> Machine:
    """This machine in ``runtime``'s configuration, with its cache sizes."""
    return Machine(cpu=cpu_model(), cores=os.cpu_count() or 1, runtime=runtime.runtime,
                   runtime_version=runtime_version(runtime.runtime), threads=runtime.threads,
                   xnnpack=runtime.xnnpack, system=platform.platform(), target=Target().name, caches=cache_sizes())


def shared_state_cost(curve: CacheCurve, pooled: CacheCurve) -> CacheCurve:
    """``curve`` (one precision's) with the cost per op of ``pooled`` (every precision's cold points together) at
    each of its distances: an op's own state (the runtime's operator object, its indirection buffers, their code)
    does not depend on its data's precision, so all the cold points estimate it rather than half of them (float32
    or int8). Refitted from the timings of four full calibrations here, the real-family models within +-10% went from
    130 / 126 / 138 / 129 to 130 / 128 / 141 / 133. It is still the noisiest number of a calibration: the four put
    it at 0.5 to 3.1 us per op 64 MiB away, and moved the whole-model predictions of the same models by up to 18%
    (9.8% at the 90th percentile), where the same four with one curve moved them by 4.4% at most."""
    return tuple((d, b, cost_at(pooled, d)[1], i) for d, b, _, i in curve)


def build_profile(analysed: Sequence[Analysed], medians: Mapping[str, float], where: Machine, source: str,
                  notes: Sequence[str] = (), suite: str | None = None,
                  reference: Mapping[str, float] | None = None) -> DeviceProfile:
    """Fit the laws, overheads and cache costs to the timed points and make the profile; ``suite``: the suite
    timed ("full", "quick"; default "import" for an imported pack, else "full")."""
    samples, invoke_us, partition_us = samples_of(analysed, medians)
    if not samples:
        raise RuntimeUnavailableError("no calibration point was timed: nothing to fit")
    created = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    laws = fit_laws(samples)
    laws += loop_laws(analysed, medians, laws, invoke_us)
    dropped = [law for law in laws if law.dropped and law.family not in LAW_FEATURES]  # op types' laws, not groups'
    if dropped:  # a law that cannot hold some of its points says so, rather than fitting the rest in silence
        notes = (*notes, f"points the fit left out as outliers ({sum(len(law.dropped) for law in dropped)}): "
                 + "; ".join(f"{law.family} {law.precision} {law.placement}: {', '.join(law.dropped)}"
                             for law in dropped))
    cold = cold_samples(analysed, medians, where.caches)
    start = int(where.caches.get("L2", 0) or 0)
    curve, error = fit_cache_curve(cold, start=start)
    curves = {}
    for precision in sorted({c.precision for c in cold if c.precision}):  # a curve per precision that has its points
        rows = [c for c in cold if c.precision == precision]
        if len(rows) >= MIN_CURVE_POINTS * len({c.evict for c in rows}):
            curves[precision] = shared_state_cost(fit_cache_curve(rows + [c for c in cold if c.chain],
                                                                  start=start)[0], curve)
    streams = stream_samples(analysed, medians)
    if streams:  # the streaming chains' costs per byte: each precision's curve, and float32's for the others
        measured = stream_costs(streams, curve, invoke_us)
        for precision, points in measured.items():
            curves[precision] = with_stream_costs(curves.get(precision, curve), points)
        curve = with_stream_costs(curve, measured.get("float32", ()))
        if "int8" in measured and "hybrid" not in curves:  # dynamic-range weights are int8 too
            curves["hybrid"] = curves["int8"]
        notes = (*notes, "streaming chains (us per MiB of weights at the bytes per inference): " + "; ".join(
            f"{p} " + ", ".join(f"{d / 2**20:.0f} MiB {b * 2**20:.1f}" for d, b in pts) for p, pts in measured.items()))
    for name, c in ((("all", curve), *curves.items()) if curve else ()):
        listing = ", ".join(f"{d / 2**20:g} MiB away {b * 2**20:.1f} us/MiB + {k:.2f} us/op + {i:.2f} us/invoke"
                            for d, b, k, i in c)
        count = len(cold) if name == "all" else sum(1 for x in cold if x.precision == name)
        notes = (*notes, f"{count} cold timings ({name}): the cost of data {listing}"
                         + (f" (median |error| of the cold times {error:.1%})" if name == "all" and error is not None
                            else ""))
    return DeviceProfile(machine=where, laws=laws, invoke_overhead_us=invoke_us,
                         partition_overhead_us=partition_us, created=created, source=source,
                         notes=(f"{len(samples)} single-op points, {len(medians)} timed models", *notes),
                         suite=suite or ("import" if source == "import" else "full"), range_rate=RANGE_RATE,
                         cache_curve=curve, cache_curves=curves, reference=dict(reference or {}))


REFERENCE_SUFFIX = "~reference"


# Each law point is timed in PASSES passes over the whole suite (in the shuffled order), a PASSES-th of
# POINT_SECONDS each, and its median is the median of the passes': three calibrations of the same code a few
# minutes apart, one pass each, gave the 8x8x256 3x3 float32 CONV_2D 382, 291, 321 and 324 us, the 7x7x512 one
# 998, 858, 879 and 911; a window of a few seconds in which the machine ran faster or slower was one point's
# whole time, and its law followed it.
PASSES = 3


def pass_key(key: str, k: int, passes: int) -> str:
    """The side-file key of pass ``k`` of law point ``key`` (the key itself with one pass)."""
    return key if passes <= 1 else f"{key}#{k + 1}"


def pass_keys(key: str, passes: int) -> list[str]:
    """Every pass's side-file key of law point ``key``."""
    return [pass_key(key, k, passes) for k in range(passes)]


def passes_median(medians: Mapping[str, float], key: str, passes: int) -> float:
    """The median of the passes of law point ``key`` that ``medians`` holds (at least one)."""
    return statistics.median(medians[k] for k in pass_keys(key, passes) if k in medians)


def split_timer(passes: int) -> Timer:
    """:func:`time_model` with a ``passes``-th of its seconds (each pass of a point takes its share)."""
    def timer(blob: bytes, settings: RuntimeSettings, quick: bool = False) -> float:
        return time_model(blob, settings, quick, seconds=(QUICK_POINT_SECONDS if quick else POINT_SECONDS) / passes)
    return timer


def reference_key(point: SuitePoint) -> str:
    """The side-file key of ``point`` timed as the drift reference."""
    return point.key + REFERENCE_SUFFIX


def calibrate(output: str, runtime: RuntimeSettings, quick: bool = False, progress: bool = True,
              timer: Timer | None = None, points: Sequence[SuitePoint] | None = None,
              cold_timer: ColdTimer | None = None, caches: Mapping[str, int] | None = None,
              reference: Sequence[SuitePoint] | None = None,
              streams: Sequence[SuitePoint] | None = None, passes: int | None = None) -> tuple[DeviceProfile, int]:
    """Time the suite (continuing from the side file), fit, save the profile to ``output``.

    Args:
        output: the profile's path; the timed points go to ``side_path(output)``.
        runtime: runtime, threads and XNNPACK of the configuration calibrated.
        quick: the ``--quick`` suite.
        progress: draw a progress bar on a terminal.
        timer: times one model (default :func:`time_model`).
        points: the points to time (default ``suite(quick, runtime.xnnpack)``).
        cold_timer: times one model cold (default :func:`time_cold`; none when ``timer`` is given without
            it): the ``suite.cold_points`` of ``points``, once per eviction size (``cache.evictions(caches)``).
        caches: the cache sizes (default :func:`cache_sizes`, this machine's), kept in the profile's machine.
        reference: the drift reference's points, timed by :func:`time_reference` (or ``timer``, as without
            ``quick``) and kept in the profile
            (default: ``suite.reference_points`` with the default ``points``, none with given ``points``).
        streams: the streaming chains, timed by ``timer`` (default: ``suite.stream_points`` for the machine's
            caches when cold points are timed and ``points`` are the default; none otherwise): what weights
            cost from memory in a whole model, into the cache curves (``latency.fit.stream_costs``).
        passes: how many times each law point is timed, in passes over the suite (default PASSES with the default
            timer, each pass a PASSES-th of its seconds; 1 with an injected one); its median is the passes'.

    Returns:
        The profile and how many of ``points`` were timed in this run (the others came from the side file;
        the cold and reference timings are not counted).
    """
    if cold_timer is None and timer is None:
        cold_timer = time_cold
    injected = timer is not None
    reference_timer = timer or time_reference  # an injected timer times the reference too
    passes = max(passes or (1 if injected else PASSES), 1)  # an injected timer is called once per point and pass
    timer = timer or split_timer(passes)
    if os.path.isdir(output):  # refused before any timing, not after the whole suite
        from .profile import ProfileError

        raise ProfileError(f"{output}: is a directory; -o names the profile file to write")
    side = side_path(output)
    _check_outputs(output, side)
    open(side, "a", encoding="utf-8").close()  # an output that cannot be written fails before any timing
    if reference is None:
        reference = reference_points(runtime.xnnpack) if points is None else []
    points_given = points
    points = list(points if points is not None else suite(quick, runtime.xnnpack))
    where = machine(runtime)
    if caches is not None:
        where = replace(where, caches=dict(caches))
    evict = evictions(where.caches) if cold_timer is not None else ()
    # what to time: (key, point, eviction bytes or None, reference or not); a law point once per pass
    jobs = [(pass_key(p.key, k, passes), p, None, False) for p in points for k in range(passes)]
    jobs += [(cold_key(p, e), p, e, False) for p in cold_points(points) for e in evict]
    # the drift reference in every pass too: the profile keeps their median, the whole calibration's speed
    jobs += [(pass_key(reference_key(p), k, passes), p, None, True) for p in reference for k in range(passes)]
    if streams is None:
        streams = stream_points(where.caches, quick, runtime.xnnpack) if cold_timer is not None and points_given is None \
            else []
    # the one-row FULLY_CONNECTED points sized by the caches: law points, not timed cold (their weights are the
    # data the cold points' eviction buffers would have to outgrow)
    gemv = gemv_points(where.caches, quick, runtime.xnnpack) if cold_timer is not None and points_given is None else []
    jobs += [(pass_key(p.key, k, passes), p, None, False) for p in gemv for k in range(passes)]
    points += gemv
    fb = runtimes.schema_module(runtime.runtime)
    config = configuration(runtime)
    keys = {key for key, *_ in jobs} | {cold_key(p, e, warm=True) for _, p, e, _ in jobs if e is not None} | \
        {k for p in streams for k in pass_keys(p.key, passes)}
    medians = {k: v for k, v in read_side(side, config).items() if k in keys}
    for p in points:  # the passes a side file holds already (the streams' are read after their last pass)
        if p.key not in medians and any(k in medians for k in pass_keys(p.key, passes)):
            medians[p.key] = passes_median(medians, p.key, passes)
    todo = [job for job in jobs if job[0] not in medians]
    # Pass by pass (the cold and reference timings in the first), each pass in an order shuffled once and for all:
    # the points of one law spread over the whole pass, and a point's passes are a pass apart, so that a minute in
    # which the machine runs faster or slower moves every law's points a little rather than some laws' a lot (in
    # suite order, the 8x8 and 4x4 float32 CONV_2D points came out 5-10% under their time a few minutes later
    # while the rest of the suite moved 3%, and the law priced ResNet50's stages 3 and 4 9% under it).
    pass_of = {pass_key(p.key, k, passes): k for p in points for k in range(passes)}
    pass_of.update({pass_key(reference_key(p), k, passes): k for p in reference for k in range(passes)})
    rng, batches = random.Random(ORDER_SEED), []
    for k in range(passes):
        batch = [job for job in todo if pass_of.get(job[0], 0) == k]
        rng.shuffle(batch)
        batches.append(batch)
    todo = [job for batch in batches for job in batch]
    show = progress_bar("calibrate") if progress else None
    blobs = Blobs(fb)
    try:
        failed: list[str] = []
        done = 0
        for k, batch in enumerate(batches):
            for key, point, level, is_reference in batch:
                done += 1
                blob = blobs.get(point)
                settings = replace(runtime, xnnpack=point.delegate)
                try:
                    if level is not None:
                        warm, median = cold_timer(blob, settings, level)  # type: ignore[misc]
                        append_side(side, config, cold_key(point, level, warm=True), warm)
                        medians[cold_key(point, level, warm=True)] = warm
                    elif is_reference:
                        median = reference_timer(blob, settings, False)
                    else:
                        median = timer(blob, settings, quick)
                except RuntimeUnavailableError as exc:  # one model the runtime refuses does not stop the calibration
                    failed.append(f"{key}: {exc}")
                    continue
                append_side(side, config, key, median)
                medians[key] = median
                if key != point.key and level is None and not is_reference:  # one pass of a law point: its median
                    medians[point.key] = passes_median(medians, point.key, passes)
                if show is not None:
                    show(done, len(todo), point.id)
            _BUFFERS.clear()  # the eviction buffers (up to 2x the L3 each) are not kept past the timing
            # the streaming chains once per pass too: what weights cost from memory moves with what else the machine's
            # memory serves, more than any op's time (docs/notes/predict-atrous-audio.md)
            failed += time_stream_pass(streams, k, passes, medians, side, config, runtime, blobs,
                                       (lambda blob, settings: timer(blob, settings, quick)) if injected else None)
        for p in streams:
            if p.key not in medians and any(k in medians for k in pass_keys(p.key, passes)):
                medians[p.key] = passes_median(medians, p.key, passes)
        analysing = Settings(runtime=runtime)  # the configuration a prediction with this profile analyses in
        analysed_streams = [analyse(p, blobs.get(p), analysing, where.caches) for p in streams if p.key in medians]
        analysed = [analyse(p, blobs.get(p), analysing, where.caches) for p in points] + analysed_streams
        notes = (("quick suite",) if quick else ()) + tuple(f"not timed: {f}" for f in failed)
        refs = {p.key: passes_median(medians, reference_key(p), passes) for p in reference
                if any(k in medians for k in pass_keys(reference_key(p), passes))}
        profile = build_profile(analysed, medians, where, "calibrate", notes=notes, suite="quick" if quick else "full",
                                reference=refs)
        profile.save(output)
        return profile, len({point.key for _, point, level, is_reference in todo if level is None and not is_reference})
    finally:
        blobs.close()


def time_stream_pass(streams: Sequence[SuitePoint], k: int, passes: int, medians: dict[str, float], side: str,
                     config: Mapping[str, Any], runtime: RuntimeSettings, blobs: Blobs,
                     timer: Callable[[bytes, RuntimeSettings], float] | None) -> list[str]:
    """Time pass ``k`` of the streaming chains ``streams`` not timed yet (``medians``, the side file ``side``),
    each precision's chains in interleaved rounds (:func:`time_streams`; ``timer``, an injected one, times each
    chain on its own); what failed, as lines of the profile's notes."""
    failed = []
    for precision in dict.fromkeys(p.precision for p in streams):
        chains = {pass_key(p.key, k, passes): p for p in streams if p.precision == precision}
        group = [key for key in chains if key not in medians]
        if not group:
            continue
        models = {key: blobs.get(chains[key]) for key in group}  # read back from their files after the first pass
        settings = replace(runtime, xnnpack=chains[group[0]].delegate)
        try:
            got = {key: timer(models[key], settings) for key in group} if timer is not None else \
                time_streams(models, settings)
        except RuntimeUnavailableError as exc:
            failed.append(f"the {precision} streaming chains: {exc}")
            continue
        for key, median in got.items():
            append_side(side, config, key, median)
            medians[key] = median
    return failed


def check_drift(profile: DeviceProfile, runtime: RuntimeSettings, timer: Timer | None = None) -> Drift:
    """Time the profile's drift reference here again, as calibration timed it, when this machine can say
    something about the profile's: the runtime installed, the same CPU model, a profile with a reference.

    Returns:
        A :class:`~tflite_flops.latency.profile.Drift`: applied, with the median of now / then over the
        reference points and the share of CPU time this process had meanwhile (``Drift.busy``: other
        processes compete for the cores, which the factor does not capture); or not applied, with why.
    """
    m = profile.machine
    if not profile.reference:
        return Drift(False, why="the profile has no reference measurement (calibrated before drift checks, or "
                                "imported): calibrate again to have one")
    if profile.source in DEVICE_SOURCES:
        return Drift(False, why=f"the profile was made on {m.cpu}: its reference cannot be timed here")
    try:
        runtime_version(runtime.runtime)
    except RuntimeUnavailableError:
        return Drift(False, why=f"no {runtime.runtime} runtime here to time the reference")
    here = cpu_model()
    if here != m.cpu:
        return Drift(False, why=f"the profile was calibrated on {m.cpu}, this machine is {here}")
    timer = timer or time_reference
    fb = runtimes.schema_module(runtime.runtime)
    then_us = now_us = 0.0
    ratios = []
    wall, cpu = time.perf_counter(), time.process_time()
    for point in reference_points(m.xnnpack):  # in the suite's order; a key this version does not know is skipped
        before = profile.reference.get(point.key, 0.0)
        if before <= 0:
            continue
        try:
            now = timer(build(fb, point), RuntimeSettings(runtime.runtime, m.threads, point.delegate), False)
        except RuntimeUnavailableError as exc:
            return Drift(False, why=f"the reference failed to run here: {exc}")
        then_us, now_us = then_us + before, now_us + now
        ratios.append(now / before)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # the share of the configured threads' time this process ran: too short a window (an injected timer) says nothing
    share = cpu_share(wall, cpu, m.threads)
    if not ratios:
        return Drift(False, why="none of the profile's reference points is known to this version")
    ratios.sort()
    mid = len(ratios) // 2
    factor = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
    return Drift(True, factor=factor, reference_ms_then=then_us / 1e3, reference_ms_now=now_us / 1e3,
                 cpu_share=share)
