"""FLOPs sweeps over input shapes, and the scaling law that fits them.

A sweep analyzes one model at several input shapes (each a *point*) and reports the totals of
every point: MACs, FLOPs (also by precision), params and activation bytes. It then finds which
input dims vary between the points and fits each total as a polynomial of degree ≤ 2 in them,
with exact rational coefficients::

    MACs = 1,204·H·W + 35,840        (fully-convolutional model, H and W swept)
    MACs = 300,800,000·B              (batch sweep; printed also as 300.8 M·B)

The fit is checked on every swept point: it is called *exact* when it reproduces every point
exactly, and *verified* when, in addition, there are more points than coefficients (with as
many points as coefficients any polynomial interpolates, which proves nothing). When no
polynomial of degree ≤ 2 is exact (strided convolutions round ``ceil(H/2)`` at odd sizes), the
least-squares fit is reported with its largest residual.

Latency per point is not measured here; :func:`sweep` takes an optional
``measure(point) -> (latency, throughput)`` callable for that, called once per point after its
analysis (``None`` by default: the JSON then says ``"latency": null``).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import InputSpecError, ShapeError
from .model import Model, load_model
from .report import LatencyStats, Report, Throughput
from .shapes import Shape, normalize_input_shapes
from .units import grouped, human, human_unit, precision_unit

SWEEP_FORMATS = ("table", "json", "csv", "html")

#: The totals that get a scaling law, with their display names.
FIT_METRICS: dict[str, str] = {"macs": "MACs", "flops": "FLOPs", "params": "params",
                               "activation_bytes": "activation bytes", "arena_bytes": "arena bytes",
                               "peak_live_bytes": "peak live bytes"}

# Conventional letters for the dims of an input of a given rank.
_AXIS_LETTERS = {1: "N", 2: "BD", 3: "BTD", 4: "BHWC", 5: "BDHWC"}


@dataclass(frozen=True)
class PointSpec:
    """What to analyze at one sweep point: input shapes (as for ``analyze()``) and a batch size."""

    input_shapes: Mapping[str | int | None, Shape] = field(default_factory=dict)
    batch: int | None = None

    @property
    def label(self) -> str:
        """``image=1x64x64x3`` / ``batch=4`` / ``a=1x64,b=1x64 batch=2``."""
        parts = []
        if self.input_shapes:
            parts.append(",".join(("" if k is None else f"{k}=") + "x".join(map(str, v))
                                  for k, v in self.input_shapes.items()))
        if self.batch is not None:
            parts.append(f"batch={self.batch}")
        return " ".join(parts) or "(stored shapes)"


@dataclass(frozen=True)
class PointTotals:
    """The totals of one sweep point (per inference, at the point's shapes).

    ``activation_bytes`` is the report's ``bytes_written``: the bytes of every activation tensor
    written per inference (in-place ops such as RESHAPE write nothing). The memory figures are
    None when the report has no memory analysis.
    """

    macs: int
    flops: int
    flops_by_precision: Mapping[str, int]  # precision -> FLOPs (OPs for integer precisions)
    params: int
    param_bytes: int
    activation_bytes: int
    bytes_read: int
    arena_bytes: int | None = None
    peak_live_bytes: int | None = None
    tflm_arena_bytes: int | None = None

    def get(self, metric: str) -> int | None:
        """The total named ``metric`` (a field name, as in :data:`FIT_METRICS`); None when not measured."""
        return getattr(self, metric)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every total; the memory figures only when measured."""
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in asdict(self).items()
                if v is not None or k not in _MEMORY_TOTALS}


_MEMORY_TOTALS = ("arena_bytes", "peak_live_bytes", "tflm_arena_bytes")


