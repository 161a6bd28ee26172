"""The Report: frozen dataclasses between analysis and renderers, with a versioned JSON form.

``Report.from_dict(report.to_dict()) == report`` holds, so other tools can store and reload it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from .budget import check_budget  # budget reads a report duck-typed: no cycle

SCHEMA_VERSION = 1
# opaque: accelerator-compiled, its work not visible; error: the op's cost formula raised (a bug in the
# formula, not an unsupported op)
STATUSES = ("ok", "zero", "unsupported", "opaque", "error")
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
    live_bytes: int | None = None  # activation bytes alive in the op's subgraph arena while it runs


def new_record(values: dict[str, Any]) -> OpRecord:
    """``OpRecord(**values)`` built in one step; ``values`` must hold every field.

    The generated ``__init__`` of a frozen dataclass pays one ``object.__setattr__`` per field
    (21 here); the analysis builds one record per op, so it fills the instance dict directly
    (it matters in benchmarks/static_speed.py's chain_600).
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
    opaque_ops: int = 0  # accelerator-compiled ops whose work is not in these sums (not a 0: unknown)
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


class LazyText:
    """A dataclass field whose value may be given as a zero-argument callable, called at the first read.

    ``ModelInfo.sha256`` uses it: hashing a multi-GB file costs seconds, so the analysis passes
    a callable and only a reader of the field (a renderer, ``to_dict``, ``==``) pays for it;
    the result then replaces the callable. To everything else the field is a plain ``str``.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            raise AttributeError(self._slot[1:])  # no class-level default: the field stays required
        value = obj.__dict__[self._slot]
        if callable(value):
            value = value()
            obj.__dict__[self._slot] = value  # a cache of the same value: the dataclass stays frozen
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self._slot] = value


@dataclass(frozen=True)
class SubgraphMemory:
    """The activation memory of one subgraph: TFLite gives every subgraph it runs an arena of its own."""

    subgraph: int
    name: str
    buffers: int  # arena buffers (tensors that do not reuse another tensor's buffer)
    shared_tensors: int  # outputs written in place into an input's buffer
    activations_total_bytes: int
    peak_live_bytes: int
    peak_op: str | None
    arena_bytes: int
    persistent_bytes: int


@dataclass(frozen=True)
class MemorySummary:
    """How much RAM the model needs at run time, from tensor lifetimes at the analysed shapes.

    ``peak_live_bytes <= arena_bytes <= activations_total_bytes`` always holds. Kernel scratch
    buffers, delegates' own memory and the interpreter's structures come on top (docs/memory.md).
    """

    activations_total_bytes: int  # every activation tensor at its own (64-byte aligned) place: no reuse
    peak_live_bytes: int  # the most activation bytes alive at one op (callers' included): a lower bound
    peak_op: str | None  # "subgraph:index" of that op
    arena_bytes: int  # TFLite's ArenaPlanner: the activation arenas of every subgraph it runs
    persistent_arena_bytes: int  # TFLite's persistent arena: variables, weights dequantized at init
    tflm_arena_bytes: int  # TFLite Micro's GreedyMemoryPlanner: the arena head (tensors only)
    weights_bytes: int  # constant buffers as stored in the file (not in any arena)
    subgraphs: tuple[SubgraphMemory, ...] = ()
    complete: bool = True  # False: some shapes are placeholders, and so are these figures


@dataclass(frozen=True)
class ModelInfo:
    """What the model is. ``sha256`` is computed when first read (see :class:`LazyText`)."""

    path: str | None
    size_bytes: int
    sha256: str = LazyText()  # type: ignore[assignment]
    subgraphs: int
    operators: int
    description: str
    signatures: tuple[str, ...] = ()
    subgraph_names: tuple[str, ...] = ()  # name, else its signature key, else "subgraph_<i>" (Model Explorer's ids)


@dataclass(frozen=True)
class TokenFigures:
    """Per-token figures of a signature that runs a generative model's prefill or decode step.

    Counts per token are the signature's totals divided by ``tokens``, rounded to the nearest
    int. See :mod:`tflite_flops.generative` for how the role, the tokens and the cache are found.
    """

    role: str  # "prefill" | "decode"
    tokens: int  # tokens one call processes: the token input's last dim
    token_input: str  # the signature input that carries the token ids
    macs_per_token: int
    flops_per_token: int
    weight_bytes_per_token: int  # the weights the signature reads (stored bytes), once per call, ÷ tokens
    kv_cache_bytes: int  # bytes of the KV-cache inputs (their shapes and dtypes), read and rewritten per call
    kv_cache_inputs: tuple[str, ...] = ()
    kv_length: int | None = None  # cache slots, when the cache update (DYNAMIC_UPDATE_SLICE) shows the dim
    latency_ms: float | None = None  # median of timed signature-runner calls
    tokens_per_s: float | None = None  # tokens / median call time
    time_to_first_token_ms: float | None = None  # prefill only: one prefill call (its last logits give token 1)
    bytes_per_token: int = 0  # weight bytes per token + KV-cache bytes per token (the cache is read once per call)
    roofline_tokens_per_s: float | None = None  # memory-bound limit: measured bandwidth ÷ bytes_per_token


@dataclass(frozen=True)
class SignatureReport:
    """One signature of a multi-signature model: its totals, and token figures for prefill/decode.

    ``totals.params`` / ``param_bytes`` count the weights this signature's subgraphs read; weights
    shared with other signatures are in every signature that reads them and once in the report's
    own ``totals.params``.
    """

    key: str
    subgraph: int
    inputs: tuple[TensorSummary, ...]
    outputs: tuple[TensorSummary, ...]
    totals: Totals
    operators: int  # ops that run per call (WHILE bodies counted once)
    unsupported: Mapping[str, int] = field(default_factory=dict)
    tokens: TokenFigures | None = None
    latency: Mapping[str, Any] | None = None  # the bench statistics of one signature-runner call
    memory: MemorySummary | None = None  # the signature's own arenas (its subgraphs at its shapes)


@dataclass(frozen=True)
class Report:
    """Everything an analysis produces: pure data. Renderers only read it.

    Write it in any format with :func:`tflite_flops.render.write` (the format from the file's
    extension, as ``-o``) or :func:`tflite_flops.render.render`; ``to_json`` is the JSON form.
    """

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
    memory: MemorySummary | None = None
    signatures: Mapping[str, SignatureReport] = field(default_factory=dict)  # analyze(all_signatures=True)

    # ---- serialisation --------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the documented contract; counts are ints)."""
        d = asdict(self)
        order = ["schema_version", "tool", "model", "inputs", "outputs", "totals", "init_totals", "memory",
                 "by_op_type", "ops", "unsupported", "warnings", "settings", "latency", "throughput", "roofline",
                 "signatures"]
        return {k: _jsonable(d[k]) for k in order}

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON form of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

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
            roofline=d.get("roofline"), memory=_memory(d.get("memory")),
            schema_version=version,
            signatures={k: _signature_from_dict(v, summary, totals) for k, v in (d.get("signatures") or {}).items()})

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
                     max_params: int | str | None = None, max_latency_ms: float | str | None = None,
                     max_arena: int | str | None = None) -> list[str]:
        """Violated limits, one message each (``["macs 300.8 M > 200 M"]``); empty within budget.

        Counts accept ints or strings with K/M/G suffixes; ``max_latency_ms`` is checked against the
        median latency (a violation when latency was not measured). See :mod:`tflite_flops.budget`.
        """
        return check_budget(self, max_macs=max_macs, max_flops=max_flops, max_params=max_params,
                            max_latency_ms=max_latency_ms, max_arena=max_arena)


def _memory(d: Mapping[str, Any] | None) -> MemorySummary | None:
    if d is None:
        return None
    return MemorySummary(**{**d, "subgraphs": tuple(SubgraphMemory(**s) for s in d.get("subgraphs", ()))})


def _signature_from_dict(d: Mapping[str, Any], summary: Any, totals: Any) -> SignatureReport:
    """A :class:`SignatureReport` from its ``to_dict`` form (``summary`` / ``totals`` rebuild the parts)."""
    tokens = d.get("tokens")
    if tokens is not None:
        tokens = TokenFigures(**{**tokens, "kv_cache_inputs": tuple(tokens.get("kv_cache_inputs", ()))})
    return SignatureReport(key=d["key"], subgraph=d["subgraph"], inputs=tuple(summary(t) for t in d["inputs"]),
                           outputs=tuple(summary(t) for t in d["outputs"]), totals=totals(d["totals"]),
                           operators=d["operators"], unsupported=dict(d.get("unsupported") or {}), tokens=tokens,
                           latency=d.get("latency"), memory=_memory(d.get("memory")))


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # a stray NumPy scalar
        return value.item()
    return value
