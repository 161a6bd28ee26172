"""What a run measured, as typed records of the Report: latency statistics, throughput, roofline.

Every field is optional: the JSON form holds only what was measured (``sparse_dict``), and keys a
newer version wrote are kept in ``extra`` (``split_known``), so old and new files both load.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from .jsontext import sparse_dict, split_known
from .prediction import BUSY_SHARE

# A measurement whose slowest tenth of runs strays further than this over its median (p90 / median - 1) is noisy: on a
# quiet machine the runs of one model sit within a few percent (p90 / median 1.02-1.10 on the suite's models).
NOISY_SPREAD = 0.25
MIN_SPREAD_RUNS = 10  # fewer runs have no p90 worth the name: their spread is not judged (None)
MIN_SHARE_WINDOW = 0.2  # seconds: the shortest timing whose CPU share says anything (an injected clock's is 0)


def cpu_share(wall_s: float, cpu_s: float, threads: int) -> float | None:
    """The share of ``threads`` threads' time this process ran over a timing of ``wall_s`` seconds in which it used
    ``cpu_s`` seconds of CPU (all its threads); None for a window too short to say (:data:`MIN_SHARE_WINDOW`)."""
    return min(cpu_s / (wall_s * max(threads, 1)), 1.0) if wall_s >= MIN_SHARE_WINDOW else None


def noise(spread: float | None, share: float | None) -> str | None:
    """Why a timing is noisy, None when it is steady: the one rule of a measured latency (``LatencyStats.noisy``) and
    of the drift check (``Drift.busy``). A CPU share below :data:`BUSY_SHARE` per thread: other processes compete
    for the cores (an invoke longer than a scheduler slice is preempted, and the median grows with the model's
    length); a spread over :data:`NOISY_SPREAD`: the runs disagree."""
    why = []
    if share is not None and share < BUSY_SHARE:
        why.append(f"this process had {share:.0%} of the CPU per thread: other processes compete for the cores")
    if spread is not None and spread > NOISY_SPREAD:
        why.append(f"the slowest tenth of the runs are {spread:.0%} over the median")
    return "; ".join(why) or None


@dataclass(frozen=True)
class LatencyStats:
    """Measured time of a model (``--latency``) or of one signature-runner call, and the per-op summary.

    Every field is optional: a run shows the fields it measured. A run the runtime could not do has
    ``skipped`` (why) and ``runtime`` only. Times are milliseconds, statistics over the timed
    ``invoke()`` runs (see :mod:`tflite_flops.measure.bench`). The JSON form (:meth:`to_dict`) lists the set
    fields in this order.
    """

    skipped: str | None = None  # why the model was not timed (the static report stays)
    runtime: str | None = None
    runtime_version: str | None = None
    threads: int | None = None
    xnnpack: bool | None = None
    runs: int | None = None
    warmup: int | None = None
    init_ms: float | None = None  # load + allocate
    first_ms: float | None = None  # the first invoke (not in the statistics)
    mean_ms: float | None = None
    std_ms: float | None = None  # population standard deviation, as benchmark_model
    min_ms: float | None = None
    median_ms: float | None = None
    p90_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    cv: float | None = None  # coefficient of variation (std / mean)
    spread: float | None = None  # (p90 - median) / median: how far the slow runs stray (NOISY_SPREAD)
    cpu_share: float | None = None  # the process's CPU time over the timed runs' wall time, per thread (BUSY_SHARE)
    noisy: str | None = None  # why the measurement is noisy (a wide spread, a CPU share well below 1), None: steady
    peak_rss_added_mb: float | None = None
    # resident memory (bytes) added over the process's before the load: after load + allocate (the
    # delegate is applied there), after the first invoke, and at the high-water mark (when the process
    # had been larger before, the model's peak is hidden: then the larger of the two readings); compare
    # with memory.runtime*.total_bytes plus the weights' pages
    rss_load_bytes: int | None = None
    rss_first_invoke_bytes: int | None = None
    rss_peak_bytes: int | None = None
    input_shapes: tuple[tuple[int, ...], ...] | None = None  # the shapes the runtime ran
    cpu: str | None = None
    python: str | None = None
    method: str | None = None  # what one timed call does (signature runner)
    shapes_consistent: bool | None = None  # False: the timed graph has unresolved shapes (see shape_warning)
    shape_warning: str | None = None
    per_op_skipped: str | None = None  # why --per-op timed nothing
    source: str | None = None  # where per-op times come from (an imported device profile)
    per_op_sum_ms: float | None = None
    per_op_timed: int | None = None
    per_op_not_timed: int | None = None  # --per-op only
    per_op_vs_whole: float | None = None  # --per-op: per_op_sum_ms / median_ms (null when no median)
    profile_rows: int | None = None  # device profile: its op rows
    profile_total_ms: float | None = None
    unmatched_rows: tuple[str, ...] | None = None  # device profile rows that matched no op
    per_op_note: str | None = None  # why the per-op sum differs from the whole-model time
    # a signature runner's call (tokens/s): the median of the invoke alone, the inputs the last call set kept in
    # place and nothing copied in or out: the model's own time; the call's median minus it is the runner's copies
    model_median_ms: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this version does not know (kept)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the set fields (``per_op_vs_whole`` also when null, next to the per-op summary)."""
        out = sparse_dict(self, ("per_op_vs_whole",) if self.per_op_not_timed is not None else ())
        if self.input_shapes is not None:
            out["input_shapes"] = [list(s) for s in self.input_shapes]
        if self.unmatched_rows is not None:
            out["unmatched_rows"] = list(self.unmatched_rows)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LatencyStats":
        """Rebuild from :meth:`to_dict` output (or a JSON report's ``latency``)."""
        known, extra = split_known(cls, d)
        if known.get("input_shapes") is not None:
            known["input_shapes"] = tuple(tuple(s) for s in known["input_shapes"])
        if known.get("unmatched_rows") is not None:
            known["unmatched_rows"] = tuple(known["unmatched_rows"])
        return cls(**known, extra=extra)


