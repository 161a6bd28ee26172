"""Roofline: measure this machine's peak compute and memory bandwidth with the same runtime, then
classify every op as compute- or memory-bound from its arithmetic intensity (FLOPs / bytes).

* Peak compute: a large FULLY_CONNECTED single-op model ([256, 1024] × [1024, 1024]ᵀ, float32),
  timed like any model; FLOP/s = 2·M·K·N / median.
* Peak bandwidth: a large ADD of two 4 Mi-element float32 tensors; bytes/s = (2 reads + 1 write)
  · 16 MiB / median.

Both probes are written by :mod:`tflite_flops.measure.model_writer`. For an op with intensity I the roof
is ``min(peak_flops, I · peak_bw)``; the ridge point is ``peak_flops / peak_bw``. When the op was
timed (``--per-op`` or an imported device profile) the report also says how far its achieved
FLOP/s is from the roof.

The fraction of roof is not capped. The bandwidth probe streams 48 MiB, far more than the CPU
caches hold, so its roof is a main-memory roof; a small memory-bound op whose tensors stay in
cache between runs can beat it. Such ops are marked ``above_roof`` and counted, with the note
:data:`ABOVE_ROOF_NOTE`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from . import runtimes
from .bench import BenchSettings, measure_model
from .model_writer import ProbeTensor, probe_model
from ..report import BoundCounts, Report, Roofline, RooflineOp
from .runtime import RuntimeSettings

FC_M, FC_K, FC_N = 256, 1024, 1024
ADD_ELEMENTS = 4 * 1024 * 1024
ABOVE_ROOF_NOTE = ("above 100% of roof: the op's data stays in the CPU caches between runs, which are faster than "
                   "the main-memory bandwidth the probe measures (2 reads + 1 write of 16 MiB); not capped")
PROBE_DESCRIPTION = "tflite_flops roofline probe"


def compute_probe(fb: Any) -> tuple[bytes, int]:
    """(model bytes, FLOPs per invoke) of the FULLY_CONNECTED compute probe, written with schema module ``fb``."""
    weights = np.random.default_rng(0).uniform(-1, 1, (FC_N, FC_K)).astype(np.float32)
    blob = probe_model(fb, "FULLY_CONNECTED", "FullyConnectedOptions",
                       [ProbeTensor("x", (FC_M, FC_K)), ProbeTensor("w", (FC_N, FC_K), weights), None],
                       [ProbeTensor("y", (FC_M, FC_N))], name="roofline", description=PROBE_DESCRIPTION)
    return blob, 2 * FC_M * FC_K * FC_N


def bandwidth_probe(fb: Any) -> tuple[bytes, int]:
    """(model bytes, bytes moved per invoke) of the ADD bandwidth probe, written with schema module ``fb``."""
    blob = probe_model(fb, "ADD", "AddOptions", [ProbeTensor("a", (ADD_ELEMENTS,)), ProbeTensor("b", (ADD_ELEMENTS,))],
                       [ProbeTensor("c", (ADD_ELEMENTS,))], name="roofline", description=PROBE_DESCRIPTION)
    return blob, 3 * 4 * ADD_ELEMENTS


def measure_peaks(runtime: RuntimeSettings, bench: BenchSettings | None = None) -> Roofline:
    """Peak FLOP/s and bytes/s of this machine with ``runtime`` (median of timed runs): a
    :class:`~tflite_flops.report.Roofline` without ops, for :func:`classify`."""
    bench = bench or BenchSettings(runs=20, warmup=3)
    fb = runtimes.schema_module(runtime.runtime)
    blob, flops = compute_probe(fb)
    compute = measure_model(blob, {}, runtime, bench)
    blob, moved = bandwidth_probe(fb)
    memory = measure_model(blob, {}, runtime, bench)
    peak_flops = flops / (compute.median_ms / 1e3)
    peak_bw = moved / (memory.median_ms / 1e3)
    return Roofline(
        peak_flops_per_s=peak_flops, peak_bytes_per_s=peak_bw, ridge_intensity=peak_flops / peak_bw,
        compute_probe=f"FULLY_CONNECTED {FC_M}x{FC_K} · {FC_N}x{FC_K}, float32, {compute.median_ms:.3f} ms",
        bandwidth_probe=f"ADD 2 x {ADD_ELEMENTS} float32, {memory.median_ms:.3f} ms",
        runtime=runtime.runtime, threads=runtime.threads, xnnpack=runtime.xnnpack)


def classify(report: Report, peaks: Roofline) -> Report:
    """Report with ``roofline``: the peaks (:func:`measure_peaks`) plus, per costed op, intensity,
    bound, roof and achieved fraction."""
    peak_f, peak_b = peaks.peak_flops_per_s, peaks.peak_bytes_per_s
    rows = []
    for o in report.ops:
        intensity = o.intensity
        if o.phase != "inference" or not o.flops or intensity is None:
            continue
        roof = min(peak_f, intensity * peak_b)
        achieved = o.achieved_flops_per_s
        fraction = achieved / roof if achieved is not None else None
        rows.append(RooflineOp(o.subgraph, o.index, o.op_type, intensity,
                               "compute" if intensity >= peaks.ridge_intensity else "memory", roof, achieved,
                               fraction, bool(fraction is not None and fraction > 1.0)))
    counts = BoundCounts(*(sum(1 for r in rows if r.bound == b) for b in ("compute", "memory")))
    above = sum(1 for r in rows if r.above_roof)
    return replace(report, roofline=replace(peaks, ops=tuple(rows), counts=counts, above_roof=above,
                                            above_roof_note=ABOVE_ROOF_NOTE if above else None))
