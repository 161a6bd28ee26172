"""FLOPs sweeps over input shapes: running the points.

A sweep analyzes one model at several input shapes (each a *point*) and reports the totals of
every point: MACs, FLOPs (also by precision), params and activation bytes. The scaling law
that fits them (``MACs = 1,204·H·W + 35,840``) is found by :mod:`tflite_flops.studies.scaling_law`;
the sweep is rendered by :mod:`tflite_flops.render.sweep`.

Latency per point is not measured here; :func:`sweep` takes an optional
``measure(point) -> (latency, throughput)`` callable for that, called once per point after its
analysis (``None`` by default: the JSON then says ``"latency": null``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..analysis import analyze_model
from ..errors import InputSpecError, ShapeError
from ..reader.model import Model
from ..reader.load import load_model
from ..report import LatencyStats, Prediction, Report, Throughput
from ..settings import Settings
from ..report import summary
from ..report.columns import totals as column_totals
from .scaling_law import Fit, fit_points
from ..analysis.shapes import Shape, normalize_input_shapes


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
    tflm_arena_size_bytes: int | None = None  # TFLite Micro's head + tail (32-bit build)
    # the memory headline (report/summary.py): LiteRT's default, XNNPACK on, with its own bytes and the weights mapped
    runtime_total_bytes: int | None = None
    builtin_total_bytes: int | None = None  # LiteRT, builtin kernels: arenas with temporaries (memory.runtime)
    memory_target: str | None = None  # the CPU target of the LiteRT and XNNPACK figures (memory.target)
    # the per-model figure of each declared per-op column that sweep shows (report.columns.total_columns)
    figures: Mapping[str, int | float | None] = field(default_factory=dict)

    def get(self, metric: str) -> int | None:
        """The total named ``metric`` (a field name, as in :data:`FIT_METRICS`, or a declared per-op
        column's total); None when not measured."""
        return self.figures[metric] if metric in self.figures else getattr(self, metric)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every total; the memory figures only when measured; then the per-op columns' totals."""
        out = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in asdict(self).items()
               if k != "figures" and (v is not None or k not in _MEMORY_TOTALS)}
        return {**out, **self.figures}


_MEMORY_TOTALS = ("arena_bytes", "peak_live_bytes", "tflm_arena_bytes", "tflm_arena_size_bytes", "runtime_total_bytes",
                  "builtin_total_bytes")


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
    prediction: Prediction | None = None  # sweep(..., predict=PROFILE): the point's predicted latency

    @property
    def achieved_flops_per_s(self) -> float | None:
        """The point's FLOPs over its median latency (None when it was not timed)."""
        if self.throughput is not None and self.throughput.flops_per_s is not None:
            return self.throughput.flops_per_s
        median = self.latency.median_ms if self.latency is not None else None
        return self.totals.flops / (median / 1e3) if self.totals.flops and median else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the report itself is left out; ``prediction`` only when predicted)."""
        out = {"input_shapes": {k: list(v) for k, v in self.input_shapes.items()}, "totals": self.totals.to_dict(),
               "shapes_resolved": self.shapes_resolved, "warnings": list(self.warnings),
               "latency": None if self.latency is None else self.latency.to_dict(),
               "throughput": None if self.throughput is None else self.throughput.to_dict()}
        if self.prediction is not None:
            p = self.prediction
            out["prediction"] = {"latency_ms": p.latency_ms, "low_ms": p.low_ms, "high_ms": p.high_ms,
                                 "complete": p.complete, "range_rate": p.profile.range_rate,
                                 "low_confidence_ms": p.low_confidence_ms, "low_confidence_share": p.low_confidence_share,
                                 "flags": list(p.flags)}
        return out


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

    @property
    def notes(self) -> list[str]:
        """The informational notes of every point's report (each once), prefixed like :attr:`warnings`; a note
        every point of several has (this CPU matches no target) once, unprefixed."""
        reports = [p for p in self.points if p.report is not None]
        common = set.intersection(*(set(p.report.notes) for p in reports)) if len(reports) > 1 else set()
        out = [n for n in reports[0].report.notes if n in common] if common else []
        out += [f"[{p.spec.label}] {n}" for p in reports for n in p.report.notes if n not in common]
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
          *, settings: Settings | None = None, strict: bool = False, fit: bool = True) -> SweepResult:
    """Analyze a model at several input shapes and fit the scaling law of its totals.

    Args:
        model: a .tflite path, its bytes, or a parsed :class:`Model` (parsed once for all points).
        points: one entry per point: a :class:`PointSpec`, a spec string (``"image=1x64x64x3"``,
            ``"a=1x64,b=1x64"``), a mapping ``{name_or_index: shape}``, or a bare shape.
        measure: optional ``measure(point) -> (latency, throughput)``, called once per point after
            its analysis (the point carries the analyzed ``input_shapes``); the records are stored
            on the point. ``None`` leaves latency and throughput ``None``.
        settings: the analysis :class:`~tflite_flops.settings.Settings` of every point (its input shapes
            and batch are the point's): while trips, signature, threads, delegates, target; with a device
            profile (``settings.predict``, checked by :func:`tflite_flops.api.load_profile`), every point's
            predicted latency (``point.prediction``).
        strict: as for ``analyze()``.
        fit: fit the scaling laws (needs at least two points).

    Returns:
        The :class:`SweepResult`.

    Raises:
        ShapeError, InputSpecError: a point's shapes do not fit the model.
    """

    base = Settings() if settings is None else settings
    parsed = model if isinstance(model, Model) else load_model(model)  # type: ignore[arg-type]
    out: list[SweepPoint] = []
    for raw in points:
        spec = raw if isinstance(raw, PointSpec) else PointSpec(normalize_input_shapes(raw))  # type: ignore[arg-type]
        try:
            report = analyze_model(parsed, base.at_point(dict(spec.input_shapes), spec.batch, base.signature),
                                   strict=strict)
        except ShapeError as exc:  # the same class (a shape the model refuses stays an input error, exit 2)
            raise type(exc)(f"point {spec.label}: {exc}") from None
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
    memory = report.memory  # the memory analysis at this point's shapes (see tflite_flops.analysis.memory)
    totals = PointTotals(
        macs=t.macs, flops=t.flops,
        flops_by_precision={k: int(v.get("flops", 0)) for k, v in sorted(t.by_precision.items())},
        params=t.params, param_bytes=t.param_bytes, activation_bytes=t.bytes_written, bytes_read=t.bytes_read,
        arena_bytes=memory.arena_bytes if memory is not None else None,
        peak_live_bytes=memory.peak_live_bytes if memory is not None else None,
        tflm_arena_bytes=memory.tflm_arena_bytes if memory is not None else None,
        tflm_arena_size_bytes=memory.tflm_arena_size_bytes if memory is not None else None,
        runtime_total_bytes=summary.value(report, "runtime_total_bytes"),
        builtin_total_bytes=summary.value(report, "builtin_total_bytes"),
        memory_target=memory.target if memory is not None else None,
        figures=column_totals(report, "sweep"))
    resolved = all(o.shapes_resolved for o in report.ops if o.phase == "inference")
    return SweepPoint(spec, {i.name: tuple(i.shape) for i in report.inputs}, totals, resolved,
                      tuple(report.warnings), None, None, report, report.prediction)
