"""``calibrate --from-results``: a device profile fitted from whole-model times, on the laws of a base profile.

Most users cannot run the calibration suite on their phone, but many hold ``benchmark_model`` results of a few
models on it, from their own lab or a device farm (LiteRT's leaderboard rows: ``file``, ``device``,
``accelerator``, ``latency_ms.median``). The fit (docs/predict.md, "From whole-model results"):

1. Each measured model is analysed at the device's CPU target and predicted with the base profile's laws (a
   host's ``calibrate``). That prediction is split by class (:func:`law_class`: the GEMM kernels, the depthwise
   convolutions, the element-wise ops and the ops that move data, per precision; the per-invoke and
   per-partition overheads; the whole-model cache costs): ``T[m, c]``, the base's milliseconds of class ``c``
   in model ``m``.
2. The device's time of model ``m`` is taken as ``sum_c f[c] * T[m, c]``: ``f[c]`` is how class ``c`` scales
   from the base machine to the device. The factors are non-negative least squares on the relative error, each
   pulled towards one common factor (the one-scale fit) by a weight chosen by leave-one-out over the models: a
   class that no model exercises keeps the common factor, one that few do moves little.
3. The profile written is the base's with each law's coefficients scaled by its class's factor, the overheads
   and cache curves by theirs, and every law's range widened by the leave-one-out errors. ``analyze --predict``
   reads it as any profile; its flag ``whole_model_fit`` says that the split between ops is the base machine's.

The split is computed through the profile itself (``T[:, c]`` is the prediction with class ``c``'s factor
doubled, less the base's), so the fitted figure and the figure ``--predict`` gives with the written profile are
the same arithmetic. Leave-one-model-out accuracy (each model predicted by factors fitted, weight included, on
the others) is in the profile's notes and printed by the command, beside the one-scale fit's.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..device import schema
from ..device.benchmark_logs import parse_timing
from ..errors import ModelFormatError, ModelLoadError
from ..files import MiB, TooLarge, read_capped
from ..settings import Settings, Target
from ..units import printable
from .fit import nnls
from .profile import WHOLE_MODEL_SOURCE, DeviceProfile, Law, Machine, ProfileError, group_of

RESULTS_CAP = 32 * MiB  # a results file of a device farm: ~1.5 KB a row
MAX_ROWS = 100_000  # rows of one results file, logs of one folder
MAX_MODELS = 2_000  # models fitted at once: each is analysed and predicted a dozen times
MIN_MODELS = 3  # fewer whole-model times fit no class
LAMBDAS = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)  # the pull towards the common factor, tried
SOURCE = WHOLE_MODEL_SOURCE  # DeviceProfile.source of a profile fitted here

GEMM_GROUPS = ("conv", "matmul")
ELEMENTWISE_GROUPS = ("binary", "unary", "normalize", "convert")
OVERHEAD, CACHE = "overhead", "cache"


@dataclass(frozen=True)
class Result:
    """One whole-model time of the device: the model's file name and its median."""

    file: str  # a base name, looked up in the models' folder
    ms: float  # the median (else the average) per inference
    where: str  # the file (and line) it came from
    nodes_total: int | None = None  # the leaderboard's node counts and partitions (None: not given)
    nodes_delegated: int | None = None
    partitions: int | None = None
    runtime_version: str = ""


@dataclass(frozen=True)
class Fitted:
    """One model of the fit: its measured time, its base prediction by class, and its leave-one-out figures."""

    file: str
    measured_ms: float
    classes: Mapping[str, float]  # the base's ms by class
    loo_ms: float | None = None  # predicted by the factors fitted on the other models
    loo_scale_ms: float | None = None  # predicted by the one scale fitted on the other models
    ops: int = 0  # the model's ops (subgraph 0), to set beside the device's nodes_total
    result: Result | None = None

    @property
    def base_ms(self) -> float:
        """The base profile's prediction of the whole model."""
        return sum(self.classes.values())


# ---- reading the results -----------------------------------------------------------------------------------

def _file_name(value: Any, where: str, field: str) -> str:
    """A model's file name from a result: a plain base name (a phone's path keeps its last part)."""
    if not isinstance(value, str) or not value.strip():
        raise schema.refuse(where, f"{field} is not a file name ({schema._show(value)})")
    base = value.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if base in ("", ".", "..") or len(base) > 255 or "\x00" in base or not base.isprintable():
        raise schema.refuse(where, f"{field} is not a file name ({schema._show(value)})")
    return base