@dataclass(frozen=True)
class SweepPoint:
    """One analyzed point."""

    spec: PointSpec
    input_shapes: Mapping[str, Shape]  # every input of the entry subgraph, by display name, as analyzed
    totals: PointTotals
    shapes_resolved: bool  # False when a dim stayed unresolved (costs use placeholders there)
    warnings: tuple[str, ...] = ()
    latency: LatencyStats | None = None
    throughput: Throughput | None = None
    report: Report | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the report itself is left out)."""
        return {"input_shapes": {k: list(v) for k, v in self.input_shapes.items()}, "totals": self.totals.to_dict(),
                "shapes_resolved": self.shapes_resolved, "warnings": list(self.warnings),
                "latency": None if self.latency is None else self.latency.to_dict(),
                "throughput": None if self.throughput is None else self.throughput.to_dict()}


@dataclass(frozen=True)
class Variable:
    """A swept quantity: one or more input dims that take the same value at every point."""

    name: str  # "H", "B", "T[tokens]"
    dims: tuple[tuple[str, int], ...]  # (input name, axis) of every dim it stands for
    values: tuple[int, ...]  # its value at each point
    labels: tuple[str, ...]  # letter of each member dim ("H", "W")


@dataclass(frozen=True)
class Law:
    """The polynomial fitted to one total: ``sum(coefficient · monomial)``."""

    metric: str
    terms: tuple[tuple[tuple[int, ...], Fraction], ...]  # (power of each variable, coefficient)
    exact: bool
    verified: bool  # exact and more points than coefficients
    max_residual: Fraction
    formula: str
    formula_human: str

    def predict(self, values: Sequence[int]) -> Fraction:
        """The law evaluated at one value per variable."""
        total = Fraction(0)
        for powers, coef in self.terms:
            total += coef * _monomial_value(powers, values)
        return total

    def to_dict(self, variables: Sequence[Variable]) -> dict[str, Any]:
        """JSON-ready form: coefficients as ints where integral, else "p/q" strings."""
        return {"formula": self.formula, "formula_human": self.formula_human, "exact": self.exact,
                "verified": self.verified, "max_residual": _json_number(self.max_residual),
                "terms": [{"monomial": _monomial_name(p, variables) or "1", "powers": list(p),
                           "coefficient": _json_number(c)} for p, c in self.terms]}


@dataclass(frozen=True)
class Fit:
    """The variables of a sweep and one law per total."""

    variables: tuple[Variable, ...]
    laws: Mapping[str, Law]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"variables": {v.name: {"dims": [{"input": i, "axis": a} for i, a in v.dims], "values": list(v.values)}
                              for v in self.variables},
                "laws": {k: law.to_dict(self.variables) for k, law in self.laws.items()},
                "notes": list(self.notes)}


@dataclass(frozen=True)
class SweepResult:
    """Every point of a sweep and the fitted scaling laws."""

    model: str
    points: tuple[SweepPoint, ...]
    fit: Fit | None

    def to_dict(self) -> dict[str, Any]:
        """``{"model", "points": [{"input_shapes", "totals", "latency", "throughput", ...}], "fit"}``."""
        return {"model": self.model, "points": [p.to_dict() for p in self.points],
                "fit": self.fit.to_dict() if self.fit is not None else None}

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @property
    def warnings(self) -> list[str]:
        """Warnings of every point (each once), prefixed with the point it came from."""
        out: list[str] = []
        for p in self.points:
            for w in p.warnings:
                out.append(f"[{p.spec.label}] {w}")
        return list(dict.fromkeys(out))


# ---------------------------------------------------------------------------------------------
# Points


def make_points(input_shapes: Sequence[str] | None = None, batches: Sequence[int] | None = None) -> list[PointSpec]:
    """Points from ``--input-shape`` specs (one point each) and ``--batch`` values (the cross product).

    Each spec string is one point; several inputs of one point are comma-separated
    (``a=1x64,b=1x64``). With both shapes and batches, every shape is taken at every batch:
    the batch replaces the leading dim of the given shapes and of the other inputs.

    Raises:
        InputSpecError: a spec cannot be parsed or a batch is < 1.
    """
    shapes = [normalize_input_shapes(s) for s in (input_shapes or [])]
    for b in batches or []:
        if int(b) < 1:
            raise InputSpecError(f"--batch values must be at least 1 (got {b})")
    if not shapes and not batches:
        raise InputSpecError("a sweep needs points: repeat --input-shape SPEC, or give --batch 1,2,4,8")
    out = []
    for spec in shapes or [{}]:
        for b in batches or [None]:
            given = dict(spec)
            if b is not None:
                given = {k: (int(b),) + tuple(v[1:]) if v else v for k, v in given.items()}
            out.append(PointSpec(given, None if b is None else int(b)))
    return out


def parse_batches(text: str) -> list[int]:
    """``"1,2,4,8"`` -> [1, 2, 4, 8]."""
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise InputSpecError(f"cannot read --batch {text!r} (expected e.g. 1,2,4,8)") from None
    if not values:
        raise InputSpecError("--batch needs at least one value")
    return values


def sweep(model: str | bytes | Model, points: Iterable[PointSpec | str | Mapping | Sequence[int]],
          measure: Callable[[SweepPoint], tuple[LatencyStats | None, Throughput | None]] | None = None,
          *, strict: bool = False, while_trips: int = 1, signature: str | None = None,
          fit: bool = True) -> SweepResult:
    """Analyze a model at several input shapes and fit the scaling law of its totals.

    Args:
        model: a .tflite path, its bytes, or a parsed :class:`Model` (parsed once for all points).
        points: one entry per point: a :class:`PointSpec`, a spec string (``"image=1x64x64x3"``,
            ``"a=1x64,b=1x64"``), a mapping ``{name_or_index: shape}``, or a bare shape.
        measure: optional ``measure(point) -> (latency, throughput)``, called once per point after
            its analysis (the point carries the analyzed ``input_shapes``); the records are stored
            on the point. ``None`` leaves latency and throughput ``None``.
        strict, while_trips, signature: as for ``analyze()``.
        fit: fit the scaling laws (needs at least two points).

    Returns:
        The :class:`SweepResult`.

    Raises:
        ShapeError, InputSpecError: a point's shapes do not fit the model.
    """
    from .analysis import analyze

    parsed = model if isinstance(model, Model) else load_model(model)  # type: ignore[arg-type]
    out: list[SweepPoint] = []
    for raw in points:
        spec = raw if isinstance(raw, PointSpec) else PointSpec(normalize_input_shapes(raw))  # type: ignore[arg-type]
        try:
            report = analyze(parsed, input_shapes=dict(spec.input_shapes), batch=spec.batch, strict=strict,
                             while_trips=while_trips, signature=signature)
        except ShapeError as exc:
            raise ShapeError(f"point {spec.label}: {exc}") from None
        point = point_of(spec, report)
        if measure is not None:
            latency, throughput = measure(point)
            point = replace(point, latency=latency, throughput=throughput)
        out.append(point)
    name = parsed.path or "<bytes>"
    return SweepResult(name, tuple(out), fit_points(out) if fit and len(out) >= 2 else None)


def point_of(spec: PointSpec, report: Report) -> SweepPoint:
    """The sweep point of ``spec`` from its analysis (not measured)."""
    t = report.totals
    memory = report.memory  # the memory analysis at this point's shapes (see tflite_flops.memory)
    totals = PointTotals(
        macs=t.macs, flops=t.flops,
        flops_by_precision={k: int(v.get("flops", 0)) for k, v in sorted(t.by_precision.items())},
        params=t.params, param_bytes=t.param_bytes, activation_bytes=t.bytes_written, bytes_read=t.bytes_read,
        arena_bytes=memory.arena_bytes if memory is not None else None,
        peak_live_bytes=memory.peak_live_bytes if memory is not None else None,
        tflm_arena_bytes=memory.tflm_arena_bytes if memory is not None else None)
    resolved = all(o.shapes_resolved for o in report.ops if o.phase == "inference")
    return SweepPoint(spec, {i.name: tuple(i.shape) for i in report.inputs}, totals, resolved,
                      tuple(report.warnings), None, None, report)


# ---------------------------------------------------------------------------------------------
# Fitting


def find_variables(points: Sequence[SweepPoint]) -> tuple[list[Variable], list[str]]:
    """The input dims that vary between points, dims with identical values merged into one variable."""
    names = list(points[0].input_shapes)
    series: dict[tuple[int, ...], list[tuple[str, int, str]]] = {}
    for name in names:
        shapes = [p.input_shapes.get(name, ()) for p in points]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            continue
        letters = _AXIS_LETTERS.get(rank, "")
        for axis in range(rank):
            values = tuple(int(s[axis]) for s in shapes)
            if len(set(values)) > 1:
                letter = letters[axis] if axis < len(letters) else f"d{axis}"
                series.setdefault(values, []).append((name, axis, letter))
    # Letters used by different series get the input name appended.
    letter_count: dict[str, set] = {}
    for values, members in series.items():
        for _, _, letter in members:
            letter_count.setdefault(letter, set()).add(values)
    variables, notes = [], []
    for values, members in series.items():
        labels = []
        for name, _, letter in members:
            label = letter if len(letter_count[letter]) == 1 else f"{letter}[{name}]"
            if label not in labels:
                labels.append(label)
        variables.append(Variable(labels[0], tuple((n, a) for n, a, _ in members), values, tuple(labels)))
        if len(labels) > 1:
            notes.append(f"{' and '.join(labels)} are equal at every swept point: the fit cannot tell them apart "
                         f"({labels[0]} stands for all of them)")
    return variables, notes


def fit_points(points: Sequence[SweepPoint], metrics: Mapping[str, str] = FIT_METRICS) -> Fit:
    """Fit a polynomial of degree ≤ 2 in the swept variables to each total (see the module doc)."""
    variables, notes = find_variables(points)
    laws = {}
    for metric in metrics:
        if any(p.totals.get(metric) is None for p in points):  # no memory analysis
            continue
        ys = [int(p.totals.get(metric)) for p in points]
        laws[metric] = fit_law(metric, variables, ys)
    if not all(p.shapes_resolved for p in points):
        notes.append("some points have unresolved dims (placeholder shapes): their totals and the fit are unreliable")
    return Fit(tuple(variables), laws, tuple(notes))


MAX_TERMS = 4  # the simplest exact law is searched among sums of at most this many monomials
MAX_CANDIDATES = 20_000  # with many swept variables, fewer monomial kinds are tried (see fit_law)


def _monomials(k: int) -> list[tuple[int, ...]]:
    """Exponent vectors of the candidate monomials in k variables: each exponent ≤ 2, total degree ≤ 3.

    Degree 3 lets a batch sweep combine with a spatial one (``B·H·W``); the constant comes first.
    """
    out = [p for p in itertools.product(range(3), repeat=k) if sum(p) <= 3]
    return sorted(out, key=lambda p: (sum(p), [-e for e in p]))


def _monomial_value(powers: Sequence[int], values: Sequence[int]) -> int:
    out = 1
    for p, v in zip(powers, values):
        out *= v ** p
    return out


def _solve_least_squares(rows: list[list[int]], ys: list[int]) -> list[Fraction] | None:
    """Exact least squares: solve (AᵀA)·c = Aᵀy in rationals; None when AᵀA is singular."""
    n = len(rows[0])
    ata = [[Fraction(sum(r[i] * r[j] for r in rows)) for j in range(n)] for i in range(n)]
    aty = [Fraction(sum(r[i] * y for r, y in zip(rows, ys))) for i in range(n)]
    m = [row + [b] for row, b in zip(ata, aty)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if m[r][col] != 0), None)
        if pivot is None:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col] / m[col][col]
                m[r] = [a - f * b for a, b in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit_law(metric: str, variables: Sequence[Variable], ys: Sequence[int]) -> Law:
    """The simplest exact polynomial law (fewest terms, then lowest degree), else least squares.

    Candidate sums of 1 … :data:`MAX_TERMS` monomials (see :func:`_monomials`) are tried, fewest
    terms first; a float least-squares fit screens each candidate and the exact rational solution
    of the normal equations confirms it. Among the exact candidates of the smallest size, the one
    with the simplest coefficients (fewest digits) wins. When none is exact, the monomials
    ``H·W, H, W, 1`` (``x², x, 1`` for one variable; as many as the points allow, minus one) are
    fitted by least squares and the largest residual is reported.
    """
    import numpy as np

    k = len(variables)
    xs = [tuple(v.values[i] for v in variables) for i in range(len(ys))]
    monos = _monomials(k)
    n_points = len(ys)
    max_terms = min(len(monos), n_points, MAX_TERMS)
    while sum(math.comb(len(monos), size) for size in range(1, max_terms + 1)) > MAX_CANDIDATES:
        if any(sum(p) == 3 for p in monos):  # many variables: drop degree 3, then squares, then terms
            monos = [p for p in monos if sum(p) <= 2]
        elif any(max(p) == 2 for p in monos):
            monos = [p for p in monos if max(p) <= 1]
        else:
            max_terms -= 1
    table = np.array([[float(_monomial_value(p, x)) for p in monos] for x in xs]) if xs else np.zeros((0, 1))
    y = np.array([float(v) for v in ys])
    scale = max(float(np.max(np.abs(y))) if len(y) else 0.0, 1.0)
    best: tuple[list[tuple[int, ...]], list[Fraction]] | None = ([], []) if not any(ys) else None
    for size in range(1, max_terms + 1):
        if best is not None:
            break
        found = []
        for cols in itertools.combinations(range(len(monos)), size):
            a = table[:, cols]
            sol, _, rank, _ = np.linalg.lstsq(a, y, rcond=None)
            if rank < size or np.max(np.abs(a @ sol - y)) > 1e-6 * scale:
                continue
            subset = [monos[c] for c in cols]
            rows = [[_monomial_value(p, x) for p in subset] for x in xs]
            coefs = _solve_least_squares(rows, list(ys))
            if coefs is None or any(c == 0 for c in coefs):
                continue
            if all(sum(c * v for c, v in zip(coefs, row)) == yy for row, yy in zip(rows, ys)):
                found.append((subset, coefs))
        if found:
            # Several laws of this size fit (few points): keep the one with the simplest coefficients
            # (fewest digits), e.g. 397·H·W + 2 rather than 76,224·H − 3,252,222.
            best = min(found, key=lambda f: (sum(_digits(c) for c in f[1]), sum(map(sum, f[0]))))
    exact = best is not None
    if best is None:
        # Least squares on H·W, H, W, 1 (multilinear; x², x, 1 for a single variable), with fewer
        # coefficients than points so that the residual means something.
        pool = [p for p in monos if sum(p) <= 2 and (k == 1 or max(p, default=0) <= 1)]
        pool.sort(key=lambda p: -sum(p))
        subset = pool[:max(n_points - 1, 1)]
        if tuple([0] * k) in pool and tuple([0] * k) not in subset and len(subset) > 1:
            subset[-1] = tuple([0] * k)
        while subset:
            rows = [[_monomial_value(p, x) for p in subset] for x in xs]
            coefs = _solve_least_squares(rows, list(ys))
            if coefs is not None:
                best = (subset, coefs)
                break
            subset = subset[:-1]
    if best is None:
        best = ([tuple([0] * k)], [Fraction(ys[0]) if ys else Fraction(0)])
    subset, coefs = best
    terms = tuple(sorted(((p, c) for p, c in zip(subset, coefs) if c != 0),
                         key=lambda t: (-sum(t[0]), [-e for e in t[0]])))
    residual = max((abs(Fraction(yy) - sum((c * _monomial_value(p, x) for p, c in terms), Fraction(0)))
                    for x, yy in zip(xs, ys)), default=Fraction(0))
    exact = exact and residual == 0
    name = FIT_METRICS.get(metric, metric)
    if exact:
        formula = f"{name} = {_format_terms(terms, variables, human_units=False)}"
        formula_human = f"{name} = {_format_terms(terms, variables, human_units=True)}"
    else:  # rounded: the exact rationals of an inexact fit carry no meaning
        formula = formula_human = f"{name} ≈ {_format_terms(terms, variables, human_units=True)}"
    return Law(metric, terms, exact, exact and n_points > len(terms), residual, formula, formula_human)


def _digits(c: Fraction) -> int:
    return len(str(abs(c.numerator))) + (len(str(c.denominator)) if c.denominator != 1 else 0)


def _monomial_name(powers: Sequence[int], variables: Sequence[Variable]) -> str:
    parts = []
    for p, v in zip(powers, variables):
        if p == 1:
            parts.append(v.name)
        elif p == 2:
            # A merged variable (H = W at every point) reads better as H·W than as H².
            parts.append("·".join(v.labels[:2]) if len(v.labels) >= 2 else f"{v.name}²")
    return "·".join(parts)


def _format_number(c: Fraction, human_units: bool) -> str:
    if c.denominator == 1:
        n = int(c)
        return human(n) if human_units and abs(n) >= 10_000 else grouped(n)
    d = c.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:  # a terminating decimal: print it exactly
        text = f"{float(c):.12f}".rstrip("0").rstrip(".")
        if Fraction(text) == c:
            return human(float(c)) if human_units and abs(c) >= 10_000 else text
    if human_units:
        return human(float(c)) if abs(c) >= 10_000 else f"{float(c):.4g}"
    return f"{c.numerator}/{c.denominator}"


def _format_terms(terms: Sequence[tuple[tuple[int, ...], Fraction]], variables: Sequence[Variable],
                  human_units: bool) -> str:
    if not terms:
        return "0"
    out = []
    for i, (powers, coef) in enumerate(terms):
        mono = _monomial_name(powers, variables)
        sign = "-" if coef < 0 else "+"
        mag = abs(coef)
        if mono:
            body = mono if mag == 1 else f"{_format_number(mag, human_units)}·{mono}"
        else:
            body = _format_number(mag, human_units)
        if i == 0:
            out.append(("-" if sign == "-" else "") + body)
        else:
            out.append(f" {'−' if sign == '-' else '+'} {body}")
    text = "".join(out)
    if len(terms) == 1 and not any(terms[0][0]):
        text += " (constant)"
    return text


def _json_number(c: Fraction) -> int | str:
    return int(c) if c.denominator == 1 else f"{c.numerator}/{c.denominator}"


# ---------------------------------------------------------------------------------------------
# Rendering


def _shape_text(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape) if shape else "()"


def render_sweep(result: SweepResult, fmt: str = "table") -> str:
    """The sweep as a text table, JSON or CSV (one row per point)."""
    if fmt == "json":
        return result.to_json() + "\n"
    if fmt == "csv":
        return _render_csv(result)
    if fmt == "html":
        from .render.html import render_sweep_html

        return render_sweep_html(result.to_dict(), title=f"tflite_flops sweep of {result.model}")
    if fmt != "table":
        raise InputSpecError(f"unknown sweep format {fmt!r} (known: {', '.join(SWEEP_FORMATS)})")
    return _render_table(result)


def _precisions(result: SweepResult) -> list[str]:
    return sorted({k for p in result.points for k in p.totals.flops_by_precision})


def _render_csv(result: SweepResult) -> str:
    precisions = _precisions(result)
    inputs = list(result.points[0].input_shapes) if result.points else []
    cols = (["point", *[f"shape:{n}" for n in inputs], "macs", "flops", *[f"flops:{p}" for p in precisions],
             "params", "param_bytes", "activation_bytes", "bytes_read", "arena_bytes", "peak_live_bytes",
             "tflm_arena_bytes", "shapes_resolved", "median_ms", "p90_ms",
             "flops_per_s", "inferences_per_s", "tokens_per_s"])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for i, p in enumerate(result.points):
        t = p.totals
        w.writerow([i + 1, *[_shape_text(p.input_shapes.get(n, ())) for n in inputs], t.macs, t.flops,
                    *[t.flops_by_precision.get(pr, 0) for pr in precisions], t.params, t.param_bytes,
                    t.activation_bytes, t.bytes_read,
                    *[_cell(t, k) for k in ("arena_bytes", "peak_live_bytes", "tflm_arena_bytes")], p.shapes_resolved,
                    *[_cell(p.latency, k) for k in ("median_ms", "p90_ms")],
                    *[_cell(p.throughput, k) for k in ("flops_per_s", "inferences_per_s", "tokens_per_s")]])
    return buf.getvalue()


def _cell(record: Any, name: str) -> Any:
    """A CSV cell: the record's field, '' when there is no record or the field is not set."""
    value = getattr(record, name, None)
    return "" if value is None else value


