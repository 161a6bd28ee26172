"""The scaling law of a sweep: each total as an exact polynomial in the swept input dims.

:func:`fit_points` finds which input dims vary between the points of a sweep and fits each
total as a polynomial of degree ≤ 2 in them, with exact rational coefficients::

    MACs = 1,204·H·W + 35,840        (fully-convolutional model, H and W swept)
    MACs = 300,800,000·B              (batch sweep; printed also as 300.8 M·B)

The fit is checked on every swept point: it is called *exact* when it reproduces every point
exactly, and *verified* when, in addition, there are more points than coefficients (with as
many points as coefficients any polynomial interpolates, which proves nothing). When no
polynomial of degree ≤ 2 is exact (strided convolutions round ``ceil(H/2)`` at odd sizes), the
least-squares fit is reported with its largest residual.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Protocol, Sequence

from ..units import grouped, human

#: The totals that get a scaling law, with their display names.
FIT_METRICS: dict[str, str] = {"macs": "MACs", "flops": "FLOPs", "params": "params",
                               "activation_bytes": "activation bytes", "arena_bytes": "arena bytes",
                               "peak_live_bytes": "peak live bytes", "tflm_arena_size_bytes": "TFLM arena bytes",
                               "runtime_total_bytes": "memory at run time (LiteRT default)",
                               "builtin_total_bytes": "LiteRT bytes (builtin kernels)"}

# Conventional letters for the dims of an input of a given rank.
_AXIS_LETTERS = {1: "N", 2: "BD", 3: "BTD", 4: "BHWC", 5: "BDHWC"}


class Point(Protocol):
    """What the fit reads of a sweep point (:class:`tflite_flops.studies.sweep.SweepPoint`)."""

    input_shapes: Mapping[str, Sequence[int]]
    totals: Any  # .get(metric) -> int | None
    shapes_resolved: bool


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


# Fitting


def find_variables(points: Sequence[Point]) -> tuple[list[Variable], list[str]]:
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


def fit_points(points: Sequence[Point], metrics: Mapping[str, str] = FIT_METRICS) -> Fit:
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