def _optional_count(row: Mapping[str, Any], key: str, where: str) -> int | None:
    value = row.get(key)
    return None if value is None else schema.count(value, where, key)


def _row(row: Any, where: str) -> tuple[str, str, Result] | None:
    """(device, accelerator, result) of one leaderboard row; None for a row that measured nothing (``status``
    other than "measured")."""
    if not isinstance(row, dict):
        raise schema.refuse(where, "not a result row (a JSON object with file, device, accelerator, latency_ms)")
    status = row.get("status", "measured")
    if status != "measured":
        return None
    for key in ("device", "accelerator"):
        if not isinstance(row.get(key), str) or not row[key]:
            raise schema.refuse(where, f"{key} is missing or not a string")
    latency = row.get("latency_ms")
    if not isinstance(latency, dict):
        raise schema.refuse(where, "latency_ms is missing or not an object (latency_ms.median: milliseconds)")
    stats = {k: schema.time_value(latency[k], where, f"latency_ms.{k}") for k in
             ("min", "p5", "median", "avg", "p95", "max") if latency.get(k) is not None}
    schema.check_stats(where, stats, "latency_ms.")
    ms = stats.get("median", stats.get("avg"))
    if ms is None:
        raise schema.refuse(where, "latency_ms has no median (nor avg)")
    if ms <= 0:
        raise schema.refuse(where, f"latency_ms.median is {ms:g}: a whole model's time is above 0")
    version = row.get("runtime_version")
    result = Result(_file_name(row.get("file"), where, "file"), ms, where,
                    _optional_count(row, "nodes_total", where), _optional_count(row, "nodes_delegated", where),
                    _optional_count(row, "partitions", where),
                    schema.name(version)[:40] if isinstance(version, str) else "")
    return schema.name(row["device"])[:120], schema.name(row["accelerator"])[:40], result


def _jsonl(text: str, path: str) -> list[tuple[str, str, Result]]:
    out = []
    for i, line in enumerate(schema.lines(text, path)):
        if not line.strip():
            continue
        if len(out) >= MAX_ROWS:
            raise schema.refuse(path, f"more than {MAX_ROWS:,} rows, the most read from a results file")
        got = _row(schema.load_json(line.encode("utf-8"), f"{path}:{i + 1}", "a results row"), f"{path}:{i + 1}")
        if got is not None:
            out.append(got)
    return out


def _read_one(path: str, device: str | None) -> list[tuple[str, str, Result]]:
    """The rows of one file: a JSON Lines results file, or a ``benchmark_model`` log (its ``Graph:`` names the
    model; ``device`` names the device, the log does not)."""
    try:
        data = read_capped(path, RESULTS_CAP)
    except TooLarge:
        raise schema.refuse(path, f"larger than {RESULTS_CAP // MiB} MiB, the most read from a results file") from None
    except OSError as exc:
        raise ModelFormatError(f"{printable(path)}: cannot read the results ({exc.strerror or exc})") from None
    if data.lstrip()[:1] == b"{" and b'"latency_ms"' in data:
        return _jsonl(data.decode("utf-8", errors="replace"), path)
    timing = parse_timing(data, path)
    if not timing.graph:
        raise schema.refuse(path, "the log names no model (no 'Graph: [...]' line): the model cannot be told")
    if device is None:
        raise schema.refuse(path, "a benchmark_model log does not name its device: pass --device NAME")
    return [(device, "cpu", Result(_file_name(timing.graph, path, "Graph"), timing.typical_us / 1e3, path))]