def _latency_cells(p: SweepPoint) -> tuple[str, str]:
    lat, tp = p.latency or LatencyStats(), p.throughput or Throughput()
    if lat.median_ms is None:
        return ("skipped" if lat.skipped else "-"), "-"
    return f"{lat.median_ms:.3f}", f"{human_unit(tp.flops_per_s, 'FLOP/s')}"


def _tokens_cell(p: SweepPoint) -> str:
    value = p.throughput.tokens_per_s if p.throughput is not None else None
    return "-" if value is None else f"{value:,.1f}"


def _render_table(result: SweepResult) -> str:
    from .render.text import text_table

    precisions = _precisions(result)
    inputs = list(result.points[0].input_shapes) if result.points else []
    head = ["#", *inputs, "MACs", "FLOPs", *[f"{precision_unit(p)} {p}"
                                          for p in precisions], "params", "act. bytes", "arena"]
    timed = any(p.latency is not None and p.latency.median_ms is not None for p in result.points)
    tokens = any(p.throughput is not None and p.throughput.tokens_per_s is not None for p in result.points)  # kv
    if timed:
        head += ["median ms", "FLOP/s"] + (["tokens/s"] if tokens else [])
    rows = []
    for i, p in enumerate(result.points):
        t = p.totals
        rows.append([str(i + 1), *[_shape_text(p.input_shapes.get(n, ())) for n in inputs], grouped(t.macs),
                     grouped(t.flops), *[grouped(t.flops_by_precision.get(pr, 0)) for pr in precisions],
                     grouped(t.params), grouped(t.activation_bytes),
                     grouped(t.arena_bytes) if t.arena_bytes is not None else "-"]
                    + ([_latency_cells(p)[0], _latency_cells(p)[1]] if timed else [])
                    + ([_tokens_cell(p)] if timed and tokens else [])
                    + ([] if p.shapes_resolved else ["(placeholder dims)"]))
    lines = [f"sweep of {result.model}: {len(result.points)} point(s)", ""]
    lines += text_table(head, rows, [c > len(inputs) for c in range(len(head))], rule=False)
    lines.append("")
    fit = result.fit
    if fit is None:
        lines.append("scaling law: needs at least two points")
        return "\n".join(lines) + "\n"
    if not fit.variables:
        lines.append("scaling law: no input dim varies between the points")
    else:
        where = ", ".join(f"{v.name} = " + " = ".join(f"{n}[{a}]" for n, a in v.dims) for v in fit.variables)
        lines.append(f"scaling law over {', '.join(v.name for v in fit.variables)} ({where}):")
    n = len(result.points)
    for law in fit.laws.values():
        if law.exact and law.verified:
            check = f"exact on all {n} points"
        elif law.exact:
            check = f"exact, but {n} points for {len(law.terms)} coefficients: add points to verify"
        else:
            check = f"least squares, not exact: largest residual {human(round(float(law.max_residual)))}"
        constant = len(law.terms) <= 1 and not any(p for t in law.terms for p in t[0])
        extra = (f"   ({law.formula_human.split(' = ', 1)[-1]})"
                 if law.formula_human != law.formula and not constant else "")
        lines.append(f"  {law.formula}{extra}   [{check}]")
    for note in fit.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines) + "\n"
