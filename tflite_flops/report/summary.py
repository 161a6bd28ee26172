"""The summary figures of a report, each declared once: the memory headline, the arenas, params, MACs, the
predicted and measured time, XNNPACK's partitions and the ops it keeps off.

A per-op figure is a column (:mod:`tflite_flops.report.columns`); a figure of the whole model is a
:class:`Figure` here: its key (the name every output that lists figures uses: the ``batch`` and ``sweep``
columns, ``compare``'s rows), its label (how the table, the Markdown, the HTML cards, ``repr`` and the
notebook name it), its unit, where analyze's JSON holds it, and how to read it off a report. Every output
reads the figure through :func:`value`, so that one figure reads one number wherever it appears; a figure
that means something else has another key and another label (LiteRT's total with XNNPACK off is
``builtin_total_bytes``, never "the memory").

The memory headline is ``runtime_total_bytes``: what LiteRT's default configuration (XNNPACK on, at
``--threads``) uses, its arena, XNNPACK's own bytes and the weights mapped from the file
(:func:`tflite_flops.report.headline.runtime_total`), the figure ``--max-memory`` gates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..units import grouped, human, human_bytes
from .headline import runtime_total

Value = int | float | None


@dataclass(frozen=True)
class Figure:
    """One summary figure: its names, its unit, where the JSON holds it, and how to read it."""

    key: str  # the name in batch, sweep and compare, and the last part of the JSON path
    label: str  # how the table, Markdown, HTML cards, repr and the notebook name it
    unit: str  # "count" | "bytes" | "ms"
    json_path: str  # where analyze's JSON holds it (dots: object keys)
    read: Callable[[Any], Value]  # the report -> the figure (None: not analysed, or not measured)
    doc: str  # what it is, in one line

    def text(self, v: int | float) -> str:
        """The figure as a person reads it: ``22.9 MiB``, ``3.47 M``, ``7.210 ms``."""
        if self.unit == "bytes":
            return human_bytes(int(v))
        if self.unit == "ms":
            return f"{v:.3f} ms"
        return human(int(v))

    def exact(self, v: int | float) -> str:
        """The exact figure (grouped digits), as the table's "exact" column and the cards' detail show it."""
        return f"{v:.3f}" if self.unit == "ms" else grouped(int(v))


def _memory(attr: str) -> Callable[[Any], Value]:
    return lambda r: None if r.memory is None else getattr(r.memory, attr)


def _runtime_total(attr: str) -> Callable[[Any], Value]:
    def read(r: Any) -> Value:
        total = runtime_total(r.memory)
        return None if total is None else getattr(total, attr)
    return read


def _builtin_total(r: Any) -> Value:
    runtime = None if r.memory is None else r.memory.runtime
    return None if runtime is None else runtime.total_bytes


def _delegated(attr: str) -> Callable[[Any], Value]:
    return lambda r: getattr(r.delegation["xnnpack"], attr) if "xnnpack" in r.delegation else None


FIGURES: tuple[Figure, ...] = (
    Figure("macs", "MACs", "count", "totals.macs", lambda r: r.totals.macs, "multiply-accumulates per inference"),
    Figure("flops", "FLOPs", "count", "totals.flops", lambda r: r.totals.flops, "floating-point (and integer) "
           "operations per inference, 2 per MAC"),
    Figure("params", "Params", "count", "totals.params", lambda r: r.totals.params, "the stored weights' elements, "
           "embedding tables included"),
    Figure("param_bytes", "Param bytes", "bytes", "totals.param_bytes", lambda r: r.totals.param_bytes,
           "the stored weights' bytes, as stored"),
    Figure("runtime_total_bytes", "Memory at run time (LiteRT default)", "bytes", "memory.runtime_total_bytes",
           _runtime_total("total_bytes"), "LiteRT with XNNPACK on: its arena, XNNPACK's own bytes and the weights "
           "mapped from the file (the memory headline, --max-memory)"),
    Figure("runtime_arena_bytes", "LiteRT arena (XNNPACK on)", "bytes", "memory.runtime_total_parts.arena_bytes",
           _runtime_total("arena_bytes"), "LiteRT's arenas with XNNPACK on: partition boundaries, kept ops"),
    Figure("builtin_total_bytes", "LiteRT total (XNNPACK off)", "bytes", "memory.runtime.total_bytes",
           _builtin_total, "LiteRT with its builtin kernels: arenas with temporaries (no weights)"),
    Figure("arena_bytes", "Arena, tensors only", "bytes", "memory.arena_bytes", _memory("arena_bytes"),
           "the tensors' arena alone (TFLite's planner), a lower bound"),
    Figure("tflm_arena_size_bytes", "TFLite Micro arena", "bytes", "memory.tflm_arena_size_bytes",
           _memory("tflm_arena_size_bytes"), "the arena to give TFLite Micro's MicroInterpreter"),
    Figure("predicted_ms", "Predicted latency", "ms", "prediction.latency_ms",
           lambda r: None if r.prediction is None else r.prediction.latency_ms, "with --predict: the device "
           "profile's time for the model"),
    Figure("latency_median_ms", "Measured latency (median)", "ms", "latency.median_ms",
           lambda r: None if r.latency is None else r.latency.median_ms, "with --latency: the median invoke()"),
    Figure("xnnpack_partitions", "XNNPACK partitions", "count", "delegation.xnnpack.partitions",
           _delegated("partitions"), "the DELEGATE nodes XNNPACK makes"),
    Figure("xnnpack_kept_ops", "Ops kept off XNNPACK", "count", "delegation.xnnpack.kept_ops",
           _delegated("kept_ops"), "the ops the builtin kernels run"),
)
BY_KEY: dict[str, Figure] = {f.key: f for f in FIGURES}
MEMORY = BY_KEY["runtime_total_bytes"]  # the memory headline


def value(report: Any, key: str) -> Value:
    """The figure ``key`` of ``report`` (None: not analysed, or not measured)."""
    return BY_KEY[key].read(report)


def values(report: Any) -> dict[str, Value]:
    """Every declared figure of ``report``, by key."""
    return {f.key: f.read(report) for f in FIGURES}


def json_value(doc: Any, figure: Figure) -> Value:
    """The figure as analyze's JSON holds it (at :attr:`Figure.json_path`; None where absent)."""
    for part in figure.json_path.split("."):
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return doc


def model_ms(report: Any) -> float | None:
    """The model's time a reader is given first: measured (the median) when measured, else predicted; None."""
    measured = value(report, "latency_median_ms")
    return measured if measured is not None else value(report, "predicted_ms")