def read_results(paths: Sequence[str], device: str | None = None, accelerator: str = "cpu"
                 ) -> tuple[str, list[Result]]:
    """The device's name and its whole-model times of ``accelerator`` in ``paths`` (results files, logs, or
    folders of logs).

    Raises:
        ModelFormatError: a file that is neither form, a value out of its range (one line naming the file, the
            line and the field), no row of the device, several devices and no ``device`` named, or one model
            timed twice.
    """
    rows: list[tuple[str, str, Result]] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(os.listdir(path))
            if len(names) > MAX_ROWS:
                raise schema.refuse(path, f"more than {MAX_ROWS:,} files, the most read from a folder of results")
            files = [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
        else:
            files = [path]
        for f in files:
            rows.extend(_read_one(f, device))
    ours = [(d, r) for d, a, r in rows if a == accelerator]
    devices = sorted({d for d, _ in ours})
    shown = ", ".join(devices[:8]) + (", ..." if len(devices) > 8 else "")
    if device is None:
        if len(devices) != 1:
            raise ModelFormatError(f"{printable(', '.join(paths))[:200]}: " + (
                f"rows of {len(devices)} devices ({shown}): name one with --device" if devices else
                f"no {accelerator} row"))
        device = devices[0]
    results = [r for d, r in ours if d == device]
    if not results:
        raise ModelFormatError(f"{printable(', '.join(paths))[:200]}: no {accelerator} row of the device "
                               f"{device!r}" + (f" (the rows name: {shown})" if devices else ""))
    seen: dict[str, str] = {}
    for r in results:
        if r.file in seen:
            raise ModelFormatError(f"{r.where}: {r.file} of {device} again (first in {seen[r.file]}): one time a "
                                   "model")
        seen[r.file] = r.where
    return device, results


# ---- the classes -------------------------------------------------------------------------------------------

def _precision_class(precision: str) -> str:
    if precision == "hybrid":
        return "hybrid"
    if precision in ("int8", "uint8", "int16", "int4"):
        return "int8"
    return "float"


def law_class(law: Law) -> str:
    """The class a law's time scales with: its kind and its precision (``float``, ``int8``, ``hybrid``). The kinds
    are the kernels that scale apart between two CPUs: ``gemm`` (convolutions, transposed convolutions, matrix
    products: multiply-adds), ``depthwise`` (few multiply-adds per byte), ``elementwise`` (arithmetic and
    transcendental functions per element: the binary, unary, normalising and converting ops) and ``data`` (moving
    data: layout, pooling, reductions and the rest)."""
    family = law.family
    group = family if family in GEMM_GROUPS + ELEMENTWISE_GROUPS else group_of(family)
    if family == "DEPTHWISE_CONV_2D":
        kind = "depthwise"
    elif group in GEMM_GROUPS:
        kind = "gemm"
    elif group in ELEMENTWISE_GROUPS:
        kind = "elementwise"
    else:
        kind = "data"
    return f"{kind} {_precision_class(law.precision)}"


CLASSES = tuple(f"{k} {p}" for k in ("gemm", "depthwise", "elementwise", "data") for p in ("float", "int8", "hybrid")) \
    + (OVERHEAD, CACHE)


def scaled(base: DeviceProfile, factors: Mapping[str, float]) -> DeviceProfile:
    """``base`` with each law's coefficients times its class's factor, the overheads times ``factors[OVERHEAD]``
    and the cache curves' costs times ``factors[CACHE]`` (a class not in ``factors``: 1)."""
    laws = tuple(replace(law, coefficients={k: v * factors.get(law_class(law), 1.0)
                                            for k, v in law.coefficients.items()}) for law in base.laws)
    o, c = factors.get(OVERHEAD, 1.0), factors.get(CACHE, 1.0)

    def curve(rows: Sequence[tuple[int, float, float, float]]) -> tuple[tuple[int, float, float, float], ...]:
        return tuple((d, b * c, k * c, i * c) for d, b, k, i in rows)

    return replace(base, laws=laws, invoke_overhead_us=base.invoke_overhead_us * o,
                   partition_overhead_us=base.partition_overhead_us * o, cache_curve=curve(base.cache_curve),
                   cache_curves={p: curve(v) for p, v in base.cache_curves.items()})


# ---- the fit -----------------------------------------------------------------------------------------------

def one_scale(t: np.ndarray, y: np.ndarray) -> float:
    """The one factor s minimising the relative error of ``s * t.sum(1)`` against ``y``."""
    p = t.sum(axis=1) / y
    return float(p.sum() / (p @ p)) if float(p @ p) > 0 else 1.0


def fit_factors(t: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """The class factors (one per column of ``t``): non-negative, least relative error of ``t @ f`` against
    ``y``, each pulled towards the one-scale factor with weight ``lam`` (a column that is all 0 gets that factor)."""
    s = one_scale(t, y)
    k = t.shape[1]
    a = np.vstack([t / y[:, None], math.sqrt(lam) / s * np.eye(k)])
    b = np.concatenate([np.ones(len(y)), math.sqrt(lam) * np.ones(k)])
    return nnls(a, b)


def _loo(t: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Each row's prediction by the factors fitted, at ``lam``, on the other rows."""
    out = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        out[i] = float(t[i] @ fit_factors(t[keep], y[keep], lam))
    return out


def choose_lambda(t: np.ndarray, y: np.ndarray) -> float:
    """The pull (of :data:`LAMBDAS`) whose leave-one-out predictions of ``y`` have the least squared log error."""
    if len(y) < MIN_MODELS:
        return LAMBDAS[-1]
    best, best_err = LAMBDAS[-1], math.inf
    for lam in LAMBDAS:
        pred = _loo(t, y, lam)
        err = float(np.mean(np.log(np.maximum(pred, 1e-12) / y) ** 2))
        if err < best_err - 1e-12:
            best, best_err = lam, err
    return best


def leave_one_out(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(by class, by one scale): each row predicted by what was fitted on the other rows alone (the class fit's
    pull chosen on them too)."""
    by_class, by_scale = np.empty(len(y)), np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        tk, yk = t[keep], y[keep]
        by_class[i] = float(t[i] @ fit_factors(tk, yk, choose_lambda(tk, yk)))
        by_scale[i] = float(t[i].sum() * one_scale(tk, yk))
    return by_class, by_scale


def within(pred: Iterable[float], measured: Iterable[float], tol: float = 0.10) -> int:
    """How many predictions are within ``tol`` of their measurement."""
    return sum(abs(p / m - 1) <= tol for p, m in zip(pred, measured))


# ---- the whole command -------------------------------------------------------------------------------------

def _base_split(path: str, base: DeviceProfile, settings: Settings) -> tuple[dict[str, float], int, str | None]:
    """The base's ms of each class for the model at ``path`` (``{}`` and why when it cannot be predicted whole),
    and its ops in subgraph 0 (to set beside the device's node count)."""
    from ..analysis.placement import xnnpack_placer
    from ..analysis.run import analyze_entry, collector_paused
    from ..reader.load import load_model
    from .predict import add_prediction

    with collector_paused():
        model = load_model(path)
        report = analyze_entry(model, settings)[0]
        place = xnnpack_placer(model, settings.delegate)

        def total(profile: DeviceProfile) -> tuple[float, Any]:
            p = add_prediction(report, model, profile, None, place).prediction
            return p.latency_ms, p

        ref, p = total(base)
        ops = sum(1 for o in report.ops if o.subgraph == 0)
        if not p.complete:
            missing = ", ".join(f"{k} ×{v}" for k, v in sorted(p.ops_not_predicted.items()))
            return {}, ops, f"the base profile cannot predict all of it ({missing})"
        split = {}
        for c in CLASSES:
            doubled = total(scaled(base, {c: 2.0}))[0]
            if doubled - ref > 1e-9 * max(ref, 1.0):
                split[c] = doubled - ref
    if not split or not math.isfinite(sum(split.values())):
        return {}, ops, "the base profile predicts no time for it"
    return split, ops, None


@dataclass(frozen=True)
class Fit:
    """What :func:`fit_from_results` made: the profile, the models it was fitted on (with their leave-one-out
    predictions), the factors by class, the one-scale factor, the pull chosen, and the models left out (and why)."""

    profile: DeviceProfile
    fitted: tuple[Fitted, ...]
    factors: Mapping[str, float]
    scale: float
    pull: float
    left_out: tuple[str, ...] = ()


def fit_from_results(results: Sequence[Result], models_dir: str, device: str, base: DeviceProfile,
                     target: str | None, progress: Any = None) -> Fit:
    """The device's profile fitted to ``results`` (their models in ``models_dir``) on ``base``'s laws
    (``target``: the device's CPU target, or None), with what the fit found (:class:`Fit`).

    Raises:
        ProfileError: fewer than :data:`MIN_MODELS` models could be fitted.
    """
    if len(results) > MAX_MODELS:
        raise ProfileError(f"{len(results):,} models: at most {MAX_MODELS:,} are fitted at once")
    from ..errors import InputSpecError
    from ..targets import names

    if target and target not in names():
        raise InputSpecError(f"--target {printable(target)[:40]}: not a CPU target ({', '.join(names())})")
    named = target or ""
    # the base's laws at the device's target: the tiles and depths of the device's kernels, in the fit and in
    # every prediction the profile makes
    at_target = replace(base, machine=replace(base.machine, target=named), reference={}, drift=None)
    settings = Settings(target=Target(xnnpack=named or None))
    fitted: list[Fitted] = []
    left_out: list[str] = []
    for i, r in enumerate(results):
        if progress is not None:
            progress(i, len(results), r.file)
        path = os.path.join(models_dir, r.file)
        if not os.path.isfile(path):
            left_out.append(f"{r.file}: not in {printable(models_dir)}")
            continue
        try:
            split, ops, why = _base_split(path, at_target, settings)
        except (ModelFormatError, ModelLoadError) as exc:
            left_out.append(f"{r.file}: {printable(str(exc))[:200]}")
            continue
        if why is not None:
            left_out.append(f"{r.file}: {why}")
            continue
        fitted.append(Fitted(r.file, r.ms, split, ops=ops, result=r))
    if len(fitted) < MIN_MODELS:
        raise ProfileError(f"{len(fitted)} of {len(results)} models could be fitted; at least {MIN_MODELS} are "
                           "needed" + (f" ({'; '.join(left_out[:3])})" if left_out else ""))
    names = [c for c in CLASSES if any(f.classes.get(c) for f in fitted)]
    t = np.array([[f.classes.get(c, 0.0) for c in names] for f in fitted])
    y = np.array([f.measured_ms for f in fitted])
    lam = choose_lambda(t, y)
    factors = dict(zip(names, (float(v) for v in fit_factors(t, y, lam))))
    s = one_scale(t, y)
    loo, loo_scale = leave_one_out(t, y)
    fitted = [replace(f, loo_ms=float(a), loo_scale_ms=float(b)) for f, a, b in zip(fitted, loo, loo_scale)]
    profile = _profile(at_target, factors, s, fitted, lam, device, base)
    return Fit(profile, tuple(fitted), factors, s, lam, tuple(left_out))


def thin_classes(fitted: Sequence[Fitted], share: float = 0.05) -> list[str]:
    """The classes (of :data:`CLASSES`, overheads and cache aside) that fewer than two models spend ``share`` of
    their base time in: their factors come from one model or none."""
    out = []
    for c in CLASSES:
        if c in (OVERHEAD, CACHE):
            continue
        n = sum(1 for f in fitted if f.base_ms > 0 and f.classes.get(c, 0.0) >= share * f.base_ms)
        if n == 1:
            out.append(c)
    return out


def _profile(at_target: DeviceProfile, factors: dict[str, float], s: float, fitted: Sequence[Fitted], lam: float,
             device: str, base: DeviceProfile) -> DeviceProfile:
    """The profile written: the base's laws at the device's target, scaled by class (a class no model had: the
    common factor), each law's range widened by the leave-one-out errors."""
    every = {c: factors.get(c, s) for c in CLASSES}
    out = scaled(at_target, every)
    errors = np.log(np.array([f.loo_ms / f.measured_ms for f in fitted]))
    lo, hi = min(float(np.percentile(errors, 10)), 0.0), max(float(np.percentile(errors, 90)), 0.0)
    laws = tuple(replace(law, log_low=law.log_low + lo, log_high=law.log_high + hi) for law in out.laws)
    versions = sorted({f.result.runtime_version for f in fitted if f.result and f.result.runtime_version})
    m = base.machine
    machine = Machine(cpu=device, cores=m.threads, system="", runtime="benchmark_model",
                      runtime_version=versions[0] if len(versions) == 1 else "device", threads=m.threads,
                      xnnpack=m.xnnpack, target=at_target.machine.target, caches=dict(m.caches))
    n_class = within((f.loo_ms for f in fitted), (f.measured_ms for f in fitted))
    n_scale = within((f.loo_scale_ms for f in fitted), (f.measured_ms for f in fitted))
    shown = ", ".join(f"{c} ×{v:.3g}" for c, v in factors.items())
    notes = (f"fitted from {len(fitted)} whole-model times of {device} on the laws of {m.cpu} "
             f"({m.target or 'no CPU target'}, {base.created or 'undated'}): the time of each op class scaled "
             f"by its factor ({shown}; other classes ×{s:.3g}, the one-scale fit; pull {lam:g})",
             f"leave-one-model-out: {n_class} of {len(fitted)} within ±10% (one scale: {n_scale} of {len(fitted)}); "
             f"the laws' ranges widened by its 10%..90% errors ({lo:+.3f}..{hi:+.3f} in ln)",
             f"the split between ops is {m.cpu}'s, and so are the cache sizes (whole-model times do not give the "
             f"device's)" if m.caches else f"the split between ops is {m.cpu}'s",
             "the device's core count is not in whole-model results: the thread count stands in")
    thin = thin_classes(fitted)
    if thin:
        notes += (f"factors that rest on one model, which leaving it out cannot check: {', '.join(thin)}: give "
                  "results of more models of those kinds and precisions",)
    return replace(out, machine=machine, laws=laws, source=SOURCE, suite=SOURCE, notes=notes, reference={},
                   created=datetime.now(timezone.utc).isoformat(timespec="seconds"))
