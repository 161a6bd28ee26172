"""Fitting the device profile's laws to timed calibration points: non-negative least squares in relative error.

A :class:`Sample` is one single-op calibration model: the op's features (``features.op_features``,
so fitting and prediction describe the op alike), the model's measured median and the part of it that
is not the op (the per-invoke overhead, plus the per-partition overhead when the op ran on the delegate).

For one law key the fit solves ``min sum_i ((x_i . c + overhead_i - m_i) / m_i)^2`` over ``c >= 0``
(Lawson and Hanson's active-set NNLS, on columns scaled to a maximum of 1): each point weighs by its
relative error, so a 20 us op counts as much as a 20 ms one, and no coefficient is negative (a
negative cost per MAC would predict a negative time for a bigger op). Points further than
``OUTLIER_LOG`` (in ``ln(measured/predicted)``) from the first fit, the noise of a shared machine, are
dropped and the law is fitted again. The residuals of the op's own part, ``ln((m_i - overhead_i) /
x_i . c)``, give the law's 10% and 90% quantiles (its uncertainty range, applied to the op's predicted
time, the overheads apart); the whole point's, ``ln(m_i / (x_i . c + overhead_i))``, its median |error|.

The overheads come from chains of 1..16 tiny ADDs (:func:`fit_overheads`): the intercept of the
builtin chains is the per-invoke cost; the delegate chains' intercept less it is the per-partition cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .cache import cost_per_byte
from .profile import GENERIC_FAMILY, Law, OpFeatures, group_of, law_features
from .profile_schema import LOG_RANGE_MAX

OUTLIER_LOG = 0.35  # drop points whose ln(measured/predicted) is further than this from the median (and 4 MADs)
LOW_Q, HIGH_Q = 10, 90
RANGE_RATE = (HIGH_Q - LOW_Q) / 100  # the nominal coverage of a law's range: DeviceProfile.range_rate


@dataclass(frozen=True)
class Sample:
    """One timed single-op point: the op's features, the measured median and the overhead part of it (us)."""

    features: OpFeatures
    measured_us: float
    overhead_us: float
    key: str = ""  # the suite point's key


def nnls(a: np.ndarray, b: np.ndarray, max_iter: int = 200) -> np.ndarray:
    """x >= 0 minimising ||a x - b|| (Lawson and Hanson, "Solving Least Squares Problems", 1974, ch. 23)."""
    m, n = a.shape
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    grad = a.T @ (b - a @ x)
    tol = 1e-10 * max(1.0, float(np.abs(a).max(initial=0.0))) * max(m, n)
    for _ in range(max_iter):
        if passive.all() or grad[~passive].max(initial=-1.0) <= tol:
            break
        j = int(np.argmax(np.where(passive, -np.inf, grad)))
        passive[j] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            neg = passive & (z <= 0)
            alpha = float(np.min(x[neg] / (x[neg] - z[neg])))
            x = x + alpha * (z - x)
            passive &= x > tol
            x[~passive] = 0.0
            if not passive.any():
                break
        grad = a.T @ (b - a @ x)
    return x


def _solve(rows: Sequence[Sample], names: Sequence[str]) -> dict[str, float]:
    """NNLS in relative error over ``names``; columns that are 0 on every point are left out."""
    x = np.array([[float(s.features.values.get(f, 1.0 if f == "1" else 0.0)) for f in names] for s in rows])
    m = np.array([s.measured_us for s in rows])
    y = m - np.array([s.overhead_us for s in rows])
    scale = np.abs(x).max(axis=0)
    keep = scale > 0
    if not keep.any():
        return {}
    a = x[:, keep] / scale[keep] / m[:, None]
    coef = nnls(a, y / m) / scale[keep]
    kept = [name for name, k in zip(names, keep) if k]
    return {name: float(c) for name, c in zip(kept, coef) if c > 0}


def _features_for(rows: Sequence[Sample], family: str) -> list[str]:
    """The law's features that some point has (a feature 0 on every point cannot be fitted), in their order of
    importance (``law_features``: the constant and the main size feature first); with too few points for all of
    them (features + 2), the first ones the points allow, at least those two."""
    names = [f for f in law_features(family) if f == "1" or any(s.features.values.get(f, 0.0) for s in rows)]
    if len(rows) < len(names) + 2:
        names = names[:max(2, len(rows) - 2)]
    if len(rows) < 2:
        names = names[1:] or names
    return names


def residuals(law_coef: dict[str, float], rows: Sequence[Sample]) -> list[float]:
    """ln(measured / predicted) per point, the prediction including the point's overhead."""
    out = []
    for s in rows:
        pred = sum(c * float(s.features.values.get(f, 1.0 if f == "1" else 0.0)) for f, c in law_coef.items())
        out.append(math.log(s.measured_us / max(pred + s.overhead_us, 1e-6)))
    return out


