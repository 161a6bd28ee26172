"""The Report: frozen dataclasses between analysis and renderers, with a versioned JSON form.

``Report.from_dict(report.to_dict()) == report`` holds, so other tools can store and reload it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

SCHEMA_VERSION = 1
STATUSES = ("ok", "zero", "unsupported")
PHASES = ("inference", "init", "not_executed")


@dataclass(frozen=True)
class TensorSummary:
    """A model input or output."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    index: int = 0


@dataclass(frozen=True)
class OpRecord:
    """Cost of one operator. Counts are per inference: already multiplied by ``executions``."""

    subgraph: int
    index: int
    op_type: str
    name: str
    inputs: tuple[tuple[int, ...], ...]
    outputs: tuple[tuple[int, ...], ...]
    macs: int
    flops: int
    bytes_read: int
    bytes_written: int
    params: int
    status: str
    formula: str
    note: str = ""
    precision: str = "float32"
    phase: str = "inference"
    executions: int = 1
    shapes_resolved: bool = True
    effective_macs: int | None = None  # MACs over non-zero weights only (sparse / mostly-zero weights)
    weight_density: float | None = None  # non-zero fraction of the op's weights, when measured
    latency_ms: float | None = None


def new_record(values: dict[str, Any]) -> OpRecord:
    """``OpRecord(**values)`` built in one step; ``values`` must hold every field.

    The generated ``__init__`` of a frozen dataclass pays one ``object.__setattr__`` per field
    (21 here); the analysis builds one record per op, so it fills the instance dict directly.
    """
    record = object.__new__(OpRecord)
    object.__setattr__(record, "__dict__", values)
    return record


@dataclass(frozen=True)
class Totals:
    """Sums over the ops of one phase. ``by_precision`` maps precision -> {"macs", "flops", "ops"}."""

    macs: int = 0
    flops: int = 0
    params: int = 0
    param_bytes: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    by_precision: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    effective_macs: int = 0  # MACs over non-zero weights only (= macs for dense weights)
    complete: bool = True  # False when some ops are not counted or counted at unresolved (placeholder) shapes
    unresolved_ops: int = 0  # ops whose shapes propagation could not resolve (counted at stored/placeholder shapes)


@dataclass(frozen=True)
class OpTypeSummary:
    """Per op type: count (ops that run per inference), summed costs, and the precision split."""

    count: int
    macs: int
    flops: int
    bytes_read: int = 0
    bytes_written: int = 0
    params: int = 0
    by_precision: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelInfo:
    """What the model is."""

    path: str | None
    size_bytes: int
    sha256: str
    subgraphs: int
    operators: int
    description: str
    signatures: tuple[str, ...] = ()
    subgraph_names: tuple[str, ...] = ()  # name, else its signature key, else "subgraph_<i>" (Model Explorer's ids)


@dataclass(frozen=True)
class Report:
    """Everything an analysis produces. Renderers only read it."""

    tool: Mapping[str, str]
    model: ModelInfo
    inputs: tuple[TensorSummary, ...]
    outputs: tuple[TensorSummary, ...]
    totals: Totals
    init_totals: Totals
    by_op_type: Mapping[str, OpTypeSummary]
    ops: tuple[OpRecord, ...]
    unsupported: Mapping[str, int]
    warnings: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    latency: Mapping[str, Any] | None = None
    throughput: Mapping[str, Any] | None = None
    roofline: Mapping[str, Any] | None = None
    schema_version: int = SCHEMA_VERSION

    # ---- serialisation --------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the documented contract; counts are ints)."""
        d = asdict(self)
        order = ["schema_version", "tool", "model", "inputs", "outputs", "totals", "init_totals",
                 "by_op_type", "ops", "unsupported", "warnings", "settings", "latency", "throughput", "roofline"]
        return {k: _jsonable(d[k]) for k in order}

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON form of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_csv(self, path: str | None = None) -> str:
        """One CSV row per op (raw integers). Writes ``path`` atomically when given; returns the text."""
        from .render import render, write_atomic  # renderers depend on the report, not the reverse

        text = render(self, "csv")
        if path is not None:
            write_atomic(path, text)
        return text

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Report":
        """Rebuild a Report from :meth:`to_dict` output."""
        version = d.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(f"unsupported report schema_version {version!r} (this tool reads {SCHEMA_VERSION})")

        def summary(t: Mapping[str, Any]) -> TensorSummary:
            sig = t.get("shape_signature")
            return TensorSummary(t["name"], t["dtype"], tuple(t["shape"]), tuple(sig) if sig is not None else None,
                                 t.get("index", 0))

        def totals(t: Mapping[str, Any]) -> Totals:
            return Totals(**{**t, "by_precision": {k: dict(v) for k, v in t.get("by_precision", {}).items()}})

        op_fields = {f.name for f in fields(OpRecord)}
        ops = tuple(
            OpRecord(**{**{k: v for k, v in o.items() if k in op_fields},
                        "inputs": tuple(tuple(s) for s in o["inputs"]),
                        "outputs": tuple(tuple(s) for s in o["outputs"])})
            for o in d["ops"])
        model = dict(d["model"])
        model["signatures"] = tuple(model.get("signatures", ()))
        model["subgraph_names"] = tuple(model.get("subgraph_names", ()))
        return cls(
            tool=dict(d["tool"]), model=ModelInfo(**model),
            inputs=tuple(summary(t) for t in d["inputs"]), outputs=tuple(summary(t) for t in d["outputs"]),
            totals=totals(d["totals"]), init_totals=totals(d.get("init_totals") or {}),
            by_op_type={k: OpTypeSummary(**v) for k, v in d["by_op_type"].items()},
            ops=ops, unsupported=dict(d["unsupported"]), warnings=tuple(d["warnings"]),
            settings=dict(d.get("settings") or {}), latency=d.get("latency"), throughput=d.get("throughput"),
            roofline=d.get("roofline"),
            schema_version=version)

    @classmethod
    def from_json(cls, text: str) -> "Report":
        """Rebuild a Report from its JSON text."""
        return cls.from_dict(json.loads(text))

    # ---- conveniences -----------------------------------------------------------------------

    def top_ops(self, n: int = 10, key: str = "flops") -> list[OpRecord]:
        """The ``n`` most expensive per-inference ops by ``key``."""
        ops = [o for o in self.ops if o.phase == "inference"]
        return sorted(ops, key=lambda o: getattr(o, key) or 0, reverse=True)[:n]

    def with_latency(self, latency: Mapping[str, Any] | None, throughput: Mapping[str, Any] | None) -> "Report":
        """A copy with measured latency and throughput merged in."""
        return replace(self, latency=latency, throughput=throughput)

    def check_budget(self, *, max_macs: int | str | None = None, max_flops: int | str | None = None,
                     max_params: int | str | None = None, max_latency_ms: float | str | None = None) -> list[str]:
        """Violated limits, one message each (``["macs 300.8 M > 200 M"]``); empty within budget.

        Counts accept ints or strings with K/M/G suffixes; ``max_latency_ms`` is checked against the
        median latency (a violation when latency was not measured). See :mod:`tflite_flops.budget`.
        """
        from .budget import check_budget

        return check_budget(self, max_macs=max_macs, max_flops=max_flops, max_params=max_params,
                            max_latency_ms=max_latency_ms)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # a stray NumPy scalar
        return value.item()
    return value
