"""The Report: frozen dataclasses between analysis and renderers, with a versioned JSON form.

``Report.from_dict(report.to_dict()) == report`` holds, so other tools can store and reload it.
"""

from __future__ import annotations

import json
import os
from operator import attrgetter
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from ..errors import ReportFormatError
from .advice import Advice
from .what_if import WhatIf
from .headline import DERIVED_KEYS, memory_json
from .jsontext import (PLAIN, Raw, dumps_with_list, encode, encode_str, indent, int_repr, jsonable, key_text,
                       split_known)
from .lazy import LazyText, lazy_fields

# loaded by a report that holds them (a timed, predicted or generative run, a JSON file), not by every run
if TYPE_CHECKING:
    from .generative import BundleInfo, SignatureReport
    from .measured import LatencyStats, Roofline, Throughput
    from .prediction import Prediction


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


# computed by a pass at the first read of one of them (report.lazy): the memory plan's and the placements'
@lazy_fields("live_bytes", "temporaries_bytes", "xnnpack", "xnnpack_reason", "xnnpack_partition", "gpu",
             "gpu_reason", "gpu_partition")
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
    temporaries_bytes: int | None = None  # the arena temporaries LiteRT's kernel adds for the op (memory.runtime)
    # where it runs (docs/placement.md): taken by the delegate, why not (None when taken), which of
    # its subgraph's partitions (DELEGATE nodes, in run order) holds it
    xnnpack: bool | None = None
    xnnpack_reason: str | None = None
    xnnpack_partition: int | None = None
    gpu: bool | None = None
    gpu_reason: str | None = None
    gpu_partition: int | None = None
    # where it ran on a device (benchmark_model's runtime details, import-profile --runtime-info):
    # the delegate's name or "builtin"; which of its subgraph's DELEGATE nodes
    device_placement: str | None = None
    device_partition: int | None = None
    # the time a device profile predicts for the op per inference (analyze --predict; 0 for an op the
    # delegate fuses into another): docs/predict.md. In the JSON only when the report has a prediction
    predicted_ms: float | None = None
    # the per-op figures that passes compute and that have no field above: {declared column name: value}
    # (report.columns). They read as attributes (``op.output_elements``) and are JSON keys of the op, after the fields
    figures: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __getattr__(self, name: str) -> Any:
        """A per-op figure of :attr:`figures` (only names that are not fields reach here)."""
        if name.startswith("__") or name == "figures":
            raise AttributeError(name)
        try:
            return self.__dict__["figures"][name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None

    @property
    def bytes_moved(self) -> int:
        """Bytes read plus bytes written."""
        return self.bytes_read + self.bytes_written

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity, FLOPs per byte moved (None when the op moves no bytes)."""
        moved = self.bytes_moved
        return self.flops / moved if moved else None

    @property
    def achieved_flops_per_s(self) -> float | None:
        """FLOPs over the measured latency (None when the op was not timed)."""
        return self.flops / (self.latency_ms / 1e3) if self.latency_ms is not None and self.latency_ms > 0 else None


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

    @classmethod
    def of(cls, ops: Iterable[OpRecord], *, params: int = 0, param_bytes: int = 0, complete: bool = True,
           unresolved_ops: int = 0) -> "Totals":
        """The sums over ``ops`` (one phase's records). ``params`` / ``param_bytes`` are the stored weights,
        each counted once however many ops read it, so they are given, not summed."""
        ops = list(ops)
        return cls(macs=sum(o.macs for o in ops), flops=sum(o.flops for o in ops), params=params,
                   param_bytes=param_bytes, bytes_read=sum(o.bytes_read for o in ops),
                   bytes_written=sum(o.bytes_written for o in ops), by_precision=precision_split(ops),
                   effective_macs=sum(o.macs if o.effective_macs is None else o.effective_macs for o in ops),
                   opaque_ops=sum(1 for o in ops if o.status == "opaque"), complete=complete,
                   unresolved_ops=unresolved_ops)


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

    @classmethod
    def of(cls, ops: Iterable[OpRecord]) -> "OpTypeSummary":
        """The sums over the records of one op type (each record's params: the weights it reads)."""
        ops = list(ops)
        return cls(count=len(ops), macs=sum(o.macs for o in ops), flops=sum(o.flops for o in ops),
                   bytes_read=sum(o.bytes_read for o in ops), bytes_written=sum(o.bytes_written for o in ops),
                   params=sum(o.params for o in ops), by_precision=precision_split(ops))


def precision_split(ops: Iterable[OpRecord]) -> dict[str, dict[str, int]]:
    """``{precision: {"macs", "flops", "ops"}}`` over the ops that do arithmetic, in order of first appearance."""
    split: dict[str, dict[str, int]] = {}
    for o in ops:
        if o.macs or o.flops:
            slot = split.setdefault(o.precision, {"macs": 0, "flops": 0, "ops": 0})
            slot["macs"] += o.macs
            slot["flops"] += o.flops
            slot["ops"] += 1
    return split


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
class RuntimeMemory:
    """Memory as LiteRT allocates it in one configuration: tensors plus its kernels' temporaries.

    ``arena_bytes``: the activation arenas of every subgraph with the temporaries the builtin
    kernels add in Prepare planned among the tensors (each alive while its op runs).
    ``temporaries_bytes``: the most arena temporary bytes one op holds. ``persistent_arena_bytes``:
    the persistent arenas, with the persistent temporaries (transposed weights of the multithreaded
    float CONV_2D, hybrid row sums). ``delegate_bytes``: a delegate's own memory (None: no delegate
    in this configuration; with XNNPACK, ``xnnpack`` True, an estimate of its workspace, packed
    weights, indirection buffers and structures, split in ``delegate_workspace_bytes``,
    ``delegate_weights_bytes`` and ``delegate_structures_bytes``: the structures with the buffers
    its operators allocate for the input shapes). ``total_bytes``: the sum of the arenas and the delegate's bytes.
    With XNNPACK the arenas hold only the partitions' boundary tensors and the kept ops' tensors and
    temporaries. Temporaries the kernels keep on the heap (``kTfLiteDynamic``) are not counted
    (docs/memory.md).
    """

    threads: int
    xnnpack: bool
    arena_bytes: int
    temporaries_bytes: int
    persistent_arena_bytes: int
    delegate_bytes: int | None
    total_bytes: int
    delegate_workspace_bytes: int | None = None
    delegate_weights_bytes: int | None = None
    delegate_structures_bytes: int | None = None


@lazy_fields("tflm_arena_bytes", "tflm_head_bytes", "tflm_tail_bytes", "tflm_arena_size_bytes",
             "tflm_allocation_peak_bytes", "tflm_unmodelled_ops", "runtime_xnnpack")  # computed when first read
@dataclass(frozen=True)
class MemorySummary:
    """How much RAM the model needs at run time, from tensor lifetimes at the analysed shapes.

    ``peak_live_bytes <= arena_bytes <= activations_total_bytes`` always holds. ``runtime`` adds
    LiteRT's kernel temporaries; delegates' own memory and LiteRT's structures come on top. The
    ``tflm_*`` figures are TensorFlow Lite Micro's whole arena, structs included (docs/memory.md).
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
    runtime: RuntimeMemory | None = None  # as LiteRT allocates it (temporaries included), XNNPACK off
    # TFLite Micro's arena for a build with pointers of tflm_pointer_bytes (4: a 32-bit MCU), reference
    # kernels: the head (tensors + kernel scratch buffers) and the tail (allocator, tensor and node
    # structs, op data, quantization); the allocation peak: the most AllocateTensors holds at once before
    # the head is planned (temporary tensors, the planner's arrays); tflm_arena_size_bytes = the larger of
    # head + tail and that peak: what to pass to MicroInterpreter
    tflm_head_bytes: int | None = None
    tflm_tail_bytes: int | None = None
    tflm_arena_size_bytes: int | None = None
    tflm_pointer_bytes: int | None = None
    tflm_allocation_peak_bytes: int | None = None
    tflm_unmodelled_ops: tuple[str, ...] = ()  # op types without TFLM facts: the TFLM figures are then low
    # the TFLite Micro build of the tflm_* figures (settings.TFLM_TARGETS: "cortex-m", a 32-bit MCU with the
    # reference kernels, by default; "cortex-m55-cmsis-nn"...); None: an older report
    tflm_target: str | None = None
    runtime_xnnpack: RuntimeMemory | None = None  # the same with XNNPACK (LiteRT's default), its own memory apart
    target: str | None = None  # the CPU target of the LiteRT and XNNPACK figures (tflite_flops targets); None: an older report
    # the heap the interpreter's own structures take (tensors, nodes, quantization parameters), every subgraph's:
    # part of the memory headline (analysis/interpreter_memory.py); None: an older report
    interpreter_bytes: int | None = None


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
class DelegatePlacement:
    """One delegate's placement of the report's ops: what it takes, what it keeps off, how the graph is cut.

    ``partitions`` counts the DELEGATE nodes the runtime creates over the report's subgraphs;
    ``subsets`` counts every node subset of TFLite's partitioning, the delegated ones and the runs of
    ops left on the CPU between them: what ``benchmark_model`` logs as "yielding N partitions" (0 in a
    subgraph the delegate takes nothing of: nothing is partitioned there; None: not known, as for the
    device's placement or a report of an older version);
    ``kept_by_reason`` counts the kept ops per reason category ("op type", "dtype", ...).
    ``rules`` names whose rules a prediction follows where a delegate has more than one model: the GPU's
    ``"ml_drift"`` (LiteRT 2.x's GPU accelerator) or ``"classic"`` (``TfLiteGpuDelegateV2``); None otherwise.
    ``source`` is ``"predicted"`` (the delegate's rules, docs/placement.md) or ``"device"``
    (imported from benchmark_model's runtime details).
    """

    delegated_ops: int
    kept_ops: int
    partitions: int
    kept_by_reason: Mapping[str, int] = field(default_factory=dict)
    partitions_by_subgraph: Mapping[str, int] = field(default_factory=dict)  # subgraph index (str) -> partitions
    subsets: int | None = None  # node subsets, delegated and not: benchmark_model's "partitions"
    subsets_by_subgraph: Mapping[str, int] = field(default_factory=dict)  # subgraph index (str) -> node subsets
    rules: str | None = None  # the GPU's model: "ml_drift" or "classic" (settings.GPU_DELEGATES)
    source: str = "predicted"
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this version does not know (kept)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DelegatePlacement":
        """Rebuild from :meth:`to_dict` output."""
        known, extra = split_known(cls, d)
        return cls(**known, extra=extra)


def _totals(t: Mapping[str, Any]) -> Totals:
    """:class:`Totals` from its JSON form."""
    return Totals(**{**t, "by_precision": {k: dict(v) for k, v in t.get("by_precision", {}).items()}})


@lazy_fields("warnings", "memory", "delegation", "advice")  # computed when first read (report.lazy)
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
    latency: LatencyStats | None = None  # measured with --latency (None: not measured)
    throughput: Throughput | None = None
    roofline: Roofline | None = None
    schema_version: int = SCHEMA_VERSION
    memory: MemorySummary | None = None
    signatures: Mapping[str, SignatureReport] = field(default_factory=dict)  # analyze(all_signatures=True)
    # informational lines, not problems (a dynamic batch analysed per sample); JSON key "notes", only when any
    notes: tuple[str, ...] = ()
    # where the ops run, per delegate ("xnnpack", "gpu"): JSON key "delegation"
    delegation: Mapping[str, DelegatePlacement] = field(default_factory=dict)
    # a LiteRT-LM bundle's container (its sections, metadata, tokenizer, the engine's run); JSON key "bundle",
    # only for a bundle
    bundle: BundleInfo | None = None
    # the predicted latency (analyze --predict PROFILE); JSON key "prediction", only when predicted
    prediction: Prediction | None = None
    # what to change, with the time at stake (analysis/advice.py); JSON key "advice", only when any
    advice: tuple[Advice, ...] = ()
    # the model predicted in another precision or a static shape (studies/what_if.py); JSON "what_if", only when any
    what_if: tuple[WhatIf, ...] = ()

    # ---- serialisation --------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the documented contract; counts are ints)."""
        predicted = self.prediction is not None
        return self._json_form([_op_json(o, predicted) for o in self.ops])

    def json_head(self) -> dict[str, Any]:
        """:meth:`to_dict` with ``"ops"`` None: every other key, for a writer that encodes :meth:`op_dicts` apart."""
        return self._json_form(None)

    def op_dicts(self) -> Iterator[dict[str, Any]]:
        """Each op's JSON form (``to_dict()["ops"]``), one at a time."""
        predicted = self.prediction is not None
        return (_op_json(o, predicted) for o in self.ops)

    def _json_form(self, ops: Any) -> dict[str, Any]:
        """The JSON-ready dict with ``ops`` as its ``"ops"`` value (a list, or its text already encoded)."""
        d = asdict(replace(self, ops=()))  # the ops apart: a deep copy of every op was most of the JSON's time
        d["ops"] = ops
        order = ["schema_version", "tool", "model", "inputs", "outputs", "totals", "init_totals", "memory",
                 "delegation", "by_op_type", "ops", "unsupported", "warnings", "notes", "settings", "latency", "throughput",
                 "roofline", "signatures"]
        if not self.notes:
            order.remove("notes")  # written only when there is one: the reports without notes are unchanged
        if self.bundle is not None:
            order.append("bundle")  # written only for a bundle: the reports of .tflite files are unchanged
        if self.prediction is not None:  # written only when predicted, with each op's predicted_ms
            order.append("prediction")
            d["prediction"] = self.prediction.to_dict()
        # measured records list only the fields that were measured: their own to_dict
        for key in ("latency", "throughput", "roofline"):
            value = getattr(self, key)
            d[key] = None if value is None else value.to_dict()
        d["delegation"] = {k: v.to_dict() for k, v in self.delegation.items()}
        if self.memory is not None:  # the default runtime's total and the model's class, derived (report/headline.py)
            d["memory"].update(memory_json(self))
        if self.advice:  # written only when there is advice: the reports without any are unchanged
            order.insert(order.index("warnings"), "advice")
            d["advice"] = [a.to_dict() for a in self.advice]
        if self.what_if:  # written only when asked for (--what-if): the other reports are unchanged
            order.insert(order.index("advice") if self.advice else order.index("warnings"), "what_if")
            d["what_if"] = [w.to_dict() for w in self.what_if]
        if self.signatures:
            from .generative import predicted_signature_json

            for key, sig in self.signatures.items():
                d["signatures"][key]["latency"] = None if sig.latency is None else sig.latency.to_dict()
                predicted_signature_json(d["signatures"][key], sig)
        return {k: d[k] if k == "ops" else jsonable(d[k]) for k in order}

    def to_json(self, indent: int | None = 2, end: str = "") -> str:
        """The JSON form of :meth:`to_dict`, then ``end``. At ``indent=2`` (the files and stdout) each op is
        encoded and dropped in turn, so the text of a large model is written without every op's dict held
        at once (``report.jsontext``: the same text as ``json.dumps``)."""
        if indent != 2:
            return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False) + end
        predicted = self.prediction is not None
        return dumps_with_list(self.json_head(), "ops", (Raw(_op_text(o, predicted)) for o in self.ops), end)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None) -> "Report":
        """Rebuild a Report from :meth:`to_dict` output (or a parsed JSON report), every value checked against the
        shipped schema first (:mod:`tflite_flops.report.loading`): types, ranges, finiteness.

        Args:
            d: the JSON form.
            source: where it comes from (a file name), for the error message.

        Raises:
            ReportFormatError: a value that does not fit (the message names the field), or another schema_version
                (also a ``ValueError``).
        """
        from .loading import check

        if not isinstance(d, dict):
            check(d, source)  # refuses it: a report is a JSON object
        version = d.get("schema_version")
        if version != SCHEMA_VERSION:
            where = f"{source}: " if source else ""
            shown = version if type(version) in (int, str, type(None)) else type(version).__name__
            raise ReportFormatError(f"{where}not a tflite_flops JSON report: unsupported schema_version {shown!r:.40} "
                                    f"(this tool reads {SCHEMA_VERSION})")
        check(d, source)
        try:
            return cls._build(d)
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as exc:
            # a key a record cannot do without is missing (the schema's check leaves that to the records)
            what = ("nested too deeply" if isinstance(exc, RecursionError) else
                    f"missing key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}")
            where = f"{source}: " if source else ""
            raise ReportFormatError(f"{where}not a tflite_flops JSON report ({what:.300})") from None

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "Report":
        """The records of a checked JSON form."""
        version = d["schema_version"]

        def summary(t: Mapping[str, Any]) -> TensorSummary:
            sig = t.get("shape_signature")
            return TensorSummary(t["name"], t["dtype"], tuple(t["shape"]), tuple(sig) if sig is not None else None,
                                 t.get("index", 0))

        totals = _totals

        op_fields = {f.name for f in fields(OpRecord)} - {"figures"}
        ops = tuple(
            OpRecord(**{**{k: v for k, v in o.items() if k in op_fields},
                        "inputs": tuple(tuple(s) for s in o["inputs"]),
                        "outputs": tuple(tuple(s) for s in o["outputs"]),
                        "figures": {k: v for k, v in o.items() if k not in op_fields}})
            for o in d["ops"])
        model = dict(d["model"])
        model["signatures"] = tuple(model.get("signatures", ()))
        model["subgraph_names"] = tuple(model.get("subgraph_names", ()))
        from .generative import BundleInfo, signature_from_dict
        from .measured import LatencyStats, Roofline, Throughput
        from .prediction import Prediction

        return cls(
            tool=dict(d["tool"]), model=ModelInfo(**model),
            inputs=tuple(summary(t) for t in d["inputs"]), outputs=tuple(summary(t) for t in d["outputs"]),
            totals=totals(d["totals"]), init_totals=totals(d.get("init_totals") or {}),
            by_op_type={k: OpTypeSummary(**v) for k, v in d["by_op_type"].items()},
            ops=ops, unsupported=dict(d["unsupported"]), warnings=tuple(d["warnings"]),
            notes=tuple(d.get("notes") or ()),
            settings=dict(d.get("settings") or {}), latency=_record(LatencyStats, d.get("latency")),
            throughput=_record(Throughput, d.get("throughput")), roofline=_record(Roofline, d.get("roofline")),
            memory=_memory(d.get("memory")),
            delegation={k: DelegatePlacement.from_dict(v) for k, v in (d.get("delegation") or {}).items()},
            bundle=None if d.get("bundle") is None else BundleInfo.from_dict(d["bundle"], _totals),
            prediction=_record(Prediction, d.get("prediction")),
            advice=tuple(Advice.from_dict(a) for a in d.get("advice") or ()),
            what_if=tuple(WhatIf.from_dict(w) for w in d.get("what_if") or ()),
            schema_version=version,
            signatures={k: signature_from_dict(v, summary, totals, _memory)
                        for k, v in (d.get("signatures") or {}).items()})

    @classmethod
    def from_json(cls, text: str | bytes, *, source: str | None = None) -> "Report":
        """Rebuild a Report from its JSON text, checked as :meth:`from_dict` checks (standard JSON only: no
        ``NaN`` or ``Infinity``). :meth:`load` reads a file.

        Args:
            text: the JSON text (``analyze -f json``).
            source: where it comes from (a file name), for the error message.

        Raises:
            ReportFormatError: the text is not a tflite_flops JSON report, or a value in it does not fit the
                schema: one line naming the field and what was expected (also a ``ValueError``).
        """
        from .loading import parse

        return cls.from_dict(parse(text, source), source=source)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Report":
        """The report saved at ``path`` (``analyze -f json`` / ``-o r.json``), checked as :meth:`from_json` checks;
        a regular file of at most 1 GiB (``report.loading.REPORT_FILE_CAP``).

        Raises:
            ReportFormatError: not a valid report: one line naming the file and the field.
            OSError: the file cannot be read, is not a regular file, or is larger than the cap.
        """
        from .loading import read_report

        return cls.from_json(read_report(path), source=os.fspath(path))

    # ---- conveniences -----------------------------------------------------------------------

    def top_ops(self, n: int = 10, key: str = "flops") -> list[OpRecord]:
        """The ``n`` most expensive per-inference ops by ``key``."""
        ops = [o for o in self.ops if o.phase == "inference"]
        return sorted(ops, key=lambda o: getattr(o, key) or 0, reverse=True)[:n]

    def with_latency(self, latency: LatencyStats | None, throughput: Throughput | None) -> "Report":
        """A copy with measured latency and throughput merged in."""
        return replace(self, latency=latency, throughput=throughput)

    # ---- notebooks: the views of report.notebook (VIEWS) -------------------------------------

    def __repr__(self) -> str:
        """One line: the model, its ops, MACs, params and the headline memory and latency."""
        return VIEWS["repr"](self)

    def to_dataframe(self) -> Any:
        """A pandas DataFrame, one row per op with the CSV's columns. Raises ImportError without pandas."""
        return VIEWS["dataframe"](self)

    def _repr_html_(self) -> str:
        """Jupyter's display: the headline figures and the top ops (an escaped HTML fragment, no script)."""
        return VIEWS["html"](self)


# The Report's notebook views, registered by report.notebook when the report package loads (the views read
# the per-op columns, which read these records: the records import no view)
VIEWS: dict[str, Any] = {}


def _memory(d: Mapping[str, Any] | None) -> MemorySummary | None:
    if d is None:
        return None
    runtime, xnnpack = d.get("runtime"), d.get("runtime_xnnpack")
    d = {k: v for k, v in d.items() if k not in DERIVED_KEYS}  # written by to_dict, computed again when read
    return MemorySummary(**{**d, "subgraphs": tuple(SubgraphMemory(**s) for s in d.get("subgraphs", ())),
                            "runtime": None if runtime is None else RuntimeMemory(**runtime),
                            "tflm_unmodelled_ops": tuple(d.get("tflm_unmodelled_ops") or ()),
                            "runtime_xnnpack": None if xnnpack is None else RuntimeMemory(**xnnpack)})


def _record(cls: Any, d: Mapping[str, Any] | None) -> Any:
    """``cls.from_dict(d)``, None for a JSON null."""
    return None if d is None else cls.from_dict(d)


_OP_FIELDS = tuple(f.name for f in fields(OpRecord) if f.name != "figures")
_OP_FIELD_SET = frozenset(_OP_FIELDS)
# every field of an op at once (one C call), and the names of the JSON form without a prediction
_ALL_FIELDS = attrgetter(*_OP_FIELDS)
_UNPREDICTED = tuple(name if name != "predicted_ms" else None for name in _OP_FIELDS)


def _op_json(op: OpRecord, predicted: bool) -> dict[str, Any]:
    """An op's JSON form, built straight from its fields: the fields in order (``predicted_ms`` only when the
    report was predicted), then its :attr:`OpRecord.figures` as keys like the fields; shapes as lists."""
    out: dict[str, Any] = {}
    plain = _PLAIN_SHAPES
    for name, value in zip(_OP_FIELDS if predicted else _UNPREDICTED, _ALL_FIELDS(op)):
        if name is not None:
            t = type(value)
            if t in PLAIN:
                out[name] = value
            elif t is tuple and _plain_shapes(value, plain):  # what jsonable makes of them, faster
                out[name] = [list(s) for s in value]
            else:
                out[name] = jsonable(value)
    for name, value in op.figures.items():
        out[str(name)] = value if type(value) in PLAIN else jsonable(value)
    return out


_PLAIN_SHAPES: dict[tuple, None] = {}  # tuples of tuples of ints seen (an op's inputs or outputs)


def _plain_shapes(value: tuple, seen: dict[tuple, None]) -> bool:
    """Whether ``value`` is a tuple of tuples of ints (an op's shapes), remembered in ``seen``."""
    try:
        if value in seen:
            return True
    except TypeError:  # an unhashable element
        return False
    if all(type(s) is tuple and all(type(d) is int for d in s) for s in value):
        if len(seen) < _MAX_TEXTS:
            seen[value] = None
        return True
    return False


_OP_LEVEL = 2  # an op's dict in the report's "ops" list
_FIELD_KEYS = tuple(key_text(name) for name in _OP_FIELDS)
_TEXTS: dict[Any, str] = {}  # a tuple field's value (shapes) -> its text at the fields' level
_MAX_TEXTS = 65_536


def _op_text(op: OpRecord, predicted: bool) -> str:
    """``dumps(_op_json(op, predicted), 2)``, the op's text in the report's ``"ops"`` list, made without the dict:
    each field's key text made once, each shapes tuple's text once per distinct tuple."""
    figures = op.figures
    if figures and any(type(k) is not str or k in _OP_FIELD_SET for k in figures):
        return encode(_op_json(op, predicted), _OP_LEVEL)  # a figure named like a field replaces it: the dict's way
    level = _OP_LEVEL + 1
    texts = _TEXTS
    parts = []
    for key, name, value in zip(_FIELD_KEYS, _OP_FIELDS if predicted else _UNPREDICTED, _ALL_FIELDS(op)):
        t = type(value)
        if name is None:  # predicted_ms, in a report without a prediction
            continue
        if t is str:
            parts.append(key + encode_str(value))
        elif t is int:
            parts.append(key + int_repr(value))
        elif value is None:
            parts.append(key + "null")
        elif t is tuple:
            try:
                text = texts.get(value)
            except TypeError:  # an unhashable element
                text = encode(jsonable(value), level)
            if text is None:
                text = encode(jsonable(value), level)
                if len(texts) < _MAX_TEXTS:
                    texts[value] = text
            parts.append(key + text)
        else:
            parts.append(key + encode(value if t in PLAIN else jsonable(value), level))
    for name, value in figures.items():
        parts.append(key_text(name) + encode(value if type(value) in PLAIN else jsonable(value), level))
    inner = indent(level)
    return "{" + inner + ("," + inner).join(parts) + indent(_OP_LEVEL) + "}"