def op_residuals(law_coef: dict[str, float], rows: Sequence[Sample]) -> list[float]:
    """ln((measured - overhead) / law) per point: the error of the op's own part, which is what the law's
    range multiplies at prediction (``Law.range_us``; the overheads are added apart, without a range).
    A point whose measured time is not above its overhead (noise of a sub-microsecond op) has no op part
    to compare and is left out."""
    out = []
    for s in rows:
        pred = sum(c * float(s.features.values.get(f, 1.0 if f == "1" else 0.0)) for f, c in law_coef.items())
        op_part = s.measured_us - s.overhead_us
        if pred > 0 and op_part > 0:
            out.append(math.log(op_part / pred))
    return out


def fit_law(family: str, precision: str, placement: str, rows: Sequence[Sample]) -> Law:
    """The law of one key fitted to ``rows`` (at least one), with its residual quantiles."""
    names = _features_for(rows, family)
    coef = _solve(rows, names)
    used = list(rows)
    if len(rows) > len(names) + 2:
        res = np.array(residuals(coef, rows))
        med = float(np.median(res))
        mad = float(np.median(np.abs(res - med)))
        limit = max(OUTLIER_LOG, 4 * 1.4826 * mad)
        kept = [s for s, r in zip(rows, res) if abs(r - med) <= limit]
        if len(kept) >= len(names) + 1 and len(kept) < len(rows):
            used = kept
            coef = _solve(used, names)
    res = np.array(residuals(coef, used))
    own = op_residuals(coef, used)  # the range is applied to the op's part only (Law.range_us)
    kept_ids = {id(s) for s in used}
    # Within what a profile holds (profile_schema.LOG_RANGE_MAX: e^10 either way). Beyond it only where the op's
    # part is below the timing's noise: int32 shape arithmetic whose law prices the op at a few thousandths of a
    # microsecond over its overhead, so that a point timed 0.5 us over its overhead reads 90,000x (a calibration
    # of 2026-12-08 wrote log_high 11.4, and the tool then refused its own profile).
    low, high = (float(np.clip(np.percentile(own, q), -LOG_RANGE_MAX, LOG_RANGE_MAX)) if own else 0.0
                 for q in (LOW_Q, HIGH_Q))
    return Law(family=family, precision=precision, placement=placement, coefficients=coef,
               log_low=low, log_high=high,
               points=len(used), median_abs_error=float(np.median(np.abs(np.exp(res) - 1.0))),
               domain=domain_of(family, used), dropped=tuple(s.key for s in rows if id(s) not in kept_ids))


def domain_of(family: str, rows: Sequence[Sample]) -> dict[str, tuple[float, float]]:
    """The law's fitted domain: (min, max) over ``rows`` of each feature a law of ``family`` takes ("1" apart),
    what ``predict.out_of_domain`` holds an op's features to."""
    out = {}
    for name in law_features(family):
        if name != "1" and rows:
            values = [float(s.features.values.get(name, 0.0)) for s in rows]
            out[name] = (min(values), max(values))
    return out


def fit_laws(samples: Iterable[Sample]) -> tuple[Law, ...]:
    """One law per (op type, precision, placement) with points, one per group (each op type's ``law_group``)
    and precision and placement, and a generic law per precision and placement."""
    samples = list(samples)
    buckets: dict[tuple[str, str, str], list[Sample]] = {}
    for s in samples:
        f = s.features
        for family in (f.family, group_of(f.family), GENERIC_FAMILY):
            rows = buckets.setdefault((family, f.precision, f.placement), [])
            rows.append(s)
    laws = []
    for (family, precision, placement), rows in sorted(buckets.items()):
        laws.append(fit_law(family, precision, placement, rows))
    return tuple(laws)


