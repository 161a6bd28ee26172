"""The per-op columns: one declaration per figure, read by every output that shows per-op figures.

A :class:`Column` says what a per-op figure is called (``name``: its JSON key and CSV header), what
a table calls it (``label``), its unit, how to format it, how to read it from an
:class:`~tflite_flops.report.OpRecord`, and which outputs show it, each with a condition
(:data:`ALWAYS`, :data:`TIMED`, :data:`LOOPED`, :data:`PREDICTED`). :data:`OP_COLUMNS` is the one ordered table:
each output shows, in this order, the columns whose ``outputs`` name it. The outputs:

* ``csv`` (every op), ``html`` (the per-op table), ``table`` and ``md`` (the top ops), ``json``
  (the report's ``ops``: every field of the record and its ``figures``), ``model-explorer`` (a
  metric, keyed by ``explorer``), ``compare`` (the matched ops in ``compare``'s JSON and CSV);
* ``batch``, ``sweep`` and ``compare`` also show a per-model figure of a column that has a
  ``total`` (``"sum"`` or ``"max"`` over the inference ops): a batch row's and a sweep point's
  column, a compare total. Its name is :attr:`Column.total_name`.

The op's identity (where it is, its type and name, its status and note) is the frame each table
lays out its own way; every figure beside it comes from here. A new per-op figure is one fact
(``ops/``) where it needs one, one pass (:mod:`tflite_flops.analysis.figures`) and one entry of
:data:`OP_COLUMNS` here (or :func:`declare`); a value
that is not a field of :class:`~tflite_flops.report.OpRecord` travels in its ``figures`` mapping,
and reads as an attribute all the same.

Delegates are declared once each (:data:`DELEGATE_FIELDS`): their three per-op fields (taken,
why kept, which partition) and their columns are made from the declaration, never from strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..units import grouped, human, human_bytes

if TYPE_CHECKING:
    from .records import OpRecord, Report

OUTPUTS = ("json", "csv", "table", "md", "html", "model-explorer", "batch", "sweep", "compare")
Show = Callable[["Report", Sequence["OpRecord"]], bool]  # whether an output shows the column: (report, rows shown)


def ALWAYS(report: "Report", rows: Sequence["OpRecord"]) -> bool:
    """Shown whatever the report holds."""
    return True


def TIMED(report: "Report", rows: Sequence["OpRecord"]) -> bool:
    """Shown when one of the rows shown has a measured latency."""
    return any(o.latency_ms is not None for o in rows)


def LOOPED(report: "Report", rows: Sequence["OpRecord"]) -> bool:
    """Shown when one of the rows shown runs more than once per inference (a WHILE body's trip count)."""
    return any(o.executions > 1 for o in rows)


def PREDICTED(report: "Report", rows: Sequence["OpRecord"]) -> bool:
    """Shown when the report has a prediction (``analyze --predict``): the other reports stay as they were."""
    return report.prediction is not None


def PLACED(report: "Report", rows: Sequence["OpRecord"]) -> bool:
    """Shown when one of the rows shown has a placement (predicted for XNNPACK, or imported from a device)."""
    return any(o.xnnpack is not None or o.device_placement is not None for o in rows)


# units: how a value reads and where it aligns. Numbers are right-aligned; text, shapes and flags left.
NUMERIC_UNITS = ("count", "bytes", "ms", "share", "rate", "index", "ratio")


def _fixed(digits: int) -> Callable[[Any], str]:
    return lambda v: "-" if v is None else f"{v:.{digits}f}"


def _human(v: Any) -> str:
    return human(v)


def _plain(v: Any) -> str:
    return "" if v is None else str(v)


@dataclass(frozen=True)
class Column:
    """One per-op column.

    ``value(op, report)`` reads the raw value (None: not known); without it the column reads the
    record's attribute ``name``. ``text`` formats a value for a person (tables, HTML), ``short``
    for the compact top-ops tables (``text`` when not given); ``cell(op, report)``, when given,
    is the text instead (a figure shown from two values). ``css``: an extra class of the HTML cell. ``outputs`` maps each output that
    shows the column to its condition. ``key``: the HTML table's sort key (``name`` when empty);
    ``title``: the HTML cell's tooltip; ``explorer``: the Model Explorer metric and its label;
    ``total``: how the per-model figure is made (``"sum"``/``"max"`` over the inference ops) for
    ``batch``, ``sweep`` and ``compare`` totals.
    """

    name: str
    label: str
    unit: str
    outputs: Mapping[str, Show]
    value: Callable[["OpRecord", "Report"], Any] | None = None
    text: Callable[[Any], str] = _plain
    short: Callable[[Any], str] | None = None
    cell: Callable[["OpRecord", "Report"], str] | None = None
    key: str = ""
    css: str = ""
    title: Callable[[Any], str] | None = None
    explorer: tuple[str, str] | None = None
    total: str | None = None
    doc: str = ""

    def read(self, op: "OpRecord", report: "Report") -> Any:
        """The op's raw value (what JSON and CSV write)."""
        return getattr(op, self.name) if self.value is None else self.value(op, report)

    def shows(self, output: str, report: "Report", rows: Sequence["OpRecord"]) -> bool:
        """Whether ``output`` shows this column for these rows."""
        when = self.outputs.get(output)
        return when is not None and when(report, rows)

    @property
    def right(self) -> bool:
        """Right-aligned in the tables (a number)."""
        return self.unit in NUMERIC_UNITS

    @property
    def sort_key(self) -> str:
        """The HTML table's ``data-key``."""
        return self.key or self.name

    @property
    def total_name(self) -> str:
        """The name of the per-model figure (``batch`` / ``sweep`` column, ``compare`` total)."""
        return f"{self.name}_{self.total}" if self.total == "max" else self.name

    def cell_text(self, op: "OpRecord", report: "Report") -> str:
        """The op's value as a person reads it."""
        return self.cell(op, report) if self.cell is not None else self.text(self.read(op, report))

    def short_text(self, op: "OpRecord", report: "Report") -> str:
        """The compact form (top-ops tables)."""
        if self.cell is not None:
            return self.cell(op, report)
        return (self.short or self.text)(self.read(op, report))


@dataclass(frozen=True)
class DelegateFields:
    """One delegate as the per-op records hold it: a declaration per delegate.

    ``key`` is the delegate's key in ``Report.delegation`` and the placement rules; ``taken``,
    ``reason``, ``partition`` are the names of its three per-op figures (taken by the delegate;
    why kept off, None when taken; which of its subgraph's partitions holds it). ``explorer_label``:
    the Model Explorer metric's label. ``batch``: the per-model figures of the delegation that a
    batch row holds (attributes of :class:`~tflite_flops.report.DelegatePlacement`).
    """

    key: str
    explorer_label: str
    taken: str
    reason: str
    partition: str
    batch: tuple[str, ...] = ("kept_ops",)


DELEGATE_FIELDS: dict[str, DelegateFields] = {d.key: d for d in (
    DelegateFields("xnnpack", "on XNNPACK (1) or kept off (0)", "xnnpack", "xnnpack_reason", "xnnpack_partition",
                   batch=("partitions", "kept_ops")),
    DelegateFields("gpu", "on the GPU delegate (1) or kept off (0)", "gpu", "gpu_reason", "gpu_partition",
                   batch=("kept_ops", "rules")),
)}


def taken(op: "OpRecord", delegate: str) -> bool | None:
    """Whether ``delegate`` takes the op (None: not placed)."""
    return getattr(op, DELEGATE_FIELDS[delegate].taken)


def reason(op: "OpRecord", delegate: str) -> str | None:
    """Why ``delegate`` keeps the op off (None: taken, or not placed)."""
    return getattr(op, DELEGATE_FIELDS[delegate].reason)


def partition(op: "OpRecord", delegate: str) -> int | None:
    """Which partition of ``delegate`` holds the op."""
    return getattr(op, DELEGATE_FIELDS[delegate].partition)


def _flag(v: Any) -> str:
    return "" if v is None else str(v)


def delegate_columns(d: DelegateFields) -> list[Column]:
    """The three per-op columns of a delegate declaration."""
    return [Column(d.taken, d.taken, "flag", {"json": ALWAYS, "csv": ALWAYS, "model-explorer": ALWAYS},
                   explorer=(d.taken, d.explorer_label), text=_flag,
                   doc=f"taken by {d.key} (None: not placed)"),
            Column(d.reason, f"{d.key} reason", "text", {"json": ALWAYS, "csv": ALWAYS},
                   doc=f"why {d.key} keeps the op off (None when taken)"),
            Column(d.partition, f"{d.key} partition", "index", {"json": ALWAYS, "csv": ALWAYS},
                   doc=f"which of its subgraph's {d.key} partitions holds the op")]


def runs_on(op: "OpRecord", report: "Report") -> str | None:
    """Where the op runs: the device's placement when imported, else XNNPACK's predicted one: ``"xnnpack #2"``
    (its partition), ``"xnnpack, fused"`` (folded into a neighbour: predicted 0 ms), ``"builtin"`` (kept off)."""
    if op.device_placement is not None:
        return op.device_placement
    if op.xnnpack is None:
        return None
    if not op.xnnpack:
        return "builtin"
    if report.prediction is not None and report.prediction.placement == "xnnpack" and op.predicted_ms == 0.0:
        return "xnnpack, fused"
    return "xnnpack" if op.xnnpack_partition is None else f"xnnpack #{op.xnnpack_partition}"


def _share(op: "OpRecord", report: "Report") -> float:
    total = report.totals.flops
    return 100 * op.flops / total if total and op.phase == "inference" else 0.0


def _achieved(op: "OpRecord", report: "Report") -> float | None:
    return op.achieved_flops_per_s if op.flops else None


def _nb(text: str) -> str:
    """``text`` with no-break spaces: an HTML cell that must not wrap inside a figure."""
    return text.replace(" ", "\u00a0")


def _prediction_flags(op: "OpRecord", report: "Report") -> str | None:
    """The prediction's flags on a predicted op's row ('' when none; None for an op without a prediction)."""
    if report.prediction is None or op.predicted_ms is None:
        return None
    return ";".join(report.prediction.flags)


_RECORD = {"json": ALWAYS, "csv": ALWAYS}  # a field of the record, in the CSV
_ME = {"model-explorer": ALWAYS}  # a Model Explorer metric
_TOP = {"table": ALWAYS, "md": ALWAYS, "html": ALWAYS}  # the tables' figures

# The one ordered table. Every output shows the columns that name it, in this order.
OP_COLUMNS: list[Column] = [
    Column("subgraph", "subgraph", "index", _RECORD),
    Column("index", "index", "index", _RECORD),
    Column("op_type", "type", "text", _RECORD),
    Column("name", "output", "text", _RECORD),
    Column("phase", "phase", "text", _RECORD),
    Column("executions", "runs", "count", {**_RECORD, "table": LOOPED, "md": LOOPED, "html": LOOPED},
           text=lambda v: f"×{v}", doc="times the op runs per inference (a WHILE body's trip count); its "
                                       "figures are already multiplied by it"),
    Column("status", "status", "text", _RECORD),
    Column("precision", "precision", "text", _RECORD),
    Column("macs", "MACs", "count", {**_RECORD, **_TOP, **_ME, "compare": ALWAYS}, text=_human, explorer=("macs", "MACs")),
    Column("flops", "FLOPs", "count", {**_RECORD, **_TOP, **_ME, "compare": ALWAYS}, text=_human,
           title=grouped, explorer=("flops", "FLOPs")),
    Column("share", "share", "share", _TOP, value=_share, text=lambda v: f"{v:.1f}%",
           doc="the op's share of the report's inference FLOPs"),
    Column("bytes_moved", "read / written", "bytes", {"html": ALWAYS, **_ME}, value=lambda o, r: o.bytes_moved,
           cell=lambda o, r: f"{_nb(human_bytes(o.bytes_read))}\u00a0/ {_nb(human_bytes(o.bytes_written))}",
           key="bytes", css="rw", explorer=("bytes", "bytes moved"), doc="bytes read plus bytes written"),
    Column("bytes_read", "bytes read", "bytes", _RECORD),
    Column("bytes_written", "bytes written", "bytes", _RECORD),
    Column("params", "params", "count", {**_RECORD, "html": ALWAYS, **_ME}, text=_human, explorer=("params", "params")),
    Column("live_bytes", "live bytes", "bytes", _RECORD,
           doc="activation bytes alive in the op's subgraph arena while it runs"),
    Column("temporaries_bytes", "temporaries", "bytes", _RECORD,
           doc="the arena temporaries LiteRT's kernel adds for the op"),
    Column("inputs", "inputs", "shapes", _RECORD),
    Column("outputs", "outputs", "shapes", _RECORD),
    Column("shapes_resolved", "resolved", "flag", _RECORD),
    Column("effective_macs", "effective MACs", "count", {"json": ALWAYS}, doc="MACs over non-zero weights only"),
    Column("weight_density", "weight density", "ratio", {"json": ALWAYS}, doc="non-zero fraction of the op's weights"),
    Column("latency_ms", "ms", "ms", {**_RECORD, "html": TIMED, "md": TIMED, **_ME, "compare": ALWAYS}, text=_fixed(4),
           short=_fixed(3), key="latency", explorer=("latency_ms", "latency (ms)")),
    Column("achieved_flops_per_s", "FLOP/s", "rate", {"html": TIMED, **_ME}, value=_achieved, text=_human, key="flops_per_s",
           explorer=("flops_per_s", "achieved FLOP/s"), doc="FLOPs over the measured latency"),
    Column("predicted_ms", "predicted ms", "ms", {"json": PREDICTED, "csv": PREDICTED, "html": PREDICTED,
                                                  "compare": PREDICTED, **_ME},
           text=_fixed(4), key="predicted", explorer=("predicted_ms", "predicted time (ms)")),
    Column("prediction_confidence", "confidence", "text", {"json": PREDICTED, "csv": PREDICTED, "html": PREDICTED,
                                                           "md": PREDICTED},
           value=lambda o, r: o.figures.get("prediction_confidence"), key="confidence",
           doc="the predicted time's confidence: low (a stand-in law, or features beyond 2x the law's fitted "
               "domain), high, or unknown (a profile without domains); None without a prediction"),
    Column("prediction_note", "confidence note", "text", {"json": PREDICTED, "csv": PREDICTED, "html": PREDICTED},
           value=lambda o, r: o.figures.get("prediction_note"), key="confidence_note",
           doc="why the prediction's confidence is low (\"stand-in: group conv\", \"MACs 4.1x above the largest fitted\")"),
    Column("prediction_flags", "prediction flags", "text", {"csv": PREDICTED}, value=_prediction_flags,
           doc="what the whole prediction rests on (report.prediction.flags, ';'-joined: quick_profile, "
               "stand_in_laws, foreign_profile, domains_unknown, no_target, no_caches) on every predicted op's row"),
    Column("runs_on", "runs on", "text", {"table": PLACED, "md": PLACED, "html": PLACED}, value=runs_on,
           doc="where the op runs: xnnpack #partition, xnnpack fused, builtin (kept off), or the device's placement"),
    Column("intensity", "FLOP/B", "ratio", _ME, value=lambda o, r: o.intensity,
           explorer=("intensity", "FLOPs per byte")),
    *[c for d in DELEGATE_FIELDS.values() for c in delegate_columns(d)],
    Column("device_placement", "ran on", "text", {"json": ALWAYS}, doc="where it ran on a device (imported)"),
    Column("device_partition", "device partition", "index", {"json": ALWAYS}),
    Column("formula", "formula", "text", _RECORD),
    Column("note", "note", "text", _RECORD),
]


def declare(column: Column, after: str | None = None) -> Column:
    """Add a per-op column to :data:`OP_COLUMNS` (at the end of the figures, or after the column ``after``).

    Raises ValueError for a name already declared: one declaration per figure.
    """
    if any(c.name == column.name for c in OP_COLUMNS):
        raise ValueError(f"per-op column {column.name!r} is declared twice")
    if after is None:  # before the record's closing text fields (formula, note)
        at = next(i for i, c in enumerate(OP_COLUMNS) if c.name == "formula")
    else:
        at = next(i for i, c in enumerate(OP_COLUMNS) if c.name == after) + 1
    OP_COLUMNS.insert(at, column)
    return column


def declare_delegate(fields: DelegateFields) -> DelegateFields:
    """Add a delegate: its declaration in :data:`DELEGATE_FIELDS` and its three per-op columns (before the
    record's closing text fields). Raises ValueError for a delegate already declared."""
    if fields.key in DELEGATE_FIELDS:
        raise ValueError(f"delegate {fields.key!r} is declared twice")
    DELEGATE_FIELDS[fields.key] = fields
    for c in delegate_columns(fields):
        declare(c)
    return fields


def undeclare_delegate(key: str) -> None:
    """Remove a declared delegate and its columns (tests declare one and take it back)."""
    fields = DELEGATE_FIELDS.pop(key)
    for name in (fields.taken, fields.reason, fields.partition):
        undeclare(name)


def undeclare(name: str) -> None:
    """Remove a declared column (tests register a dummy one and take it back)."""
    OP_COLUMNS[:] = [c for c in OP_COLUMNS if c.name != name]


def columns_for(output: str, report: "Report", rows: Sequence["OpRecord"] | None = None) -> list[Column]:
    """The columns ``output`` shows for ``rows`` of ``report`` (every op when not given), in order."""
    shown = report.ops if rows is None else rows
    return [c for c in OP_COLUMNS if c.shows(output, report, shown)]


def column(name: str) -> Column:
    """The declared column ``name``."""
    for c in OP_COLUMNS:
        if c.name == name:
            return c
    raise KeyError(name)


def explorer_metrics() -> dict[str, Column]:
    """Model Explorer's metrics (``explorer`` names) -> their column: the columns it shows."""
    return {c.explorer[0]: c for c in OP_COLUMNS if c.explorer is not None and "model-explorer" in c.outputs}


def totals(report: "Report", output: str) -> dict[str, Any]:
    """The per-model figures of the columns with a ``total`` that ``output`` shows (``batch``, ``sweep``,
    ``compare``): ``{total_name: value}`` over the inference ops; None where no op has a value."""
    ops = [o for o in report.ops if o.phase == "inference"]
    out: dict[str, Any] = {}
    for c in OP_COLUMNS:
        if c.total is None or output not in c.outputs:
            continue
        values = [v for v in (c.read(o, report) for o in ops) if v is not None]
        out[c.total_name] = (sum(values) if c.total == "sum" else max(values)) if values else None
    return out


def total_columns(output: str) -> list[Column]:
    """The columns with a per-model figure that ``output`` shows, in order."""
    return [c for c in OP_COLUMNS if c.total is not None and output in c.outputs]


def record_fields() -> frozenset[str]:
    """The names of the fields the JSON form writes for every op (a test holds the declarations to them)."""
    return frozenset(c.name for c in OP_COLUMNS if "json" in c.outputs)