@dataclass(frozen=True)
class Throughput:
    """Rates from the median latency: FLOP/s, MAC/s, inferences/s, float FLOP/s and integer OP/s
    apart, and decode tokens/s (KV-length sweeps). Unset rates stay None and out of the JSON."""

    tokens_per_s: float | None = None
    flops_per_s: float | None = None
    macs_per_s: float | None = None
    inferences_per_s: float | None = None
    float_flops_per_s: float | None = None
    int_ops_per_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this version does not know (kept)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the set rates."""
        return sparse_dict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Throughput":
        """Rebuild from :meth:`to_dict` output."""
        known, extra = split_known(cls, d)
        return cls(**known, extra=extra)


@dataclass(frozen=True)
class RooflineOp:
    """One costed op under the measured roofs (see :mod:`tflite_flops.measure.roofline`)."""

    subgraph: int
    index: int
    op_type: str
    intensity: float  # FLOPs / bytes moved
    bound: str  # "compute" | "memory"
    roof_flops_per_s: float  # min(peak FLOP/s, intensity · peak bytes/s)
    achieved_flops_per_s: float | None = None  # when the op was timed
    fraction_of_roof: float | None = None  # achieved / roof, not capped
    above_roof: bool = False  # fraction_of_roof > 1 (data kept in the CPU caches)


@dataclass(frozen=True)
class BoundCounts:
    """How many ops of a roofline are compute-bound and memory-bound."""

    compute: int = 0
    memory: int = 0


@dataclass(frozen=True)
class Roofline:
    """This machine's measured peaks and every costed op placed under them (``--roofline``)."""

    peak_flops_per_s: float
    peak_bytes_per_s: float
    ridge_intensity: float  # peak_flops_per_s / peak_bytes_per_s, FLOPs per byte
    compute_probe: str | None = None  # what was timed for the peak compute
    bandwidth_probe: str | None = None
    runtime: str | None = None
    threads: int | None = None
    xnnpack: bool | None = None
    ops: tuple[RooflineOp, ...] = ()
    counts: BoundCounts = field(default_factory=BoundCounts)
    above_roof: int = 0  # ops above 100% of their roof
    above_roof_note: str | None = None  # why (set when above_roof > 0)
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this version does not know (kept)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: peaks, ``ops`` (one dict per op), ``counts``, ``above_roof`` and its note
        (``null`` when no op is above its roof: the keys do not depend on the timings)."""
        out = sparse_dict(self, ("ops", "counts", "above_roof", "above_roof_note"))
        out["ops"] = [asdict(o) for o in self.ops]
        out["counts"] = asdict(self.counts)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Roofline":
        """Rebuild from :meth:`to_dict` output. Unknown top-level keys are kept in ``extra``; unknown
        keys of an op or of the counts (a newer version's) are left out."""
        known, extra = split_known(cls, d)
        ops = tuple(RooflineOp(**split_known(RooflineOp, o)[0]) for o in d.get("ops") or ())
        counts = BoundCounts(**split_known(BoundCounts, d.get("counts") or {})[0])
        return cls(**{**known, "ops": ops, "counts": counts}, extra=extra)