def _line(points: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares intercept and slope of (n, t) points."""
    n = np.array([p[0] for p in points], dtype=float)
    t = np.array([p[1] for p in points], dtype=float)
    slope, intercept = np.polyfit(n, t, 1) if len(set(n)) > 1 else (0.0, float(t.mean()))
    return float(intercept), float(slope)


def fit_overheads(builtin_chain: Sequence[tuple[int, float]], delegate_chain: Sequence[tuple[int, float]]
                  ) -> tuple[float, float]:
    """(per-invoke us, per-partition us) from the chains of ``n`` tiny ADDs: (n, median us) points."""
    invoke = max(_line(builtin_chain)[0], 0.0) if builtin_chain else 0.0
    if not delegate_chain:
        return invoke, 0.0
    return invoke, max(_line(delegate_chain)[0] - invoke, 0.0)


@dataclass(frozen=True)
class ColdSample:
    """One suite point timed warm (back to back) and cold (``evict`` bytes of another buffer read before each
    timed run) in the same run: the two medians (us), the bytes its ops touch (their footprints), and how many
    ops it runs (a chain of tiny ops: ``chain``, the per-invoke and per-op state apart)."""

    warm_us: float
    cold_us: float
    evict: int
    bytes: int
    key: str = ""
    precision: str = ""  # the op's precision as the analysis gives it (its law's)
    ops: int = 1
    chain: bool = False  # a chain of tiny ops (suite.chain): nearly no data, only state


def fit_cache_curve(rows: Sequence[ColdSample], start: int = 0
                    ) -> tuple[tuple[tuple[int, float, float, float], ...], float | None]:
    """The cost of data and state by reuse distance (``latency.cache.CacheCurve``) and the median |error| of the
    cold times it gives, from cold points; ``start``: the distance up to which nothing costs more (the L2's
    capacity: data that near stays in it), the curve's first point when given.

    Per eviction size E:

    * the chains of 1 to 16 tiny ops (nearly no data): a line ``cold - warm = i + o * ops``; ``i`` is what the
      eviction costs the state every invoke touches once (the interpreter's, the delegate's, their code);
    * the single-op points: NNLS in relative error on ``cold - warm = k + s * bytes``; ``s`` is the cost per
      byte at reuse distance E (the op's footprint is small against E at the sizes that cost), and ``k - i``
      the cost of the op's own state (its operator object, indirection buffers), never below the chains' ``o``.

    Each part is made non-decreasing in E (data further away never costs less)."""
    rows = [r for r in rows if r.warm_us > 0 and r.cold_us > 0]
    if not any(not r.chain for r in rows):
        return (), None
    curve: list[tuple[int, float, float, float]] = [(start, 0.0, 0.0, 0.0)] if start > 0 else []
    errors: list[float] = []
    for evict in sorted({r.evict for r in rows}):
        chains = [r for r in rows if r.evict == evict and r.chain]
        invoke, per_op = 0.0, 0.0
        if len({r.ops for r in chains}) > 1:
            slope, intercept = np.polyfit([r.ops for r in chains], [r.cold_us - r.warm_us for r in chains], 1)
            invoke, per_op = max(float(intercept), 0.0), max(float(slope), 0.0)
        elif chains:
            invoke = max(float(np.median([r.cold_us - r.warm_us for r in chains])), 0.0)
        sub = [r for r in rows if r.evict == evict and not r.chain]
        if not sub:
            continue
        x = np.array([[1.0, float(r.bytes)] for r in sub])
        y = np.array([r.cold_us - r.warm_us for r in sub])
        m = np.array([r.cold_us for r in sub])
        if len(set(r.bytes for r in sub)) < 2:
            x = x[:, :1]
        scale = np.maximum(np.abs(x).max(axis=0), 1e-30)
        coef = nnls(x / scale / m[:, None], y / m) / scale
        errors += list(np.abs((x @ coef + np.array([r.warm_us for r in sub])) / m - 1.0))
        k, s = float(coef[0]), float(coef[1]) if len(coef) > 1 else 0.0
        prev = curve[-1] if curve else (0, 0.0, 0.0, 0.0)
        if evict > prev[0]:
            curve.append((evict, max(s, prev[1]), max(k - invoke, per_op, prev[2]), max(invoke, prev[3])))
    return tuple(curve), float(np.median(errors)) if errors else None


@dataclass(frozen=True)
class StreamSample:
    """One streaming chain timed (suite.stream_points): ``ops`` 1x1 convolutions of ``weights`` bytes of weights
    each, ``footprint`` the bytes one of them touches, ``total`` the bytes the chain touches per inference, and
    its median time (us)."""

    precision: str
    ops: int
    weights: int
    footprint: int
    total: int
    us: float


def stream_costs(rows: Sequence[StreamSample], curve: Sequence[tuple[int, float, float, float]], invoke_us: float
                 ) -> dict[str, list[tuple[int, float]]]:
    """Per precision, (reuse distance, microseconds per byte) measured by the streaming chains: a chain of ``n``
    ops takes ``n`` times the op alone (less the invoke overhead, paid once) plus what its weights cost from
    ``total`` bytes away; each op's weights are priced by the cache module at the curve's cost at that distance
    less its cost at the op's own footprint, so the cost at ``total`` is the extra per byte of weights plus the
    ``curve``'s cost at the footprint (never below 0)."""
    out: dict[str, list[tuple[int, float]]] = {}
    for precision in sorted({r.precision for r in rows}):
        mine = [r for r in rows if r.precision == precision]
        alone = [r for r in mine if r.ops == 1]
        if not alone:
            continue
        one = max(alone[0].us - invoke_us, 0.0)
        for r in sorted(mine, key=lambda r: r.total):
            if r.ops < 2 or r.weights <= 0:
                continue
            extra = r.us - invoke_us - r.ops * one
            per_byte = extra / (r.ops * r.weights) + cost_per_byte(tuple(curve), r.footprint)
            out.setdefault(precision, []).append((r.total, max(per_byte, 0.0)))
    return out
